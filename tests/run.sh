#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/run.sh - the s3cachefs test suite (what `make check` runs).
#
#   tests/run.sh [--kernel 6.1|6.12|debug] [--host-only|--vm-only]
#                [--only "GLOBS"] [--skip GLOB,...] [--quick] [--timeout S]
#                [--shards N] [--env VAR=VALUE]...
#   tests/run.sh --selftest-harness [--kernel K]
#
# 1. Host tests: `make -C daemon test` (TAP), skipped while daemon/ has no
#    Makefile.
# 2. VM tests (not with --host-only): builds the module for the kernel
#    (make build/K/s3cachefs.ko) and the test helpers (build/tests/), boots
#    N guests side by side (--shards N, or $S3CFS_SHARDS; default 2, and 1
#    with --only; side by side each has one CPU, $S3CFS_VM_SMP to change)
#    running tests/vm/guest-main.sh, which share out
#    every tests/vm/t_*.sh, longest first by tests/vm/durations (--only:
#    just those matching, in the order given, e.g. "t_read*"; --skip: not
#    those, e.g. "t_memory,t_faults"). Beside them, unless --only is given
#    or --skip names "powercut", tests/powercut.sh: POWERCUT_ROUNDS
#    (default 3) boots of a write-back writer ended by killing QEMU, each
#    checked by the next boot. The host tests run beside the guests too
#    (they mostly wait on their servers; niced, so that the guests' timers
#    are not late) and are printed first.
#    --quick (or QUICK=1) makes the large fixtures smaller. --vm-only skips
#    the host tests (while working on a VM test). --env sets a variable for
#    the VM tests (a seed to replay, e.g. NSCHECK_SEED=N).
# 3. Prints a table of every test file's wall time, longest first (also in
#    build/tests/times-K.txt), then exactly one final line "N passed, N failed" (test points of all
#    TAP streams; skips are reported on the line before and not counted) and
#    exits non-zero if anything failed, including a guest kernel log with a
#    BUG/WARNING/KASAN/lockdep/kmemleak line.
#
# --selftest-harness: instead, prove the harness catches a broken module:
# two short boots, one loading a module that loads cleanly (must pass), one
# loading tests/vm/selftest-oops (WARN_ON, then BUG) with a guest command
# that exits 0 (the run must still fail, from the kernel log alone).
#
# Logs: build/tests/ (host.log, vm-K.G.tap per guest G, vm-K/G/ = its run
# directory with console.log, dmesg and logs/ per test; vm-K/queue/ = which
# guest ran each test, and its time).
set -uo pipefail
# Parse everything before running anything: this file may be edited (a
# checkout, a commit) while a long run is executing it.
{

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 2
logs=$repo/build/tests

kernel=6.1 host_only= vm_only= selftest= only= skip= vm_timeout= shards=
extra_env=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)		kernel=$2; shift 2 ;;
	--host-only)		host_only=1; shift ;;
	--vm-only)		vm_only=1; shift ;;
	--selftest-harness)	selftest=1; shift ;;
	--only)			only=$2; shift 2 ;;
	--skip)			skip=$2; shift 2 ;;
	--quick)		export QUICK=1; shift ;;
	--timeout)		vm_timeout=$2; shift 2 ;;
	--shards)		shards=$2; shift 2 ;;
	--env)			extra_env+=(--env "$2"); shift 2 ;;
	-h|--help)		sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)			echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case "$kernel" in
6.1|6.12|debug) ;;
*) echo "run.sh: --kernel must be 6.1, 6.12 or debug" >&2; exit 2 ;;
esac
mkdir -p "$logs"

PASS=0 FAIL=0 SKIP=0
# Our own test points (build steps, the VM as a whole).
point() {	# ok|not_ok DESC [DETAILS]
	if [ "$1" = ok ]; then
		PASS=$((PASS + 1))
		echo "ok - $2"
	else
		FAIL=$((FAIL + 1))
		echo "not ok - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' <<<"$3"
	fi
	return 0
}
# Count the test points of a TAP stream (top level only: indented subtests
# belong to their parent's point).
count_tap() {
	local p f s
	read -r p f s < <(awk '
		/^ok/ { if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) s++; else p++; next }
		/^not ok/ { if ($0 ~ /# *[Tt][Oo][Dd][Oo]/) p++; else f++; next }
		END { print p + 0, f + 0, s + 0 }' "$1")
	PASS=$((PASS + p)) FAIL=$((FAIL + f)) SKIP=$((SKIP + s))
	COUNTED_FAIL=$f
}
finish() {
	[ "$SKIP" = 0 ] || echo "# $SKIP skipped"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]
	exit
}

# The kernel build tree for K, matching the image run-vm.sh will boot.
kdir_for() {
	local rel
	case "$1" in
	debug)	echo "$repo/../shared/kernel-debug/build" ;;
	*)	rel=$(image_for "$1")
		rel=${rel#/boot/vmlinuz-}
		[ -n "$rel" ] && echo "/lib/modules/$rel/build" ;;
	esac
}
image_for() {
	local ko=build/$1/s3cachefs.ko rel
	case "$1" in debug) echo debug; return ;; esac
	if [ -f "$ko" ]; then
		rel=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
		[ -f "/boot/vmlinuz-$rel" ] && { echo "/boot/vmlinuz-$rel"; return; }
	fi
	# The newest release of that series with both an image and headers.
	for rel in $(ls -1 /boot/vmlinuz-"$1".* 2>/dev/null | sed 's|^/boot/vmlinuz-||' |
			grep -Ev -- '-(rt|cloud)-|\.dpkg-' | sort -rV); do
		[ -d "/lib/modules/$rel/build" ] && { echo "/boot/vmlinuz-$rel"; return; }
	done
}

build_helpers() {
	local out=$logs/helpers.log
	mkdir -p build/tests
	{
		gcc -O2 -Wall -Wextra -Werror -o build/tests/verify-read tests/vm/helpers/verify-read.c &&
		gcc -O2 -Wall -Wextra -Werror -o build/tests/mkdata tests/vm/helpers/mkdata.c &&
		gcc -O2 -Wall -Wextra -Werror -I. $(pkg-config --cflags libnl-genl-3.0) \
			-o build/tests/nlfuzz tests/vm/helpers/nlfuzz.c \
			$(pkg-config --libs libnl-genl-3.0)
	} >"$out" 2>&1
	if [ $? = 0 ]; then
		point ok "build: test helpers (verify-read, mkdata, nlfuzz)"
	else
		point not_ok "build: test helpers (verify-read, mkdata, nlfuzz)" "$(tail -n 20 "$out")"
	fi
}

vm_args() {	# common run-vm.sh arguments for kernel K
	local a=(--kernel "$(image_for "$1")")
	[ "$1" = debug ] && a+=(--env S3CFS_TIMEOUT_SCALE=4)
	printf '%s\n' "${a[@]}"
}

# --- the harness self-test ------------------------------------------------
selftest_harness() {
	local kdir src=build/selftest-oops/$kernel rc out args
	echo "TAP version 13"
	kdir=$(kdir_for "$kernel")
	rm -rf "$src"; mkdir -p "$src"
	cp tests/vm/selftest-oops/* "$src/"
	if [ -z "$kdir" ] || ! make -C "$kdir" M="$repo/$src" modules >"$logs/selftest-build.log" 2>&1; then
		point not_ok "selftest: the oops module builds for $kernel" "$(tail -n 20 "$logs/selftest-build.log")"
		finish
	fi
	point ok "selftest: the oops module builds for $kernel"
	mapfile -t args < <(vm_args "$kernel")
	local ko=$src/s3cfs_selftest_oops.ko
	# Control: a clean load must pass, or every run would "fail".
	out=$(tools/vm/run-vm.sh "${args[@]}" --timeout 600 --out "$logs/selftest-clean" -- \
		bash -c "insmod $ko mode=clean && rmmod s3cfs_selftest_oops" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		point ok "selftest: a clean module load passes the kernel log scan"
	else
		point not_ok "selftest: a clean module load passes the kernel log scan" "run-vm exit $rc
$out"
	fi
	# The broken module: the guest command itself claims success.
	out=$(tools/vm/run-vm.sh "${args[@]}" --timeout 600 --out "$logs/selftest-oops" -- \
		bash -c "insmod $ko mode=warn; rmmod s3cfs_selftest_oops; insmod $ko mode=bug; exit 0" 2>&1)
	rc=$?
	if [ $rc = 122 ] && grep -q 'WARNING:' "$logs/selftest-oops/kernel-errors" 2>/dev/null; then
		point ok "selftest: WARN_ON in a module fails the run (exit 122)"
	else
		point not_ok "selftest: WARN_ON in a module fails the run (exit 122)" "run-vm exit $rc
$out"
	fi
	if grep -qE 'kernel BUG at|invalid opcode' "$logs/selftest-oops/kernel-errors" 2>/dev/null; then
		point ok "selftest: BUG() in a module is reported"
	else
		point not_ok "selftest: BUG() in a module is reported" "$out"
	fi
	finish
}
[ -n "$selftest" ] && selftest_harness

# --- host tests -----------------------------------------------------------
# A host test command printing TAP; a non-zero exit with no failing test
# point counts as one failure. Its wall time goes to $logs/times.host.
host_suite() {	# DESC LOG CMD...
	local desc=$1 log=$2 rc t0=$SECONDS
	shift 2
	echo "# host: $desc"
	"$@" >"$log" 2>&1
	rc=$?
	echo "$((SECONDS - t0)) host $desc" >>"$logs/times.host"
	grep -aE '^(ok|not ok|#|Bail out!|1\.\.)' "$log"
	count_tap "$log"
	if [ $rc != 0 ] && [ "$COUNTED_FAIL" = 0 ]; then
		point not_ok "host: $desc (exit $rc)" "$(tail -n 30 "$log")"
	fi
}
host_tests() {
	: >"$logs/times.host"
	if [ -f daemon/Makefile ]; then
		host_suite "make -C daemon test" "$logs/host.log" make -C daemon test
	else
		echo "# SKIP host tests: daemon/Makefile is not there yet"
	fi
	# The daemon against a misbehaving fake S3 (retries, stalls, ETags, Range,
	# broken listing keys), host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/resilience.sh" "$logs/resilience.log" timeout 300 bash tests/host/resilience.sh
	# The daemon against a server that attacks it (XML nested without end,
	# oversized pages, ETags with control characters, listings that never
	# end, 416 after a shrink), host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/hostile.sh" "$logs/hostile.log" timeout 300 bash tests/host/hostile.sh
	# Plain http refused unless allowed, a daemon that is not dumpable, the
	# systemd unit's sandbox and capabilities, host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/harden.sh" "$logs/harden.log" timeout 300 bash tests/host/harden.sh
	# The daemon's client and request handlers against the VM tests' S3
	# server (s3rver with tests/s3server/s3rver-fixes.js), host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/s3rver_smoke.sh" "$logs/s3rver_smoke.log" timeout 300 bash tests/host/s3rver_smoke.sh
	# UPLOAD's multipart path against the fake (parts, conditions, aborts,
	# a lost Complete answer), host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/upload_smoke.sh" "$logs/upload_smoke.log" timeout 300 bash tests/host/upload_smoke.sh
	# Listing for lookups: a directory listed once for a loader opening its
	# names, and the lookups that wait for that listing, host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/lookup_list.sh" "$logs/lookup_list.log" timeout 300 bash tests/host/lookup_list.sh
	# The daemon's memory after a listing of 100 000 names, host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/list_memory.sh" "$logs/list_memory.log" timeout 300 bash tests/host/list_memory.sh
	# POSIX attributes (protocol 5): the x-amz-meta-* of UPLOAD, MKDIR and
	# SETMETA, and what LOOKUP records on a posix_meta mount, host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/posix_smoke.sh" "$logs/posix_smoke.log" timeout 300 bash tests/host/posix_smoke.sh
	# A bucket whose credential endpoint hangs or fails holds up no other
	# (credentials resolved on the loop, failures backed off), host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/creds_async.sh" "$logs/creds_async.log" timeout 300 bash tests/host/creds_async.sh
	# The fleet tier: daemons as nodes of a fleet, one origin and one tier
	# (fake_s3.py behind fault proxies): warm reads, poisoned blocks
	# healed, the tier's faults and the breaker, host only.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/tier_smoke.sh" "$logs/tier_smoke.log" timeout 300 bash tests/host/tier_smoke.sh
	# The crash tests' judge of S3 against a writer's log, on made-up logs.
	host_suite "tests/host/ack_verdict.sh" "$logs/ack_verdict.log" timeout 60 bash tests/host/ack_verdict.sh
	# The bench's report on a saved run: every table, the chart, the README block.
	host_suite "tests/host/bench_report.sh" "$logs/bench_report.log" timeout 120 bash tests/host/bench_report.sh
	[ -f tools/s3cachectl/Makefile ] &&
		host_suite "make -C tools/s3cachectl test" "$logs/ctl.log" make -C tools/s3cachectl test
	# mount.s3cachefs: its parsing (unit test) and mount(8)'s argument
	# conventions; what needs the module is for the VM tests.
	host_suite "make -C tools/mount test" "$logs/mount-helper.log" make -C tools/mount test
	# One version everywhere (VERSION, dkms.conf, debian/changelog, the
	# programs, the module, the manual pages).
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/version.sh" "$logs/version.log" timeout 60 bash tests/host/version.sh
	# The manual pages against the sources (mount options, module
	# parameters, sysfs files, flags, keys, metrics), man --warnings, lexgrog.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/manpages.sh" "$logs/manpages.log" timeout 120 bash tests/host/manpages.sh
	# The Grafana dashboard uses only metrics the daemon exports.
	[ -f daemon/s3cachefsd ] &&
		host_suite "tests/host/grafana.py" "$logs/grafana.log" timeout 60 python3 tests/host/grafana.py
	# SigV4 against an independent signer (@smithy/signature-v4).
	host_suite "tests/sigv4/test-sigv4.sh" "$logs/sigv4.log" timeout 300 bash tests/sigv4/test-sigv4.sh
	# TLS certificate verification (nginx in front of fakes3, a throwaway CA).
	host_suite "tests/tls/test-tls.sh" "$logs/tls.log" timeout 300 bash tests/tls/test-tls.sh
	# DKMS add/install/remove against the installed headers (once per suite run:
	# only with the default kernel, so CI's per-kernel runs do not repeat it).
	if [ "$kernel" = 6.1 ] && [ -z "$only" ] && command -v dkms >/dev/null; then
		host_suite "tests/dkms/test-dkms.sh" "$logs/dkms.log" bash tests/dkms/test-dkms.sh
	fi
	# The S3 client against a strict server (Ceph RGW: SigV4, 412, pagination);
	# skips itself when ceph is not installed.
	if [ "$kernel" = 6.1 ] && [ -z "$only" ]; then
		host_suite "tests/rgw/test-rgw.sh" "$logs/rgw.log" timeout 900 bash tests/rgw/test-rgw.sh
	fi
	return 0
}
echo "TAP version 13"
rm -f "$logs/times.host" "$logs/times.powercut"
cpu0=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat)
idle0=$(awk '/^cpu / { print $5 + $6 }' /proc/stat)
host_pid=
if [ -z "$vm_only" ] && [ -n "$host_only" ]; then
	host_tests
	finish
elif [ -z "$vm_only" ]; then
	# They wait on servers more than they compute: run them beside the
	# guests, print them after.
	(renice -n 10 "$BASHPID" >/dev/null; host_tests) >"$logs/host-tests.tap" 2>&1 &
	host_pid=$!
fi

# --- VM tests -------------------------------------------------------------
build_helpers
vm_env=(--env "S3CFS_KO=build/$kernel/s3cachefs.ko" "${extra_env[@]}")
if make "build/$kernel/s3cachefs.ko" >"$logs/module-$kernel.log" 2>&1 &&
		[ -f "build/$kernel/s3cachefs.ko" ]; then
	point ok "build: s3cachefs.ko for $kernel"
	[ -n "$only" ] && vm_env+=(--env "S3CFS_TESTS=$only")
	[ -n "$skip" ] && vm_env+=(--env "S3CFS_SKIP=$skip") &&
		echo "# SKIP these VM tests (--skip): $skip"
	# The whole suite is taken longest first, so that its shards end
	# together (--only keeps the order given).
	[ -z "$only" ] && vm_env+=(--env "S3CFS_DURATIONS=tests/vm/durations")
else
	point not_ok "build: s3cachefs.ko for $kernel" "$(grep -E 'error|Error' "$logs/module-$kernel.log" | head -n 20)"
	# Without a module only the environment checks are worth a boot.
	vm_env+=(--env "S3CFS_TESTS=t_00_env")
	shards=1
fi
[ -x daemon/s3cachefsd ] || echo "# warning: daemon/s3cachefsd is not built"

mapfile -t args < <(vm_args "$kernel")
if [ -z "$vm_timeout" ]; then
	vm_timeout=2700
	[ "$kernel" = debug ] && vm_timeout=7200
fi
[ -n "$shards" ] || { shards=${S3CFS_SHARDS:-2}; [ -n "$only" ] && shards=1; }
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --shards must be a positive number" >&2; exit 2; }
# Side by side, each guest (the power cuts' too) gets one CPU unless
# $S3CFS_VM_SMP says otherwise: measured on 2 cores, two 2-CPU guests took
# 2.5x the wall time and 2.8x the CPU time of two 1-CPU guests for the same
# tests (their vCPUs spin on locks held by a descheduled vCPU). One guest
# alone (--only, --shards 1) has the host's CPUs, up to 4.
[ "$shards" -gt 1 ] && export S3CFS_VM_SMP=${S3CFS_VM_SMP:-1}
vmdir=$logs/vm-$kernel
queue=$vmdir/queue
echo "# vm: booting $shards guest(s) of $kernel (${args[1]}), suite deadline $vm_timeout s"
rm -rf "$vmdir" "$logs/vm-$kernel".*.tap "$logs/powercut-$kernel.tap"
mkdir -p "$queue"
vm_start=$SECONDS
pids=()
for i in $(seq "$shards"); do
	tools/vm/run-vm.sh "${args[@]}" "${vm_env[@]}" --env "S3CFS_QUEUE=$queue" \
		--env "S3CFS_SHARD=$i" --share "$queue" --timeout "$vm_timeout" \
		--out "$vmdir/$i" -- bash tests/vm/guest-main.sh \
		>"$logs/vm-$kernel.$i.tap" 2>"$logs/vm-$kernel.$i.stderr" &
	pids+=($!)
done
# Power cuts: QEMU killed under a write-back writer, booted again (its own
# guests, beside the suite's).
pc_pid=
if [ -z "$only" ] && [[ ,$skip, != *,powercut,* ]]; then
	(
		t0=$SECONDS
		bash tests/powercut.sh --kernel "$kernel" --rounds "${POWERCUT_ROUNDS:-3}"
		rc=$?
		echo "$((SECONDS - t0)) vm powercut ($((${POWERCUT_ROUNDS:-3} + 1)) boots)" >"$logs/times.powercut"
		exit $rc
	) >"$logs/powercut-$kernel.tap" 2>&1 &
	pc_pid=$!
fi

if [ -n "$host_pid" ]; then
	wait "$host_pid"
	cat "$logs/host-tests.tap"
	count_tap "$logs/host-tests.tap"
fi

for i in $(seq "$shards"); do
	wait "${pids[i - 1]}"
	rc=$?
	tap=$logs/vm-$kernel.$i.tap
	echo "# --- vm($kernel) guest $i of $shards (run directory $vmdir/$i)"
	cat "$tap"
	sed 's/^/# /' "$logs/vm-$kernel.$i.stderr" | grep -E '^# run-vm: (timing|timed out|the guest|the kernel log|  )' 
	count_tap "$tap"
	if [ -s "$vmdir/$i/kernel-errors" ]; then
		point not_ok "vm($kernel) guest $i: kernel log free of BUG/WARNING/KASAN/lockdep/leaks" \
			"$(head -n 30 "$vmdir/$i/kernel-errors")
full log: $vmdir/$i/console.log"
	else
		point ok "vm($kernel) guest $i: kernel log free of BUG/WARNING/KASAN/lockdep/leaks"
	fi
	case $rc in
	0|122) ;;
	124) point not_ok "vm($kernel) guest $i: suite finished within $vm_timeout s" ;;
	123) point not_ok "vm($kernel) guest $i: guest ran to the end (it crashed or rebooted)" \
		"$(tail -n 20 "$vmdir/$i/console.log" 2>/dev/null)" ;;
	*) [ "$COUNTED_FAIL" = 0 ] && point not_ok "vm($kernel) guest $i: guest-main exited $rc" ;;
	esac
done
vm_wall=$((SECONDS - vm_start))
# Every test some guest was to run ran to its end in one of them.
for t in $(cat "$queue"/list.* 2>/dev/null | sort -u); do
	t=$(basename "$t" .sh)
	if [ ! -d "$queue/$t" ]; then
		point not_ok "$t: not run (no guest took it: every guest stopped early)"
	elif [ ! -s "$queue/$t/result" ]; then
		point not_ok "$t: not finished (its guest stopped while it ran)"
	fi
done

if [ -n "$pc_pid" ]; then
	wait "$pc_pid"
	rc=$?
	grep -aE '^(ok|not ok|#)' "$logs/powercut-$kernel.tap"
	count_tap "$logs/powercut-$kernel.tap"
	[ $rc = 0 ] || [ "$COUNTED_FAIL" != 0 ] ||
		point not_ok "powercut($kernel): tests/powercut.sh exited $rc" "$(tail -n 20 "$logs/powercut-$kernel.tap")"
fi

# Where the time went: every test file's wall time, longest first (also in
# $logs/times-K.txt; tests/vm/durations is made from it).
{
	for d in "$queue"/*/; do
		[ -s "$d/result" ] || continue
		read -r secs g n f busy <"$d/result"
		echo "$secs vm $(basename "$d") (guest $g, $n points, $f failed, CPU busy ${busy:-?} s)"
	done
	cat "$logs/times.host" "$logs/times.powercut" 2>/dev/null
} | sort -s -k1,1nr >"$logs/times-$kernel.txt"
# CPU time of everything this run started (guests included): its wall time
# on an idle host cannot be under half of it on two cores.
times >"$logs/times.cpu"
read -r cu cs < <(awk 'NR == 2 { for (i = 1; i <= 2; i++) {
	split($i, a, /[ms]/); t[i] = a[1] * 60 + a[2] }; print int(t[1]), int(t[2]) }' "$logs/times.cpu")
busy=$(awk -v b0="$cpu0" -v i0="$idle0" '/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9 - b0; i = $5 + $6 - i0; printf "%d", b + i ? 100 * b / (b + i) : 0 }' /proc/stat)
echo "# Wall time per test file, kernel $kernel: VM suite $vm_wall s in $shards guest(s), whole run $SECONDS s, CPU time $cu s user + $cs s system, host CPU busy $busy%"
awk '{ printf "#   %5d s  %-4s %s\n", $1, $2, substr($0, index($0, $3)) }' "$logs/times-$kernel.txt"
finish
exit
}
