#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - s3cachefs end to end (`make demo`).
#
# Starts the S3 test server with a sample dataset (8 shards of 16 MiB; 4 MiB
# with QUICK=1), loads the module, starts s3cachefsd, mounts the bucket and
# reads the dataset three times: cold (empty NVMe cache, S3 behind it), warm
# (page cache dropped, data on NVMe) and hot (page cache), printing the
# throughput of each next to a baseline read of the same bytes straight from
# the NVMe filesystem, and the mount's sysfs counters. Both read ahead as far
# (DEMO_READAHEAD_KB, default 8192: s3cachefs' default): the mount gets
# readahead=, the NVMe device's readahead is set to the same for the
# baseline and restored afterwards (with the device's default, 128 KiB,
# the baseline is the slower one and the warm ratio flatters s3cachefs).
#
# Where this host can load modules (/proc/modules exists) it runs here, as
# root, with the module built in the tree (s3cachefs.ko) and the cache under
# DEMO_DIR (default /var/tmp/s3cachefs-demo, which must be on ext4 or xfs).
# Elsewhere it builds build/6.1/s3cachefs.ko and runs inside the test VM
# (tools/vm/run-vm.sh; DEMO_KERNEL=6.12 for the other kernel), on the VM's
# emulated NVMe disk. Under TCG all figures are CPU-bound: compare ratios.
set -uo pipefail
# Parse everything before running anything: this file may be edited (a
# checkout, a commit) while a long run is executing it.
{

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1

if [ "${1:-}" != --here ] && [ ! -e /proc/modules ]; then
	kernel=${DEMO_KERNEL:-6.1}
	echo "demo: this kernel cannot load modules: running in the test VM ($kernel)"
	make -s "build/$kernel/s3cachefs.ko" || { echo "demo: module build failed" >&2; exit 1; }
	[ -x daemon/s3cachefsd ] || make -s -C daemon || { echo "demo: daemon build failed" >&2; exit 1; }
	exec tools/vm/run-vm.sh --kernel "$kernel" --timeout 1800 \
		--env "S3CFS_KO=build/$kernel/s3cachefs.ko" -- bash tools/demo.sh --here
fi

[ "$(id -u)" = 0 ] || { echo "demo: needs root (insmod, mount)" >&2; exit 1; }
. tests/lib/common.sh
[ -n "${VM_OUT:-}" ] || S3CFS_KO=${S3CFS_KO_NATIVE:-$repo/s3cachefs.ko}
export S3CFS_LOGDIR=${VM_OUT:-/tmp}/demo-logs
TEST_NAME=demo

SHARDS=8 SHARD=16M
[ -n "${QUICK:-}" ] && SHARD=4M
BUCKET=demo
MNT=/mnt/s3cachefs-demo
export S3_PORT=${DEMO_PORT:-9000}
export S3_ENDPOINT=http://127.0.0.1:$S3_PORT

# --- where the NVMe cache lives ----------------------------------------------
if [ -n "${VM_OUT:-}" ]; then
	if ! mountpoint -q /nvme; then
		mkfs.ext4 -q -F -E nodiscard /dev/nvme0n1 && mkdir -p /nvme &&
			mount /dev/nvme0n1 /nvme || { echo "demo: cannot set up /dev/nvme0n1" >&2; exit 1; }
	fi
	base=/nvme/demo
else
	base=${DEMO_DIR:-/var/tmp/s3cachefs-demo}
fi
mkdir -p "$base"
case "$(stat -f -c %T "$base")" in
ext2/ext3|xfs) ;;
*) echo "demo: $base is on $(stat -f -c %T "$base"): the cache must be on ext4 or xfs (set DEMO_DIR)" >&2; exit 1 ;;
esac
S3_DATA=$base/s3
CACHE=$base/cache
rm -rf "$S3_DATA" "$CACHE" "$S3_DATA".s3server.*
mkdir -p "$CACHE" "$S3_DATA/$BUCKET"

# Equal readahead: the block device under $base reads ahead RA_KB too.
RA_KB=${DEMO_READAHEAD_KB:-8192}
ra_dev=$(findmnt -n -o SOURCE --target "$base" 2>/dev/null)
ra_old=
if [ -b "$ra_dev" ] && ra_old=$(blockdev --getra "$ra_dev" 2>/dev/null) &&
   blockdev --setra $((RA_KB * 2)) "$ra_dev" 2>/dev/null; then
	ra_note="both with $RA_KB KiB readahead ($ra_dev's set to it)"
else
	ra_old=
	ra_note="s3cachefs with $RA_KB KiB readahead, the baseline with its device's (${ra_dev:-unknown}: not settable here)"
fi

cleanup() {
	[ -n "$ra_old" ] && blockdev --setra "$ra_old" "$ra_dev" 2>/dev/null
	mountpoint -q "$MNT" && umount "$MNT"
	stop_daemon
	unload_module
	tests/s3server/s3server.sh stop "$S3_DATA" "$S3_PORT"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
elapsed() { echo "$(date +%s.%N) - $1" | bc; }
mibs() { echo "scale=1; $1 / 1048576 / $2" | bc; }	# BYTES SECONDS

# --- the dataset --------------------------------------------------------------
step "dataset: $SHARDS shards of $SHARD in s3://$BUCKET/shards/"
total=0
for ((i = 0; i < SHARDS; i++)); do
	f=$base/shard-$i.tmp
	make_fixture "$f" "$SHARD" "demo-$i" >/dev/null || exit 1
	s3_seed "$BUCKET" "shards/shard-$(printf %05d "$i").bin" "$f" || exit 1
	total=$((total + $(stat -c %s "$f")))
	rm -f "$f"
done
t=$(date +%s.%N)
tests/s3server/s3server.sh start "$S3_DATA" "$S3_PORT" || exit 1
echo "s3rver up in $(elapsed "$t") s"

step "module, daemon, mount"
load_module || exit 1
start_daemon || exit 1
mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60,readahead=$RA_KB" || exit 1
findmnt -n "$MNT"
ls -l "$MNT/shards"
sysfs=/sys/fs/s3cachefs/$(mountpoint -d "$MNT")

readall() {	# DIR [SUFFIX] -> seconds
	local t
	t=$(date +%s.%N)
	cat "$1"/*${2:-} >/dev/null || return 1
	elapsed "$t"
}
counters() {
	local c
	for c in chunk_hits chunk_misses fetches fetch_bytes fetch_errors fetch_timeouts lookups lists; do
		printf '  %-15s %s\n' "$c" "$(cat "$sysfs/$c")"
	done
	echo "  fetch_latency:"
	sed 's/^/    /' "$sysfs/fetch_latency"
}

# Baseline: the same bytes read straight from the NVMe filesystem.
drop_caches
b_cold=$(readall "$S3_DATA/$BUCKET/shards" ._S3rver_object)
b_hot=$(readall "$S3_DATA/$BUCKET/shards" ._S3rver_object)

step "cold read (empty cache: S3 -> NVMe -> page cache)"
drop_caches
cold=$(readall "$MNT/shards") || { echo "demo: cold read failed" >&2; exit 1; }
counters
step "warm read (page cache dropped: NVMe -> page cache)"
drop_caches
warm=$(readall "$MNT/shards") || exit 1
counters
step "hot read (page cache)"
hot=$(readall "$MNT/shards") || exit 1
counters

step "throughput ($((total >> 20)) MiB)"
printf '  %-34s %8.1f MiB/s  %6.1f s\n' \
	"cold  (s3cachefs, from S3)" "$(mibs $total "$cold")" "$cold" \
	"warm  (s3cachefs, from NVMe)" "$(mibs $total "$warm")" "$warm" \
	"hot   (s3cachefs, page cache)" "$(mibs $total "$hot")" "$hot" \
	"baseline: NVMe fs, cold" "$(mibs $total "$b_cold")" "$b_cold" \
	"baseline: NVMe fs, page cache" "$(mibs $total "$b_hot")" "$b_hot"
printf '  warm/baseline-cold %.2f, hot/baseline-hot %.2f, warm/cold %.1fx\n' \
	"$(echo "$b_cold / $warm" | bc -l)" "$(echo "$b_hot / $hot" | bc -l)" \
	"$(echo "$cold / $warm" | bc -l)"
echo "  (readahead: $ra_note)"
[ -n "${VM_OUT:-}" ] && echo "  (inside a TCG guest: CPU-bound, only the ratios mean something)"
exit 0
exit
}
