#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_queue: 4096 FETCHes queued in the daemon against a slow server. The
# daemon runs with --max-inflight 8 behind tests/s3server/faultproxy.py,
# which holds every GET under q/ for HOLD_S seconds before answering (a
# server that takes ~25 minutes for the queue); posix_fadvise(WILLNEED) of
# 4096 small files under q/ sends one readahead FETCH each (the module's
# max_pending and max_pending_mount are raised to let them all through).
# With them queued:
#   1. the daemon's open descriptors stay below its idle count plus
#      2 * --max-inflight (a socket and a cache file per transfer in
#      flight) plus FD_SLACK, and its VmRSS below its idle RSS plus
#      RSS_SLACK_MIB: a queued FETCH holds no descriptor and no buffer
#      (daemon/README.md, "Priorities and what a queued request costs");
#   2. a `stat` of a name not looked up yet (LOOKUP: HEAD and LIST) and a
#      read of another file (LOOKUP, then a FETCH a reader is blocked on)
#      each finish within PRIO_BOUND_S seconds, far below the queue's
#      drain time: metadata and blocked reads start before readahead;
#   3. readahead is not starved meanwhile: GETs under q/ go on.
# Mounts with nodir_index: 4096 files opened with their lower files made by
# one listing, so that what is measured is the FETCH queue.
# timeout: 720
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init queue
plan 15

NQ=4096
INFLIGHT=8
HOLD_S=3
FD_SLACK=${FD_SLACK:-8}
RSS_SLACK_MIB=${RSS_SLACK_MIB:-48}
PRIO_BOUND_S=${PRIO_BOUND_S:-30}
PARAMS=/sys/module/s3cachefs/parameters
ADDR=127.0.0.1:9464

{
	for ((i = 0; i < NQ; i++)); do
		printf 'q/obj-%04d 4096\n' $i
	done
	echo "p/blocked.bin $((64 << 10))"
	echo "p/lookup.bin 100"
} | fp_seed "$BUCKET" "$WORK/src"

fds() {
	ls "/proc/$DAEMON_PID/fd" | wc -l
}
rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON_PID/status"
}
# Kernel requests the daemon has read and not answered yet.
daemon_pending() {
	curl -sf -m 10 "http://$ADDR/metrics" |
		sed -n 's/^s3cachefsd_kernel_requests_pending \([0-9]*\).*/\1/p'
}

check "module loads" load_module
old_pending=$(cat $PARAMS/max_pending) old_mount=$(cat $PARAMS/max_pending_mount)
restore_params() {
	echo "$old_pending" >$PARAMS/max_pending
	echo "$old_mount" >$PARAMS/max_pending_mount
}
echo $((2 * NQ)) >$PARAMS/max_pending
echo $((2 * NQ)) >$PARAMS/max_pending_mount
if ! start_faultproxy 9104; then
	not_ok "fault proxy starts"
	restore_params
	tap_done
fi
ok "fault proxy starts"
# A descriptor limit that lets a daemon holding one per queued FETCH show
# it, rather than fail the FETCHes with EMFILE.
ulimit -n 65536
# --stall-timeout 300: the listing of q/ (5 pages) is not held, but on the
# debug kernel beside another VM s3rver took over 20 s (the default) to
# answer one page, and the LIST failed twice ("listing q failed (-5)").
check_sh "daemon starts (--max-inflight $INFLIGHT)" start_daemon --max-inflight $INFLIGHT \
	--metrics $ADDR --stall-timeout 300
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,meta_ttl=3600,fetch_timeout=600,nodir_index"
is "$(timeout $((200 * ${S3CFS_TIMEOUT_SCALE:-1})) ls "$MNT/q" | wc -l)" $NQ \
	"q/ lists $NQ names"
fd0=$(fds) rss0=$(rss_kb)
diag "daemon idle: $fd0 descriptors, VmRSS $((rss0 / 1024)) MiB"

fp_rules "[{\"method\": \"GET\", \"path\": \"^/$BUCKET/q/\", \"fault\": \"stall\",
	\"seconds\": $HOLD_S}]"
t0=$(date +%s)
python3 -c '
import os, sys
d = sys.argv[1]
for n in sorted(os.listdir(d)):
    fd = os.open(os.path.join(d, n), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    os.close(fd)
' "$MNT/q"
diag "posix_fadvise(WILLNEED) of $NQ files: $(($(date +%s) - t0)) s"
# Every FETCH sent, and read by the daemon (under TCG it reads a few
# dozen a second).
t0=$(date +%s)
for ((i = 0; i < 300; i++)); do
	p=$(daemon_pending)
	[ "${p:-0}" -ge $((NQ - 64)) ] && break
	sleep 1
done
diag "the daemon read them in $(($(date +%s) - t0)) s; the kernel has $(mnt_stat pending) pending"
if [ "${p:-0}" -ge $((NQ - 64)) ]; then
	ok "$p FETCHes pending in the daemon (>= $((NQ - 64)))"
else
	not_ok "FETCHes pending in the daemon >= $((NQ - 64))" "${p:-none}"
fi

# --- 1. what the queue costs --------------------------------------------------
fd1=$(fds) rss1=$(rss_kb)
fdmax=$((fd0 + 2 * INFLIGHT + FD_SLACK))
diag "with $p queued: $fd1 descriptors, VmRSS $((rss1 / 1024)) MiB; held by the proxy: $(fp_stat stalled)"
if [ "$fd1" -le $fdmax ]; then
	ok "daemon descriptors $fd1 <= $fd0 idle + 2 x $INFLIGHT + $FD_SLACK"
else
	not_ok "daemon descriptors <= $fdmax" "$fd1 open: $(ls -l /proc/$DAEMON_PID/fd | awk '{print $NF}' | sed 's/[0-9]*$//' | sort | uniq -c | sort -rn | head -n 5 | tr '\n' ';')"
fi
if [ "$rss1" -le $((rss0 + RSS_SLACK_MIB * 1024)) ]; then
	ok "daemon VmRSS $((rss1 / 1024)) MiB <= $((rss0 / 1024)) idle + $RSS_SLACK_MIB MiB"
else
	not_ok "daemon VmRSS <= idle + $RSS_SLACK_MIB MiB" "VmRSS $rss1 kB, idle $rss0 kB"
fi
check "no descriptor ran out" bash -c "! grep -q 'Too many open files' '$DAEMON_LOG'"

# --- 2. what waits behind it ----------------------------------------------------
q0=$(fp_count --method GET --path "^/$BUCKET/q/")
t0=$(date +%s)
if timeout $((2 * PRIO_BOUND_S)) stat "$MNT/p/lookup.bin" >/dev/null; then
	t=$(($(date +%s) - t0))
	if [ $t -le $PRIO_BOUND_S ]; then
		ok "stat of a new name (LOOKUP) in $t s <= $PRIO_BOUND_S s"
	else
		not_ok "stat of a new name (LOOKUP) in <= $PRIO_BOUND_S s" "took $t s"
	fi
else
	not_ok "stat of a new name (LOOKUP) in <= $PRIO_BOUND_S s" "failed or no answer in $((2 * PRIO_BOUND_S)) s"
fi
t0=$(date +%s)
sum=$(timeout $((2 * PRIO_BOUND_S)) cat "$MNT/p/blocked.bin" | sha256sum | cut -d' ' -f1)
t=$(($(date +%s) - t0))
want=$(grep '  p/blocked.bin$' "$WORK/src/SHA256SUMS" | cut -d' ' -f1)
is "$sum" "$want" "a blocked read of another file returns its bytes"
if [ "$sum" = "$want" ] && [ $t -le $PRIO_BOUND_S ]; then
	ok "the blocked read took $t s <= $PRIO_BOUND_S s"
else
	not_ok "the blocked read took <= $PRIO_BOUND_S s" "$t s"
fi
# --- 3. readahead goes on -----------------------------------------------------
sleep $((2 * HOLD_S))
q1=$(fp_count --method GET --path "^/$BUCKET/q/")
diag "GETs under q/: $q0 before the checks, $q1 after; $(mnt_stat pending) pending"
if [ "$q1" -gt "$q0" ]; then
	ok "readahead GETs went on meanwhile ($q0 -> $q1)"
else
	not_ok "readahead GETs went on meanwhile" "$q0 -> $q1"
fi

fp_rules '[]'
fp_release
if daemon_alive; then ok "the daemon is still running"; else not_ok "the daemon is still running"; fi
umount_s3 "$MNT"
check "unmounted" bash -c "! mountpoint -q '$MNT'"
stop_daemon
stop_faultproxy
restore_params
tap_done
