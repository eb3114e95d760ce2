#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_tier: the fleet tier through the module. Two "nodes" on one kernel:
# two mounts of one bucket, each with its own cache directory, and a daemon
# whose tier (tier_bucket) is a second bucket of the same test server.
# Node A reads the objects cold (the origin sends them, the daemon puts
# their blocks into the tier); node B then reads them with read(2), mmap
# and O_DIRECT: every byte right, and not one byte of object data from the
# origin (its LOOKUPs ask with HEAD, its FETCHes are answered by the tier).
# The same after node B's cache directory is wiped and mounted again. An
# object changed at the origin is read as its new version on node B, never
# the old one.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init tier
plan 23

TIER=$BUCKET-fleet
ADDR=127.0.0.1:9465
MNT_B=/mnt/tier-b
CACHE_B=$S3CFS_NVME/cache/tier-b
s3_mb "$TIER" 2>/dev/null

cleanup_more() {
	umount_s3 "$MNT_B"
	test_cleanup
}
trap cleanup_more EXIT

make_fixture "$WORK/big.bin" $((5 * 1048576 + 4099)) tier-big >/dev/null
make_fixture "$WORK/small.bin" 100K tier-small >/dev/null
make_fixture "$WORK/direct.bin" $((2 * 1048576)) tier-direct >/dev/null
make_fixture "$WORK/small.v2" 90K tier-small-2 >/dev/null
for f in big small direct; do
	s3_put "$BUCKET" $f.bin "$WORK/$f.bin"
done
cat >"$WORK/s3cachefsd.conf" <<EOF
[global]
tier_bucket = $TIER
tier_stall_timeout = 10
tier_connect_timeout_ms = 5000
[bucket $TIER]
endpoint = $S3_ENDPOINT
addressing = path
allow_http = true
EOF

metric() {	# NAME{LABELS}: its value now (0 when absent)
	local v
	v=$(curl -sf -m 10 "http://$ADDR/metrics" | grep -F "$1 " | awk '{ print $2 }' | tail -n 1)
	echo "${v:-0}"
}
origin_bytes() {
	metric 's3cachefsd_s3_received_bytes_total{op="GET"}'
}
# Blocks of 1 MiB the three objects make: 6 + 1 + 2.
BLOCKS=9
puts_done() {
	[ "$(metric 's3cachefsd_tier_puts_total{outcome="stored"}')" -ge "$1" ]
}
wait_puts() {	# N: until the tier stored N blocks in all (60 s at most)
	local i
	for ((i = 0; i < 120; i++)); do
		puts_done "$1" && return 0
		sleep 0.5
	done
	return 1
}
mmap_sha() {	# FILE: the SHA-256 of its bytes read through a mapping
	python3 - "$1" <<'EOF'
import hashlib, mmap, sys
with open(sys.argv[1], "rb") as f:
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        print(hashlib.sha256(m).hexdigest())
EOF
}
direct_sha() {	# FILE: the same read with O_DIRECT
	dd if="$1" iflag=direct bs=1M status=none | sha256sum | cut -d' ' -f1
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }
all_right() {	# MNT: the three objects read there are the fixtures
	local f
	for f in big small direct; do
		cmp "$1/$f.bin" "$WORK/$f.bin" || return 1
	done
}
ge() { if [ "$1" -ge "$2" ]; then ok "$3 ($1 >= $2)"; else not_ok "$3" "got $1, want >= $2"; fi; }

check "module loads" load_module
check_sh "daemon starts with tier_bucket = $TIER" \
	start_daemon --config "$WORK/s3cachefsd.conf" --metrics "$ADDR"
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600"
mkdir -p "$CACHE_B"
check "node B mounts the same bucket with its own cache directory" \
	mount_s3 "$BUCKET" "$MNT_B" "cache=$CACHE_B,fetch_timeout=60,meta_ttl=1"

# --- node A, the tier empty ----------------------------------------------------
o0=$(origin_bytes)
check_sh "node A: every byte right" all_right "$MNT"
ge "$(($(origin_bytes) - o0))" $((7 * 1048576 + 4099 + 100 * 1024)) "node A: the origin sent the objects"
check_sh "node A: the $BLOCKS blocks are put into the tier" wait_puts $BLOCKS
is "$(metric 's3cachefsd_tier_puts_total{outcome="dropped"}')" 0 "node A: no put dropped"

# --- node B, the tier warm -----------------------------------------------------
o1=$(origin_bytes)
h1=$(metric 's3cachefsd_tier_hits_total')
is "$(sha "$MNT_B/big.bin")" "$(sha "$WORK/big.bin")" "node B: read(2) of big.bin right"
is "$(mmap_sha "$MNT_B/small.bin")" "$(sha "$WORK/small.bin")" "node B: mmap of small.bin right"
is "$(direct_sha "$MNT_B/direct.bin")" "$(sha "$WORK/direct.bin")" "node B: O_DIRECT read of direct.bin right"
is "$(($(origin_bytes) - o1))" 0 "node B: not one byte of object data from the origin"
is "$(($(metric 's3cachefsd_tier_hits_total') - h1))" $BLOCKS "node B: every block a tier hit"

# --- node B wiped and mounted again -----------------------------------------
umount_s3 "$MNT_B"
rm -rf "$CACHE_B"
mkdir -p "$CACHE_B"
check "node B: an empty cache directory mounts again" \
	mount_s3 "$BUCKET" "$MNT_B" "cache=$CACHE_B,fetch_timeout=60,meta_ttl=1"
o2=$(origin_bytes)
check_sh "node B, wiped: every byte right" all_right "$MNT_B"
is "$(($(origin_bytes) - o2))" 0 "node B, wiped: not one byte from the origin"
is "$(metric 's3cachefsd_tier_puts_total{outcome="stored"}')" $BLOCKS \
	"node B: no block put twice (the tier had them)"

# --- an object changed at the origin ------------------------------------------
s3_put "$BUCKET" small.bin "$WORK/small.v2"
sleep 2		# past node B's meta_ttl
drop_caches
o3=$(origin_bytes)
is "$(sha "$MNT_B/small.bin")" "$(sha "$WORK/small.v2")" "changed at the origin: node B reads the new version"
ge "$(($(origin_bytes) - o3))" $((90 * 1024)) "changed: its bytes came from the origin"
check_sh "changed: the new version is put into the tier" wait_puts $((BLOCKS + 1))
o4=$(origin_bytes)
# Node A's cache still holds the old version until its meta_ttl (an hour):
# a change at the origin is seen when the metadata is, as without a tier.
is "$(sha "$MNT/small.bin")" "$(sha "$WORK/small.bin")" "node A: still the version it has (meta_ttl 3600)"
is "$(($(origin_bytes) - o4))" 0 "node A: ... from its own cache"

umount_s3 "$MNT_B"
umount_s3 "$MNT"
check "daemon log: no error" sh -c "! grep -E ' (error|crit): ' '$DAEMON_LOG'"
tap_done
