#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-main.sh - the VM side of the test suite (tests/run.sh boots a VM
# running this). Prepares the guest: /dev/nvme0n1 split into an ext4 (at
# /nvme: caches, s3rver data, fixtures) and, if mkfs.xfs exists, a 1 GiB xfs
# (at /nvme-xfs); s3rver on 127.0.0.1:9000 with its data in /nvme/s3. Then it
# runs every tests/vm/t_*.sh (or those matching S3CFS_TESTS, in its order, space-separated
# globs such as "t_read* t_mount*", or paths of test scripts; none matching
# S3CFS_SKIP, globs separated by spaces or commas), each in its own session with a deadline
# ("# timeout: N" in the test's header, default 600 s; S3CFS_TIMEOUT_SCALE
# multiplies it, e.g. 3 on the debug kernel), and prints one flat TAP stream:
# every test point as "ok N - t_name: description". A test that dies before
# finishing its plan, exits non-zero or times out adds a failing point.
# Leftover mounts and daemons are cleaned up between tests; at the end the
# module must unload. Logs (daemon, test stderr, per-test dmesg) go to
# $VM_OUT/logs. Exit status: 0 if nothing failed.
#
# Shards: with S3CFS_QUEUE, a directory shared by guests booted side by
# side (run-vm.sh --share), each test runs in the one guest that claims it
# first (mkdir there; atomic on the host), and its wall time, guest and
# points are left in QUEUE/NAME/result. With S3CFS_DURATIONS (lines "NAME
# SECONDS") the tests are taken longest first (a test not listed counts 120
# s), so the long ones start early and the short ones fill in the ends.
set -u
# Parse everything before running anything: this file may be edited (a
# checkout, a commit) while a long run is executing it.
{
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
export REPO

: "${VM_OUT:=/tmp/vm-out}"
export VM_OUT
LOGS=$VM_OUT/logs
mkdir -p "$LOGS"
export S3CFS_LOGDIR=$LOGS

N=0 FAILED=0 SKIPPED=0
emit() {	# emit ok|not_ok|skip DESC
	N=$((N + 1))
	case "$1" in
	ok)	echo "ok $N - $2" ;;
	skip)	SKIPPED=$((SKIPPED + 1)); echo "ok $N - $2" ;;
	*)	FAILED=$((FAILED + 1)); echo "not ok $N - $2" ;;
	esac
}
note() { echo "# $*"; }
now() { local s; read -r s _ </proc/uptime; echo "${s%.*}"; }
# Ticks (USER_HZ) the guest's CPUs were busy since boot: a test's share of
# them says whether its wall time is work or waiting (on timers, on S3).
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

echo "TAP version 13"
note "guest: $(uname -r), $(nproc) cpu, $(($(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo) / 1024)) MiB"

# --- the NVMe disk --------------------------------------------------------
setup_disk() {
	local dev=/dev/nvme0n1 ext4 xfs=
	[ -b $dev ] || { note "no $dev"; return 1; }
	if ! command -v sfdisk >/dev/null; then
		note "no sfdisk (package fdisk): whole disk ext4, no xfs"
		ext4=$dev
	else
		if command -v mkfs.xfs >/dev/null; then
			# ext4 gets all but the last GiB (sfdisk has no "all but").
			local mib=$(($(blockdev --getsize64 $dev) >> 20))
			printf 'label: gpt\n,%sMiB,L\n,,L\n' $((mib - 1024)) |
				sfdisk -q $dev >/dev/null || return 1
			xfs=${dev}p2
		else
			printf 'label: gpt\n,,L\n' | sfdisk -q $dev >/dev/null || return 1
		fi
		ext4=${dev}p1
		for i in $(seq 50); do [ -b $ext4 ] && break; sleep 0.1; done
	fi
	mkfs.ext4 -q -F -E nodiscard $ext4 || return 1
	mkdir -p /nvme && mount $ext4 /nvme || return 1
	export S3CFS_NVME=/nvme
	if [ -n "$xfs" ] && mkfs.xfs -q -f -K $xfs && mkdir -p /nvme-xfs &&
			mount $xfs /nvme-xfs; then
		export S3CFS_NVME_XFS=/nvme-xfs
	fi
}
t0=$(now)
if setup_disk; then
	emit ok "setup: NVMe disk partitioned, ext4${S3CFS_NVME_XFS:+ and xfs} mounted ($(($(now) - t0)) s)"
else
	emit not_ok "setup: NVMe disk partitioned, ext4 mounted"
fi

# --- s3rver ---------------------------------------------------------------
export S3_PORT=9000 S3_DATA=/nvme/s3
[ -d /nvme ] || S3_DATA=/tmp/s3
t0=$(now)
if tests/s3server/s3server.sh start "$S3_DATA" "$S3_PORT" >"$LOGS/s3server-start.log" 2>&1; then
	emit ok "setup: s3rver answers on 127.0.0.1:$S3_PORT ($(($(now) - t0)) s)"
else
	emit not_ok "setup: s3rver answers on 127.0.0.1:$S3_PORT"
	sed 's/^/# /' "$LOGS/s3server-start.log"
fi

# --- the tests ------------------------------------------------------------
selected() {
	local t=${1##*/} p skip=${S3CFS_SKIP:-}
	for p in ${skip//,/ }; do
		# shellcheck disable=SC2053
		[[ $t == $p || ${t%.sh} == $p ]] && return 1
	done
	[ -z "${S3CFS_TESTS:-}" ] && return 0
	for p in $S3CFS_TESTS; do
		# shellcheck disable=SC2053
		[[ $t == $p || ${t%.sh} == $p ]] && return 0
	done
	return 1
}

cleanup_after() {	# NAME PIDFILE
	local m pid left=
	while read -r m; do
		[ -n "$m" ] || continue
		left+=" $m"
		timeout 30 umount "$m" 2>/dev/null || timeout 30 umount -l "$m" 2>/dev/null
	done < <(findmnt -rn -t s3cachefs -o TARGET 2>/dev/null)
	if [ -s "$2" ]; then
		while read -r pid; do
			kill -KILL "$pid" 2>/dev/null
		done <"$2"
	fi
	[ -n "$left" ] && note "$1: left mounted:$left (unmounted)"
	return 0
}

run_one() {
	local t=$1 name limit scale=${S3CFS_TIMEOUT_SCALE:-1} out err rc pid start
	local planned= ran=0 failed=0 line num rest dmesg_before deadline killed=
	name=$(basename "$t" .sh)
	limit=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$t" | head -n 1)
	limit=$(( ${limit:-600} * scale ))
	out=$LOGS/$name.tap err=$LOGS/$name.stderr
	export S3CFS_PIDFILE=$LOGS/$name.pids
	: >"$S3CFS_PIDFILE"
	dmesg_before=$(dmesg | wc -l)
	note "--- $name (deadline $limit s)"
	start=$(now)
	busy0=$(busy_ticks)
	( exec setsid bash "$t" ) </dev/null >"$out" 2>"$err" &
	pid=$!
	deadline=$((start + limit))
	while kill -0 "$pid" 2>/dev/null; do
		if [ -z "$killed" ] && [ "$(now)" -ge "$deadline" ]; then
			killed=$(now)
			kill -TERM -- "-$pid" 2>/dev/null
		elif [ -n "$killed" ] && [ "$(now)" -ge $((killed + 10)) ]; then
			kill -KILL -- "-$pid" 2>/dev/null
			# Unkillable (stuck in the kernel): leave it, go on.
			[ "$(now)" -ge $((killed + 40)) ] && break
		fi
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		rc=137
	else
		wait "$pid" 2>/dev/null
		rc=$?
	fi
	[ -n "$killed" ] && rc=124

	while IFS= read -r line; do
		case "$line" in
		"TAP version"*) ;;
		1..*)
			planned=${line#1..}
			planned=${planned%% *}
			if [ "$planned" = 0 ]; then
				rest=${line#*# SKIP}
				[ "$rest" = "$line" ] && rest=""
				emit skip "$name # SKIP${rest}"
			fi
			;;
		ok*|"not ok"*)
			ran=$((ran + 1))
			rest=${line#not ok}
			rest=${rest#ok}
			rest=${rest# }
			num=${rest%%[!0-9]*}
			rest=${rest#"$num"}
			rest=${rest# }
			rest=${rest#- }
			case "$line" in
			"not ok"*)
				if [[ $rest == *"# TODO"* ]]; then emit ok "$name: $rest"
				else failed=$((failed + 1)); emit not_ok "$name: $rest"; fi ;;
			*)
				if [[ $rest == *"# SKIP"* ]]; then emit skip "$name: $rest"
				else emit ok "$name: $rest"; fi ;;
			esac
			;;
		"Bail out!"*)
			failed=$((failed + 1))
			emit not_ok "$name: $line" ;;
		\#*)	echo "$line" ;;
		*)	echo "# $line" ;;
		esac
	done <"$out"

	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		emit not_ok "$name: finished within its deadline ($limit s)"
		[ "$rc" = 137 ] && note "$name: still running after SIGKILL: stuck in the kernel"
	elif [ -n "$planned" ] && [ "$planned" != 0 ] && [ "$ran" -lt "$planned" ]; then
		emit not_ok "$name: ran $ran of $planned planned tests (exit $rc)"
	elif [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
		emit not_ok "$name: exited with status $rc"
	elif [ -z "$planned" ] && [ "$ran" = 0 ]; then
		emit not_ok "$name: printed no TAP (exit $rc)"
	fi
	if [ "$rc" != 0 ] && [ -s "$err" ]; then
		note "$name: last lines of its stderr ($err):"
		tail -n 15 "$err" | sed 's/^/#   /'
	fi
	dmesg | tail -n +$((dmesg_before + 1)) >"$LOGS/$name.dmesg"
	cleanup_after "$name" "$S3CFS_PIDFILE"
	busy=$((($(busy_ticks) - busy0) / $(getconf CLK_TCK)))
	note "$name: $(($(now) - start)) s, CPU busy $busy s"
	[ -z "${S3CFS_QUEUE:-}" ] ||
		echo "$(($(now) - start)) ${S3CFS_SHARD:-1} $ran $failed $busy" >"$S3CFS_QUEUE/$name/result"
}

# Without S3CFS_TESTS every test runs, in name order; with it, in the order
# of its patterns (a long debug-kernel run puts what matters most first).
tests=()
add_test() {
	local x
	for x in ${tests[@]+"${tests[@]}"}; do
		[ "$x" = "$1" ] && return 0
	done
	tests+=("$1")
}
if [ -z "${S3CFS_TESTS:-}" ]; then
	for t in tests/vm/t_*.sh; do
		[ -f "$t" ] && selected "$t" && add_test "$t"
	done
else
	for p in $S3CFS_TESTS; do
		[[ $p == */* ]] && continue
		for t in tests/vm/t_*.sh; do
			# shellcheck disable=SC2053
			[[ ${t##*/} == $p || $(basename "$t" .sh) == $p ]] || continue
			[ -f "$t" ] && selected "$t" && add_test "$t"
		done
	done
fi
# A path in S3CFS_TESTS runs that script (a test being written elsewhere).
for p in ${S3CFS_TESTS:-}; do
	[[ $p == */* ]] && [ -f "$p" ] && tests+=("$p")
done
if [ -n "${S3CFS_DURATIONS:-}" ] && [ -f "$S3CFS_DURATIONS" ]; then
	mapfile -t tests < <(
		for t in ${tests[@]+"${tests[@]}"}; do
			secs=$(awk -v n="$(basename "$t" .sh)" '$1 == n { print $2; exit }' "$S3CFS_DURATIONS")
			echo "${secs:-120} $t"
		done | sort -s -k1,1nr | cut -d' ' -f2-)
fi
# What the shards are to run, for tests/run.sh to check that all ran.
[ -z "${S3CFS_QUEUE:-}" ] ||
	printf '%s\n' ${tests[@]+"${tests[@]}"} >"$S3CFS_QUEUE/list.${S3CFS_SHARD:-1}"
# After an oops or a soft lockup the kernel is not worth testing further:
# the remaining tests would only run into their deadlines.
tainted_dead() {
	local t
	read -r t </proc/sys/kernel/tainted
	(( t & (1 << 7 | 1 << 14) ))	# TAINT_DIE, TAINT_SOFTLOCKUP
}
for t in ${tests[@]+"${tests[@]}"}; do
	if [ -n "${S3CFS_QUEUE:-}" ]; then
		# Another guest has it, or this one can test no more: a test
		# left unclaimed is reported by tests/run.sh.
		tainted_dead && break
		mkdir "$S3CFS_QUEUE/$(basename "$t" .sh)" 2>/dev/null || continue
	elif tainted_dead; then
		emit not_ok "$(basename "$t" .sh): not run: the kernel oopsed or locked up earlier (see the console log)"
		continue
	fi
	run_one "$t"
	# Where the shared NVMe ext4 goes: a test that leaves gigabytes behind
	# shows up here, not as ENOSPC in whichever test comes next.
	note "after $(basename "$t" .sh): /nvme $(df -h --output=used,avail /nvme | tail -n 1 | tr -s ' ') (used, free); biggest: $(du -xsm /nvme/* 2>/dev/null | sort -rn | head -n 3 | tr '\n\t' ', ')"
done

# The module must leave cleanly (kmemleak then looks for leaks).
if [ -d /sys/module/s3cachefs ] && ! tainted_dead; then
	if out=$(timeout 60 rmmod s3cachefs 2>&1); then
		emit ok "teardown: s3cachefs.ko unloads"
	else
		emit not_ok "teardown: s3cachefs.ko unloads"
		note "$out"
	fi
fi
tests/s3server/s3server.sh stop "$S3_DATA" "$S3_PORT"
cp -f "$S3_DATA.s3server.log" "$LOGS/s3server.log" 2>/dev/null

echo "1..$N"
note "vm: $((N - FAILED - SKIPPED)) passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
exit
}
