#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stage 2 of the test VM: PID 1 after switch_root into the overlay of the
# host root. Sets up the usual mounts, runs the command tools/vm/run-vm.sh
# left in the run directory (a writable 9p share mounted at the same path as
# on the host) with stdout/stderr on two virtio serial ports, records its
# exit status and the kernel log there, and powers the VM off.
#
# Every exec of a dynamically linked host binary costs ~0.3 s under TCG, so
# this uses bash builtins and the static busybox wherever it can.
# Parse everything before running anything: the host may edit this file
# (a checkout, a commit) while a guest is still executing it.
{
run_dir=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
bb=/bin/busybox

say() {
	local up
	read -r up _ </proc/uptime
	echo "vmrun: $* (uptime $up)" >/dev/console
}
halt_vm() {
	$bb sync
	$bb reboot -f
	echo b >/proc/sysrq-trigger
	$bb sleep 60
}

say "stage2"
# The host's /tmp disappears under the guest's own below: a checkout or a
# run directory that lives there stays reachable at its own path (the
# top-level entry of each under /tmp is bound back over the new tmpfs).
repo=${0%/tools/vm/guest-init.sh}
keep=()
for p in "$repo" "$run_dir"; do
	case "$p" in
	/tmp/?*)	p=${p#/tmp/}; keep+=("${p%%/*}") ;;
	esac
done
if [ ${#keep[@]} -gt 0 ]; then
	$bb mkdir -p /.vm-host-tmp
	$bb mount -o bind /tmp /.vm-host-tmp
fi
$bb mount -t tmpfs -o mode=1777 tmpfs /tmp
for p in ${keep[@]+"${keep[@]}"}; do
	[ -d "/tmp/$p" ] && continue
	$bb mkdir -p "/tmp/$p"
	$bb mount -o bind "/.vm-host-tmp/$p" "/tmp/$p" ||
		say "stage2: cannot bind /tmp/$p from the host"
done
$bb mount -t tmpfs -o mode=0755 tmpfs /run
$bb mkdir -p /dev/pts /dev/shm
$bb mount -t devpts -o gid=5,mode=620 devpts /dev/pts
$bb mount -t tmpfs -o mode=1777 tmpfs /dev/shm
$bb mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
$bb ln -sf /proc/self/fd /dev/fd
$bb ln -sf /proc/self/fd/0 /dev/stdin
$bb ln -sf /proc/self/fd/1 /dev/stdout
$bb ln -sf /proc/self/fd/2 /dev/stderr

if ! $bb mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 \
		vmout "$run_dir"; then
	say "stage2: cannot mount the run directory $run_dir"
	echo "vmrun: exit 123" >/dev/console
	halt_vm
fi
$bb ip link set lo up
$bb hostname s3cfs-vm
[ -f "$run_dir/env" ] && . "$run_dir/env"
if [ -n "${VM_SHARE:-}" ]; then
	$bb mkdir -p "$VM_SHARE"
	$bb mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 \
		vmshare "$VM_SHARE" || say "stage2: cannot mount the shared directory $VM_SHARE"
fi

# The guest command's stdout and stderr: virtio serial ports named by the
# host (no udev here, so find them through sysfs).
out=/dev/null err=/dev/console
for p in /sys/class/virtio-ports/*; do
	[ -e "$p/name" ] || continue
	read -r name <"$p/name"
	case "$name" in
	vmrun.stdout)	out=/dev/${p##*/} ;;
	vmrun.stderr)	err=/dev/${p##*/} ;;
	esac
done

# Only leaks that appear while the command runs are reported.
kmemleak=/sys/kernel/debug/kmemleak
[ -w $kmemleak ] && echo clear >$kmemleak

say "command start"
bash "$run_dir/cmd" </dev/null >"$out" 2>"$err"
rc=$?
say "command end"

if [ -w $kmemleak ] && [ "${VM_KMEMLEAK:-1}" != 0 ]; then
	say "kmemleak scan"
	echo scan >$kmemleak
	$bb cat $kmemleak >"$run_dir/kmemleak"
	# The report lives only in debugfs: copy it to the console for the scan.
	while IFS= read -r line; do
		echo "kmemleak-report: $line"
	done <"$run_dir/kmemleak" >/dev/console
fi
$bb dmesg >"$run_dir/dmesg" 2>/dev/null
echo "$rc" >"$run_dir/exit-status"
echo "vmrun: exit $rc" >/dev/console
halt_vm
exit
}
