#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# TAP: one version everywhere, from VERSION: dkms.conf, debian/changelog,
# the daemon's --version, s3cachectl's and mount.s3cachefs's, the module's
# MODULE_VERSION (of each build/<kernel>/s3cachefs.ko built), the manual
# pages. dkms.conf and debian/changelog must hold it literally (dkms and
# dpkg read them as they are): this test is what keeps them in step.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
is() {	# GOT WANT DESC
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "#   got '$1', want '$2'"
		failed=$((failed + 1))
	fi
}
ver=$(cat VERSION)
n=$((n + 1))
if [[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then echo "ok $n - VERSION is X.Y.Z ($ver)"; else echo "not ok $n - VERSION is X.Y.Z ('$ver')"; failed=$((failed + 1)); fi
is "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)" "$ver" "dkms.conf PACKAGE_VERSION"
is "$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null ||
	sed -n '1s/.*(\(.*\)).*/\1/p' debian/changelog)" "$ver" "debian/changelog (a native package: no revision)"
is "$(daemon/s3cachefsd --version 2>&1 | awk '{ print $2 }')" "$ver" "s3cachefsd --version"
is "$(tools/s3cachectl/s3cachectl --version 2>&1)" "s3cachectl $ver" "s3cachectl --version"
make -s -C tools/mount mount.s3cachefs >/dev/null
is "$(tools/mount/mount.s3cachefs -V 2>&1)" "mount.s3cachefs $ver" "mount.s3cachefs -V"
is "$(sed -n 's/^MODULE_VERSION(\(.*\));/\1/p' kmod/super.c)" "S3CFS_VERSION" "kmod/super.c: MODULE_VERSION(S3CFS_VERSION)"
grep -q 'S3CFS_VERSION=.*VERSION' Kbuild
is "$?" 0 "Kbuild defines S3CFS_VERSION from VERSION"
for ko in build/*/s3cachefs.ko; do
	[ -f "$ko" ] || continue
	# Built before VERSION changed: not this test's business.
	[ "$ko" -nt VERSION ] || continue
	is "$(modinfo -F version "$ko")" "$ver" "$ko: modinfo version"
done
for p in man/*.[0-9]; do
	is "$(sed -n 's/^\.TH [^"]*"s3cachefs \([^"]*\)".*/\1/p' "$p")" "$ver" "$p: .TH version"
done
echo "1..$n"
[ "$failed" = 0 ]
