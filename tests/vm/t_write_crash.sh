#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_crash: an upload's commit survives a power cut of the cache
# device only with the bytes it names. A cached object is rewritten in
# place (4 KiB in the middle) and closed: S3 has the new version and the
# cache file is tagged as it. The cache's ext4 is then shut down as by a
# power cut (its journal flushed, so the tag is on disk; its page cache
# lost: ext4 orders no data of blocks overwritten in place). After the
# next mount of the same cache the file reads as S3's new version, never
# as the tag of one with the bytes of the other (the upload syncs the
# cache file before it sends: without that the old 4 KiB came back).
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
test_init write_crash
plan 14

FSDIR=/mnt/write-crash-cache
SIZE=$((4 * 1048576))
OPTS="cache=$FSDIR,fetch_timeout=60,meta_ttl=3600,writable"
make_fixture "$WORK/orig" $SIZE crash-orig >/dev/null
s3_put "$BUCKET" ck.bin "$WORK/orig" || echo "s3_put failed" >&2
head -c 4096 /dev/urandom >"$WORK/patch"
cp "$WORK/orig" "$WORK/want"
dd if="$WORK/patch" of="$WORK/want" bs=4096 seek=512 conv=notrunc status=none

cleanup_more() {
	test_cleanup
	loop_ext4_cleanup
}
trap cleanup_more EXIT

check_sh "an ext4 of 128 MiB on a loop device for the cache" loop_ext4 "$FSDIR" 128M

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable mount on it" mount_s3 "$BUCKET" "$MNT" "$OPTS"
check "the object reads whole (cached)" cmp "$WORK/orig" "$MNT/ck.bin"
sync
check "4 KiB rewritten in place in the middle, closed" \
	dd if="$WORK/patch" of="$MNT/ck.bin" bs=4096 seek=512 conv=notrunc status=none
check "S3 has the new version" s3_is ck.bin "$WORK/want"

# The power cut: xfs_io's shutdown is FS_IOC_SHUTDOWN on ext4 too; -f
# commits the journal first (the tag), the data in the page cache is lost.
check "the cache's ext4 goes down as at a power cut (journal flushed, data not)" \
	xfs_io -x -c "shutdown -f" "$FSDIR"
umount_s3 "$MNT" || umount -l "$MNT"
stop_daemon
check "umount s3cachefs and the cache's ext4" bash -c "! mountpoint -q '$MNT' && umount '$FSDIR'"
check "the cache's ext4 mounts again (its journal replayed)" mount "$LOOP_DEV" "$FSDIR"
check_sh "daemon starts again" start_daemon
check "mount on the same cache" mount_s3 "$BUCKET" "$MNT" "$OPTS"
check "the file reads as S3's new version" cmp "$WORK/want" "$MNT/ck.bin"
check "umount" umount_s3 "$MNT"
tap_done
