#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_umount_race: unmount while a readahead worker still has work (issue 11,
# item 4). A fake daemon (nlfuzz fake-daemon --stall-fetch) never answers a
# FETCH. A reader starts a readahead window of a missing chunk; its worker
# is held 6 s before its first piece (fault point ra_work). The reader is
# killed, and umount runs; it is held 6 s after flushing the requests, before
# the inodes are evicted (fault point umount_flushed). The worker resumes
# inside that window (dmesg shows the order) and asks for its chunk again.
# Before the fix that FETCH was queued after the flush: "Busy inodes after
# unmount", and the superblock freed under the request. Now the mount
# refuses it (the worker fails its folios), umount waits for the worker,
# and nothing is left: no busy inode, nothing pending, the module unloads.
# Mounts with nodir_index: the file has its lower file before the fake
# daemon (which makes none) takes over.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init umount_race
plan 8

P=/sys/module/s3cachefs/parameters
nlfuzz=$(helper nlfuzz)
make_fixture "$WORK/f" 2M >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f"

check "module loads" load_module
check_sh "daemon starts" start_daemon
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=20,meta_ttl=600,nodir_index"
timeout 60 ls -l "$MNT" >/dev/null
stop_daemon

"$nlfuzz" fake-daemon --stall-fetch --seconds 200 >"$WORK/fake.log" 2>&1 &
fake=$!
echo "$fake" >>"${S3CFS_PIDFILE:-/dev/null}"
for ((i = 0; i < 100; i++)); do
	grep -q 'fake daemon ready' "$WORK/fake.log" && break
	sleep 0.1
done

d0=$(dmesg | wc -l)
# The worker must still sleep when umount reaches its flush: slower kernels
# (debug) take longer to get there.
delay=$((6000 * ${S3CFS_TIMEOUT_SCALE:-1}))
echo $delay >"$P/fault_delay_ms"
echo ra_work,umount_flushed >"$P/fault_points"
dd if="$MNT/f.bin" of=/dev/null bs=64k count=1 status=none 2>/dev/null &
reader=$!
for ((i = 0; i < 100; i++)); do
	dmesg | tail -n +$((d0 + 1)) | grep -q "fault point ra_work: $delay" && break
	sleep 0.1
done
# umount's hold starts a third of the delay after the worker's, so the
# worker's ends first by that much (two equal sleeps started 0.2 s apart
# ended in either order under TCG).
sleep $((delay / 3000))
kill -KILL "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
t0=$(date +%s)
timeout -k 5 120 umount "$MNT"
rc=$? t=$(($(date +%s) - t0))
is "$rc" 0 "umount returns ($t s)"
echo >"$P/fault_points"
echo 0 >"$P/fault_delay_ms"
# Before the fix, the worker's FETCH times out 20 s later on a freed mount.
sleep 25
log=$(dmesg | tail -n +$((d0 + 1)))
diag "$(grep -E 'fault point|Busy|BUG|WARNING' <<<"$log")"
order=$(grep -oE 'fault point (ra_work|umount_flushed)(: done)?' <<<"$log" |
	tr '\n' '|')
is "$order" "fault point ra_work|fault point umount_flushed|fault point ra_work: done|fault point umount_flushed: done|" \
	"the worker resumed after the flush, before the inodes went (dmesg order)"
grep -q 'Busy inodes' <<<"$log"
is "$?" 1 "no busy inodes after unmount"
kill -TERM "$fake" 2>/dev/null
wait "$fake"
req=$(grep -c 'request cmd 4 ' "$WORK/fake.log")
diag "FETCHes the fake daemon got: $req"
is "$req" 1 "the worker's FETCH after the flush was refused (one FETCH sent: the readahead's)"
check "module unloads" unload_module
tap_done
