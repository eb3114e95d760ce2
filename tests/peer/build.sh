#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/peer/build.sh - build other people's test suites for tests/peer/,
# from source copies the user points at (they are not ours to vendor, and
# Debian packages neither):
#
#   PEER_SRC=DIR           DIR/xfstests and DIR/pjdfstest (either may be absent)
#   PEER_XFSTESTS=DIR      a kdave/xfstests (or git.kernel.org fstests) checkout
#   PEER_PJDFSTEST=DIR     a pjd/pjdfstest checkout
#
# Each is copied (without .git) to build/peer/NAME and built there, on the
# host: xfstests' ltp/fsx and ltp/fsstress with its own configure (needs
# libaio-dev liburing-dev xfslibs-dev libacl1-dev libattr1-dev uuid-dev),
# pjdfstest with autoreconf. The guest runs them from the host root over
# 9p. A copy already built from an unchanged source is kept. Prints what
# it built, one line each, writes the VM tests of the suites named this
# time to build/peer/tests (for tests/peer/run.sh), and exits non-zero if
# a named source is missing or fails to build.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$repo/build/peer
mkdir -p "$out"

xfs=${PEER_XFSTESTS:-} pjd=${PEER_PJDFSTEST:-}
if [ -n "${PEER_SRC:-}" ]; then
	[ -z "$xfs" ] && [ -d "$PEER_SRC/xfstests" ] && xfs=$PEER_SRC/xfstests
	[ -z "$pjd" ] && [ -d "$PEER_SRC/pjdfstest" ] && pjd=$PEER_SRC/pjdfstest
fi
if [ -z "$xfs$pjd" ]; then
	echo "build.sh: no suite to build: set PEER_SRC=DIR (holding xfstests/," \
		"pjdfstest/) or PEER_XFSTESTS=DIR / PEER_PJDFSTEST=DIR" >&2
	exit 2
fi

# copy NAME SRC: build/peer/NAME as a copy of SRC; 1 if it is up to date.
# The stamp is the source path and the newest mtime under it, so an edit
# or a checkout of another commit rebuilds.
copy() {
	local name=$1 src dst=$out/$1 stamp
	src=$(cd "$2" && pwd) || return 2
	stamp="$src $(find "$src" -path "$src/.git" -prune -o -type f -printf '%T@\n' |
		sort -n | tail -n 1)"
	if [ -f "$dst/.peer-stamp" ] && [ "$(cat "$dst/.peer-stamp")" = "$stamp" ] &&
			[ -f "$dst/.peer-built" ]; then
		return 1
	fi
	rm -rf "$dst" && mkdir -p "$dst" || return 2
	tar -C "$src" --exclude=.git -cf - . | tar -C "$dst" -xf - || return 2
	echo "$stamp" >"$dst/.peer-stamp"
	return 0
}

rc=0
: >"$out/tests"
if [ -n "$xfs" ]; then
	if [ ! -f "$xfs/ltp/fsx.c" ]; then
		echo "build.sh: $xfs is not an xfstests checkout (no ltp/fsx.c)" >&2
		rc=1
	else
		copy xfstests "$xfs"
		case $? in
		0)	if (cd "$out/xfstests" && make include/builddefs && make ltp) \
					>"$out/xfstests.log" 2>&1 &&
					[ -x "$out/xfstests/ltp/fsx" ] && [ -x "$out/xfstests/ltp/fsstress" ]; then
				touch "$out/xfstests/.peer-built"
				echo "built: xfstests ltp/fsx ltp/fsstress ($xfs)"
			else
				echo "build.sh: xfstests failed to build; $out/xfstests.log says:" >&2
				tail -n 20 "$out/xfstests.log" >&2
				rc=1
			fi ;;
		1)	echo "up to date: xfstests ltp/fsx ltp/fsstress ($xfs)" ;;
		*)	echo "build.sh: cannot copy $xfs" >&2; rc=1 ;;
		esac
		[ -f "$out/xfstests/.peer-built" ] &&
			printf '%s\n' tests/peer/t_peer_fsx.sh tests/peer/t_peer_fsstress.sh >>"$out/tests"
	fi
fi
if [ -n "$pjd" ]; then
	if [ ! -f "$pjd/pjdfstest.c" ]; then
		echo "build.sh: $pjd is not a pjdfstest checkout (no pjdfstest.c)" >&2
		rc=1
	else
		copy pjdfstest "$pjd"
		case $? in
		0)	if (cd "$out/pjdfstest" && autoreconf -ifs && ./configure && make pjdfstest) \
					>"$out/pjdfstest.log" 2>&1 && [ -x "$out/pjdfstest/pjdfstest" ]; then
				touch "$out/pjdfstest/.peer-built"
				echo "built: pjdfstest ($pjd)"
			else
				echo "build.sh: pjdfstest failed to build; $out/pjdfstest.log says:" >&2
				tail -n 20 "$out/pjdfstest.log" >&2
				rc=1
			fi ;;
		1)	echo "up to date: pjdfstest ($pjd)" ;;
		*)	echo "build.sh: cannot copy $pjd" >&2; rc=1 ;;
		esac
		[ -f "$out/pjdfstest/.peer-built" ] &&
			echo tests/peer/t_peer_pjdfstest.sh >>"$out/tests"
	fi
fi
exit $rc
