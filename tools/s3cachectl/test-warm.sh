#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-warm.sh - s3cachectl warm on plain files (no module, no server):
# reads everything, -r, -j, the summary line, exit codes, and one message
# then a stop on ENOSPC/EIO (failread.so fakes a full cache). TAP, < 2 s.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ctl=${S3CACHECTL:-$here/s3cachectl}
shim=$here/failread.so
work=$(mktemp -d "${TMPDIR:-/tmp}/s3ctl-warm.XXXXXX")
trap 'rm -rf "$work"' EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && sed 's/^/# /' <<<"$2"
	return 0
}
is() { if [ "$1" == "$2" ]; then ok "$3"; else not_ok "$3" "got:  $1
want: $2"; fi; }

mkdir -p "$work/d/sub"
for i in $(seq -w 1 40); do head -c $((10#$i * 1000)) /dev/zero >"$work/d/f$i"; done
head -c 1048576 /dev/zero >"$work/d/sub/big"
: >"$work/d/sub/empty"

"$ctl" warm -r -j 4 "$work/d" 2>"$work/err"; rc=$?
is "$rc" 0 "warm -r: exit 0"
is "$(wc -l <"$work/err")" 1 "not a tty: one summary line"
if grep -Eq '^warm: 1\.8 MiB / 1\.8 MiB \(100%\), 42/42 files, [0-9.]+ MiB/s, in [0-9]+:[0-9]{2}$' "$work/err"; then
	ok "summary: bytes, files, rate, time"
else not_ok "summary: bytes, files, rate, time" "$(cat "$work/err")"; fi

"$ctl" warm "$work/d" 2>"$work/err"; rc=$?
is "$rc" 1 "a directory without -r: exit 1"
grep -q 'a directory (use -r)' "$work/err" && ok "... says use -r" || not_ok "... says use -r" "$(cat "$work/err")"
"$ctl" warm "$work/d/f01" "$work/nope" 2>"$work/err"; rc=$?
is "$rc" 1 "a missing path: exit 1"
grep -q 'warm: 1000 B / 1000 B (100%), 1/1 files' "$work/err" && ok "... the rest still read" || not_ok "... the rest still read" "$(cat "$work/err")"

if [ -f "$shim" ]; then
	for e in 28:ENOSPC 5:EIO; do
		FAILREAD_MATCH=/d/ FAILREAD_ERRNO=${e%%:*} LD_PRELOAD=$shim \
			"$ctl" warm -r -j 8 "$work/d" 2>"$work/err"; rc=$?
		is "$rc" 1 "${e#*:} on every file: exit 1"
		is "$(grep -c 'stopping' "$work/err")" 1 "${e#*:}: one message, not one per file"
		is "$(grep -c '^s3cachectl' "$work/err")" 1 "${e#*:}: no other errors"
		grep -q ' 0/42 files' "$work/err" && ok "${e#*:}: nothing counted as read" || not_ok "${e#*:}: nothing counted as read" "$(cat "$work/err")"
	done
	# Other errors are per file and do not stop the rest.
	FAILREAD_MATCH=/d/f0 FAILREAD_ERRNO=13 LD_PRELOAD=$shim \
		"$ctl" warm -r -j 2 "$work/d" 2>"$work/err"; rc=$?
	is "$rc" 1 "EACCES on 9 files: exit 1"
	is "$(grep -c 'Permission denied' "$work/err")" 9 "EACCES: one message per failed file"
	grep -q ' 33/42 files' "$work/err" && ok "EACCES: the others still read" || not_ok "EACCES: the others still read" "$(cat "$work/err")"
else
	echo "# no $shim: skipping the full-cache tests"
fi

echo "1..$n"
[ "$failed" = 0 ]
