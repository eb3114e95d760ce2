#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One-shot, idempotent set-up for building and testing s3cachefs on Debian 12.
# Installs build deps, both kernel header sets (6.1 and 6.12 from backports),
# the guest kernel images, QEMU, the peers used by the benchmarks and the
# pinned S3 test server (npm).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# The VM harness builds its own initramfs: skip Debian's for each kernel.
export INITRD=No

# bookworm-backports: reuse the URIs of the machine's own Debian source, so no
# mirror host name is ever written into this repository.
add_backports() {
	local src=/etc/apt/sources.list.d/debian.sources
	local dst=/etc/apt/sources.list.d/s3cachefs-backports.sources
	[ -f "$dst" ] && return 0
	local uris=""
	if [ -f "$src" ]; then
		uris=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$src")
	fi
	if [ -z "$uris" ] && [ -f /etc/apt/sources.list ]; then
		uris=$(awk '/^deb / && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
	fi
	[ -n "$uris" ] || { echo "setup: cannot find a Debian apt source to reuse" >&2; return 1; }
	printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uris" | $SUDO tee "$dst" >/dev/null
}

PKGS=(
	build-essential bc bison flex kmod cpio pkg-config git
	libelf-dev libssl-dev libcurl4-openssl-dev libnl-3-dev libnl-genl-3-dev
	libexpat1-dev libinih-dev libjson-c-dev
	linux-headers-amd64 linux-image-amd64 linux-source-6.1
	qemu-system-x86 busybox-static e2fsprogs xfsprogs util-linux iproute2
	dkms fio sparse
	debhelper dh-dkms lintian dpkg-dev fakeroot man-db groff-base
	s3fs rclone gnuplot-nox nginx-light curl jq
	fdisk file xz-utils zstd python3 python3-numpy python3-torch nodejs
	ceph-mon ceph-osd radosgw ceph-common
	# make check-peer builds xfstests' fsx/fsstress and pjdfstest (tests/peer/).
	autoconf automake libtool libaio-dev liburing-dev xfslibs-dev
	libacl1-dev libattr1-dev uuid-dev
)

add_backports
# Nothing here boots Debian's initrd images (the VM harness builds its own):
# skip their rebuilds, which lvm2 (pulled in by ceph-osd) would trigger.
if [ -f /etc/initramfs-tools/update-initramfs.conf ]; then
	$SUDO sed -i 's/^update_initramfs=.*/update_initramfs=no/' \
		/etc/initramfs-tools/update-initramfs.conf
fi
$SUDO apt-get update -q || echo "setup: apt-get update reported errors (continuing)" >&2
$SUDO apt-get install -y -q --no-install-recommends "${PKGS[@]}"
# 6.12 headers and image for the second build/test target: the plain amd64
# flavour only (not -rt/-cloud), newest 6.12 in bookworm-backports.
k612=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9.+a-z]*-amd64$' |
	awk '{print $1}' | grep -v -e '-rt-' -e '-cloud-' -e 'dbg' -e 'unsigned' |
	sort -V | tail -n 1)
if [ -n "$k612" ]; then
	kver=${k612#linux-image-}
	$SUDO apt-get install -y -q --no-install-recommends -t bookworm-backports \
		"$k612" "linux-headers-$kver"
else
	echo "setup: no 6.12 kernel found in bookworm-backports" >&2
fi

# Kernel source for checkpatch.pl and reading.
if [ ! -d /usr/src/linux-source-6.1 ] && [ -f /usr/src/linux-source-6.1.tar.xz ]; then
	$SUDO tar -C /usr/src -xf /usr/src/linux-source-6.1.tar.xz
fi

# Pinned S3 test server (tests/s3server/package-lock.json).
if [ -f tests/s3server/package.json ]; then
	(cd tests/s3server && npm ci --no-audit --no-fund --loglevel=error)
fi
# The independent SigV4 signer of tests/sigv4 (@smithy/signature-v4).
[ -f tests/sigv4/package.json ] && (cd tests/sigv4 && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: done"
