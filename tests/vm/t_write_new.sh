#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_new: new files on a writable mount. A file is created, written
# and shown at once on this node; nothing reaches S3 before the last close
# of a descriptor opened for writing (or an fsync), which puts the whole
# file with If-None-Match: * (If-Match: the ETag we put last, after an
# fsync); a file above the daemon's part_size (16 MiB) goes up as a
# multipart upload with the condition on its Complete. The object is then
# byte for byte what was written, also through a second mount on an empty
# cache. A key created in S3 meanwhile is not
# overwritten: close fails with ESTALE, our bytes are kept under
# .s3cachefs/conflicts/ and the name shows S3's object; a multipart
# upload that meets a conflict is aborted (no parts left in S3), and one
# whose daemon is killed is aborted by the next daemon, which puts the
# file again when the kernel re-sends its UPLOAD. A listing while a
# file is being written keeps it; an EVICT of it is refused; without the
# writable option the mount stays read-only. (Objects that exist in S3,
# opened for writing: t_write_overwrite.)
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init write_new
plan 47

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600"
CTL=$REPO/tools/s3cachectl/s3cachectl
export CTL
make_fixture "$WORK/big" $((20 * 1048576 + 1)) write-big >/dev/null

# PY: run a python snippet (os imported, M the mount); prints its result.
py() {
	M=$MNT C=$CACHE python3 -c "import os, errno, sys
M, C = os.environ['M'], os.environ['C']
$1"
}
meta_version() {	# FILE: version byte of its S3CFS_XATTR_META
	py "print(os.getxattr('$1', 'trusted.s3cachefs.meta')[0])"
}

export -f py meta_version

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "read-only mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"
is "$(py "
try: os.close(os.open(M + '/ro.txt', os.O_CREAT | os.O_WRONLY)); print('created')
except OSError as e: print(errno.errorcode[e.errno])")" EROFS \
	"without the writable option, create fails with EROFS"
check "umount" umount_s3 "$MNT"
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS,writable"
check "mount options show writable" grep -q "$MNT s3cachefs .*writable" /proc/mounts

# touch: an empty object.
check "touch makes a new file" touch "$MNT/empty"
check "an empty object is in S3 after close" s3_is empty /dev/null

# Shell redirection: a dup'ed descriptor is closed first.
check "echo > file" bash -c "echo hello >'$MNT/hello.txt'"
printf 'hello\n' >"$WORK/hello"
check "S3 has its bytes" s3_is hello.txt "$WORK/hello"
is "$(meta_version "$CACHE/hello.txt")" 1 \
	"after the upload the cache file is an ordinary copy (meta version 1)"
check "and reads back through the mount" cmp "$MNT/hello.txt" "$WORK/hello"

# Written but not closed: visible here, not in S3.
is "$(py "
fd = os.open(M + '/open.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, b'x' * 5000)
d = os.dup(fd); os.close(d)		# an earlier close of a dup: no upload
st = os.stat(M + '/open.bin').st_size
data = open(M + '/open.bin', 'rb').read()
names = os.listdir(M)
import subprocess
inS3 = subprocess.run(['bash', '-c', 's3_get $BUCKET open.bin $WORK/got'],
                      capture_output=True).returncode == 0
print(st, len(data), 'open.bin' in names, inS3)
os.write(fd, b'y' * 100)
os.close(fd)")" "5000 5000 True False" \
	"an open file's size, bytes and name show at once; S3 does not have it"
py "open('$WORK/open', 'wb').write(b'x' * 5000 + b'y' * 100)"
check "its last close uploads all of it" s3_is open.bin "$WORK/open"

# s3cachectl status tells a file written here from a copy of an object.
is "$(py "
import subprocess
def state(p):
    out = subprocess.run([os.environ['CTL'], 'status', p], capture_output=True,
                         text=True).stdout.split('\n')
    return out[1].split()[3] if len(out) > 1 and out[1] else '?'
fd = os.open(M + '/st.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, b's' * 100)
os.fsync(fd)
os.write(fd, b't')
a = state(M + '/st.bin')
os.close(fd)
print(a, state(M + '/st.bin'))")" "local clean" \
	"s3cachectl status: a file being written is local; once uploaded, clean"

# O_DIRECT reads of a file being written see what is in the page cache.
is "$(py "
import subprocess
fd = os.open(M + '/dio.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, bytes(range(256)) * 32)		# 8192 bytes, dirty
r = subprocess.run(['dd', 'if=' + M + '/dio.bin', 'iflag=direct', 'bs=4096',
                    'count=2', 'status=none'], capture_output=True)
print(r.returncode, r.stdout == bytes(range(256)) * 32)
os.close(fd)")" "0 True" "an O_DIRECT read of a file being written returns its bytes"

# A hole below the written end reads as zeros, buffered and O_DIRECT.
is "$(py "
import subprocess
fd = os.open(M + '/hole.bin', os.O_CREAT | os.O_RDWR)
os.pwrite(fd, b'z', 1 << 20)			# nothing below 1 MiB
a = os.pread(fd, 8192, 0)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
b = os.pread(fd, 4096, 4096)
r = subprocess.run(['dd', 'if=' + M + '/hole.bin', 'iflag=direct', 'bs=4096',
                    'count=1', 'skip=3', 'status=none'], capture_output=True)
print(a == bytes(8192), b == bytes(4096), r.returncode, r.stdout == bytes(4096))
os.close(fd)")" "True True 0 True" \
	"a hole below the written end reads as zeros (page cache, lower file, O_DIRECT)"
py "open('$WORK/hole', 'wb').write(bytes(1 << 20) + b'z')"
check "and S3 gets the zeros" s3_is hole.bin "$WORK/hole"

# A big file, then a partial rewrite inside a page before the close.
check "dd of 20 MiB + 1" dd if="$WORK/big" of="$MNT/big.bin" bs=1M status=none
check "S3 has the 20 MiB + 1 bytes" s3_is big.bin "$WORK/big"
check "... sent as a multipart upload (above part_size)" \
	grep -q "UPLOAD s3://$BUCKET/big.bin: 20971521 bytes in parts" "$DAEMON_LOG"
is "$(s3_uploads_open)" 0 "... and no multipart upload is left open"
is "$(py "
fd = os.open(M + '/rmw.bin', os.O_CREAT | os.O_RDWR)
os.write(fd, bytes(range(256)) * 40)		# 10240 bytes
os.fsync(fd)					# uploaded: If-None-Match
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)	# pages filled from the cache file
os.pwrite(fd, b'PATCH', 5000)			# inside a page, after the fsync
os.ftruncate(fd, 9000)
os.close(fd)					# If-Match: the fsync's ETag
print('ok')")" ok "fsync, then a write inside a page and a truncate"
py "
b = bytearray(bytes(range(256)) * 40); b[5000:5005] = b'PATCH'
open('$WORK/rmw', 'wb').write(bytes(b[:9000]))"
check "S3 has the bytes after the last close" s3_is rmw.bin "$WORK/rmw"

# Seen from an empty cache on a second mount.
mkdir -p "$WORK/cache2"
check "second mount on an empty cache" mount_s3 "$BUCKET" /mnt/write_new2 \
	"cache=$WORK/cache2,fetch_timeout=60"
check "it reads the uploaded files right" bash -c \
	"cmp /mnt/write_new2/big.bin '$WORK/big' && cmp /mnt/write_new2/rmw.bin '$WORK/rmw' && cmp /mnt/write_new2/hello.txt '$WORK/hello'"
check "umount the second" umount_s3 /mnt/write_new2

# A listing while a file is open for writing keeps it; EVICT refuses it.
is "$(py "
fd = os.open(M + '/kept.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, b'k' * 3000)
import subprocess
subprocess.run(['sync'], check=True)		# written back, not uploaded
subprocess.run(['bash', '-c', 'mnt_set meta_ttl_ms 0'], check=True)
names = os.listdir(M)				# a LIST: kept.bin is not in S3
ev = subprocess.run([os.environ['CTL'], 'evict', M + '/kept.bin'],
                    capture_output=True).returncode
subprocess.run(['bash', '-c', 'mnt_set meta_ttl_ms 3600000'], check=True)
inS3 = subprocess.run(['bash', '-c', 's3_get $BUCKET kept.bin $WORK/got'],
                      capture_output=True).returncode == 0
print('kept.bin' in names, os.path.getsize(C + '/kept.bin'), ev != 0, inS3)
os.close(fd)")" "True 3000 True False" \
	"a listing keeps a file being written (synced, not uploaded), and EVICT of it fails"
py "open('$WORK/kept', 'wb').write(b'k' * 3000)"
check "and it is uploaded whole at close" s3_is kept.bin "$WORK/kept"

# A conflict: the key is created in S3 while we write it.
printf 'theirs\n' >"$WORK/theirs"
is "$(py "
fd = os.open(M + '/c.txt', os.O_CREAT | os.O_WRONLY)
os.write(fd, b'ours\n')
import subprocess
subprocess.run(['bash', '-c', 's3_put $BUCKET c.txt $WORK/theirs'], check=True)
try: os.close(fd); print('closed')
except OSError as e: print(errno.errorcode[e.errno])")" ESTALE \
	"a key created in S3 meanwhile: close fails with ESTALE"
check "S3 keeps the other writer's object" s3_is c.txt "$WORK/theirs"
check "ours is kept under .s3cachefs/conflicts" bash -c \
	"grep -qx ours '$CACHE'/.s3cachefs/conflicts/*-c.txt"
check "the name shows S3's object now" cmp "$MNT/c.txt" "$WORK/theirs"
is "$(mnt_stat conflicts)" 1 "sysfs counts the conflict"

# The same for a multipart upload: its Complete carries If-None-Match.
is "$(py "
fd = os.open(M + '/cbig.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, open('$WORK/big', 'rb').read())
import subprocess
subprocess.run(['bash', '-c', 's3_put $BUCKET cbig.bin $WORK/theirs'], check=True)
try: os.close(fd); print('closed')
except OSError as e: print(errno.errorcode[e.errno])")" ESTALE \
	"a 20 MiB file whose key was created meanwhile: close fails with ESTALE"
check "S3 keeps the other writer's object" s3_is cbig.bin "$WORK/theirs"
is "$(s3_uploads_open)" 0 "... and our multipart upload was aborted"

# A daemon killed in the middle of a multipart upload: the kernel sends the
# UPLOAD again to the next daemon, which aborts the upload the killed one
# left (its journal) and puts the file afresh. Small parts, one at a time,
# so that the kill lands among them.
journal_n() { ls -A "$CACHE/.s3cachefs/uploads" 2>/dev/null | wc -l; }
make_fixture "$WORK/mp" $((40 * 1048576)) write-mp >/dev/null
stop_daemon
check_sh "daemon restarted with 5 MiB parts, one at a time" \
	start_daemon --part-size 5242880 --upload-parallel 1
rm -f "$WORK/mp.rc"
python3 -c "
import os
fd = os.open('$MNT/mp.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, open('$WORK/mp', 'rb').read())
try: os.close(fd); print(0)
except OSError as e: print(e.errno)" >"$WORK/mp.rc" 2>"$WORK/mp.err" &
writer=$!
for ((i = 0; i < 600; i++)); do
	[ "$(journal_n)" -gt 0 ] && break
	sleep 0.1
done
is "$(journal_n)" 1 "a 40 MiB file's close: its multipart upload is under way (in the journal)"
kill_daemon
check_sh "the daemon is killed; a new one starts" \
	start_daemon --part-size 5242880 --upload-parallel 1
wait "$writer"
is "$(cat "$WORK/mp.rc")" 0 "the close returns success (the kernel sent the UPLOAD again)"
check "S3 has the 40 MiB" s3_is mp.bin "$WORK/mp"
check "the new daemon aborted the upload the killed one left" \
	grep -q "mp.bin: upload .* was left by an earlier daemon: aborting" "$DAEMON_LOG"
is "$(s3_uploads_open)" 0 "... no multipart upload is left open"
is "$(journal_n)" 0 "... and the journal is empty"

check "umount" umount_s3 "$MNT"
tap_done
