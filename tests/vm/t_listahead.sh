#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_listahead: a walk finds directories listed ahead, in parallel. After
# the kernel's LIST of tree/, the daemon lists its subdirectories in the
# background, list_ahead (4) at a time; the fault proxy makes each listing
# take a second, so the proxy sees several at once. A find over the tree
# then needs no LIST of those directories (on the old code: one per
# directory, one after the other, as find reached them). A directory of
# more than one page is left to the kernel's own LIST, whose answer is
# complete. --list-ahead 0 turns it off. (s3rver builds a page slowly on
# the debug kernel: the daemon's stall timeout is raised.)
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init listahead
plan 15

for i in 01 02 03 04 05 06 07 08 09 10 11 12; do
	s3_seed_many "$BUCKET" "tree/d$i/" 40
done
s3_seed_many "$BUCKET" tree/huge/ 1001
for i in 1 2 3 4 5; do
	s3_seed_many "$BUCKET" "tree2/e$i/" 10
done
check_sh "fault proxy starts" start_faultproxy 9432
check "module loads" load_module
check_sh "daemon starts" start_daemon --stall-timeout 300
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=300,meta_ttl=3600"
# Listings (not a LOOKUP's one-key LIST) take a second each.
fp_rules '[{"method": "GET", "query": "delimiter", "fault": "stall", "seconds": 1}]'
ahead() {	# listings ahead the daemon finished or gave up so far
	grep -cE 'LIST s3://[^ ]*/tree/[^ ]*: (.* \(listed ahead\)|more than a page, not listed ahead)' "$DAEMON_LOG"
}
ahead_at_least() {	# N
	[ "$(ahead)" -ge "$1" ]
}

is "$(timeout $TAP_TIMEOUT ls "$MNT/tree" | wc -l)" 13 "ls tree: 13 directories"
wait_until ahead_at_least 13
is "$(ahead)" 13 "its 13 subdirectories are listed ahead"
is "$(grep -c 'more than a page, not listed ahead' "$DAEMON_LOG")" 1 \
	"... the one of 1001 objects (two pages) is left to the kernel"
check "... several at once (the proxy saw $(fp_stat max_open) requests at a time)" \
	test "$(fp_stat max_open)" -ge 3
l0=$(mnt_stat lists)
is "$(timeout $((2 * TAP_TIMEOUT)) find "$MNT/tree" -type f | wc -l)" $((12 * 40 + 1001)) \
	"find over the tree: every object"
is "$(( $(mnt_stat lists) - l0 ))" 1 "... with one LIST (the big directory), not 13"

# --- off --------------------------------------------------------------------------
umount_s3 "$MNT"
stop_daemon
check_sh "daemon starts with --list-ahead 0" start_daemon --list-ahead 0 --stall-timeout 300
check "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=300,meta_ttl=3600"
is "$(timeout $TAP_TIMEOUT ls "$MNT/tree2" | wc -l)" 5 "ls tree2: 5 directories"
sleep 3
l0=$(mnt_stat lists)
is "$(timeout $((2 * TAP_TIMEOUT)) find "$MNT/tree2" -type f | wc -l)" 50 "find over tree2: every object"
is "$(( $(mnt_stat lists) - l0 ))" 5 "... with a LIST per directory: nothing was listed ahead"
tap_done
