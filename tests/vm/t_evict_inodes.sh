#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_evict_inodes: min_free covers inodes too. The cache is an ext4 of 64
# MiB with 128 inodes and the daemon keeps 20% free (--min-free 20%):
# plenty of bytes, but listing a directory of 90 objects takes the free
# inodes under a fifth, and the next fetch starts an eviction pass, least
# recently used first, where before nothing happened until ENOSPC.
# Mounts with nodir_index: a listing that makes a lower file per object.
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
test_init evict_inodes
plan 10

FSDIR=/mnt/evict-inodes-cache
CHUNK=1048576
for ((i = 0; i < 4; i++)); do
	make_fixture "$WORK/d$i" $CHUNK "inodes-$i" >/dev/null
	s3_put "$BUCKET" "data/d$i" "$WORK/d$i" || echo "s3_put d$i failed" >&2
done
s3_seed_many "$BUCKET" many/ 90

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
check "an ext4 of 64 MiB with 128 inodes" \
	bash -c "[ -n '$DEV' ] && mkfs.ext4 -q -F -N 128 '$DEV' &&
	mount '$DEV' '$FSDIR' && [ \$(stat -f -c %c '$FSDIR') -le 160 ]"
diag "inodes: $(stat -f -c '%c total, %d free' "$FSDIR"), blocks: $(stat -f -c '%a of %b free' "$FSDIR")"

check "module loads" load_module
check_sh "daemon starts with --min-free 20%" start_daemon --min-free 20%
mount_s3_or_end "$BUCKET" "$MNT" "cache=$FSDIR,chunk=1M,fetch_timeout=60,nodir_index"

bad=
for ((i = 0; i < 3; i++)); do
	cmp -s "$WORK/d$i" "$MNT/data/d$i" || bad+=" d$i"
	sleep 1
done
is "$bad" "" "three files read right (cached; plenty of inodes and bytes left)"
check_fails "no eviction yet" grep -q "evicting" "$DAEMON_LOG"

is "$(timeout 120 ls "$MNT/many" | wc -l)" 90 "a directory of 90 objects lists"
diag "inodes now: $(stat -f -c '%c total, %d free' "$FSDIR"), blocks: $(stat -f -c '%a of %b free' "$FSDIR")"

check "a fourth file reads right" cmp "$WORK/d3" "$MNT/data/d3"
sleep 2
check "eviction started for want of inodes" \
	grep -q "evicting.*free inodes under the floor\|free inodes under the floor.*evicting" "$DAEMON_LOG"
check "the least recently used file (d0) went first" grep -q "evicted data/d0" "$DAEMON_LOG"
tap_done
