#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run-vm.sh - run one command as root inside a throw-away QEMU guest.
#
#   tools/vm/run-vm.sh --kernel {6.1|6.12|debug|/path/to/bzImage}
#	[--mem MiB] [--smp N] [--disk-size G] [--timeout S] [--out DIR]
#	[--env NAME=VALUE]... [--keep-disk | --disk IMAGE] [--s3-forward PORT]
#	[--share DIR] -- GUEST_COMMAND...
#
# The guest boots the kernel with a small initramfs (busybox + the modules to
# reach the host, cached under build/vm/), mounts the host root read-only over
# virtio-9p with a tmpfs overlay for writes, and runs GUEST_COMMAND as root in
# the repository directory with /proc, /sys, /dev, /tmp and debugfs mounted,
# `lo` up, no network, and a fresh unformatted emulated NVMe disk at
# /dev/nvme0n1. The command's stdout and stderr stream back to ours.
# --disk IMAGE: the NVMe disk is IMAGE instead, made (empty, --disk-size)
# if missing and kept after the run, so a second boot finds what the first
# left on it (the power-cut tests kill QEMU and boot again on the same disk;
# QEMU's pid is in <run dir>/qemu.pid while it runs).
# --s3-forward PORT: the guest gets one virtio NIC on a restricted user
# network whose only way out is 10.0.2.100:9000, forwarded to this host's
# 127.0.0.1:PORT (one `busybox nc` per connection): an S3 server that
# outlives the guest. The guest configures eth0 itself (10.0.2.15/24).
#
# --share DIR: DIR (on the host) is also mounted read-write at the same path
# in the guest, and named by VM_SHARE there: guests booted side by side
# with the same DIR see each other's files in it (tests/run.sh's shards
# claim tests there).
#
# In the guest: VM_OUT is the run directory (shared read-write with the host
# at the same path: files written there come back), VM_KERNEL the --kernel
# argument. QUICK and S3CFS_* are passed through; --env adds more.
#
# Exit status: the guest command's. 124: timeout. 122: the command succeeded
# but the kernel log has a BUG/WARNING/KASAN/lockdep/kmemleak/... line (the
# lines are printed; a failing command keeps its own status). 123: the guest
# never reported a status (panic, crash). 125: the runner itself failed.
#
# The console (kernel log) goes to build/vm/last-console.log and to
# <run dir>/console.log. KVM is used only when /dev/kvm exists and a short
# probe boot proves it works (on some hosts it hangs right after the
# decompressor); the verdict is cached in build/vm/kvm-verdict.
set -uo pipefail
# Parse everything before running anything: this file may be edited (a
# checkout, a commit) while a long run is executing it.
{

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vmdir=$repo/build/vm
# Kernel log lines that fail a run (extended regex, case-sensitive).
# VM_LOG_IGNORE (a regex) drops matching lines first: keep it empty unless a
# known, unrelated boot-time warning of a given kernel has to be tolerated.
LOG_BAD='BUG:|WARNING:|KASAN|Oops|kernel BUG at|invalid opcode|general protection|possible circular locking|inconsistent lock state|sleeping function called from invalid context|unreferenced object|Call Trace|Kernel panic|blocked for more than|soft lockup|detected stalls? on'

die() { echo "run-vm: $*" >&2; exit 125; }
note() { echo "run-vm: $*" >&2; }

kernel= mem= smp= disk_size=8 timeout=1800 out= keep_disk= disk= s3_forward= share=
envs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)	kernel=$2; shift 2 ;;
	--mem)		mem=$2; shift 2 ;;
	--smp)		smp=$2; shift 2 ;;
	--disk-size)	disk_size=${2%G}; shift 2 ;;
	--timeout)	timeout=$2; shift 2 ;;
	--out)		out=$2; shift 2 ;;
	--env)		envs+=("$2"); shift 2 ;;
	--keep-disk)	keep_disk=1; shift ;;
	--disk)		disk=$2; keep_disk=1; shift 2 ;;
	--s3-forward)	s3_forward=$2; shift 2 ;;
	--share)	share=$2; shift 2 ;;
	--)		shift; break ;;
	-h|--help)	sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)		die "unknown option $1 (see --help)" ;;
	esac
done
[ -n "$kernel" ] || die "--kernel is required"
[ $# -gt 0 ] || die "no guest command given (after --)"
for n in "$mem" "$smp" "$disk_size" "$timeout" "$s3_forward"; do
	[[ -z $n || $n =~ ^[0-9]+$ ]] || die "not a number: $n"
done
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing (run tools/setup.sh)"
[ -x /bin/busybox ] || die "/bin/busybox is missing (busybox-static; run tools/setup.sh)"

# --- kernel image and its modules -----------------------------------------
# The plain -amd64 flavour, newest first by version.
newest_image() {
	ls -1 /boot/vmlinuz-"$1"* 2>/dev/null | grep -Ev -- '-(rt|cloud)-|\.dpkg-' |
		sort -V | tail -n 1
}
kver_of() {	# the release string of a bzImage
	file -bL "$1" 2>/dev/null | sed -n 's/.*, version \([^ ]*\) .*/\1/p'
}
# 6.1/6.12: the image build/<K>/s3cachefs.ko was built for, when there is one
# (several 6.12 releases may be installed), else the newest.
built_for() {
	local ko=$repo/build/$1/s3cachefs.ko rel
	[ -f "$ko" ] || return 0
	rel=$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)
	[ -n "$rel" ] && [ -f "/boot/vmlinuz-$rel" ] && echo "/boot/vmlinuz-$rel"
}
case "$kernel" in
6.1|6.12)	image=$(built_for "$kernel")
		[ -n "$image" ] || image=$(newest_image "$kernel.") ;;
debug)		image=$repo/../shared/kernel-debug/bzImage ;;
*)		image=$kernel ;;
esac
[ -n "$image" ] && [ -f "$image" ] || die "no kernel image for '$kernel'"
image=$(readlink -f "$image")
kver=$(kver_of "$image")
[ -n "$kver" ] || kver=${image##*/vmlinuz-}
moddir=/lib/modules/$kver
[ -d "$moddir" ] || moddir=	# a kernel with everything built in (debug)
mkdir -p "$vmdir" || die "cannot create $vmdir"

# An uncompressed kernel with a PVH entry note boots directly (QEMU -kernel
# with an ELF), skipping firmware-side decompression: ~4 s less under TCG.
pvh_image() {
	local key=$(stat -Lc '%s %Y' "$1" | sha256sum | cut -c1-12)
	local vmlinux=$vmdir/vmlinux-$kver-$key magic tool off tmp=$vmdir/vmlinux.tmp.$$
	if [ ! -e "$vmlinux" ] && [ ! -e "$vmlinux.none" ]; then
		rm -f "$vmdir"/vmlinux-"$kver"-*
		for magic in xz zstd gzip; do
			case $magic in
			xz)   tool="xz -dc"; magic=$'\xfd7zXZ\x00' ;;
			zstd) tool="zstd -qdc"; magic=$'\x28\xb5\x2f\xfd' ;;
			gzip) tool="gzip -dc"; magic=$'\x1f\x8b\x08' ;;
			esac
			command -v "${tool%% *}" >/dev/null || continue
			for off in $(LC_ALL=C grep -abo "$magic" "$1" 2>/dev/null | head -n 3 | cut -d: -f1); do
				tail -c +$((off + 1)) "$1" | $tool >"$tmp" 2>/dev/null
				[ "$(head -c 4 "$tmp" 2>/dev/null)" = $'\x7fELF' ] && break 2
			done
		done
		if [ -s "$tmp" ] && [ "$(head -c 4 "$tmp")" = $'\x7fELF' ] &&
		   readelf -n "$tmp" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
			mv -f "$tmp" "$vmlinux"
		else
			rm -f "$tmp"; : >"$vmlinux.none"
		fi
	fi
	if [ -s "$vmlinux" ]; then echo "$vmlinux"; else echo "$1"; fi
}
boot_image=$image
[ "${VM_PVH:-1}" = 1 ] && boot_image=$(pvh_image "$image")

if [ -z "$mem" ]; then
	mem=2048
	[ "$kernel" = debug ] && mem=3072	# KASAN + lockdep + kmemleak
fi
# $S3CFS_VM_SMP: guests booted side by side on a small host get one CPU
# each (two 2-CPU guests on 2 cores spin on each other's preempted locks).
[ -n "$smp" ] || smp=${S3CFS_VM_SMP:-}
[ -n "$smp" ] || { smp=$(nproc); [ "$smp" -gt 4 ] && smp=4; }

# --- initramfs (cached; rebuilt when an input changes) ---------------------
# Loaded at boot. Anything else (xfs, loop, ...) loads on demand after
# switch_root from the host's /lib/modules (modprobe, request_module).
GUEST_MODULES="virtio_pci 9pnet_virtio 9p overlay virtio_console nvme ext4"
build_initramfs() {
	local mods=() line key stage f
	if [ -n "$moddir" ]; then
		while read -r line; do
			case "$line" in insmod\ *) line=${line#insmod }; mods+=("${line%% *}") ;; esac
		done < <(modprobe -S "$kver" --show-depends -a $GUEST_MODULES 2>/dev/null |
			awk '!seen[$0]++')
		[ ${#mods[@]} -gt 0 ] || die "no modules found for $kver under $moddir"
	fi
	key=$( {
		echo "v1 $kver $GUEST_MODULES"
		sha256sum "$repo/tools/vm/init"
		stat -Lc '%n %s %Y' /bin/busybox ${mods[@]+"${mods[@]}"}
	} | sha256sum | cut -c1-16)
	initrd=$vmdir/initramfs-$kver-$key.cpio
	[ -s "$initrd" ] && return 0

	note "building $initrd"
	stage=$(mktemp -d "$vmdir/initramfs.XXXXXX") || die "mktemp failed"
	mkdir -p "$stage"/{bin,dev,proc,sys,mods} || die "mkdir failed"
	cp /bin/busybox "$stage/bin/busybox" || die "copy busybox failed"
	cp "$repo/tools/vm/init" "$stage/init" && chmod 755 "$stage/init" || die "copy init failed"
	: >"$stage/mods/order"
	for f in ${mods[@]+"${mods[@]}"}; do
		local base=${f##*/}
		case "$f" in
		*.ko.xz)  xz -dc "$f" >"$stage/mods/${base%.xz}"; base=${base%.xz} ;;
		*.ko.zst) zstd -qdc "$f" >"$stage/mods/${base%.zst}"; base=${base%.zst} ;;
		*.ko.gz)  gzip -dc "$f" >"$stage/mods/${base%.gz}"; base=${base%.gz} ;;
		*)        cp "$f" "$stage/mods/$base" ;;
		esac || die "cannot unpack $f"
		echo "$base" >>"$stage/mods/order"
	done
	(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) >"$initrd.tmp.$$" ||
		die "cpio failed"
	mv -f "$initrd.tmp.$$" "$initrd"
	rm -rf "$stage"
	# Keep the three newest images per kernel.
	ls -1t "$vmdir"/initramfs-"$kver"-*.cpio 2>/dev/null | tail -n +4 | xargs -r rm -f
}
build_initramfs

# --- KVM, only if it demonstrably works -------------------------------------
accel=(-accel tcg,thread=multi)
cpu=${VM_CPU:-max}
kvm_works() {
	local verdict=$vmdir/kvm-verdict log
	[ -c /dev/kvm ] && [ -w /dev/kvm ] || return 1
	if [ ! -s "$verdict" ]; then
		log=$(mktemp) || return 1
		note "probing KVM (20 s at most)"
		timeout -k 2 20 qemu-system-x86_64 -nodefaults -no-user-config \
			-display none -no-reboot -enable-kvm -cpu host -m 512 \
			-kernel "$image" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 vmrun.probe=1" \
			-serial "file:$log" </dev/null >/dev/null 2>&1
		if grep -q 'vmrun: probe ok' "$log"; then echo yes; else echo no; fi >"$verdict"
		rm -f "$log"
		note "KVM probe: $(cat "$verdict")"
	fi
	[ "$(cat "$verdict")" = yes ]
}
if [ "${VM_ACCEL:-auto}" != tcg ] && kvm_works; then
	accel=(-enable-kvm)
	cpu=host
fi

# --- the run directory -------------------------------------------------------
if [ -n "$out" ]; then
	mkdir -p "$out" || die "cannot create $out"
	run_dir=$(cd "$out" && pwd)
else
	mkdir -p "$vmdir/runs"
	run_dir=$(mktemp -d "$vmdir/runs/run.XXXXXX") || die "mktemp failed"
	# Keep the ten newest run directories.
	ls -1dt "$vmdir"/runs/run.* 2>/dev/null | tail -n +11 | xargs -r rm -rf
fi
if [ -n "$share" ]; then
	[ -d "$share" ] || die "--share $share: not a directory"
	share=$(cd "$share" && pwd)
fi
case "$run_dir$repo$share" in
*[[:space:]]*) die "paths with spaces are not supported: $run_dir" ;;
esac
rm -f "$run_dir"/{exit-status,console.log,stdout,stderr,dmesg,kmemleak,qemu.pid}
[ -n "$disk" ] || rm -f "$run_dir/disk.img"

{
	printf 'cd %q || exit 125\nexec' "$repo"
	printf ' %q' "$@"
	printf '\n'
} >"$run_dir/cmd"
{
	printf 'export VM_OUT=%q VM_KERNEL=%q\n' "$run_dir" "$kernel"
	[ -z "$share" ] || printf 'export VM_SHARE=%q\n' "$share"
	while IFS='=' read -r name _; do
		case "$name" in QUICK|S3CFS_*) printf 'export %s=%q\n' "$name" "${!name}" ;; esac
	done < <(env)
	for e in ${envs[@]+"${envs[@]}"}; do
		[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "bad --env $e"
		printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
	done
} >"$run_dir/env"

if [ -z "$disk" ]; then
	disk=$run_dir/disk.img
	truncate -s "${disk_size}G" "$disk" || die "cannot create $disk"
elif [ ! -e "$disk" ]; then
	truncate -s "${disk_size}G" "$disk" || die "cannot create $disk"
fi
case "$disk" in *[[:space:],]*) die "bad disk image path: $disk" ;; esac
console=$run_dir/console.log
: >"$console" >"$run_dir/stdout" >"$run_dir/stderr"

append="console=ttyS0,115200 loglevel=7 panic=-1 rdinit=/init"
append+=" vmrun.dir=$run_dir vmrun.init=$repo/tools/vm/guest-init.sh"
append+=" 8250.nr_uarts=1 i8042.noaux i8042.nokbd no_timer_check tsc=reliable"
# TCG on a busy host can starve a vCPU for a while: no spurious RCU stalls.
append+=" rcupdate.rcu_cpu_stall_timeout=60"
# Under TCG the guest's TSC is the host's raw TSC: when the host's jumps (a
# host VM moved between machines), so would the guest's clocks, uptime and
# every timeout in it (a CI run saw uptime leap 5 days and a test killed at
# once). The emulated HPET counts QEMU's virtual clock (host CLOCK_MONOTONIC).
[ "${accel[0]}" = -enable-kvm ] || append+=" clocksource=hpet"
# Under TCG the speculation mitigations guard nothing (no real CPU runs
# guest code) and cost emulated instructions on every indirect branch and
# context switch: t_writeback_crash ran 186-188 s without them, 216-217 s
# with them (6.12, one vCPU, idle 2-core host).
[ "${accel[0]}" = -enable-kvm ] || append+=" mitigations=off"
append+=" ${VM_APPEND:-}"

qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	"${accel[@]}" -cpu "$cpu" -smp "$smp" -m "$mem"
	-kernel "$boot_image" -initrd "$initrd" -append "$append"
	-serial "file:$console" -pidfile "$run_dir/qemu.pid"
	-fsdev "local,id=hostroot,path=/,readonly=on,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
	-fsdev "local,id=vmout,path=$run_dir,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout
	-device virtio-serial-pci
	-chardev "file,id=gout,path=$run_dir/stdout"
	-device virtserialport,chardev=gout,name=vmrun.stdout
	-chardev "file,id=gerr,path=$run_dir/stderr"
	-device virtserialport,chardev=gerr,name=vmrun.stderr
	-drive "file=$disk,if=none,id=nv,format=raw,cache=unsafe,discard=unmap"
	-device nvme,serial=s3cfs0,drive=nv)
[ -z "$share" ] ||
	qemu+=(-fsdev "local,id=vmshare,path=$share,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=vmshare,mount_tag=vmshare)
if [ -n "$s3_forward" ]; then
	qemu+=(-netdev "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:9000-cmd:busybox nc 127.0.0.1 $s3_forward"
		-device virtio-net-pci,netdev=n0)
else
	qemu+=(-nic none)
fi

note "kernel $kver ($image), ${accel[*]}, $smp cpu, $mem MiB, run dir $run_dir"
start=$(date +%s.%N)
timeout -k 10 "$timeout" "${qemu[@]}" </dev/null >"$run_dir/qemu.log" 2>&1 &
qpid=$!
tail -n +1 -F --pid="$qpid" "$run_dir/stdout" 2>/dev/null &
tpid_out=$!
tail -n +1 -F --pid="$qpid" "$run_dir/stderr" >&2 2>/dev/null &
tpid_err=$!
trap 'kill "$qpid" "$tpid_out" "$tpid_err" 2>/dev/null; exit 130' INT TERM
wait "$qpid"
qrc=$?
wait "$tpid_out" "$tpid_err"
trap - INT TERM
wall=$(echo "$(date +%s.%N) - $start" | bc)
cp -f "$console" "$vmdir/last-console.log" 2>/dev/null
[ -n "$keep_disk" ] || rm -f "$disk"

if [ -s "$run_dir/exit-status" ]; then
	rc=$(cat "$run_dir/exit-status")
elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	note "timed out after $timeout s"
	rc=124
else
	note "the guest did not report an exit status (qemu status $qrc); see $console"
	[ -s "$run_dir/qemu.log" ] && sed 's/^/run-vm: qemu: /' "$run_dir/qemu.log" >&2
	tail -n 30 "$console" | tr -d '\r' | sed 's/^/run-vm: console: /' >&2
	rc=123
fi

# Timing: guest uptime when the command started and ended.
up() { tr -d '\r' <"$console" | sed -n "s/^vmrun: $1 (uptime \([0-9.]*\))$/\1/p" | head -n 1; }
t0=$(up "command start") t1=$(up "command end")
if [ -n "$t0" ] && [ -n "$t1" ]; then
	note "timing: boot ${t0} s, command $(echo "$t1 - $t0" | bc) s, wall ${wall} s"
else
	note "timing: wall ${wall} s"
fi

# Scan the kernel log (console, plus the final dmesg in case the console
# dropped something) for anything that must fail the run.
bad=$(cat "$console" "$run_dir/dmesg" 2>/dev/null | tr -d '\r' |
	grep -E -- "$LOG_BAD" |
	{ if [ -n "${VM_LOG_IGNORE:-}" ]; then grep -Ev -- "$VM_LOG_IGNORE"; else cat; fi; } |
	sed 's/^\[ *[0-9.]*\] //' | awk '{ k = $0; gsub(/[0-9]+/, "N", k) } !seen[k]++')
if [ -n "$bad" ]; then
	{
		echo "run-vm: the kernel log has errors (full log: $console):"
		echo "$bad" | head -n 60 | sed 's/^/run-vm:   /'
	} >&2
	echo "$bad" >"$run_dir/kernel-errors"
	[ "$rc" = 0 ] && rc=122
fi
exit "$rc"
exit
}
