#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# TAP: mount.s3cachefs on the host, where the module cannot be loaded:
# mount(8)'s argument conventions, its exit codes, and the message of a
# kernel without the module. What needs the module (the kernel's own error
# text, a missing daemon, systemctl start) is for the VM test.
set -uo pipefail
cd "$(dirname "$0")"
h=./mount.s3cachefs
n=0 failed=0
t() {	# DESC WANT_RC WANT_STDERR_RE CMD...
	local desc=$1 rc=$2 re=$3 out got
	shift 3
	n=$((n + 1))
	out=$("$@" 2>&1 >/dev/null)
	got=$?
	if [ "$got" = "$rc" ] && grep -qE -- "$re" <<<"$out"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		echo "#   exit $got (want $rc), stderr: $out"
		failed=$((failed + 1))
	fi
}
ver=$(cat ../../VERSION)
t "-V prints the version" 0 '' bash -c "$h -V | grep -qx 'mount.s3cachefs $ver'"
t "no arguments: usage, exit 1" 1 'Usage:' $h
t "one argument: usage, exit 1" 1 'Usage:' $h bucket
t "a bad source is refused before the kernel" 1 "bad character ' '" $h 'buck et' /mnt -f
t "a bad prefix is refused" 1 "empty, '.' or '..'" $h 's3://b/a/../c' /mnt -f
t "another type is refused" 1 'cannot mount type ext4' $h b /mnt -t ext4
t "-t s3cachefs is taken" 0 '' $h b /mnt -t s3cachefs -f
t "-t with a subtype is taken" 0 '' $h b /mnt -t s3cachefs.x -f
t "bind is refused" 1 "'bind' is not for" $h b /mnt -o bind -f
t "-f -v: options split as mount(8) passes them" 0 'not for the kernel: defaults,_netdev' \
	$h s3://b/p /mnt -f -v -o defaults,_netdev,cache=/c,ro -n -s
t "-f -v: bucket and prefix shown" 0 "bucket b, prefix 'p/'" $h s3://b/p /mnt -fv -o cache=/c
t "an unknown flag: usage, exit 1" 1 'Usage:' $h b /mnt -x
# fsopen() needs CAP_SYS_ADMIN; a host kernel without the module gives
# ENODEV (the host of these tests cannot load modules).
if [ "$(id -u)" = 0 ] && ! grep -qw s3cachefs /proc/filesystems; then
	t "no module: says so, exit 32" 32 'kernel module is not loaded' \
		$h s3://b/p /nonexistent -o cache=/c
else
	n=$((n + 1)); echo "ok $n - no module: says so # SKIP not root, or the module is loaded"
fi
echo "1..$n"
[ "$failed" = 0 ]
