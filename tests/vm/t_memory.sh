#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_memory: the daemon's memory with 256 S3 requests in flight. s3cachefsd
# runs with --max-inflight 256 behind tests/s3server/faultproxy.py, which
# holds every data GET open; more cold reads than that wait on it. The
# daemon runs with --stall-timeout 600, longer than the test: the proxy
# reads a held response whole from s3rver first, 16 at a time, and under
# TCG the last of 256 x 1 MiB waits there for more than the default 30 s
# without a byte (the daemon then retries it, and the 256 are never all
# held at once); the mount's fetch_timeout is 600 s to match (no byte, no
# progress report). With 256 requests held the daemon's VmRSS must stay under
# MEM_BOUND_MIB (the bound and where it comes from: tests/README.md,
# "Daemon memory bound"), in two shapes:
#   1. held right after the response head: 300 reads of 64 KiB objects;
#   2. held after most of the body: 256 reads of 1 MiB objects (one chunk,
#      one 1 MiB FETCH each), every response stopped 64 KiB short of its
#      end, so whatever the daemon buffers per request is filled.
# Then the hold is released and every read must return the object's bytes.
# The cap itself is checked too: the proxy never sees more than 256 at once.
# timeout: 480
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init memory
plan 15

MEM_BOUND_MIB=${MEM_BOUND_MIB:-160}
INFLIGHT=256
NSMALL=300
MIB=$((1 << 20))
hold=$((MIB - (64 << 10)))

# Phase 1: m/obj-000 .. of 64 KiB; phase 2: l/obj-000 .. of 1 MiB.
{
	for ((i = 0; i < NSMALL; i++)); do
		printf 'm/obj-%03d %d\n' $i $((64 << 10))
	done
	for ((i = 0; i < INFLIGHT; i++)); do
		printf 'l/obj-%03d %d\n' $i $MIB
	done
} | fp_seed "$BUCKET" "$WORK/src"
mkdir -p "$WORK/out/m" "$WORK/out/l"
# Reads land in $WORK/out/KEY; sums_ok PREFIX checks those under PREFIX.
sums_ok() {
	grep "  $1" "$WORK/src/SHA256SUMS" | (cd "$WORK/out" && sha256sum --quiet -c -)
}

# Read every object under PREFIX (per SHA256SUMS) into $WORK/out at once:
# one thread each in one process, so the FETCHes go out together (300
# processes take longer to start under TCG than the daemon waits for a
# silent server).
read_all() {	# PREFIX
	grep "  $1" "$WORK/src/SHA256SUMS" | cut -c67- | python3 -c '
import sys, threading
mnt, out = sys.argv[1], sys.argv[2]
def rd(k):
    try:
        with open(mnt + "/" + k, "rb") as f, open(out + "/" + k, "wb") as o:
            o.write(f.read())
    except OSError as e:
        print(k, e, file=sys.stderr)
ts = [threading.Thread(target=rd, args=(k.strip(),)) for k in sys.stdin]
for t in ts:
    t.start()
for t in ts:
    t.join()
' "$MNT" "$WORK/out"
}

export -f sums_ok read_all

# kB of the daemon's VmRSS or VmHWM.
vm_kb() {
	sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$DAEMON_PID/status"
}
# Wait (up to $2 s) until the proxy holds $1 requests; print how many.
wait_stalled() {
	local i n=0
	for ((i = 0; i < $2 * 2; i++)); do
		n=$(fp_stat stalled)
		[ "$n" -ge "$1" ] && break
		sleep 0.5
	done
	echo "$n"
}
# Phase report: RSS against the bound, and the cap. The proxy counts a
# request as held only while its client is connected; one the daemon gave
# up on (and retries) drops out at once.
measure() {	# WHAT
	local rss hwm n max=0 i
	n=$(wait_stalled $INFLIGHT 200)
	rss=$(vm_kb VmRSS) hwm=$(vm_kb VmHWM)
	for ((i = 0; i < 5; i++)); do	# anything over the cap would show up
		n=$(fp_stat stalled)
		[ "$n" -gt "$max" ] && max=$n
		sleep 0.5
	done
	diag "$1: $n held (at most $max); daemon VmRSS $((rss / 1024)) MiB, VmHWM $((hwm / 1024)) MiB"
	if [ "$n" = $INFLIGHT ] && [ "$max" = $INFLIGHT ]; then
		ok "$1: $INFLIGHT requests in flight, no more (the cap)"
	else
		not_ok "$1: $INFLIGHT requests in flight, no more (the cap)" "$n held, at most $max"
	fi
	if [ -n "$rss" ] && [ "$rss" -lt $((MEM_BOUND_MIB * 1024)) ]; then
		ok "$1: daemon VmRSS $((rss / 1024)) MiB < $MEM_BOUND_MIB MiB"
	else
		not_ok "$1: daemon VmRSS < $MEM_BOUND_MIB MiB" \
			"VmRSS $rss kB, VmHWM $hwm kB with $n requests held"
	fi
}

check "module loads" load_module
ulimit -n 4096
# On a slow (debug) kernel everything waits longer: 256 held reads took
# 700 s there to finish after the release.
SCALE=${S3CFS_TIMEOUT_SCALE:-1}
if ! start_faultproxy 9103; then
	not_ok "fault proxy starts"
	tap_done
fi
ok "fault proxy starts"
check_sh "daemon starts (--max-inflight $INFLIGHT)" start_daemon --max-inflight $INFLIGHT \
	--stall-timeout $((600 * SCALE))
# fetch_timeout 600 too: a held transfer moves no bytes, so the daemon
# sends no progress report for it, and the reads must wait the hold out.
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,readahead=0,meta_ttl=3600,fetch_timeout=$((600 * SCALE))"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
# Listings first (trusted for the whole test): the reads need no LOOKUP.
is "$(timeout 120 ls "$MNT/m" | wc -l) $(timeout 120 ls "$MNT/l" | wc -l)" \
	"$NSMALL $INFLIGHT" "both directories list"
diag "daemon idle: VmRSS $(($(vm_kb VmRSS) / 1024)) MiB"

# --- 1. held right after the response head ---------------------------------
fp_rules "[{\"method\": \"GET\", \"path\": \"^/$BUCKET/m/\", \"fault\": \"stall\",
	\"phase\": \"after-headers\"}]"
t0=$(date +%s)
timeout $((400 * SCALE)) bash -c "read_all m/" 2>"$WORK/read-m.err" &
rpid=$!
measure "held after the head"
fp_rules '[]'
fp_release
wait $rpid
check "released: all $NSMALL reads return the right bytes ($(($(date +%s) - t0)) s)" sums_ok m/
is "$(fp_count --method GET --path "^/$BUCKET/m/")" $NSMALL \
	"one GET per object: no transfer given up while held"

# --- 2. held 64 KiB before the end of 1 MiB bodies ---------------------------
fp_rules "[{\"method\": \"GET\", \"path\": \"^/$BUCKET/l/\", \"fault\": \"stall\",
	\"after_bytes\": $hold}]"
t0=$(date +%s)
timeout $((400 * SCALE)) bash -c "read_all l/" 2>"$WORK/read-l.err" &
rpid=$!
measure "held after $((hold >> 10)) KiB of each 1 MiB body"
fp_rules '[]'
fp_release
wait $rpid
check "released: all $INFLIGHT reads return the right bytes ($(($(date +%s) - t0)) s)" sums_ok l/
is "$(fp_count --method GET --path "^/$BUCKET/l/")" $INFLIGHT \
	"one GET per object: no transfer given up while held"
diag "daemon after both: VmRSS $(($(vm_kb VmRSS) / 1024)) MiB, VmHWM $(($(vm_kb VmHWM) / 1024)) MiB"

if daemon_alive; then ok "the daemon is still running"; else not_ok "the daemon is still running"; fi
umount_s3 "$MNT"
check "unmounted" bash -c "! mountpoint -q '$MNT'"
stop_daemon
stop_faultproxy
tap_done
