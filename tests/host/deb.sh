#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# TAP: `make deb` and lintian (CI runs this; ~30 s on 2 cores). Builds the
# two packages from debian/, checks what they hold and what their scripts
# do, runs the packaged programs, and runs lintian: an error or a warning
# not overridden (debian/*.lintian-overrides, each with its reason) fails.
# Installing, the DKMS build on the node and removal are for the VM test
# (tests/vm/t_deb.sh).
# Ends with "N passed, N failed", as .ci/run counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; failed=$((failed + 1)); [ -z "${2:-}" ] || sed 's/^/#   /' <<<"$2" | tail -n 40; }
check() { local d=$1; shift; if "$@" >/dev/null 2>&1; then pass "$d"; else fail "$d"; fi; }
finish() { echo "1..$n"; echo "$((n - failed)) passed, $failed failed"; [ "$failed" = 0 ]; exit; }

ver=$(cat VERSION)
arch=$(dpkg --print-architecture)
d=build/deb
user=$d/s3cachefs_${ver}_$arch.deb
dkms=$d/s3cachefs-dkms_${ver}_all.deb
log=$(mktemp)
if nice -n 10 make deb >"$log" 2>&1 && [ -f "$user" ] && [ -f "$dkms" ]; then
	pass "make deb builds $(basename "$user") and $(basename "$dkms")"
else
	fail "make deb builds s3cachefs_${ver}_$arch.deb and s3cachefs-dkms_${ver}_all.deb" "$(cat "$log")"
	rm -f "$log"
	finish
fi
rm -f "$log"

x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
dpkg-deb -x "$user" "$x/u" && dpkg-deb -e "$user" "$x/u.ctl"
dpkg-deb -x "$dkms" "$x/k" && dpkg-deb -e "$dkms" "$x/k.ctl"

# s3cachefs: the programs, the unit, the pages, the examples.
for f in usr/sbin/s3cachefsd usr/sbin/s3cachectl sbin/mount.s3cachefs; do
	check "s3cachefs: /$f is an executable" test -x "$x/u/$f"
done
check "s3cachefs: the systemd unit" test -f "$x/u/lib/systemd/system/s3cachefsd.service"
check "the unit runs /usr/sbin/s3cachefsd" grep -q '^ExecStart=/usr/sbin/s3cachefsd ' "$x/u/lib/systemd/system/s3cachefsd.service"
check "the unit names no /usr/local path" bash -c "! grep -q /usr/local '$x/u/lib/systemd/system/s3cachefsd.service'"
for p in man5/s3cachefs.5 man8/s3cachefsd.8 man8/s3cachectl.8 man8/mount.s3cachefs.8; do
	check "s3cachefs: manual page $p" test -f "$x/u/usr/share/man/$p.gz"
done
for e in s3cachefsd.conf.example s3cachefs.json; do
	check "s3cachefs: example $e" test -f "$x/u/usr/share/doc/s3cachefs/examples/$e"
done
check "s3cachefs: the unit is enabled at install" grep -q 'deb-systemd-helper.*enable' "$x/u.ctl/postinst"
check "s3cachefs: the unit is not started at install (no configuration yet)" \
	bash -c "! grep -q 'deb-systemd-invoke.*start' '$x/u.ctl/postinst'"
check "s3cachefs: purge removes the unit's enablement" grep -q 'deb-systemd-helper purge' "$x/u.ctl/postrm"
check "s3cachefs depends on s3cachefs-dkms of its version" \
	bash -c "dpkg-deb -f '$user' Depends | grep -q 's3cachefs-dkms (= $ver)'"
for prog in usr/sbin/s3cachefsd usr/sbin/s3cachectl sbin/mount.s3cachefs; do
	out=$("$x/u/$prog" --version 2>&1)
	if grep -qw "$ver" <<<"$out"; then pass "packaged $(basename $prog) --version: $ver"; else fail "packaged $(basename $prog) --version: $ver" "$out"; fi
done

# s3cachefs-dkms: the tree DKMS builds from, and the DKMS hooks.
src=$x/k/usr/src/s3cachefs-$ver
check "s3cachefs-dkms: /usr/src/s3cachefs-$ver/dkms.conf" test -f "$src/dkms.conf"
check "s3cachefs-dkms: dkms.conf is version $ver" grep -qx "PACKAGE_VERSION=\"$ver\"" "$src/dkms.conf"
check "s3cachefs-dkms: dkms.conf AUTOINSTALL (rebuilt for new kernels)" grep -qx 'AUTOINSTALL="yes"' "$src/dkms.conf"
objs=$(sed -n '/^s3cachefs-y/,/^[^\t]/p' Kbuild | grep -oE 'kmod/[a-z_0-9]+\.o' | sed 's/\.o$/.c/')
miss=$(for f in $objs $(ls kmod/*.[ch] uapi/*.h) Kbuild VERSION; do [ -f "$src/$f" ] || echo "$f"; done)
if [ -n "$objs" ] && [ -z "$miss" ]; then pass "s3cachefs-dkms: every source of Kbuild's object list"; else fail "s3cachefs-dkms: every source of Kbuild's object list" "missing: $miss"; fi
check "s3cachefs-dkms: postinst adds and builds it with dkms" grep -q 'common.postinst' "$x/k.ctl/postinst"
check "s3cachefs-dkms: prerm removes it from dkms" grep -q 'dkms remove' "$x/k.ctl/prerm"
check "s3cachefs-dkms depends on dkms" bash -c "dpkg-deb -f '$dkms' Depends | grep -q dkms"

# lintian: no error, no warning left unexplained.
out=$(lintian --fail-on error,warning --display-info \
	"$user" "$dkms" 2>&1)
rc=$?
if [ $rc = 0 ]; then pass "lintian: no error, no warning"; else fail "lintian: no error, no warning (exit $rc)" "$out"; fi
# lintian warns when run as root (CI runs as root): not about the packages.
out=$(grep -v "running with root privileges" <<<"$out")
[ -z "$out" ] || sed 's/^/# lintian: /' <<<"$out"
finish
