#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_peer_fsx: xfstests' ltp/fsx (built by tests/peer/build.sh, not ours)
# on a writable,allow_delete,posix_meta mount, then the same with
# writeback. fsx checks every read against its own model: random writes,
# reads and truncates, mapped reads and writes, fallocate (keep size,
# punch, zero, collapse, insert range where offered), copy_file_range and
# close/reopen. Modes: everything (mmap included); no mappings (-R -W);
# EOF pollution (-e 1: stores through the mapping past EOF before the file
# grows, which must read back as zeros); O_DIRECT (-Z, 4 KiB aligned).
# After each, the object in S3 must hold the file's bytes, and a new mount
# on an empty cache must read every file as the first mount did.
# PEER_FSX_OPS (2000) operations a run; --env PEER_SEED=N replays.
# Expected failures: tests/peer/expected/fsx.txt.
# timeout: 2400
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
test_init peer_fsx
FSX=$PEER_DIR/xfstests/ltp/fsx
peer_need "$FSX"
OPS=${PEER_FSX_OPS:-2000}
diag "seed $PEER_SEED (--env PEER_SEED=$PEER_SEED replays), $OPS operations a run"

# NAME: fsx's flags
declare -A FLAGS=(
	[fsx-all]="-c 100"
	[fsx-nommap]="-R -W -c 100"
	[fsx-eof]="-e 1"
	[fsx-direct]="-Z -R -W -r 4096 -w 4096"
)
RUNS="fsx-all fsx-nommap fsx-eof fsx-direct"

load_module || { not_ok "module loads"; echo "1..$TAP_N"; exit 1; }
start_daemon || { not_ok "daemon starts"; echo "1..$TAP_N"; exit 1; }

for mode in default writeback; do
	peer_mount "$mode" || continue
	mkdir -p "$MNT/$mode" "$WORK/$mode"
	seed=$PEER_SEED
	for name in $RUNS; do
		seed=$((seed + 1))
		f=$MNT/$mode/$name
		t0=$SECONDS
		# shellcheck disable=SC2086
		out=$(timeout $((600 * ${S3CFS_TIMEOUT_SCALE:-1})) "$FSX" -q -N "$OPS" \
			-S "$seed" ${FLAGS[$name]} -P "$WORK/$mode" "$f" 2>&1)
		rc=$?
		diag "$mode $name: fsx -N $OPS -S $seed ${FLAGS[$name]}: exit $rc, $((SECONDS - t0)) s"
		if [ $rc = 0 ]; then
			peer_result "$mode" "$name" - ok
		else
			peer_result "$mode" "$name" - fail "fsx -S $seed ${FLAGS[$name]} exit $rc: $(tail -n 12 <<<"$out")"
			diag "$(tail -n 40 <<<"$out")"
			# fsx's own log of the operations, for a replay.
			cp "$WORK/$mode/$name".fsx* "${S3CFS_LOGDIR:-$WORK}/" 2>/dev/null
		fi
		# What fsx left must be what S3 has (a write-back mount first
		# uploads its queue).
		if ! err=$(peer_sync "$mode" 2>&1); then
			peer_result "$mode" "$name:s3" - fail "s3cachectl sync: $err"
		elif ! cat "$f" >"$WORK/$mode/$name.mnt"; then
			peer_result "$mode" "$name:s3" - fail "cannot read $f back"
		elif s3_is "$mode/$name" "$WORK/$mode/$name.mnt"; then
			peer_result "$mode" "$name:s3" - ok
		else
			peer_result "$mode" "$name:s3" - fail "S3's $mode/$name: $(stat -c %s "$WORK/got" 2>/dev/null || echo none) bytes, $(sha256sum <"$WORK/got" 2>/dev/null | cut -c1-16); the mount's: $(stat -c %s "$WORK/$mode/$name.mnt") bytes, $(sha256sum <"$WORK/$mode/$name.mnt" | cut -c1-16)"
		fi
	done
	peer_umount "$mode"
	# Read back from an empty cache: the bytes came from S3.
	peer_mount "$mode" || continue
	for name in $RUNS; do
		if cmp -s "$MNT/$mode/$name" "$WORK/$mode/$name.mnt"; then
			peer_result "$mode" "$name:remount" - ok
		else
			peer_result "$mode" "$name:remount" - fail "a new mount reads $(stat -c %s "$MNT/$mode/$name" 2>&1) bytes, not what the first read"
		fi
	done
	peer_umount "$mode"
done
peer_judge fsx
