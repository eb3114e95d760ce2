#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_writeback_dev: the write-back mounts on one cache filesystem are
# bounded together. Past wb_device_pct of it (here 1% of a 256 MiB ext4,
# about 2.4 MiB), an acknowledgment on either mount starts the queued
# uploads of both and its writer waits, though neither mount is past its
# own writeback_max (4096 MiB). With the bound at 100% nobody waits.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init writeback_dev
plan 11

FSDIR=/mnt/writeback-dev-cache
P=/sys/module/s3cachefs/parameters
MNTB=/mnt/writeback_dev_b
BUCKETB=$BUCKET-b
OPTS="fetch_timeout=20,meta_ttl=3600,writable,writeback,upload_delay=60,writeback_max=4096"

cleanup_more() {
	echo 50 >$P/wb_device_pct 2>/dev/null
	mountpoint -q "$MNTB" && { umount_s3 "$MNTB" || umount -l "$MNTB"; }
	test_cleanup
	loop_ext4_cleanup
}
trap cleanup_more EXIT

for i in 1 2 3 4; do
	make_fixture "$WORK/f$i" 1048576 "dev-$i" >/dev/null
done
s3_mb "$BUCKETB" 2>/dev/null

check_sh "an ext4 of 256 MiB on a loop device for both caches" loop_ext4 "$FSDIR" 256M
mkdir -p "$FSDIR/a" "$FSDIR/b"
check "module loads" load_module
check_sh "daemon starts" start_daemon
check "write-back mount of one bucket, cache on the ext4" \
	mount_s3 "$BUCKET" "$MNT" "cache=$FSDIR/a,$OPTS"
check "write-back mount of another, cache on the same ext4" \
	mount_s3 "$BUCKETB" "$MNTB" "cache=$FSDIR/b,$OPTS"
echo 1 >$P/wb_device_pct

cp "$WORK/f1" "$MNT/x1"
cp "$WORK/f2" "$MNTB/x2"
is "$(mnt_stat wb_queued) $(mnt_stat wb_queued "$MNTB") $(mnt_stat wb_runs) $(mnt_stat wb_runs "$MNTB")" \
	"1 1 0 0" "2 MiB queued on the device, under 1% of it: one file queued on each mount, nothing uploaded"
cp "$WORK/f3" "$MNT/x3"
q=$(($(mnt_stat wb_queued_bytes) + $(mnt_stat wb_queued_bytes "$MNTB")))
is "$((q <= 2 * 1048576 && $(mnt_stat wb_runs) + $(mnt_stat wb_runs "$MNTB") >= 1))" 1 \
	"the third MiB went past it: its close returned once uploads brought the device under it ($q bytes queued)"
b_ran() { [ "$(mnt_stat wb_runs "$MNTB")" -ge 1 ]; }
is "$(wait_until b_ran && echo yes)" yes \
	"the close started the other mount's uploads too (its own delay is 60 s)"
check "the other mount's file is in S3" env BUCKET="$BUCKETB" bash -c "s3_is x2 '$WORK/f2'"

echo 100 >$P/wb_device_pct
r0=$(mnt_stat wb_runs "$MNTB")
cp "$WORK/f4" "$MNTB/x4"
cp "$WORK/f1" "$MNTB/x5"
is "$(mnt_stat wb_runs "$MNTB") $(mnt_stat wb_queued "$MNTB")" "$r0 2" \
	"with wb_device_pct=100 the next closes wait for nothing"
check "umount both (their queues are uploaded)" \
	bash -c "umount_s3 '$MNTB' && umount_s3 '$MNT'"
tap_done
