#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_00_env: the guest the other tests rely on -- NVMe ext4, loopback, the S3
# test server (put/get/delete/list round trips and on-disk seeding), the
# compiled helpers, the module and the daemon binaries.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
test_init env
plan 13

check "NVMe ext4 mounted at $S3CFS_NVME" \
	bash -c "findmnt -n -o FSTYPE,SOURCE '$S3CFS_NVME' | grep -qE '^ext4 +/dev/nvme0n1'"
if [ -n "${S3CFS_NVME_XFS:-}" ]; then
	check "NVMe xfs mounted at $S3CFS_NVME_XFS" \
		bash -c "findmnt -n -o FSTYPE '$S3CFS_NVME_XFS' | grep -q '^xfs'"
else
	skip "NVMe xfs mounted" "no mkfs.xfs"
fi
check "lo is up" bash -c "ip -o link show lo | grep -q 'state UNKNOWN\|UP'"
check "s3rver answers" curl -sS -o /dev/null -m 10 "$S3_ENDPOINT/"

f=$WORK/obj
sum=$(make_fixture "$f" 300K env)
check "s3_put of a 300 KiB object" s3_put "$BUCKET" "dir/sub dir/ünï code.bin" "$f"
check "s3_get returns the same bytes" \
	bash -c "s3_get '$BUCKET' 'dir/sub dir/ünï code.bin' '$WORK/back' && [ \"\$(sha256 '$WORK/back')\" = '$sum' ]"
check "ListObjectsV2 shows the key" \
	bash -c "s3_curl '$S3_ENDPOINT/$BUCKET?delimiter=%2F&list-type=2&prefix=dir%2Fsub%20dir%2F' | grep -q '<Key>dir/sub dir/ünï code.bin</Key>'"
check "s3_delete removes it" \
	bash -c "s3_delete '$BUCKET' 'dir/sub dir/ünï code.bin' && ! s3_get '$BUCKET' 'dir/sub dir/ünï code.bin' '$WORK/gone' 2>/dev/null"
check "s3_seed objects are served with their MD5 ETag" \
	bash -c "s3_seed '$BUCKET' seeded/a.bin '$f' &&
		curl -sS -I '$S3_ENDPOINT/$BUCKET/seeded/a.bin' | tr -d '\r' |
		grep -qi \"^etag: \\\"\$(md5sum <'$f' | cut -d' ' -f1)\\\"\""

for h in verify-read mkdata nlfuzz; do
	if [ -x "$(helper $h)" ]; then ok "helper $h built"; else not_ok "helper $h built" "missing $(helper $h)"; fi
done
if [ -f "$S3CFS_KO" ] && [ -x "$S3CFS_DAEMON" ]; then
	ok "module and daemon built"
else
	not_ok "module and daemon built" "module: $S3CFS_KO, daemon: $S3CFS_DAEMON"
fi
tap_done
