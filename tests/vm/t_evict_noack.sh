#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_evict_noack: eviction cannot stop for want of an ack. The module's
# test-only fault point evict_noack does every EVICT but sends no ack (as
# when the daemon's receive queue is full): the daemon gives each EVICT up
# after --evict-timeout (here 2 s), stats the file, which tells it the file
# was punched, and goes on, so the cache comes back under its limit. Before,
# the first lost ack left the mount "evicting" for good and its cache grew
# to everything read.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init evict_noack
plan 8

CHUNK=1048576
LIMIT=$((8 * CHUNK))
NFILES=12			# 2 MiB each: 24 MiB, three times the limit
exp=$WORK/exp
for ((i = 0; i < NFILES; i++)); do
	make_fixture "$exp/f$i" $((2 * CHUNK)) "noack-$i" >/dev/null
	s3_put "$BUCKET" "ws/f$i" "$exp/f$i" || echo "s3_put f$i failed" >&2
done

usage() {
	find "$CACHE" -path "$CACHE/.s3cachefs" -prune -o -type f -printf '%b\n' |
		awk '{ s += $1 * 512 } END { print s + 0 }'
}
FP=/sys/module/s3cachefs/parameters/fault_points
cleanup_more() {
	[ -w "$FP" ] && echo "" >"$FP"
	test_cleanup
}
trap cleanup_more EXIT

check "module loads" load_module
check "fault point evict_noack on" bash -c "echo evict_noack >$FP"
check_sh "daemon starts with --cache-limit, --evict-timeout 2" \
	start_daemon --cache-limit $LIMIT --evict-timeout 2
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60"

bad=
for ((i = 0; i < NFILES; i++)); do
	[ "$(timeout 120 sha256sum <"$MNT/ws/f$i" | cut -d' ' -f1)" = "$(sha256 "$exp/f$i")" ] || bad+=" f$i"
done
is "$bad" "" "$NFILES files (3x the limit) read back right"
# The passes go on at one EVICT per 2 s: give them time.
for ((i = 0; i < 60; i++)); do
	[ "$(usage)" -le $LIMIT ] && break
	sleep 1
done
u=$(usage)
check "usage came back within the limit ($u <= $LIMIT)" test "$u" -le $LIMIT
check "the kernel dropped the acks (fault point hit)" bash -c "dmesg | grep -q 'fault point evict_noack'"
check "the daemon gave the EVICTs up and went on" \
	grep -q "no answer from the kernel; going on" "$DAEMON_LOG"
tap_done
