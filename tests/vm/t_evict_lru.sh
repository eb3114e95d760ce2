#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_evict_lru: eviction is least recently *used*. A hot file, fully cached
# (so it is never fetched again), is read all along while colder files,
# twice the daemon's --cache-limit, are read once each: the kernel records
# the reads in the lower file's atime (module parameter lru_interval, here
# 1 s), the daemon orders its eviction by that record, and so the cold
# files go while the hot one stays, every byte of it cached. A use is not
# recorded again within lru_interval by a new inode of the same file.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init evict_lru
plan 13

CHUNK=1048576
LIMIT=$((12 * CHUNK))
NCOLD=12			# 2 MiB each: 24 MiB, twice the limit
exp=$WORK/exp
make_fixture "$exp/hot" $((2 * CHUNK)) "lru-hot" >/dev/null
s3_put "$BUCKET" "ws/hot" "$exp/hot" || echo "s3_put hot failed" >&2
for ((i = 0; i < NCOLD; i++)); do
	make_fixture "$exp/c$i" $((2 * CHUNK)) "lru-cold-$i" >/dev/null
	s3_put "$BUCKET" "ws/c$i" "$exp/c$i" || echo "s3_put c$i failed" >&2
done

# Bytes allocated to one cached file.
cached() { find "$CACHE/ws" -name "$1" -printf '%b\n' | awk '{ print $1 * 512 }'; }

check "module loads" load_module
# Record a use at most once a second (the default is a minute).
[ -w /sys/module/s3cachefs/parameters/lru_interval ] &&
	echo 1 >/sys/module/s3cachefs/parameters/lru_interval
check_sh "daemon starts with --cache-limit" start_daemon --cache-limit $LIMIT
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60"

is "$(sha256sum <"$MNT/ws/hot" | cut -d' ' -f1)" "$(sha256 "$exp/hot")" \
	"the hot file reads right (and is now cached)"
sleep 2
a0=$(stat -c %X "$CACHE/ws/hot")

# The hot file: read from start to end every 0.2 s, all along.
(while :; do cat "$MNT/ws/hot" >/dev/null; sleep 0.2; done) &
reader=$!

bad=
for ((i = 0; i < NCOLD; i++)); do
	sleep 2
	[ "$(timeout 120 sha256sum <"$MNT/ws/c$i" | cut -d' ' -f1)" = "$(sha256 "$exp/c$i")" ] || bad+=" c$i"
done
kill $reader 2>/dev/null
wait $reader 2>/dev/null
end=$(date +%s)
is "$bad" "" "$NCOLD cold files (twice the limit) read back right"
sleep 2

a1=$(stat -c %X "$CACHE/ws/hot")
check "the kernel recorded the hot file's reads in its lower atime until the end ($a0 -> $a1, end $end)" \
	test "$a1" -gt "$a0" -a "$a1" -ge $((end - 3))
check "the daemon evicted cold files" grep -q "evicted ws/c" "$DAEMON_LOG"
first=$(cached c0)
check "the coldest file (c0) was evicted ($first bytes left)" test "$first" -lt $CHUNK
check_fails "the hot file was never evicted" grep "evicted ws/hot" "$DAEMON_LOG"
hot=$(cached hot)
check "the hot file is still fully cached ($hot bytes)" test "$hot" -ge $((2 * CHUNK))
is "$(sha256sum <"$MNT/ws/hot" | cut -d' ' -f1)" "$(sha256 "$exp/hot")" \
	"the hot file still reads right"

# A file opened again after its inode was evicted (drop_caches), its use
# recorded less than lru_interval ago: no new record (was: every such open
# wrote the lower atime, one lower inode dirtied per file a loader opens
# again). Recorded longer ago: recorded again.
echo 30 >/sys/module/s3cachefs/parameters/lru_interval
t=$(($(date +%s) - 10))
touch -a -d "@$t" "$CACHE/ws/hot"
echo 3 >/proc/sys/vm/drop_caches
cat "$MNT/ws/hot" >/dev/null
is "$(stat -c %X "$CACHE/ws/hot")" "$t" \
	"a use recorded 10 s ago (lru_interval 30): the open of a new inode of the file writes no lower atime"
t=$(($(date +%s) - 40))
touch -a -d "@$t" "$CACHE/ws/hot"
echo 3 >/proc/sys/vm/drop_caches
cat "$MNT/ws/hot" >/dev/null
a2=$(stat -c %X "$CACHE/ws/hot")
check "a use recorded 40 s ago: recorded again ($t -> $a2)" test "$a2" -ge $(($(date +%s) - 3))
tap_done
