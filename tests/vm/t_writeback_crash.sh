#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_writeback_crash: power cuts of the cache device under a write-back
# writer, at random moments (WB_CRASHES rounds, 20 by default; seed printed,
# WB_SEED replays it). Each round a writer creates and rewrites files of a
# few names (0 to 3 MiB, some with fsync) and logs, outside the cache
# device, "open NAME SHA256" before each open for writing and "ack NAME
# SHA256" after each close that returned 0. After a random 0.2-1.7 s the cache's
# ext4 goes down without a journal flush (FS_IOC_SHUTDOWN, as a power cut
# loses what was not committed); the daemon is killed with -9 in every
# other round. Then the ext4 is mounted again (journal replay), a new
# daemon and a new write-back mount upload what was recorded, and for
# every name: if its last logged step was an acknowledgment, S3 has
# exactly those bytes; otherwise S3 has one of its acknowledged versions,
# the whole of the version whose close was under way (a close cut short
# may or may not have taken effect, as any system call), or nothing:
# never a part of a version, never bytes nobody wrote whole.
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init writeback_crash
ROUNDS=${WB_CRASHES:-20}
SEED=${WB_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
plan $((3 + ROUNDS * 2))
diag "seed $SEED (WB_SEED=$SEED replays it), $ROUNDS rounds"

FSDIR=/mnt/writeback-crash-cache
CTL=$REPO/tools/s3cachectl/s3cachectl
OPTS="cache=$FSDIR,fetch_timeout=20,meta_ttl=3600,writable,writeback,upload_delay=1"

cleanup_more() {
	[ -n "${WPID:-}" ] && kill -KILL "$WPID" 2>/dev/null
	test_cleanup
	loop_ext4_cleanup
}
trap cleanup_more EXIT

check_sh "an ext4 of 256 MiB on a loop device for the cache" loop_ext4 "$FSDIR" 256M
check "module loads" load_module
check_sh "daemon starts" start_daemon


for ((round = 1; round <= ROUNDS; round++)); do
	rseed=$((SEED + round))
	hold_ms=$((200 + rseed * 7919 % 1500))
	mount_s3 "$BUCKET" "$MNT" "$OPTS" || { not_ok "round $round: mount"; continue; }
	# Runs until killed or the cache device fails.
	python3 "$REPO/tests/vm/helpers/wbwriter.py" "$MNT" "$WORK/acks" "$rseed" 3 &
	WPID=$!
	sleep "$((hold_ms / 1000)).$(printf %03d $((hold_ms % 1000)))"
	((round % 2)) && kill_daemon
	xfs_io -x -c shutdown "$FSDIR"
	kill -KILL "$WPID" 2>/dev/null
	wait "$WPID" 2>/dev/null
	WPID=
	umount_s3 "$MNT" || umount -l "$MNT"
	# A new daemon: the old one may hold files of the shut-down ext4.
	kill_daemon
	start_daemon
	umount "$FSDIR" && mount "$LOOP_DEV" "$FSDIR" &&
		mount_s3 "$BUCKET" "$MNT" "$OPTS" && "$CTL" sync "$MNT"
	is "$?" 0 "round $round (crash after ${hold_ms} ms, $(grep -c '^ack' "$WORK/acks") acks so far): cache remounted, recorded uploads done"
	bad=$(s3_check_acks "$WORK/acks")
	is "$bad" "" "round $round: S3 holds every last acknowledged version, nothing unacknowledged"
	umount_s3 "$MNT"
done
tap_done
