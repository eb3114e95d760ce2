#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_mmap: writable shared mappings, fallocate and O_DIRECT writes on a
# writable mount. A file written through MAP_SHARED is uploaded by msync
# (with the file still mapped) and at munmap when its descriptor was
# closed first (close uploads nothing while a mapping holds the file);
# an object opened O_RDWR is changed through a mapping, numpy.memmap
# writes; after a conflict a mapped write gets SIGBUS. fallocate grows,
# reserves, punches and zeroes (collapse: EOPNOTSUPP); O_DIRECT writes
# must be aligned (EINVAL otherwise, as on ext4).
#
# The race: a mapped write while the daemon reads the file for an upload.
# The first part of a two-part upload is held by the fault proxy (its body
# read whole, so the daemon has read part 1 of the file); the
# mapping then changes part 1, then part 2, and sync_file_range writes
# the folios back. The uploaded object must not hold the part-2 change
# without the part-1 change (a state the file never had): writeback
# waits while the daemon reads. The changes are sent by the next upload.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init write_mmap
plan 34

OPTS="cache=$CACHE,fetch_timeout=300,meta_ttl=3600,writable"
MIB=1048576

# PY: run a python snippet (os, mmap, errno imported; M the mount).
py() {
	M=$MNT W=$WORK FP=${FP_URL:-} python3 -c "import os, mmap, errno, sys
M, W = os.environ['M'], os.environ['W']
$1"
}
export -f py

check "module loads" load_module
S3_DIRECT=$S3_ENDPOINT
if ! start_faultproxy 9106; then
	not_ok "fault proxy starts"
	tap_done
fi
ok "fault proxy starts"
check_sh "daemon starts (5 MiB parts, one at a time)" \
	start_daemon --part-size $((5 * MIB)) --upload-parallel 1 --stall-timeout 300
S3_ENDPOINT=$S3_DIRECT	# the daemon goes through the proxy, the test does not
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"

# A new file written through a shared mapping: msync uploads it with the
# file still open and mapped; close with the mapping alive uploads
# nothing; munmap (the last reference) uploads what was written since.
is "$(py "
fd = os.open(M + '/new.bin', os.O_CREAT | os.O_RDWR)
os.ftruncate(fd, 300000)
m = mmap.mmap(fd, 300000)
for i in range(0, 300000, 1000): m[i:i + 7] = b'page%03d' % (i // 1000 % 1000)
m.flush()
open(W + '/new.1', 'wb').write(m[:])
os.close(fd)
m[5:9] = b'LATE'
open(W + '/new.2', 'wb').write(m[:])
import subprocess
r = subprocess.run(['bash', '-c', 's3_is new.bin ' + W + '/new.1']).returncode
m.close()
print('msync' if r == 0 else 'not after msync')")" msync \
	"msync uploads a file written through a shared mapping; close with the mapping alive uploads nothing"
check "the object is the mapping's bytes after munmap (closed earlier)" \
	s3_is new.bin "$WORK/new.2"
check "... and reads back through the mount" cmp "$MNT/new.bin" "$WORK/new.2"

# An object opened O_RDWR (copy-up) and changed through a mapping.
head -c $((3 * MIB + 123)) /dev/urandom >"$WORK/obj"
s3_put "$BUCKET" obj.bin "$WORK/obj"
is "$(py "
import random
r = random.Random(7)
exp = bytearray(open(W + '/obj', 'rb').read())
fd = os.open(M + '/obj.bin', os.O_RDWR)
m = mmap.mmap(fd, len(exp))
for _ in range(200):
	o = r.randrange(len(exp) - 16); b = bytes(r.randrange(256) for _ in range(16))
	m[o:o + 16] = b; exp[o:o + 16] = b
m.close(); os.close(fd)
open(W + '/obj.exp', 'wb').write(exp)
print('done')")" done "200 mapped writes into an existing object"
check "S3 has the object with the 200 changes" s3_is obj.bin "$WORK/obj.exp"

# numpy.memmap, as a training job writes an array.
if python3 -c "import numpy" 2>/dev/null; then
	is "$(py "
import numpy as np
a = np.memmap(M + '/arr.npy', dtype=np.float32, mode='w+', shape=(1000, 257))
a[:] = np.arange(1000 * 257, dtype=np.float32).reshape(1000, 257)
a.flush(); del a
b = np.memmap(M + '/arr.npy', dtype=np.float32, mode='r+', shape=(1000, 257))
b[10, :] = -1; b.flush(); del b
exp = np.arange(1000 * 257, dtype=np.float32).reshape(1000, 257); exp[10, :] = -1
exp.tofile(W + '/arr.exp')
print('ok')")" ok "numpy.memmap w+ then r+ writes"
	check "S3 has the array" s3_is arr.npy "$WORK/arr.exp"
else
	skip_n 2 "numpy.memmap" "no python3-numpy"
fi

# fallocate.
printf 'abcdefgh%.0s' $(seq 1 2048) >"$WORK/fa"	# 16 KiB
cp "$WORK/fa" "$MNT/fa.bin"
check "fallocate grows a file" fallocate -o 16384 -l 8192 "$MNT/fa.bin"
is "$(stat -c %s "$MNT/fa.bin")" 24576 "... to offset + length"
check "fallocate --keep-size reserves without growing" \
	fallocate -n -o 24576 -l 65536 "$MNT/fa.bin"
is "$(stat -c %s "$MNT/fa.bin")" 24576 "... the size is unchanged"
check "a hole is punched" fallocate -p -o 4096 -l 4096 "$MNT/fa.bin"
check "a range is zeroed" fallocate -z -o 10000 -l 100 "$MNT/fa.bin"
python3 -c "
b = bytearray(open('$WORK/fa', 'rb').read()) + bytes(8192)
b[4096:8192] = bytes(4096); b[10000:10100] = bytes(100)
open('$WORK/fa.exp', 'wb').write(b)"
check "the file reads as grown, punched and zeroed" cmp "$MNT/fa.bin" "$WORK/fa.exp"
check_fails "collapsing a range: not supported" \
	fallocate -c -o 0 -l 4096 "$MNT/fa.bin"
check "S3 has the fallocated file after its close" s3_is fa.bin "$WORK/fa.exp"
check_fails "fallocate of a file open read-only fails" \
	python3 -c "import os; os.posix_fallocate(os.open('$MNT/obj.bin', os.O_RDONLY), 0, 4096)"

# O_DIRECT writes.
head -c $((256 * 1024)) /dev/urandom >"$WORK/dio"
check "an aligned O_DIRECT write" dd if="$WORK/dio" of="$MNT/dio.bin" bs=64k \
	oflag=direct status=none
check "... reads back" cmp "$MNT/dio.bin" "$WORK/dio"
is "$(py "
fd = os.open(M + '/dio.bin', os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
try: os.pwrite(fd, buf, 100); print('written')
except OSError as e: print(errno.errorcode[e.errno])
os.close(fd)")" EINVAL "an O_DIRECT write at an unaligned offset: EINVAL"
check "S3 has the O_DIRECT file" s3_is dio.bin "$WORK/dio"

# The race (see the top): a 10 MiB file, two 5 MiB parts.
head -c $((10 * MIB)) /dev/zero | tr '\0' a >"$WORK/torn"
cp "$WORK/torn" "$MNT/torn.bin"
fp_rules "[{\"method\": \"PUT\", \"path\": \"^/$BUCKET/torn.bin\$\",
	    \"query\": \"partNumber=1&\", \"nth\": [1], \"fault\": \"stall\"}]"
out=$(py "
import ctypes, json, threading, time, subprocess, urllib.request
FP = os.environ['FP']
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(M + '/torn.bin', os.O_RDWR)
m = mmap.mmap(fd, 10 << 20)
m[0:4] = b'0000'
res = []
def sync():
	try: os.fsync(fd); res.append('0')
	except OSError as e: res.append(errno.errorcode[e.errno])
t = threading.Thread(target=sync); t.start()
held = 0
for _ in range(1200):
	held = json.load(urllib.request.urlopen(FP + '/__fault/stats'))['stalled']
	if held: break
	time.sleep(0.1)
m[100:104] = b'1111'
m[(6 << 20):(6 << 20) + 4] = b'2222'
rc = libc.sync_file_range(fd, ctypes.c_longlong(0), ctypes.c_longlong(0), 2)
urllib.request.urlopen(urllib.request.Request(FP + '/__fault/release', method='POST')).read()
t.join()
subprocess.run(['bash', '-c', 's3_get $BUCKET torn.bin ' + W + '/torn.s3'])
m.close(); os.close(fd)
s = open(W + '/torn.s3', 'rb').read()
print('held=%d sfr=%d fsync=%s size=%d p1=%s p2=%s' % (held, rc, res[0], len(s),
      s[100:104].decode(), s[(6 << 20):(6 << 20) + 4].decode()))")
diag "$out"
case $out in *held=1*) ok "part 1 of the fsync's upload was held while the mapping changed" ;;
*) not_ok "part 1 of the fsync's upload was held while the mapping changed" ;; esac
case $out in *fsync=0*) ok "... the fsync succeeded" ;; *) not_ok "... the fsync succeeded" ;; esac
case $out in *"p1=aaaa p2=aaaa"*) ok "... and uploaded neither change (nothing written back into the file the daemon read)" ;;
*) not_ok "... and uploaded neither change (nothing written back into the file the daemon read)" ;; esac
python3 -c "
b = bytearray(open('$WORK/torn', 'rb').read())
b[0:4] = b'0000'; b[100:104] = b'1111'; b[6 << 20:(6 << 20) + 4] = b'2222'
open('$WORK/torn.exp', 'wb').write(b)"
check "the changes made during the upload are in S3 after munmap" s3_is torn.bin "$WORK/torn.exp"
fp_rules "[]"

# A conflict: S3 changed under a mapping. msync reports it; a mapped write
# after it is SIGBUS (the file is no longer ours to write).
printf 'base' >"$MNT/conf.bin"
printf 'theirs' >"$WORK/theirs"
out=$(py "
import subprocess
fd = os.open(M + '/conf.bin', os.O_RDWR)
m = mmap.mmap(fd, 4)
m[0:4] = b'ours'
subprocess.run(['bash', '-c', 's3_put $BUCKET conf.bin $WORK/theirs'], check=True)
try: m.flush(); print('synced')
except OSError as e: print(errno.errorcode[e.errno])
sys.stdout.flush()
m[0:4] = b'more'
print('written')")
rc=$?
is "$out" ESTALE "msync after S3 changed under the mapping: ESTALE"
is "$rc" 135 "... and a mapped write after it is SIGBUS"
check "a new open maps S3's version and writes it" py "
fd = os.open(M + '/conf.bin', os.O_RDWR)
m = mmap.mmap(fd, 6)
m[0:1] = b'X'
m.close(); os.close(fd)"
check "S3 has the other writer's object, changed by the new open" \
	bash -c "s3_get $BUCKET conf.bin $WORK/conf.got && [ \"\$(cat $WORK/conf.got)\" = Xheirs ]"

check "umount" umount_s3 "$MNT"
stop_faultproxy
tap_done
