#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/powercut.sh - power cuts of a whole write-back node: QEMU killed.
#
#   tests/powercut.sh [--kernel 6.1|6.12|debug] [--rounds N] [--seed S]
#
# Boots the guest N + 1 times on one NVMe disk image (run-vm.sh --disk).
# Each boot runs tests/vm/powercut-guest.sh: it mounts the cache left by
# the last boot, syncs and checks S3 against the writer's log of
# acknowledgments, then starts the writer; once the writer runs, this
# script waits a random 0.3-6 s (from the seed) and kills QEMU with
# SIGKILL: the guest's page cache, the daemon and the module's queue are
# gone, the disk image keeps what the guest had written to it (QEMU runs
# the disk with cache=unsafe, so what the guest wrote reached the image:
# this is a power cut of a device whose flushes always complete; the
# journal-less cut of t_writeback_crash covers the rest). S3 is s3rver on
# this host (its data in the run directory), which the guest reaches
# through run-vm.sh --s3-forward: it outlives the node and finishes the
# requests it got, as S3 does. The last boot only checks. The seed is
# printed; --seed replays a run.
#
# Prints TAP and, last, "N passed, N failed". Run directory:
# build/tests/powercut-K/ (boot-N.out: each boot's TAP; logs/).
set -uo pipefail
{
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 2

kernel=6.1 rounds=20 seed=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)	kernel=$2; shift 2 ;;
	--rounds)	rounds=$2; shift 2 ;;
	--seed)		seed=$2; shift 2 ;;
	-h|--help)	sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)		echo "powercut.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[[ $rounds =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || { echo "powercut.sh: --rounds must be >= 1" >&2; exit 2; }
[ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
[[ $seed =~ ^[0-9]+$ ]] || { echo "powercut.sh: --seed must be a number" >&2; exit 2; }

N=0 FAILED=0
emit() {	# ok|not_ok DESC [DETAILS]
	N=$((N + 1))
	if [ "$1" = ok ]; then
		echo "ok $N - powercut: $2"
	else
		FAILED=$((FAILED + 1))
		echo "not ok $N - powercut: $2"
		[ -n "${3:-}" ] && sed 's/^/# /' <<<"$3"
	fi
}
finish() {
	echo "1..$N"
	echo "$((N - FAILED)) passed, $FAILED failed"
	[ "$FAILED" = 0 ]
	exit
}

echo "TAP version 13"
echo "# seed $seed (--seed $seed replays it), $rounds power cuts, kernel $kernel"
if ! make "build/$kernel/s3cachefs.ko" >/dev/null 2>&1 || [ ! -x daemon/s3cachefsd ]; then
	emit not_ok "the module for $kernel and the daemon are built"
	finish
fi
run=$repo/build/tests/powercut-$kernel
rm -rf "$run"
mkdir -p "$run"
disk=$run/nvme.img
# A free port for s3rver (nothing answers on it).
for ((port = 19000 + seed % 1000; port < 20100; port++)); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
if ! tests/s3server/s3server.sh start "$run/s3" "$port" >"$run/s3server-start.log" 2>&1; then
	emit not_ok "s3rver starts on this host, port $port" "$(tail -n 20 "$run/s3server-start.log")"
	finish
fi
trap 'tests/s3server/s3server.sh stop "$run/s3" "$port" >/dev/null 2>&1' EXIT
args=(--kernel "$kernel" --out "$run" --disk "$disk" --disk-size 2 --timeout 600
	--s3-forward "$port"
	--env "S3CFS_KO=build/$kernel/s3cachefs.ko" --env "PC_SEED=$seed")
[ "$kernel" = debug ] && args+=(--env S3CFS_TIMEOUT_SCALE=4)

# The guest's points, numbered into ours.
relay() {	# FILE
	local line
	while IFS= read -r line; do
		case "$line" in
		ok\ *)		emit ok "${line#ok * - }" ;;
		not\ ok\ *)	emit not_ok "${line#not ok * - }" ;;
		\#*)		echo "$line" ;;
		esac
	done < <(tr -d '\r' <"$1")
}
kernel_log_clean() {	# BOOT
	if [ -s "$run/kernel-errors" ]; then
		emit not_ok "boot $1: kernel log free of BUG/WARNING/KASAN/lockdep" \
			"$(head -n 30 "$run/kernel-errors")"
		mv "$run/kernel-errors" "$run/kernel-errors.$1"
	else
		emit ok "boot $1: kernel log free of BUG/WARNING/KASAN/lockdep"
	fi
}

for ((boot = 1; boot <= rounds + 1; boot++)); do
	final=
	[ "$boot" -gt "$rounds" ] && final=1
	rm -f "$run/writing.$boot"
	tools/vm/run-vm.sh "${args[@]}" --env "PC_ROUND=$boot" ${final:+--env PC_FINAL=1} \
		-- bash tests/vm/powercut-guest.sh >"$run/boot-$boot.out" 2>"$run/boot-$boot.err" &
	vm=$!
	if [ -n "$final" ]; then
		wait $vm
		rc=$?
		relay "$run/boot-$boot.out"
		[ $rc = 0 ] || [ $rc = 122 ] ||
			emit not_ok "boot $boot: the guest ran to the end (run-vm exit $rc)" \
				"$(tail -n 20 "$run/boot-$boot.err")"
		kernel_log_clean "$boot"
		cp -f "$run/console.log" "$run/console-$boot.log" 2>/dev/null
		break
	fi
	# Wait for the writer (boot, s3rver, checks: minutes on the debug kernel).
	for ((i = 0; i < 3000; i++)); do
		[ -e "$run/writing.$boot" ] && break
		kill -0 $vm 2>/dev/null || break
		sleep 0.2
	done
	hold_ms=$((300 + (seed + boot * 7919) % 5700))
	if [ -e "$run/writing.$boot" ]; then
		sleep "$((hold_ms / 1000)).$(printf %03d $((hold_ms % 1000)))"
		pid=$(cat "$run/qemu.pid" 2>/dev/null)
		kill -KILL "$pid" 2>/dev/null || pid=
	fi
	wait $vm
	rc=$?
	relay "$run/boot-$boot.out"
	if [ -e "$run/writing.$boot" ]; then
		if [ -n "$pid" ]; then
			echo "# boot $boot: power cut ${hold_ms} ms after the writer started"
		else
			emit not_ok "boot $boot: QEMU killed" "no QEMU at pid '$(cat "$run/qemu.pid" 2>/dev/null)'"
		fi
	fi
	if [ ! -e "$run/writing.$boot" ]; then
		emit not_ok "boot $boot: the writer started (run-vm exit $rc)" \
			"$(tail -n 20 "$run/boot-$boot.err")"
	fi
	kernel_log_clean "$boot"
	cp -f "$run/console.log" "$run/console-$boot.log" 2>/dev/null
done
# What the cuts caught in flight, as the daemons logged it.
n_abort=$(cat "$run"/logs/boot-*/s3cachefsd-*.log 2>/dev/null | grep -c 'left by an earlier daemon: aborting')
n_ours=$(cat "$run"/logs/boot-*/s3cachefsd-*.log 2>/dev/null | grep -c 'the object is ours')
echo "# over all boots: $(grep -c '^ack' "$run/acks" 2>/dev/null) acknowledgments;" \
	"$n_abort multipart uploads a dead daemon left, aborted;" \
	"$n_ours uploads found already in S3 (cut between upload and commit)"
finish
exit
}
