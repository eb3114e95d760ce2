#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_peer_pjdfstest: pjdfstest (built by tests/peer/build.sh, not ours),
# the POSIX conformance assertions of its groups open unlink rename mkdir
# rmdir truncate ftruncate chmod chown utimensat symlink, each file run
# with prove in a directory of a writable,allow_delete,posix_meta mount,
# then again on one with writeback. Every assertion is judged against
# tests/peer/expected/pjdfstest.txt (the limits of README's table): one
# test point per test file and mount, failing on an assertion that fails
# and is not listed, and on a listed one that passes.
# PEER_PJD_GROUPS and PEER_PJD_MODES choose fewer.
# timeout: 5400
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
test_init peer_pjdfstest
PJD=$PEER_DIR/pjdfstest
peer_need "$PJD/pjdfstest"
GROUPS_=${PEER_PJD_GROUPS:-open unlink rename mkdir rmdir truncate ftruncate chmod chown utimensat symlink}
MODES=${PEER_PJD_MODES:-default writeback}

load_module || { not_ok "module loads"; echo "1..$TAP_N"; exit 1; }
start_daemon || { not_ok "daemon starts"; echo "1..$TAP_N"; exit 1; }

# run_file MODE FILE: prove -v FILE in a fresh directory of the mount; each
# assertion's result into $PEER_RESULTS.
run_file() {
	local mode=$1 t=$2 name out rc
	name=${t#"$PJD/tests/"}
	mkdir -p "$MNT/$mode/${name%.t}" || {
		peer_result "$mode" "$name" plan fail "cannot make $MNT/$mode/${name%.t}"
		return
	}
	out=$(cd "$MNT/$mode/${name%.t}" &&
		timeout $((900 * ${S3CFS_TIMEOUT_SCALE:-1})) prove -v "$t" 2>&1)
	rc=$?
	echo "$out" >>"$WORK/prove-$mode.log"
	# "ok N", "ok N # TODO ..." (pjdfstest's own known failures on
	# Linux count as prove counts them: passed) and "not ok N - tried ...".
	awk -v m="$mode" -v n="$name" -v rc="$rc" '
		/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0 }
		/^(not )?ok [0-9]+/ {
			seen++
			bad = ($1 == "not") && $0 !~ /# *TODO/
			num = bad ? $3 : $2
			line = $0; sub(/^(not )?ok [0-9]+ *(- *)?/, "", line)
			print m, n, num, bad ? "fail" : "ok", line
		}
		END {
			if (plan == "" || seen != plan)
				print m, n, "plan", "fail", "ran " seen + 0 " of " (plan == "" ? "?" : plan) " planned assertions (prove exit " rc ")"
		}' <<<"$out" >>"$PEER_RESULTS"
	rm -rf "${MNT:?}/$mode/${name%.t}"
}

for mode in $MODES; do
	peer_mount "$mode" || continue
	mkdir -p "$MNT/$mode"
	for g in $GROUPS_; do
		t0=$SECONDS
		for t in "$PJD"/tests/"$g"/*.t; do
			run_file "$mode" "$t"
		done
		diag "$mode $g: $((SECONDS - t0)) s"
	done
	peer_umount "$mode"
done
peer_judge pjdfstest
