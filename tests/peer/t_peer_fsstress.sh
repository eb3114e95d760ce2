#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_peer_fsstress: xfstests' ltp/fsstress (built by tests/peer/build.sh,
# not ours), 4 processes of random operations of every kind it knows
# (those S3 cannot express fail, which fsstress shrugs off) on a
# writable,allow_delete,posix_meta mount, then the same with writeback.
# fsstress verifies nothing itself: after it, the tree S3 holds (keys,
# bytes, symlink targets, x-amz-meta-mode/uid/gid/mtime) must be the tree
# the mount shows, and a new mount on an empty cache must show it again.
# A kernel warning or oops fails the run (tests/run.sh).
# PEER_FSSTRESS_OPS (500) operations per process; --env PEER_SEED=N
# replays. Expected failures: tests/peer/expected/fsstress.txt.
# timeout: 2400
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
test_init peer_fsstress
FSSTRESS=$PEER_DIR/xfstests/ltp/fsstress
peer_need "$FSSTRESS"
OPS=${PEER_FSSTRESS_OPS:-500}
TREE="python3 $REPO/tests/peer/tree.py"
diag "seed $PEER_SEED (--env PEER_SEED=$PEER_SEED replays), 4 x $OPS operations"

load_module || { not_ok "module loads"; echo "1..$TAP_N"; exit 1; }
start_daemon || { not_ok "daemon starts"; echo "1..$TAP_N"; exit 1; }

# compare NAME A.json B.json: record the difference as NAME's result.
compare() {
	local out
	if out=$($TREE diff "$2" "$3" 2>&1); then
		peer_result "$mode" "$1" - ok
	else
		peer_result "$mode" "$1" - fail "$out"
		diag "$mode $1: $out"
		cp "$2" "$3" "${S3CFS_LOGDIR:-$WORK}/" 2>/dev/null
	fi
}

for mode in default writeback; do
	peer_mount "$mode" || continue
	mkdir -p "$MNT/$mode"
	t0=$SECONDS
	out=$(timeout $((1200 * ${S3CFS_TIMEOUT_SCALE:-1})) "$FSSTRESS" -d "$MNT/$mode" \
		-p 4 -n "$OPS" -s "$PEER_SEED" -v 2>&1)
	rc=$?
	echo "$out" >"${S3CFS_LOGDIR:-$WORK}/peer_fsstress-$mode.log"
	diag "$mode: fsstress -p 4 -n $OPS -s $PEER_SEED: exit $rc, $((SECONDS - t0)) s"
	if [ $rc = 0 ]; then
		peer_result "$mode" fsstress - ok
	else
		peer_result "$mode" fsstress - fail "exit $rc: $(tail -n 5 <<<"$out")"
	fi
	if ! err=$(peer_sync "$mode" 2>&1); then
		peer_result "$mode" fsstress:s3 - fail "s3cachectl sync: $err"
	fi
	$TREE mount "$MNT/$mode" "$WORK/$mode-mount.json" >/dev/null
	# Every close and the sync are done: S3 must have the tree now.
	$TREE s3 "$S3_DATA/$BUCKET" "$mode" "$WORK/$mode-s3.json" >/dev/null
	compare fsstress:s3 "$WORK/$mode-mount.json" "$WORK/$mode-s3.json"
	diag "$mode: $(grep -c '"type": "f"' "$WORK/$mode-mount.json") files, $(grep -c '"type": "d"' "$WORK/$mode-mount.json") directories, $(grep -c '"type": "l"' "$WORK/$mode-mount.json") symlinks"
	peer_umount "$mode"
	$TREE s3 "$S3_DATA/$BUCKET" "$mode" "$WORK/$mode-s3.json" >/dev/null
	compare fsstress:s3-umount "$WORK/$mode-mount.json" "$WORK/$mode-s3.json"
	peer_mount "$mode" || continue
	$TREE mount "$MNT/$mode" "$WORK/$mode-remount.json" >/dev/null
	compare fsstress:remount "$WORK/$mode-mount.json" "$WORK/$mode-remount.json"
	peer_umount "$mode"
done
peer_judge fsstress
