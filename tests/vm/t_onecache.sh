#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_onecache: one cache directory, one mount. A second mount of the same
# cache directory, of one inside it, of one around it, or of a bind mount of
# it is refused with EBUSY and a message naming the mount that holds it;
# the first mount goes on working; the claim ends with the unmount; and
# sibling cache directories still mount side by side.
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
test_init onecache
plan 16

MNT2=/mnt/onecache2
BIND=/mnt/onecache-bind
mkdir -p "$MNT2" "$BIND"
opts="fetch_timeout=20"
make_fixture "$WORK/f.bin" 300K >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f.bin"

cleanup_more() {
	umount_s3 "$MNT2"
	mountpoint -q "$BIND" && umount "$BIND"
	test_cleanup
}
trap cleanup_more EXIT

# mount(2) itself, to see the errno: prints it (0 on success).
raw_mount() {	# SOURCE TARGET OPTIONS
	python3 - "$@" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.mount(sys.argv[1].encode(), sys.argv[2].encode(), b"s3cachefs", 0,
               sys.argv[3].encode())
print(0 if r == 0 else os.strerror(ctypes.get_errno()))
PY
}

refused() {	# DESC CACHE [TARGET]
	local before res tgt=${3:-$MNT2}
	before=$(dmesg | wc -l)
	res=$(timeout -k 5 60 bash -c 'raw_mount "$@"' x "$BUCKET" "$tgt" "cache=$2,$opts" 2>&1)
	if [ "$res" = 0 ]; then
		umount "$tgt"
		not_ok "$1 is refused with EBUSY" "the mount succeeded"
		not_ok "$1: the log says the cache is in use" "the mount succeeded"
		return
	fi
	is "$res" "$(python3 -c 'import os, errno; print(os.strerror(errno.EBUSY))')" \
		"$1 is refused with EBUSY"
	check "$1: the log says the cache is in use" \
		bash -c "dmesg | tail -n +$((before + 1)) | grep -q 'cache=$2 is in use: the mount of $BUCKET has cache'"
}
export -f raw_mount

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "mount cache=\$CACHE" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,$opts"
# Made in the cache once it is one (a directory holding it is no cache yet).
mkdir -p "$CACHE/inner"

refused "the same cache directory" "$CACHE"
refused "a directory inside the cache" "$CACHE/inner"
mount --bind "$CACHE" "$BIND"
refused "a bind mount of the cache" "$BIND"
umount "$BIND"

check "the first mount still reads right" cmp "$WORK/f.bin" "$MNT/f.bin"
check "umount" umount_s3 "$MNT"

check "mount cache=\$CACHE/inner once the cache is free" \
	mount_s3 "$BUCKET" "$MNT2" "cache=$CACHE/inner,$opts"
refused "a directory around a mount's cache" "$CACHE" "$MNT"
check "umount the inner one" umount_s3 "$MNT2"

mkdir -p "$CACHE/a" "$CACHE/b"
check "sibling cache directories mount side by side" \
	bash -c "mount_s3 '$BUCKET' '$MNT' 'cache=$CACHE/a,$opts' &&
		 mount_s3 '$BUCKET' '$MNT2' 'cache=$CACHE/b,$opts' &&
		 cmp '$WORK/f.bin' '$MNT/f.bin' && cmp '$WORK/f.bin' '$MNT2/f.bin'"
umount_s3 "$MNT2"
umount_s3 "$MNT"
tap_done
