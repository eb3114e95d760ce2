#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_listcancel: an interrupted ls stops its LIST in the daemon. A directory
# of 3000 objects lists in three pages; the fault proxy holds every page
# after the first for 6 s, so the listing is surely under way when the ls
# is killed. The kernel then sends CANCEL (its last waiter is gone) and the
# daemon requests no further page (on the old code the listing ran to its
# end: page 3 was still fetched). With two ls waiting, killing one leaves
# the listing to the other, which gets every entry. A listing stopped half
# way is not taken as done: the next ls lists again, complete.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init listcancel
plan 12

s3_seed_many "$BUCKET" big/ 3000
check_sh "fault proxy starts" start_faultproxy 9431
check "module loads" load_module
check_sh "daemon starts" start_daemon --stall-timeout 300
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=300,meta_ttl=3600"
HOLD='[{"method": "GET", "query": "continuation-token", "fault": "stall", "seconds": 6}]'
pages() {	# LIST pages after the first requested so far
	fp_count --method GET --query 'continuation-token'
}
pages_at_least() {	# N
	[ "$(pages)" -ge "$1" ]
}

# --- one ls, killed while page 2 is held ------------------------------------
fp_rules "$HOLD"
ls "$MNT/big" >"$WORK/ls1.out" 2>&1 &
ls1=$!
is "$(wait_until pages_at_least 1 && echo yes)" yes "the listing is under way (page 2 asked for and held)"
kill -TERM $ls1
wait $ls1 2>/dev/null
check "the killed ls is gone" bash -c "! kill -0 $ls1 2>/dev/null"
check "the daemon stopped the LIST" \
	grep -q 'LIST .*big/: stopped after 1 page: nobody waits for it' "$DAEMON_LOG"
sleep 14	# page 2's hold ends after 6 s; page 3 would follow by now
is "$(pages)" 1 "no page after the held one was asked for"

# --- two ls, one killed: the other gets the whole listing ---------------------
: >"$WORK/ls3.out"
fp_rules "$HOLD"
before=$(pages)
ls "$MNT/big" >"$WORK/ls2.out" 2>&1 &
ls2=$!
sleep 1
ls "$MNT/big" >"$WORK/ls3.out" 2>&1 &
ls3=$!
is "$(wait_until pages_at_least $((before + 1)) && echo yes)" yes "a second listing is under way"
# ls3 started a second after ls2: its LIST must have joined before ls2 goes.
wait_until grep -q 'joins request' "$DAEMON_LOG"
kill -TERM $ls2
wait $ls3
is "$?/$(wc -l <"$WORK/ls3.out")" "0/3000" "the other ls still gets all 3000 entries"
is "$(grep -c 'cancelled by the kernel; it rode on request\|cancelled by the kernel; its work goes on for others' "$DAEMON_LOG")" 1 \
	"... the daemon kept the work going for it"
wait $ls2 2>/dev/null

# --- nothing held: a complete listing ------------------------------------------
fp_rules '[]'
is "$(timeout $((2 * TAP_TIMEOUT)) ls "$MNT/big" | wc -l)" 3000 "the next ls lists all 3000"
tap_done
