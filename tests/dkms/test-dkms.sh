#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# TAP test: dkms add/build/install/remove of this tree against installed
# headers (6.1 and 6.12 when present, or those DKMS_KERNELS names). Needs
# root and dkms.
set -uo pipefail
# Run from `make check`, the outer make's MAKEFLAGS (KERNEL=..., jobserver)
# would leak into the kernel builds dkms starts.
unset MAKEFLAGS MAKELEVEL MFLAGS
cd "$(dirname "$0")/../.."
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
src=/usr/src/s3cachefs-$ver
kvers=()
# DKMS_KERNELS: which of them (CI names one: its suites build the module
# for each kernel anyway).
for s in ${DKMS_KERNELS:-6.1 6.12}; do
	k=$(bash tools/kver.sh "$s" 2>/dev/null) && kvers+=("$k")
done
echo "1..$((2 + 2 * ${#kvers[@]}))"
n=0
t() { n=$((n + 1)); if "$@" >/tmp/dkms-test.log 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; sed 's/^/# /' /tmp/dkms-test.log | tail -20; fi; }

cleanup() { dkms remove -m s3cachefs -v "$ver" --all >/dev/null 2>&1; rm -rf "$src"; }
cleanup
mkdir -p "$src"
cp --parents -t "$src" Kbuild Makefile VERSION dkms.conf kmod/*.[ch] uapi/*.h
desc="dkms add $ver"; t dkms add -m s3cachefs -v "$ver"
for k in "${kvers[@]}"; do
	desc="dkms install for $k"; t dkms install -m s3cachefs -v "$ver" -k "$k"
	desc="module installed and loadable by modinfo for $k"
	t bash -c "modinfo -k '$k' s3cachefs | grep -q '^vermagic: *$k '"
done
desc="dkms remove"; t dkms remove -m s3cachefs -v "$ver" --all
cleanup
