#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench_report.sh - tools/bench/report.py on a saved run (bench-fixture/: a
# quick run's results.tsv, env and phases, plus the million-entry rows), so a
# broken table or chart fails here and not after a 40-minute bench. The test
# adds to its copy what newer runs record: rounds of the hot seq1 rows, the
# cold rows' second limit (curl into a file), the phases left out, and the
# publish flag of the one run that writes the published page.
# Host only. Prints TAP; exit 1 if anything failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tests/lib/tap.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$repo/tests/host/bench-fixture" "$work/run"
readme='# x\n\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nafter\n'
printf "$readme" >"$work/README.md"
# Hot seq1, rounds 2 and 3 (round 1 is the fixture's: 561.48 against
# 515.16 MiB/s): per-round ratios 1.09, 0.80, 0.9625; their median 0.96,
# while the medians' ratio (400 / 500) would be 0.80.
printf '%s\tpagecache\tseq1\tok\t%s\t\t\t\t3\tround\t%s\n' \
	ext4 500 2 s3cachefs 400 2 ext4 400 3 s3cachefs 385 3 |
	sed 's/^s3cachefs\tpagecache/s3cachefs\thot/' >>"$work/run/results.tsv"
# The second cold limit, one round: 27.49 / 40 = 0.69.
printf 'curl-file\tcold\tseq1\tok\t40.00\t\t\t\t0.4\t16 MiB, one GET, into a file on the NVMe\t1\n' \
	>>"$work/run/results.tsv"
printf 'phases=cold fill warm hot meta small bigls smallf ckpt\n' >>"$work/run/env.txt"
printf 'phases_all=cold fill warm hot profile meta small bigls smallf ckpt\n' >>"$work/run/env.txt"

plan 17
md=$work/out/results.md
out=$(python3 "$repo/tools/bench/report.py" "$work/run" "$work/out" "$work/README.md" 2>&1)
is "$?" 1 "a run without publish=1 in host.txt is refused the README"
unchanged() {
	[ "$(cat "$work/README.md")" = "$(printf "$readme")" ] && [ ! -e "$md" ] &&
		[ -z "$(ls "$work/out" 2>/dev/null)" ]
}
check_sh "... and writes nothing: neither the README nor its results" unchanged

echo publish=1 >>"$work/run/host.txt"
out=$(python3 "$repo/tools/bench/report.py" "$work/run" "$work/out" "$work/README.md" 2>&1)
is "$?" 0 "report.py exits 0 on a publishing run with every table${out:+ (last line: ${out##*$'\n'})}"
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
	! grep -q '^old$' "$work/README.md" &&
		grep -q '^after$' "$work/README.md" && [ "$(head -1 "$work/README.md")" = "# x" ] &&
		grep -q '^| target | measured | ratio | result |' "$work/README.md"
}
# The page and the README say which run they are: commit, date, host load,
# what was left out; the same lines in both.
header() {
	local h
	h=$(grep -E '^(Run of commit|- Host load|- Left out|- Rounds)' "$md")
	echo "$h" >&2
	grep -q '^Run of commit `d9e36de`, 2026-12-04T19:08Z, .*published' <<<"$h" &&
		grep -q '^- Host load: load average 1.71 mean, 2.30 max on 2 CPUs' <<<"$h" &&
		grep -q '^- Left out: phases profile; .*--quick' <<<"$h" &&
		[ "$(grep -cE '^(Run of commit|- Host load|- Left out|- Rounds)' "$md")" = 4 ] &&
		[ "$h" = "$(grep -E '^(Run of commit|- Host load|- Left out|- Rounds)' "$work/README.md")" ]
}
# Rounds: the median of the per-round ratios and their spread, over the
# rows' medians (400 and 500 MiB/s).
rounds() {
	grep -F '| hot sequential (seq1) ≥ 0.95 × ext4 page cache | 400 vs 500 MiB/s | 0.96 (0.80–1.09) | 0.95 | PASS |' "$md" &&
		grep -F '| hot sequential (seq1) ≥ 0.95 × ext4 page cache | 400 vs 500 MiB/s | 0.96 (0.80–1.09) | PASS |' "$work/README.md" &&
		grep -E '^\| s3cachefs \| hot \| 400 \| .* \| 0\.96 \(0\.80–1\.09\) \| .*median of 3 rounds' "$md"
}
# The cold rows' second limit: a target of its own and a column.
second_limit() {
	grep -F '| cold sequential (seq1) ≥ 0.80 × curl into a file on the NVMe | 27.5 vs 40.0 MiB/s | 0.69 | 0.80 | **FAIL** |' "$md" &&
		grep -F '| system | state | MiB/s | IOPS | p50 | p99 | × limit | × file | |' "$md" &&
		grep -E '^\| s3cachefs \| cold \| 27\.5 \| .* \| 0\.54 \| 0\.69 \| ' "$md" &&
		grep -E '^\| curl → file \(limit\) \| cold \| 40\.0 \| .* \| 0\.78 \| 1\.00 \| ' "$md" &&
		grep -E '^\| curl \(limit\) \| cold \| 51\.3 \| .* \| 1\.00 \| 1\.28 \| ' "$md"
}
check_sh "results.md has the targets, data path, metadata and phase sections" sections
check_sh "the million-entry table: s3cachefs at 0.09 of the listing (0.132 s against 1.43 s)" huge_row
check_sh "every target printed has a verdict in results.md's table" verdicts
check_sh "results.png is a PNG (gnuplot ran on the chart data)" is_png
check_sh "the README's block is replaced by the target table, what is around it kept" readme_block
check_sh "results.md and the README's block state the same commit, date, host load and what was left out" header
check_sh "a row in rounds: the median of the rounds' ratios with its min-max, in results.md and the README" rounds
check_sh "cold rows have a second limit, curl into a file: its target and its × file column" second_limit
no_new() { [ -z "$(find "$work" -name '*.new')" ]; }
check_sh "no .new file is left behind" no_new
python3 "$repo/tools/bench/report.py" "$work/run" "$work/out2" >/dev/null 2>&1
is "$?" 0 "a second run without a README argument exits 0"
check_sh "the same results.md" cmp -s "$md" "$work/out2/results.md"
# bench.sh: a partial run refuses docs/bench before it builds or boots
# anything (S3CFS_KO: were the check gone, it would stop at the missing
# module, not start a run).
before=$(cd "$repo" && git status --porcelain -- docs/bench README.md; ls -l --time-style=+%s.%N docs/bench README.md)
for args in "--quick --no-build" "--no-build"; do
	msg=$(cd "$repo" && BENCH_PHASES=cold S3CFS_KO=/nonexistent timeout 30 \
		bash tools/bench/bench.sh $args --out docs/bench 2>&1)
	rc=$?
	if [ $rc = 1 ] && [[ $msg == *"does not write docs/bench"* ]]; then
		ok "bench.sh $args --out docs/bench (BENCH_PHASES=cold): refused"
	else
		not_ok "bench.sh $args --out docs/bench (BENCH_PHASES=cold): refused" "status $rc: $msg"
	fi
done
after=$(cd "$repo" && git status --porcelain -- docs/bench README.md; ls -l --time-style=+%s.%N docs/bench README.md)
is "$after" "$before" "... and docs/bench and README.md are as they were"
tap_done
