#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_overwrite: objects that exist in S3, opened for writing on a
# writable mount. O_TRUNC empties the file without fetching it; an open
# without O_TRUNC fetches every missing chunk first (copy-up) and the write
# lands in the object's bytes; the close puts the whole file with If-Match
# (the ETag it was based on), as one PUT or a multipart upload. An open for
# writing that writes nothing uploads nothing. A reader that had the file
# open sees the writes (one inode). A change made in S3 meanwhile is a
# conflict: close fails with ESTALE, ours is kept under
# .s3cachefs/conflicts/, the name shows S3's object. EVICT refuses the
# file while it is written.
# The race: a LIST that finds the object changed in S3 while an open for
# writing is making its cache file LOCAL must not replace the file. The
# module's local_pin delay point holds the open between its check that the
# file is still at its name and its tag; the LIST comes then. The daemon
# finds the kernel's flock and keeps the file (its log says so, which only
# happens inside that window), so close sees the conflict (was: the
# file was replaced under the open, whose writes went to an unlinked file
# and whose upload failed with EIO).
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init write_overwrite
plan 28

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600"
CTL=$REPO/tools/s3cachectl/s3cachectl
PARAMS=/sys/module/s3cachefs/parameters
export CTL
make_fixture "$WORK/big" $((20 * 1048576)) ow-big >/dev/null
make_fixture "$WORK/small" 100000 ow-small >/dev/null
printf 'version 1\n' >"$WORK/v1"
printf 'theirs\n' >"$WORK/theirs"
for k in old.txt ro.txt c.txt race.txt; do
	s3_put "$BUCKET" "$k" "$WORK/v1"
done
s3_put "$BUCKET" big.bin "$WORK/big"
s3_put "$BUCKET" small.bin "$WORK/small"
s3_put "$BUCKET" ev.bin "$WORK/small"

py() {	# a python snippet (os, errno imported; M the mount, C the cache)
	M=$MNT C=$CACHE python3 -c "import os, errno, sys, subprocess
M, C = os.environ['M'], os.environ['C']
$1"
}
meta_version() {	# FILE: version byte of its S3CFS_XATTR_META
	py "print(os.getxattr('$1', 'trusted.s3cachefs.meta')[0])"
}

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS,writable"

# O_TRUNC: nothing is fetched, the object becomes the new bytes.
fetches=$(mnt_stat fetches)
check "echo > an existing object" bash -c "echo new >'$MNT/old.txt'"
printf 'new\n' >"$WORK/new"
check "S3 has the new bytes" s3_is old.txt "$WORK/new"
is "$(mnt_stat fetches)" "$fetches" "O_TRUNC fetched nothing"
is "$(meta_version "$CACHE/old.txt")" 1 "the cache file is a copy again (meta version 1)"
check "it reads back through the mount" cmp "$MNT/old.txt" "$WORK/new"

# In place, cold: 4 KiB in the middle of 20 MiB never read before.
is "$(py "
fd = os.open(M + '/big.bin', os.O_RDWR)
os.pwrite(fd, b'P' * 4096, 10 * 1048576 + 100)
os.close(fd)
print('ok')")" ok "a 4 KiB write into a 20 MiB object never read"
py "
b = bytearray(open('$WORK/big', 'rb').read())
b[10 * 1048576 + 100:10 * 1048576 + 100 + 4096] = b'P' * 4096
open('$WORK/big2', 'wb').write(b)"
check "S3 has the object with those 4 KiB changed (copy-up fetched the rest)" \
	s3_is big.bin "$WORK/big2"
check "... put as a multipart upload" \
	grep -q "UPLOAD s3://$BUCKET/big.bin: 20971520 bytes in parts" "$DAEMON_LOG"

# Opened for writing, nothing written: nothing uploaded.
uploads=$(mnt_stat uploads)
is "$(py "
fd = os.open(M + '/small.bin', os.O_RDWR)
os.pread(fd, 10, 0)
os.close(fd)
print('ok')")" ok "open O_RDWR, read, close"
is "$(mnt_stat uploads)" "$uploads" "... uploads nothing"
is "$(meta_version "$CACHE/small.bin")" 1 "... and the cache file is a copy again"
check "... and S3's object is unchanged" s3_is small.bin "$WORK/small"

# A reader that had the file open sees the writes (one inode, one cache).
is "$(py "
r = os.open(M + '/ro.txt', os.O_RDONLY)
a = os.pread(r, 4, 0)
w = os.open(M + '/ro.txt', os.O_RDWR)
os.pwrite(w, b'VERS', 0)
b = os.pread(r, 100, 0)
os.close(w)
print(a, b, os.pread(r, 100, 0))")" "b'vers' b'VERSion 1\\n' b'VERSion 1\\n'" \
	"an open reader sees the writes of another open, before and after the upload"

# A conflict: S3's object changes while we write ours.
is "$(py "
fd = os.open(M + '/c.txt', os.O_WRONLY | os.O_TRUNC)
os.write(fd, b'ours\n')
subprocess.run(['bash', '-c', 's3_put $BUCKET c.txt $WORK/theirs'], check=True)
try: os.close(fd); print('closed')
except OSError as e: print(errno.errorcode[e.errno])")" ESTALE \
	"S3's object changed since the open: close fails with ESTALE"
check "S3 keeps the other writer's object" s3_is c.txt "$WORK/theirs"
check "ours is kept under .s3cachefs/conflicts" bash -c \
	"grep -qx ours '$CACHE'/.s3cachefs/conflicts/*-c.txt"
check "the name shows S3's object now" cmp "$MNT/c.txt" "$WORK/theirs"

# EVICT of a file being written is refused; after the close it is allowed.
is "$(py "
fd = os.open(M + '/ev.bin', os.O_RDWR)
os.pwrite(fd, b'E', 0)
ev = subprocess.run([os.environ['CTL'], 'evict', M + '/ev.bin'],
                    capture_output=True).returncode
os.close(fd)
ev2 = subprocess.run([os.environ['CTL'], 'evict', M + '/ev.bin'],
                     capture_output=True).returncode
print(ev != 0, ev2)")" "True 0" "EVICT fails while the file is written, works after the close"

# The race (see the header).
check "race.txt: read once (its cache file and inode exist)" \
	cmp "$MNT/race.txt" "$WORK/v1"
dmesg -c >/dev/null
echo $((6000 * ${S3CFS_TIMEOUT_SCALE:-1})) >"$PARAMS/fault_delay_ms"
echo local_pin >"$PARAMS/fault_points"
rm -f "$WORK/race.rc"
python3 -c "
import os, errno
try:
    fd = os.open('$MNT/race.txt', os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b'ours\n')
    os.close(fd)
    print('closed')
except OSError as e: print(errno.errorcode[e.errno])" >"$WORK/race.rc" 2>&1 &
writer=$!
check_sh "the open for writing is held at local_pin" \
	wait_until bash -c "dmesg | grep -q 'fault point local_pin: [0-9]* ms'"
echo >"$PARAMS/fault_points"
s3_put "$BUCKET" race.txt "$WORK/theirs"
mnt_set meta_ttl_ms 0
ls -l "$MNT" >/dev/null
mnt_set meta_ttl_ms 3600000
check "the LIST came while the open was held: the daemon kept the file" \
	grep -q "race.txt: the kernel is making it writable: kept" "$DAEMON_LOG"
wait "$writer"
is "$(cat "$WORK/race.rc")" ESTALE "the writer's close sees the conflict (ESTALE)"
check "S3 keeps the other writer's object" s3_is race.txt "$WORK/theirs"
check "ours is kept under .s3cachefs/conflicts" bash -c \
	"grep -qx ours '$CACHE'/.s3cachefs/conflicts/*-race.txt"

check "umount" umount_s3 "$MNT"
tap_done
