# SPDX-License-Identifier: GPL-2.0
# TAP (version 13, kselftest style) helpers for the shell tests.
#
#   plan N              print the plan (once, first)
#   ok DESC             a passing test point
#   not_ok DESC [MSG]   a failing one, MSG (may be multi-line) as diagnostics
#   skip DESC REASON    a skipped one ("ok N - DESC # SKIP REASON")
#   diag MSG            a "# MSG" line
#   check DESC CMD...   run CMD (bounded by $TAP_TIMEOUT seconds, default 60
#                       times S3CFS_TIMEOUT_SCALE, 4 on the debug kernel):
#                       ok if it exits 0, else not_ok with its output. CMD may
#                       be a shell function of tests/lib (they are exported)
#                       or a "bash -c" string using them.
#   check_fails DESC CMD...  the same, but CMD must fail (and not time out)
#   check_sh DESC CMD...     run CMD in this shell (no timeout of its own):
#                       for commands that set shell state, like start_daemon
#   is GOT WANT DESC    ok if the strings are equal (else not_ok, status 1)
#   wait_until CMD...   run CMD in this shell every 0.2 s until it exits 0,
#                       for at most $TAP_TIMEOUT seconds: 0 if it did
#   tap_done            end of the test file: exit 1 if anything failed or
#                       the plan was not met
#
# Everything here writes to stdout; a test's own chatter belongs on stderr
# or in diag lines.

TAP_N=0
TAP_FAILED=0
TAP_PLANNED=
TAP_TIMEOUT=${TAP_TIMEOUT:-$((60 * ${S3CFS_TIMEOUT_SCALE:-1}))}

wait_until() {
	local i

	for ((i = 0; i < 5 * TAP_TIMEOUT; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

plan() {
	TAP_PLANNED=$1
	echo "TAP version 13"
	echo "1..$1"
}

diag() {
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

ok() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1"
}

not_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	echo "not ok $TAP_N - $1"
	[ $# -gt 1 ] && [ -n "$2" ] && diag "$2"
	return 0
}

skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP ${2:-}"
}

# Skip the next N test points with one reason (when a prerequisite failed).
skip_n() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		skip "$1" "${2:-}"
	done
}

check() {
	local desc=$1 out rc
	shift
	out=$(timeout -k 5 "$TAP_TIMEOUT" bash -c '"$@"' tap-check "$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		ok "$desc"
	else
		[ $rc = 124 ] && out="timed out after $TAP_TIMEOUT s: $*
$out"
		not_ok "$desc" "exit $rc: $(tail -n 20 <<<"$out")"
	fi
}

check_fails() {
	local desc=$1 out rc
	shift
	out=$(timeout -k 5 "$TAP_TIMEOUT" bash -c '"$@"' tap-check "$@" 2>&1)
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		not_ok "$desc" "timed out after $TAP_TIMEOUT s: $*"
	elif [ $rc = 0 ]; then
		not_ok "$desc" "succeeded but should have failed: $*
$(tail -n 20 <<<"$out")"
	else
		ok "$desc"
	fi
}

check_sh() {
	local desc=$1 err rc
	shift
	err=$(mktemp)
	"$@" 2>"$err"
	rc=$?
	if [ $rc = 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc: $(tail -n 20 "$err")"
	fi
	rm -f "$err"
	return $rc
}

is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3" "got:  '$1'
want: '$2'"
		return 1
	fi
}

tap_done() {
	if [ -n "$TAP_PLANNED" ] && [ "$TAP_N" != "$TAP_PLANNED" ]; then
		diag "planned $TAP_PLANNED tests but ran $TAP_N"
		exit 1
	fi
	[ "$TAP_FAILED" = 0 ] || exit 1
	exit 0
}
