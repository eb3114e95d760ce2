#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - s3cachefs against its limits and its peers, side by side, in
# one VM boot (see docs/bench/README.md).
#
#   tools/bench/bench.sh [--quick] [--kernel 6.1|6.12] [--out DIR]
#	[--systems "ext4 curl s3cachefs s3fs rclone"] [--no-build | --rev REV]
#	[--profile|--no-profile] [--no-publish]
#
# Boots one QEMU guest (tools/vm/run-vm.sh) that formats the emulated NVMe,
# lays out one dataset, serves it with s3rver and measures, one system after
# the other on that same NVMe: fio on the ext4 itself (the limit), raw curl
# GETs (the S3 server's limit), s3cachefs (cold, warm, hot), s3fs-fuse and
# rclone mount. Then writes DIR/results.md (tables, ratios to the limits,
# targets) and DIR/results.png (gnuplot).
#
# Only the full run with no knob that leaves anything out (no --quick,
# --systems, BENCH_PHASES, BENCH_SYSTEMS, BENCH_*_WL, BENCH_ROUNDS, ...)
# and that built what it measures (no --no-build, S3CFS_KO) publishes: its DIR is docs/bench, and the same report (one run, one
# commit) rewrites docs/bench/results.md, results.png and the benchmark
# block of README.md together, once the guest finished every step. Every
# other run writes only to its own DIR (default build/bench/run-MODE/report)
# and refuses docs/bench.
#
#   --quick      small dataset, one row per target (~5 minutes; what CI runs)
#   --no-publish a full run that writes to its own DIR, as a partial one
#   --no-build   measure build/<kernel>/s3cachefs.ko and daemon/s3cachefsd
#                as they are (default: make both first)
#   --rev REV    measure the module and daemon of commit REV, built apart
#                (build/bench/src) from a `git archive` of it, whatever the
#                working tree holds
#   --profile    perf profiles of s3cachefs (default in the full run)
#
# Environment: BENCH_* variables are passed to the guest (tools/bench/guest.sh
# lists them); S3CFS_KO / S3CFS_DAEMON measure another build.
# Exit status: 0 when the guest finished every step and the report was
# written (missed targets do not fail it); 1 when the guest did not finish
# (a partial report is still written) or nothing could be reported.
set -uo pipefail

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

# One function, parsed whole before it runs (a 20-minute run must not pick
# up edits made to this file meanwhile).
main() {
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cd "$repo" || exit 1

	quick=0 kernel=6.1 out= build=1 profile= systems= rev= publish=1
	while [ $# -gt 0 ]; do
		case "$1" in
		--quick)	quick=1; shift ;;
		--kernel)	kernel=$2; shift 2 ;;
		--out)		out=$2; shift 2 ;;
		--systems)	systems=$2; shift 2 ;;
		--no-build)	build=0; shift ;;
		--rev)		rev=$2; shift 2 ;;
		--profile)	profile=1; shift ;;
		--no-profile)	profile=0; shift ;;
		--no-publish)	publish=0; shift ;;
		-h|--help)	sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*)		echo "bench: unknown option $1 (see --help)" >&2; exit 2 ;;
		esac
	done

	# Where the report goes, decided before anything is built or run.
	mode=full
	[ $quick = 1 ] && mode=quick
	# A run publishes only if it measures everything the full run does:
	# the knobs below leave systems, phases, workloads or rounds out (the
	# others size runs or trace them: the page states them).
	partial=
	[ $quick = 1 ] && partial+=" --quick"
	[ -n "$systems" ] && partial+=" --systems"
	for v in BENCH_PHASES BENCH_SYSTEMS BENCH_COLD_WL BENCH_WARM_WL BENCH_HOT_WL \
		 BENCH_ROUNDS BENCH_ROUND_SYSTEMS BENCH_QUICK BENCH_PROFILE BENCH_PROFILES \
		 BENCH_HUGELS_N BENCH_SHARD_MB BENCH_RUNTIME BENCH_COLD_RUNTIME BENCH_HOT_PCT \
		 BENCH_SMALL_N BENCH_BIGLS_N BENCH_META_LS BENCH_DIR_INDEX; do
		[ -n "${!v+x}" ] && partial+=" $v"
	done
	[ "$profile" = 0 ] && partial+=" --no-profile"
	# What is measured must be the commit named on the page: built here
	# from it (or --rev's), not a build from before or from elsewhere.
	[ $build = 0 ] && partial+=" --no-build"
	[ -z "$rev" ] && [ -n "${S3CFS_KO+x}${S3CFS_DAEMON+x}" ] && partial+=" S3CFS_KO/S3CFS_DAEMON"
	[ $publish = 0 ] && partial+=" --no-publish"
	[ -n "$partial" ] && publish=0
	pub_dir=$repo/docs/bench
	if [ -z "$out" ]; then
		out=$pub_dir
		[ $publish = 1 ] || out=build/bench/run-$mode/report
	fi
	mkdir -p "$out" || die "cannot create $out"
	if [ "$(cd "$out" && pwd)" = "$pub_dir" ]; then
		[ $publish = 1 ] || die "a partial run (${partial# }) does not write docs/bench: leave --out out (its report goes to build/bench/run-$mode/report) or name another directory"
	else
		publish=0
	fi
	commit=$(git rev-parse --short HEAD 2>/dev/null)
	dirty=$(git status --porcelain -- kmod daemon uapi Kbuild 2>/dev/null | wc -l)
	if [ -n "$rev" ]; then
		commit=$(git rev-parse --short "$rev^{commit}") || die "no commit $rev"
		dirty=0
		src=build/bench/src
		rm -rf "$src" && mkdir -p "$src" || die "cannot create $src"
		git archive "$commit" | tar -x -C "$src" || die "git archive $commit failed"
		say "building the module and daemon of $commit in $src"
		make -s -C "$src" "build/$kernel/s3cachefs.ko" >/dev/null || die "module build of $commit failed"
		make -s -C "$src/daemon" >/dev/null || die "daemon build of $commit failed"
		S3CFS_KO=$src/build/$kernel/s3cachefs.ko
		S3CFS_DAEMON=$src/daemon/s3cachefsd
	elif [ $build = 1 ]; then
		make -s "build/$kernel/s3cachefs.ko" >/dev/null || die "module build failed"
		make -s -C daemon >/dev/null || die "daemon build failed"
	fi
	ko=${S3CFS_KO:-build/$kernel/s3cachefs.ko}
	dmn=${S3CFS_DAEMON:-daemon/s3cachefsd}
	[ -f "$ko" ] || die "no module at $ko (make build/$kernel/s3cachefs.ko)"
	[ -x "$dmn" ] || die "no daemon at $dmn (make -C daemon)"
	for t in fio jq gnuplot python3; do
		command -v $t >/dev/null || die "$t is missing (tools/setup.sh)"
	done

	run_dir=$repo/build/bench/run-$mode
	rm -rf "$run_dir"
	mkdir -p "$run_dir" "$out" || die "cannot create $run_dir or $out"

	envs=(--env "BENCH_QUICK=$quick" --env "S3CFS_KO=$ko" --env "S3CFS_DAEMON=$dmn")
	[ -n "$profile" ] && envs+=(--env "BENCH_PROFILE=$profile")
	[ -n "$systems" ] && envs+=(--env "BENCH_SYSTEMS=$systems")
	while IFS='=' read -r name _; do
		case "$name" in BENCH_*) envs+=(--env "$name=${!name}") ;; esac
	done < <(env)

	# Guest: 6 GiB (4 GiB quick): the hot rows need every system's copy of the
	# dataset in the page cache at once; 12 GiB disk (a sparse file here).
	timeout=2700 mem=6144
	[ $quick = 1 ] && timeout=600 mem=4096
	timeout=${BENCH_VM_TIMEOUT:-$timeout}

	# This host is shared and TCG is CPU-bound: sample the host's load while the
	# guest runs, so that the report can say whether anything else competed.
	(
		while :; do
			printf '%s %s %s\n' "$(date +%s)" "$(cut -d' ' -f1 /proc/loadavg)" \
				"$(pgrep -c -x qemu-system-x86 2>/dev/null || pgrep -c qemu-system 2>/dev/null || echo 0)"
			sleep 10
		done
	) >"$run_dir/host-load.txt" 2>/dev/null &
	sampler=$!
	trap 'kill $sampler 2>/dev/null' EXIT

	say "$mode run: guest log in $run_dir (about $([ $quick = 1 ] && echo 5 || echo 28) minutes under TCG on an idle host)"
	t0=$(date +%s)
	tools/vm/run-vm.sh --kernel "$kernel" --mem $mem --disk-size 12 --timeout $timeout \
		--out "$run_dir" "${envs[@]}" -- bash tools/bench/guest.sh
	rc=$?
	t1=$(date +%s)
	kill $sampler 2>/dev/null
	say "guest finished with status $rc after $((t1 - t0)) s"
	rm -f "$run_dir/disk.img"
	[ -s "$run_dir/bench/results.tsv" ] || die "the guest produced no results (see $run_dir/console.log)"

	{
		echo "mode=$mode"
		echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
		echo "wall_s=$((t1 - t0))"
		echo "vm_status=$rc"
		echo "commit=$commit"
		echo "dirty=$dirty"
		# publish=1: the one run that the published page and the README show
		# (left_knobs: why another run does not publish).
		echo "publish=$([ $publish = 1 ] && [ $rc = 0 ] && echo 1 || echo 0)"
		echo "left_knobs=${partial# }"
		echo "host_cpus=$(nproc)"
		# The guest runs this root's binaries: their versions, taken here.
		echo "fio=$(fio --version 2>/dev/null)"
		echo "s3fs=$(dpkg-query -W -f '${Version}' s3fs 2>/dev/null)"
		echo "rclone=$(dpkg-query -W -f '${Version}' rclone 2>/dev/null)"
		echo "curl=$(curl --version 2>/dev/null | head -n 1 | cut -d' ' -f2)"
		echo "node=$(node --version 2>/dev/null)"
		echo "s3rver=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' tests/s3server/node_modules/s3rver/package.json 2>/dev/null | head -n 1)"
		echo "qemu=$(qemu-system-x86_64 --version 2>/dev/null | head -n 1 | sed 's/.*version \([^ ]*\).*/\1/')"
	} >"$run_dir/bench/host.txt"
	cp -f "$run_dir/host-load.txt" "$run_dir/bench/" 2>/dev/null

	# perf profiles recorded in the guest are reported here: the guest's root
	# is this root (same binaries), its kernel symbols come with the run.
	logs=$run_dir/bench/logs
	if command -v perf >/dev/null; then
		for data in "$logs"/perf-*.data; do
			[ -s "$data" ] || continue
			p=${data##*/perf-}
			p=${p%.data}
			ks=()
			[ -s "$logs/kallsyms" ] && ks=(--kallsyms "$logs/kallsyms")
			timeout 300 perf report -i "$data" "${ks[@]}" --stdio --no-children \
				--sort comm,dso,sym --percent-limit 0.5 -g none 2>/dev/null |
				grep -v '^$' | head -n 100 >"$logs/profile-$p.txt"
			timeout 300 perf report -i "$data" "${ks[@]}" --stdio --no-children \
				--sort comm -g none 2>/dev/null | grep -v '^$' | head -n 30 >"$logs/profile-$p-comm.txt"
			timeout 300 perf report -i "$data" "${ks[@]}" --stdio --no-children \
				--comms fio,ls,python3,s3cachefsd --sort sym -G --percent-limit 2 2>/dev/null |
				grep -v '^$' | head -n 600 >"$logs/profile-$p-callers.txt"
		done
	fi

	# The published page and the README's block come from one report of
	# one run; a full run whose guest did not finish publishes nothing.
	readme=
	if [ $publish = 1 ] && [ $rc = 0 ]; then
		readme=README.md
	elif [ $publish = 1 ]; then
		out=build/bench/run-$mode/report
		mkdir -p "$out" || die "cannot create $out"
		say "the guest did not finish: the report goes to $out, docs/bench and README.md are left as they are"
	fi
	python3 tools/bench/report.py "$run_dir/bench" "$out" $readme || die "report failed"
	say "wrote $out/results.md and $out/results.png${readme:+ (and the block in README.md)}"
	if [ $rc != 0 ]; then
		say "the guest did not finish (status $rc; see $run_dir/console.log): the report is partial"
		exit 1
	fi
	exit 0
}

main "$@"
