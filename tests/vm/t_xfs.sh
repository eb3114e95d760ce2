#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_xfs: the same read path with the cache on xfs (the other supported lower
# filesystem): correct bytes cold and warm, a remount fetches nothing, the
# lower file is sparse until read.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init xfs
if [ -z "${S3CFS_NVME_XFS:-}" ]; then
	echo "1..0 # SKIP no xfs on the NVMe disk (mkfs.xfs or sfdisk missing)"
	exit 0
fi
plan 10

CACHE=$S3CFS_NVME_XFS/cache/xfs
mkdir -p "$CACHE"
want=$(make_fixture "$WORK/f" 5242887 xfs)
s3_put "$BUCKET" dir/f.bin "$WORK/f"
vr=$(helper verify-read)

check "module loads" load_module
check_sh "daemon starts" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=30,readahead=0"; then
	not_ok "mount with the cache on xfs"
	tap_done
fi
ok "mount with the cache on xfs"
check "reading 4 KiB leaves the lower file sparse" bash -c "
	timeout 60 dd if='$MNT/dir/f.bin' bs=4k count=1 status=none | cmp -n 4096 - '$WORK/f' &&
	[ \$((\$(stat -c %b '$CACHE/dir/f.bin') * 512)) -lt 5242887 ]"
is "$(timeout 120 cat "$MNT/dir/f.bin" | sha256sum | cut -d' ' -f1)" "$want" "cold read matches"
check "mmap read matches" bash -c "drop_caches && '$vr' '$MNT/dir/f.bin' '$WORK/f' --mode mmap"
check "umount" umount_s3 "$MNT"
drop_caches
check "remount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=30"
is "$(timeout 120 cat "$MNT/dir/f.bin" | sha256sum | cut -d' ' -f1)" "$want" "warm read after remount matches"
is "$(mnt_stat fetches)" 0 "... with no fetch"
tap_done
