#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_large: a 100 MiB object (32 MiB with QUICK=1) -- cold, NVMe-warm and
# page-cache-hot reads compared byte for byte, random preads and mmap, the
# fetch counters, the sparse lower file; then the daemon is killed with
# SIGKILL in the middle of a cold read and restarted: the read completes
# with the right bytes.
# timeout: 1200
. "$(dirname "$0")/../lib/common.sh"
test_init large
plan 16

size=100M
[ -n "${QUICK:-}" ] && size=32M
bytes=$(to_bytes $size)
exp=$WORK/big.bin
want=$(make_fixture "$exp" $size large)
s3_seed "$BUCKET" data/big.bin "$exp"
vr=$(helper verify-read)
opts="cache=$CACHE,chunk=1M,fetch_timeout=60"

# Read FILE and print "SHA256 SECONDS".
timed_sha() {
	local t0 t1 sum
	t0=$(date +%s.%N)
	sum=$(timeout 600 cat "$1" | sha256sum | cut -d' ' -f1)
	t1=$(date +%s.%N)
	echo "$sum $(echo "$t1 - $t0" | bc)"
}
rate() {	# SECONDS -> "N MiB/s"
	echo "$(echo "scale=1; $bytes / 1048576 / $1" | bc) MiB/s"
}

check "module loads" load_module
check_sh "daemon starts" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "$opts"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
is "$(stat -c %s "$MNT/data/big.bin")" "$bytes" "size is $bytes"

read -r sum t <<<"$(timed_sha "$MNT/data/big.bin")"
is "$sum" "$want" "cold read: sha256 matches ($(rate "$t"))"
fetches=$(mnt_stat fetches)
fb=$(mnt_stat fetch_bytes)
check "fetch_bytes ($fb) covers the object" test "${fb:-0}" -ge "$bytes"
check "the lower file is the object's size, fully allocated" \
	bash -c "[ \$(stat -c %s '$CACHE/data/big.bin') = $bytes ] &&
		[ \$((\$(stat -c %b '$CACHE/data/big.bin') * 512)) -ge $bytes ]"

drop_caches
read -r sum t <<<"$(timed_sha "$MNT/data/big.bin")"
is "$sum" "$want" "NVMe-warm read: sha256 matches ($(rate "$t"))"
read -r sum t <<<"$(timed_sha "$MNT/data/big.bin")"
is "$sum" "$want" "page-cache-hot read: sha256 matches ($(rate "$t"))"
check "random preads match" "$vr" "$MNT/data/big.bin" "$exp" --mode pread --count 200 --seed 7
check "mmap matches" bash -c "drop_caches && '$vr' '$MNT/data/big.bin' '$exp' --mode mmap --count 2000"
is "$(mnt_stat fetches)" "$fetches" "no fetch after the first read"
check "fetch_latency is readable" bash -c "mnt_stat fetch_latency | grep -q ."
umount_s3 "$MNT"

# --- SIGKILL the daemon in the middle of a cold read --------------------------
cache2=$CACHE-kill
mkdir -p "$cache2"
drop_caches
mount_s3 "$BUCKET" "$MNT" "cache=$cache2,chunk=1M,fetch_timeout=120" ||
	echo "mount on $cache2 failed" >&2
( timeout 900 cat "$MNT/data/big.bin" | sha256sum | cut -d' ' -f1 >"$WORK/killed.sum" ) &
reader=$!
# Wait until about a quarter has arrived, then kill.
for ((i = 0; i < 600; i++)); do
	fb=$(mnt_stat fetch_bytes 2>/dev/null || echo 0)
	[ "${fb:-0}" -ge $((bytes / 4)) ] && break
	sleep 0.2
done
diag "killing s3cachefsd at fetch_bytes=$fb of $bytes"
kill_daemon
sleep 2
check "the reader is still waiting, not failed" kill -0 "$reader"
check_sh "daemon restarts" start_daemon
if timeout 900 bash -c "while kill -0 $reader 2>/dev/null; do sleep 0.5; done"; then
	wait "$reader"
	is "$(cat "$WORK/killed.sum" 2>/dev/null)" "$want" "the read completes with the right bytes"
else
	not_ok "the read completes with the right bytes" "still reading after 900 s"
fi
tap_done
