#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_evict: a working set three times the daemon's --cache-limit -- every
# byte read back is right (cold, after eviction, and re-fetched), the cache
# directory's usage never runs past the limit by more than a chunk per
# fetch in flight, the daemon evicts (EVICT, punched by the kernel) instead
# of refusing, and the least recently used files are the ones that go.
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init evict
plan 11

CHUNK=1048576
LIMIT=$((8 * CHUNK))
NFILES=12			# 2 MiB each: 24 MiB, three times the limit
INFLIGHT=4			# fetches in flight at most (readahead window)
exp=$WORK/exp
for ((i = 0; i < NFILES; i++)); do
	make_fixture "$exp/f$i" $((2 * CHUNK)) "evict-$i" >/dev/null
	s3_put "$BUCKET" "ws/f$i" "$exp/f$i" || echo "s3_put f$i failed" >&2
done
opts="cache=$CACHE,chunk=1M,fetch_timeout=60"

# Bytes allocated to cached files (the daemon's own metadata excluded).
usage() {
	find "$CACHE" -path "$CACHE/.s3cachefs" -prune -o -type f -printf '%b\n' |
		awk '{ s += $1 * 512 } END { print s + 0 }'
}

check "module loads" load_module
check_sh "daemon starts with --cache-limit" start_daemon --cache-limit $LIMIT
if ! mount_s3 "$BUCKET" "$MNT" "$opts"; then
	not_ok "mount"
	tap_done
fi
ok "mount"

# Sample usage all along the reads.
maxf=$WORK/max
(max=0; while :; do u=$(usage); ((u > max)) && { max=$u; echo $max >"$maxf"; }; sleep 0.2; done) &
sampler=$!

bad=
for ((i = 0; i < NFILES; i++)); do
	[ "$(timeout 120 sha256sum <"$MNT/ws/f$i" | cut -d' ' -f1)" = "$(sha256 "$exp/f$i")" ] || bad+=" f$i"
done
is "$bad" "" "first pass: $NFILES files (3x the limit) read back right"
sleep 2
u=$(usage)
check "usage after the pass is within the limit ($u <= $LIMIT)" test "$u" -le $LIMIT
check "the daemon evicted files (EVICT acked by the kernel)" grep -q "evicted ws/" "$DAEMON_LOG"
first=$(find "$CACHE/ws" -name f0 -printf '%b\n')
check "the least recently used file (f0) was evicted ($((first * 512)) bytes left)" test $((first * 512)) -lt $CHUNK
last=$(find "$CACHE/ws" -name "f$((NFILES - 1))" -printf '%b\n')
check "the most recent file is still cached ($((last * 512)) bytes)" test $((last * 512)) -ge $((2 * CHUNK))

# Second pass, in reverse: evicted files come back, cached ones hit.
drop_caches
bad=
for ((i = NFILES - 1; i >= 0; i--)); do
	[ "$(timeout 120 sha256sum <"$MNT/ws/f$i" | cut -d' ' -f1)" = "$(sha256 "$exp/f$i")" ] || bad+=" f$i"
done
is "$bad" "" "second pass (reverse, page cache dropped): every byte right"
sleep 2
kill $sampler 2>/dev/null
wait $sampler 2>/dev/null
max=$(cat "$maxf" 2>/dev/null || echo 0)
bound=$((LIMIT + INFLIGHT * CHUNK))
check "usage never exceeded limit + chunk x in-flight ($max <= $bound)" test "$max" -le $bound
u=$(usage)
check "usage at the end within the limit ($u <= $LIMIT)" test "$u" -le $LIMIT
tap_done
