#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench_report.sh - tools/bench/report.py on a saved run (bench-fixture/: a
# quick run's results.tsv, env and phases, plus the million-entry rows), so a
# broken table or chart fails here and not after a 40-minute bench.
# Host only. Prints TAP; exit 1 if anything failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tests/lib/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$repo/tests/host/bench-fixture" "$work/run"
printf '# x\n\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nafter\n' >"$work/README.md"

plan 8
out=$(python3 "$repo/tools/bench/report.py" "$work/run" "$work/out" "$work/README.md" 2>&1)
is "$?" 0 "report.py exits 0 on a run with every table${out:+ (last line: ${out##*$'\n'})}"
md=$work/out/results.md
sections() {
	local s
	for s in '## Targets' '## Data path' '## Metadata' '## Duration of each phase'; do
		grep -q "^$s" "$md" || { echo "no $s" >&2; return 1; }
	done
}
huge_row() {
	grep -q '^### A directory of 5000 objects, listed to the end' "$md" &&
		grep -Eq '^\| s3cachefs \| .* \| 0\.09 \| daemon RSS' "$md"
}
verdicts() {
	local printed listed
	printed=$(grep -cE '^(PASS|FAIL) ' <<<"$out")
	listed=$(sed -n '/^## Targets/,/^## Data path/p' "$md" | grep -cE '\| (PASS|\*\*FAIL\*\*) \|$')
	echo "printed $printed, listed $listed" >&2
	[ "$printed" -gt 20 ] && [ "$printed" -eq "$listed" ]
}
is_png() {
	[ "$(head -c 8 "$work/out/results.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
readme_block() {
	grep -q '^Latest run' "$work/README.md" && ! grep -q '^old$' "$work/README.md" &&
		grep -q '^after$' "$work/README.md" && [ "$(head -1 "$work/README.md")" = "# x" ] &&
		grep -q '^| target | measured | ratio | result |' "$work/README.md"
}
check_sh "results.md has the targets, data path, metadata and phase sections" sections
check_sh "the million-entry table: s3cachefs at 0.09 of the listing (0.132 s against 1.43 s)" huge_row
check_sh "every target printed has a verdict in results.md's table" verdicts
check_sh "results.png is a PNG (gnuplot ran on the chart data)" is_png
check_sh "the README's block is replaced by the target table, what is around it kept" readme_block
python3 "$repo/tools/bench/report.py" "$work/run" "$work/out2" >/dev/null 2>&1
is "$?" 0 "a second run without a README argument exits 0"
check_sh "the same results.md" cmp -s "$md" "$work/out2/results.md"
tap_done
