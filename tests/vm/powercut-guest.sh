#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# powercut-guest.sh - one boot of tests/powercut.sh (not a t_* test: the
# suite's guest does not run it). PC_ROUND=N (1 formats the NVMe disk),
# PC_SEED, PC_FINAL=1 on the last boot.
#
# Every boot: mount the NVMe ext4 (the journal replays what the power cut
# left), reach S3 (s3rver on the host, run by tests/powercut.sh, at
# 10.0.2.100:9000 through run-vm.sh --s3-forward: it outlives the guest,
# as S3 outlives a node, and finishes what it got), load the module, start
# the daemon and mount the same cache write-back. From the second boot on: sync, then
# check S3 against the writer's log and that no multipart upload is left
# open. Then, unless PC_FINAL, start the writer and tell the host
# (writing.N), which kills QEMU at a random moment.
#
# The writer creates and rewrites files of a few names (0 to 12 MiB: single
# PUTs and multipart uploads of 5 MiB parts; some fsync'd) and logs to the
# run directory (9p, written through to the host before write() returns)
# "open NAME SHA256" before each open for writing and "ack NAME SHA256"
# after each close that returned 0. After the cut, for every name: if its
# last logged step was an acknowledgment, S3 has exactly those bytes;
# otherwise S3 has one of its acknowledged versions, the whole version
# whose close was under way, or nothing. A close under way at an earlier
# cut may have returned unlogged: that version counts as acknowledged
# (the writer logs "start" at each boot; s3_ack_verdict).
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. tests/lib/common.sh

ROUND=${PC_ROUND:?} SEED=${PC_SEED:?} FINAL=${PC_FINAL:-}
STATE=$VM_OUT
export S3CFS_LOGDIR=$STATE/logs/boot-$ROUND S3_DATA=$STATE/s3
export S3_ENDPOINT=http://10.0.2.100:9000
TEST_NAME=powercut BUCKET=t-powercut CACHE=/nvme/cache MNT=/mnt/powercut
export TEST_NAME BUCKET CACHE MNT
mkdir -p "$S3CFS_LOGDIR" "$MNT"
CTL=$REPO/tools/s3cachectl/s3cachectl
# Uploads go over the emulated NIC to s3rver on the host, beside the
# suite's own guests (tests/run.sh): give each one a minute, the sync three.
OPTS="cache=$CACHE,fetch_timeout=$((60 * ${S3CFS_TIMEOUT_SCALE:-1})),meta_ttl=3600,writable,writeback,upload_delay=1"
echo "TAP version 13"
diag "boot $ROUND, seed $SEED$([ -n "$FINAL" ] && echo ', the last')"

dev=/dev/nvme0n1
if [ "$ROUND" = 1 ]; then
	check "boot 1: ext4 made on the NVMe disk" mkfs.ext4 -q -F -E nodiscard $dev
fi
mkdir -p /nvme
check "boot $ROUND: the NVMe ext4 mounts" mount $dev /nvme
mkdir -p "$CACHE"
modprobe virtio_net 2>/dev/null
check "boot $ROUND: the network to the host's S3 comes up" \
	bash -c "ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 &&
		curl -s -m 10 -o /dev/null $S3_ENDPOINT/"
[ "$ROUND" = 1 ] && s3_mb "$BUCKET"
check "boot $ROUND: module loads" load_module
check_sh "boot $ROUND: daemon starts" start_daemon --part-size 5242880
check "boot $ROUND: write-back mount of the cache" mount_s3 "$BUCKET" "$MNT" "$OPTS"


if [ "$ROUND" -gt 1 ]; then
	diag "resumed by the mount: $(mnt_stat wb_resumed) files"
	TAP_TIMEOUT=$((3 * TAP_TIMEOUT)) check "boot $ROUND: s3cachectl sync uploads what was recorded" "$CTL" sync "$MNT"
	is "$(s3_check_acks "$STATE/acks")" "" "boot $ROUND: S3 holds every last acknowledged version, nothing unacknowledged ($(grep -c '^ack' "$STATE/acks") acks so far)"
	# The daemon aborts its journal's uploads when the mount comes. It
	# records an upload once CreateMultipartUpload has answered, before
	# any part: a cut between S3's creating one and its answer leaves an
	# empty upload nobody names (no part, no storage; docs/architecture.md).
	for ((i = 0; i < 60; i++)); do
		[ "$(s3_uploads_open)" = 0 ] && break
		sleep 0.5
	done
	[ "$(s3_uploads_open)" = 0 ] ||
		diag "boot $ROUND: $(s3_uploads_open) multipart upload(s) open, $(s3_uploads_with_parts) holding parts"
	is "$(s3_uploads_with_parts)" 0 "boot $ROUND: no multipart upload holding parts left open"
	# Nobody else writes the bucket: a conflict would be our own upload
	# taken for another writer's (the daemon checks a failed condition
	# against the bytes it sent).
	is "$(ls -A "$CACHE/.s3cachefs/conflicts" 2>/dev/null | wc -l)" 0 \
		"boot $ROUND: no upload was taken for a conflict"
fi

if [ -n "$FINAL" ]; then
	check "boot $ROUND: umount" umount_s3 "$MNT"
	stop_daemon
	check "boot $ROUND: module unloads" unload_module
	umount /nvme
	tap_done
fi

touch "$STATE/acks"
a0=$(grep -c "^ack" "$STATE/acks")
python3 tests/vm/helpers/wbwriter.py "$MNT" "$STATE/acks" $((SEED * 1000 + ROUND)) 12 &
wpid=$!
# Let a few files through before the host may cut the power.
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c '^ack' "$STATE/acks")" -ge $((a0 + 2)) ] && break
	kill -0 $wpid 2>/dev/null || break
	sleep 0.2
done
if kill -0 $wpid 2>/dev/null; then
	ok "boot $ROUND: the writer runs"
	: >"$STATE/writing.$ROUND"
else
	not_ok "boot $ROUND: the writer runs"
fi
# The host cuts the power now; waiting here is all that is left to do.
wait $wpid
not_ok "boot $ROUND: the writer ran until the power went" "it exited $?"
tap_done
