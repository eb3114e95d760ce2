#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Print the installed Debian kernel release for a series ("6.1", "6.12"):
# the newest plain -amd64 image that also has its headers installed. The VM
# harness boots that image and the module is built against its headers.
set -euo pipefail
series=${1:?usage: kver.sh SERIES}
for img in $(ls /boot/vmlinuz-"$series".* 2>/dev/null | sort -rV); do
	kver=${img#/boot/vmlinuz-}
	case "$kver" in *-rt-* | *-cloud-*) continue ;; esac
	[ -d "/lib/modules/$kver/build" ] || continue
	echo "$kver"
	exit 0
done
echo "kver.sh: no $series kernel with headers installed (run tools/setup.sh)" >&2
exit 1
