#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_enospc: a full cache device is ENOSPC to the writer at write(2),
# before the blocks ext4 keeps for root are taken (a cache on the root
# filesystem must not fill it for the system), and never costs another
# file its bytes. The cache is a 64 MiB ext4 on a
# loop device. A writer holds 4 MiB written and not yet closed; a second
# writer writes 1 MiB at a time until write(2) fails: ENOSPC, not a close
# that fails later, with every byte before it kept. The first writer's
# close then uploads its 4 MiB (its blocks were reserved when it wrote),
# the second's close uploads exactly what write(2) accepted, and a file
# written earlier reads back once the full file is removed, and writes
# work again.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init write_enospc
plan 15

MIB=1048576
IMG=$WORK/small.img
SMALL=$WORK/small

small_fs() {
	modprobe loop 2>/dev/null
	truncate -s $((64 * MIB)) "$IMG" && mkfs.ext4 -q -F "$IMG" &&
		mkdir -p "$SMALL" && mount -o loop "$IMG" "$SMALL"
}
if ! small_fs; then
	skip_n 15 "ENOSPC" "no loop device for a small cache filesystem"
	tap_done
fi
trap 'test_cleanup; umount "$SMALL" 2>/dev/null' EXIT
C=$SMALL/cache
mkdir -p "$C"

check "module loads" load_module
# One PUT per file: a multipart upload's journal record needs cache space.
check_sh "daemon starts" start_daemon --part-size $((128 * MIB))
check "writable mount, cache on a 64 MiB ext4" mount_s3 "$BUCKET" "$MNT" \
	"cache=$C,fetch_timeout=120,writable,allow_delete"

head -c $((8 * MIB)) /dev/urandom >"$WORK/early"
cp "$WORK/early" "$MNT/early.bin"
check "a file written before the device fills is in S3" s3_is early.bin "$WORK/early"

out=$(M=$MNT W=$WORK S=$SMALL python3 -c "
import os, errno
M, W = os.environ['M'], os.environ['W']
held = os.open(M + '/held.bin', os.O_CREAT | os.O_WRONLY)
hb = os.urandom(4 << 20)
os.write(held, hb)
open(W + '/held', 'wb').write(hb)
fd = os.open(M + '/full.bin', os.O_CREAT | os.O_WRONLY)
chunk = os.urandom(1 << 20)
total, err = 0, 'none'
while total < (128 << 20):
	try: n = os.write(fd, chunk)
	except OSError as e: err = errno.errorcode[e.errno]; break
	total += n
	if n < len(chunk): break
free_blocks = os.statvfs(os.environ['S']).f_bfree
with open(W + '/full', 'wb') as f:
	for i in range(total >> 20): f.write(chunk)
	f.write(chunk[:total & ((1 << 20) - 1)])
def close(fd):
	try: os.close(fd); return '0'
	except OSError as e: return errno.errorcode[e.errno]
print(err, total >> 20, close(held), close(fd), free_blocks)")
diag "error, MiB written, close of the held file, close of the full one, free blocks then: $out"
read -r err mib hclose fclose freeblk <<<"$out"
is "$err" ENOSPC "write(2) fails with ENOSPC when the cache device is full"
reserved=$(tune2fs -l "$IMG" | awk -F: '/^Reserved block count/ { print $2 + 0 }')
check "... before the blocks ext4 keeps for root are taken (free $freeblk, reserved $reserved)" \
	test "${freeblk:-0}" -ge "${reserved:-1}" -a "${reserved:-0}" -gt 0
check "... after some MiB were written" test "${mib:-0}" -gt 8 -a "${mib:-0}" -lt 64
is "$hclose" 0 "the close of a file written before the device filled succeeds"
check "... and S3 has its 4 MiB" s3_is held.bin "$WORK/held"
is "$fclose" 0 "the close of the file that filled the device succeeds"
check "... and S3 has exactly what write(2) accepted" s3_is full.bin "$WORK/full"
check "the full file is removed" rm "$MNT/full.bin"
drop_caches
check "the file written earlier reads back" cmp "$MNT/early.bin" "$WORK/early"
check "with the full file removed, a write works again" \
	dd if=/dev/zero of="$MNT/again.bin" bs=1M count=4 status=none

check "umount" umount_s3 "$MNT"
tap_done
