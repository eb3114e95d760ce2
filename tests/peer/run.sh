#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/peer/run.sh - other people's test suites against s3cachefs (what
# `make check-peer` runs; not part of `make check` or CI: their sources
# are not ours to vendor and CI cannot fetch them).
#
#   PEER_SRC=DIR tests/peer/run.sh [--kernel 6.1|6.12|debug] [--only "pjdfstest fsx fsstress"]
#                                  [tests/run.sh options, e.g. --env PEER_SEED=N]
#
# Builds the suites (tests/peer/build.sh: PEER_SRC, PEER_XFSTESTS,
# PEER_PJDFSTEST) on the host, then boots one guest with tests/run.sh
# --vm-only running tests/peer/t_peer_*.sh of the suites built. Each
# judges its results against tests/peer/expected/SUITE.txt. The last
# line is tests/run.sh's "N passed, N failed"; logs in build/tests/.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 2

kernel=6.1 only= args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)	kernel=$2; shift 2 ;;
	--only)		only=$2; shift 2 ;;
	*)		args+=("$1"); shift ;;
	esac
done

bash tests/peer/build.sh || exit 1
tests=()
mapfile -t built <build/peer/tests
if [ -n "$only" ]; then
	# In the order given.
	for s in $only; do
		for t in "${built[@]}"; do
			[ "$t" = "tests/peer/t_peer_$s.sh" ] && tests+=("$t")
		done
	done
else
	tests=("${built[@]}")
fi
[ ${#tests[@]} -gt 0 ] || { echo "peer/run.sh: no suite to run" >&2; exit 1; }
# The suite deadline: the sum of the tests' own.
deadline=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "${tests[@]}" | paste -sd+ - | bc)
[ "$kernel" = debug ] && deadline=$((deadline * 4))
exec bash tests/run.sh --vm-only --kernel "$kernel" --only "${tests[*]}" \
	--timeout $((deadline + 300)) --env PEER_DIR=build/peer ${args[@]+"${args[@]}"}
