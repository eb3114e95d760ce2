# SPDX-License-Identifier: GPL-2.0
# Helpers for the peer suites' VM tests (tests/peer/t_peer_*.sh), sourced
# after tests/lib/common.sh.
#
#   PEER_DIR            where tests/peer/build.sh built the suites
#                       (build/peer)
#   PEER_OPTS           the mount options every peer run uses
#   peer_need FILE...   skip the whole test unless the suite is built
#   peer_result MODE NAME NUM ok|fail [DETAIL]
#                       record one assertion in $PEER_RESULTS
#   peer_mount MODE     mount $BUCKET on $MNT for MODE ("default":
#                       PEER_OPTS; "writeback": PEER_OPTS,writeback), on
#                       a fresh cache directory; a failure is a result
#   peer_umount MODE    unmount (a write-back mount uploads its queue)
#   peer_term           (SIGTERM) judge what ran, then exit 1
#   peer_judge SUITE    judge $PEER_RESULTS against expected/SUITE.txt:
#                       one TAP point per test and mount, then the plan;
#                       the results go to $S3CFS_LOGDIR/NAME.results

PEER_DIR=${PEER_DIR:-$REPO/build/peer}
case "$PEER_DIR" in /*) ;; *) PEER_DIR=$REPO/$PEER_DIR ;; esac
PEER_OPTS="fetch_timeout=60,meta_ttl=3600,writable,allow_delete,posix_meta"
# The seed of the random suites, printed; --env PEER_SEED=N replays a run.
PEER_SEED=${PEER_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
PEER_CTL=$REPO/tools/s3cachectl/s3cachectl

# At its deadline the guest runner sends SIGTERM (then SIGKILL 10 s
# later): judge what ran so far rather than print nothing.
peer_term() {
	trap - TERM
	not_ok "$PEER_SUITE: ran to its end (stopped by SIGTERM at its deadline; what ran is judged)"
	peer_judge "$PEER_SUITE"
	exit 1
}
PEER_SUITE=$(basename "$0" .sh)
PEER_SUITE=${PEER_SUITE#t_peer_}
trap peer_term TERM

peer_need() {
	local f
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			echo "1..0 # SKIP $f is not built (tests/peer/build.sh)"
			exit 0
		fi
	done
	PEER_RESULTS=$WORK/results
	: >"$PEER_RESULTS"
	echo "TAP version 13"
}

peer_result() {	# MODE NAME NUM ok|fail [DETAIL]
	local detail=${5:-}
	echo "$1 $2 $3 $4 ${detail//$'\n'/ | }" >>"$PEER_RESULTS"
}

peer_mount() {	# MODE
	local opts=cache=$CACHE-$1,$PEER_OPTS err
	[ "$1" = writeback ] && opts+=,writeback,upload_delay=1
	rm -rf "$CACHE-$1" && mkdir -p "$CACHE-$1"
	if err=$(mount_s3 "$BUCKET" "$MNT" "$opts" 2>&1); then
		peer_result "$1" mount - ok
		return 0
	fi
	peer_result "$1" mount - fail "$err"
	return 1
}

peer_umount() {	# MODE
	local err
	if err=$(umount_s3 "$MNT" 2>&1); then
		peer_result "$1" umount - ok
	else
		peer_result "$1" umount - fail "$err"
	fi
}

# Everything S3 should hold is there: a write-back mount uploads its queue.
peer_sync() {	# MODE
	[ "$1" = writeback ] || return 0
	timeout 300 "$PEER_CTL" sync "$MNT"
}

peer_judge() {	# SUITE
	local verdict desc diagtext out rc
	# Every assertion, for the host (the guest's $WORK is gone after).
	cp "$PEER_RESULTS" "${S3CFS_LOGDIR:-$WORK}/$TEST_NAME.results" 2>/dev/null
	out=$(python3 "$REPO/tests/peer/judge.py" \
		"$REPO/tests/peer/expected/$1.txt" "$PEER_RESULTS")
	rc=$?
	while IFS=$'\t' read -r verdict desc diagtext; do
		[ -n "$verdict" ] || continue
		if [ "$verdict" = ok ]; then
			ok "$desc"
		else
			not_ok "$desc" "$(printf '%b' "$diagtext")"
		fi
	done <<<"$out"
	[ "$rc" = 0 ] || not_ok "$1: judge.py exited $rc"
	# A run that recorded nothing must not pass as a skip.
	[ "$TAP_N" != 0 ] || not_ok "$1: no results recorded"
	echo "1..$TAP_N"
	[ "$TAP_FAILED" = 0 ]
}
