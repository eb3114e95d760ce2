#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_lostfound: a cache directory at the root of its filesystem (an ext4
# with its lost+found): lost+found is not shown in the mount, cannot be
# looked up, and the daemon's LIST of the root neither removes nor touches
# it, nor does eviction go into it.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init lostfound
plan 10

FSDIR=/mnt/lostfound-cache
make_fixture "$WORK/f.bin" 100K >/dev/null
s3_put "$BUCKET" a.bin "$WORK/f.bin"
s3_put "$BUCKET" d/b.bin "$WORK/f.bin"

cleanup_more() {
	test_cleanup
	mountpoint -q "$FSDIR" && umount "$FSDIR"
	if [ -n "$RAM" ]; then
		rmmod brd
	elif [ -n "$DEV" ]; then
		losetup -d "$DEV"
	fi
}
trap cleanup_more EXIT

mkdir -p "$FSDIR"
truncate -s 64M "$WORK/fs.img"
modprobe loop 2>/dev/null
DEV=$(losetup -f --show "$WORK/fs.img" 2>/dev/null) || DEV=
RAM=
if [ -z "$DEV" ] && modprobe brd rd_nr=1 rd_size=65536 2>/dev/null; then
	DEV=/dev/ram0 RAM=1	# no loop device here: a RAM disk
fi
check "an ext4 with lost+found" \
	bash -c "[ -n '$DEV' ] && mkfs.ext4 -q -F '$DEV' &&
	mount '$DEV' '$FSDIR' && [ -d '$FSDIR/lost+found' ]"
echo orphan >"$FSDIR/lost+found/#12"

check "module loads" load_module
check_sh "daemon starts" start_daemon
# meta_ttl=0: every readdir LISTs the root (and would prune what S3 lacks).
check "mount with cache= at the filesystem's root" \
	mount_s3 "$BUCKET" "$MNT" "cache=$FSDIR,fetch_timeout=30,meta_ttl=0"
is "$(timeout 60 ls -a "$MNT" 2>&1 | tr '\n' ' ')" ". .. a.bin d " \
	"the root lists without lost+found"
is "$(timeout 60 ls -a "$MNT" 2>&1 | tr '\n' ' ')" ". .. a.bin d " \
	"and again (a second LIST)"
check_fails "lost+found cannot be looked up" stat "$MNT/lost+found"
check "the files read right" cmp "$WORK/f.bin" "$MNT/a.bin"
check "lost+found and its file are still there after the LISTs" \
	bash -c "[ -d '$FSDIR/lost+found' ] && [ \"\$(cat '$FSDIR/lost+found/#12')\" = orphan ]"
# No daemon: the lower root is listed as it is, so this is the module's doing.
kill_daemon
is "$(timeout 60 ls -a "$MNT" 2>&1 | tr '\n' ' ')" ". .. a.bin d " \
	"with no daemon, the module does not list lost+found either"
tap_done
