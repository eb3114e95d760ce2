#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_writeback: the writeback mount option. close and fsync return once the
# file is durable on the cache device (S3 does not have it yet), recorded
# in .s3cachefs/pending/; the upload runs upload_delay seconds after the
# last close (a file closed three times within the delay is uploaded
# once), or at `s3cachectl sync`. A file renamed (the checkpoint pattern)
# or unlinked before its upload goes up under its last name, or not at
# all. The queue lives in the kernel: a daemon killed with -9 loses
# nothing. What a mount acknowledged and could not upload (the daemon
# gone at unmount, then a module reload; or a power cut of the cache
# device, as FS_IOC_SHUTDOWN without a journal flush) the next mount
# finds and uploads, byte for byte; a file changed after its
# acknowledgment and not acknowledged again is not uploaded half-written.
# timeout: 500
. "$(dirname "$0")/../lib/common.sh"
test_init writeback
plan 70

FSDIR=/mnt/writeback-cache
CTL=$REPO/tools/s3cachectl/s3cachectl
OPTS="cache=$FSDIR,fetch_timeout=20,meta_ttl=3600,writable,writeback,upload_delay=30"
export CTL FSDIR

cleanup_more() {
	test_cleanup
	loop_ext4_cleanup
}
trap cleanup_more EXIT

MADDR=127.0.0.1:9471
metric() {	# NAME: its value for this mount in the daemon's scrape
	curl -s -m 10 "http://$MADDR/metrics" |
		awk -v n="$1" -v m="mount=\"$(mnt_stat mount_id)\"" \
			'index($0, n "{") == 1 && index($0, m) { print $NF }'
}
state() {	# FILE: its s3cachectl status state
	"$CTL" status "$1" | awk 'NR == 2 { print $4 }'
}
pending() {	# records in the cache's pending directory
	ls -A "$FSDIR/.s3cachefs/pending" 2>/dev/null | wc -l
}
resumed_is() {	# N: the mount queued N recorded files at mount
	[ "$(mnt_stat wb_resumed)" = "$1" ]
}
reload_module() {
	unload_module && load_module
}
export -f state pending

for i in 1 2 3 4 5 6 7 8; do
	make_fixture "$WORK/f$i" $((1048576 + i * 4099)) "wb-$i" >/dev/null
done

check_sh "an ext4 of 256 MiB on a loop device for the cache" loop_ext4 "$FSDIR" 256M
check "module loads" load_module
check_sh "daemon starts" start_daemon --metrics $MADDR
check_fails "writeback without writable is refused" \
	mount -t s3cachefs -o "cache=$FSDIR,writeback" "$BUCKET" "$MNT"
check "writable,writeback mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"
wbmax=$(sed -n "s|.* $MNT s3cachefs .*,writeback,upload_delay=30,writeback_max=\([0-9]*\).*|\1|p" /proc/mounts)
is "$((wbmax >= 100 && wbmax <= 128))" 1 \
	"mount options show writeback,upload_delay=30 and the default writeback_max, half the cache's 256 MiB ($wbmax)"

# Acknowledged on the cache device, uploaded later.
check "a new file written and closed" cp "$WORK/f1" "$MNT/a.bin"
check "S3 does not have it yet (upload_delay)" s3_absent a.bin
is "$(mnt_stat wb_queued) $(mnt_stat wb_queued_bytes) $(mnt_stat wb_acks) $(pending)" \
	"1 $(stat -c %s "$WORK/f1") 1 1" \
	"queued (its bytes counted), acknowledged once, recorded in .s3cachefs/pending"
is "$(state "$MNT/a.bin")" queued "s3cachectl status says queued"
cp "$WORK/f2" "$MNT/a.bin" && cp "$WORK/f3" "$MNT/a.bin"
sleep 1
is "$(mnt_stat wb_runs) $(mnt_stat wb_queued) $(($(mnt_stat wb_oldest_s) >= 1))" "0 1 1" \
	"closed twice more within the delay: still one queued (waiting since the first), nothing run"
check "s3cachectl sync uploads it and waits" "$CTL" sync "$MNT"
check "S3 has its last content" s3_is a.bin "$WORK/f3"
is "$(mnt_stat wb_runs) $(mnt_stat wb_queued) $(pending)" "1 0 0" \
	"uploaded once; the queue and the record are gone"
is "$(state "$MNT/a.bin")" clean "s3cachectl status says clean"
check "it reads back" cmp "$MNT/a.bin" "$WORK/f3"

# save(tmp); rename(tmp, final) over an object in S3.
s3_put "$BUCKET" ck.pt "$WORK/f1" >/dev/null
check "the checkpoint pattern: save to a temporary name, rename over the last" \
	bash -c "cp '$WORK/f4' '$MNT/ck.tmp' && mv '$MNT/ck.tmp' '$MNT/ck.pt'"
check "S3 still has the old checkpoint" s3_is ck.pt "$WORK/f1"
check "sync" "$CTL" sync "$MNT/ck.pt"
check "S3 has the new one under the final name" s3_is ck.pt "$WORK/f4"
check "and nothing under the temporary name" s3_absent ck.tmp

# Closed again while the upload of the last close ends: the new close's
# record is not the one the upload drops (the upload is held 3 s after
# its answer, before it applies it, by the fault point; the close applies
# it first, and does not wait).
P=/sys/module/s3cachefs/parameters
hold_sync() {	# POINT: a sync in the background, its upload held 3 s there
	D0=$(dmesg | wc -l)
	echo 3000 >$P/fault_delay_ms
	echo "$1" >$P/fault_points
	"$CTL" sync "$MNT" &
	SPID=$!
	wait_until bash -c "dmesg | tail -n +$((D0 + 1)) | grep -q 'fault point $1'"
}
release_sync() {	# wait for that sync; the fault point off
	wait $SPID
	echo >$P/fault_points
	echo 0 >$P/fault_delay_ms
}
cp "$WORK/f2" "$MNT/race.bin"
runs0=$(mnt_stat wb_runs)
hold_sync upq_uploaded
cp "$WORK/f3" "$MNT/race.bin"
ended=$(dmesg | tail -n +$((D0 + 1)) | grep -c 'fault point upq_uploaded: done')
wait_until bash -c "[ \$(mnt_stat wb_runs) -gt $runs0 ]"
is "$ended $(pending) $(mnt_stat wb_queued)" "0 1 1" \
	"a close during the held end of an upload (the interleaving happened): its record and queue entry stand"
"$CTL" sync "$MNT"
release_sync
check "S3 has the second close's bytes" s3_is race.bin "$WORK/f3"

# While the daemon has the upload (held 3 s by the fault point before the
# UPLOAD goes out), status says uploading.
cp "$WORK/f4" "$MNT/up.bin"
hold_sync upload_send
st=$(state "$MNT/up.bin")
release_sync
is "$st $(state "$MNT/up.bin")" "uploading clean" \
	"s3cachectl status: uploading while the daemon has it, then clean"

# A close right after an fsync finds the file acknowledged: it does not
# wait for the fsync's upload, which holds the file's lock (upload_delay=0
# here; the fault point holds the upload 3 s before its UPLOAD goes out).
check "remount with upload_delay=0" mount -o remount,upload_delay=0 "$MNT"
d0=$(dmesg | wc -l)
echo 3000 >$P/fault_delay_ms
echo upload_send >$P/fault_points
t=$(python3 -c "
import os, subprocess, time
fd = os.open('$MNT/fc.bin', os.O_CREAT | os.O_WRONLY)
os.write(fd, open('$WORK/f5', 'rb').read())
os.fsync(fd)
while 'fault point upload_send' not in ''.join(
        subprocess.run(['dmesg'], capture_output=True, text=True).stdout.splitlines(True)[$d0:]):
    time.sleep(0.05)
t0 = time.monotonic()
os.close(fd)
print('%.1f' % (time.monotonic() - t0))")
"$CTL" sync "$MNT"
echo >$P/fault_points
echo 0 >$P/fault_delay_ms
is "$(echo "$t < 1" | bc)" 1 "a close during the upload of its fsync's acknowledgment returns at once (${t} s)"
check "S3 has the file" s3_is fc.bin "$WORK/f5"
check "remount with upload_delay=30" mount -o remount,upload_delay=30 "$MNT"

# A conflict: the key is created in S3 after our close, before the upload.
cp "$WORK/f5" "$MNT/wc.bin"
s3_put "$BUCKET" wc.bin "$WORK/f6" >/dev/null
check "sync (the upload meets the object made meanwhile)" "$CTL" sync "$MNT"
check "S3 keeps the other writer's object" s3_is wc.bin "$WORK/f6"
is "$(mnt_stat conflicts) $(pending)" "1 0" "sysfs counts the conflict; no record left"
is "$("$CTL" status "$MNT/wc.bin" | awk 'NR == 3 { print $1, ($NF ~ /conflicts\/[0-9]+-[0-9]+-wc.bin$/) }')" \
	"conflict 1" "s3cachectl status names the copy kept from the conflict"
is "$(metric s3cachefsd_conflicts_total)" 1 "the daemon's metrics count it (s3cachefsd_conflicts_total)"
kept=$("$CTL" conflicts "$MNT" | awk '$4 == "wc.bin" { print $5 }')
check "s3cachectl conflicts lists it, and the copy holds our bytes" \
	cmp "$kept" "$WORK/f5"

# Unlinked before its upload: nothing goes up.
cp "$WORK/f5" "$MNT/gone.bin"
check "a file removed before its upload" rm "$MNT/gone.bin"
check "sync" "$CTL" sync "$MNT"
is "$(s3_absent gone.bin && echo absent) $(pending)" "absent 0" \
	"is not in S3 and leaves no record"

# fsync acknowledges what is written so far; the close the rest.
is "$(python3 -c "
import os, subprocess
fd = os.open('$MNT/log.txt', os.O_CREAT | os.O_WRONLY)
os.write(fd, b'one\n'); os.fsync(fd)
r = subprocess.run(['bash', '-c', 's3_absent log.txt'], env=os.environ).returncode
os.write(fd, b'two\n'); os.close(fd)
print('acked' if r == 0 else 'uploaded')")" acked \
	"fsync returns before the upload"
printf 'one\ntwo\n' >"$WORK/log"
"$CTL" sync "$MNT"
check "after sync S3 has all of it" s3_is log.txt "$WORK/log"

# Past writeback_max the writer waits for uploads (upload_delay is 30 s).
check "remount with writeback_max=1 (MiB)" \
	mount -o remount,writeback_max=1 "$MNT"
runs0=$(mnt_stat wb_runs) t0=$(date +%s)
for i in 2 3 4; do cp "$WORK/f$i" "$MNT/w$i.bin"; done
t=$(($(date +%s) - t0)) up=0
for i in 2 3 4; do s3_is "w$i.bin" "$WORK/f$i" && up=$((up + 1)); done
is "$((up >= 2 && $(mnt_stat wb_runs) - runs0 >= 2 && t < 30 && $(mnt_stat wb_queued) <= 1))" 1 \
	"three 1 MiB closes past 1 MiB: the writer waited for uploads ($up in S3 at once, $t s), at most one queued"
check "remount with writeback_max=4096" \
	mount -o remount,writeback_max=4096 "$MNT"
check "sync" "$CTL" sync "$MNT"

# The queue is the kernel's: a daemon killed with -9 loses nothing. (A
# new name needs the daemon's LOOKUP, so the file is created before.)
# Not in a $(...): kill_daemon waits for the daemon, a child of this shell.
write_across_kill() {	# DEST SRC: create DEST, kill the daemon, finish, close
	rm -f "$WORK/go"
	python3 -c "
import os, sys, time
data = open('$2', 'rb').read()
fd = os.open('$1', os.O_CREAT | os.O_WRONLY)
os.write(fd, data[:len(data) // 2])
print('ready', flush=True)
while not os.path.exists('$WORK/go'):
    time.sleep(0.05)
os.write(fd, data[len(data) // 2:])
try:
    os.close(fd); print('closed', flush=True)
except OSError as e:
    print('close:', e, flush=True)" >"$WORK/w.out" 2>&1 &
	local pid=$!
	wait_until grep -q ready "$WORK/w.out"
	kill_daemon
	touch "$WORK/go"
	wait $pid
}
write_across_kill "$MNT/c.bin" "$WORK/f6"
is "$(tail -n 1 "$WORK/w.out")" closed \
	"with the daemon killed (-9) mid-write, the close is acknowledged"
is "$(pending)" 1 "and recorded"
check_fails "sync with no daemon fails" "$CTL" sync "$MNT"
is "$(state "$MNT/c.bin")" retrying "s3cachectl status says retrying"
check_sh "daemon starts again" start_daemon --metrics $MADDR
is "$(metric s3cachefsd_writeback_queued_files) $(metric s3cachefsd_writeback_queued_bytes) $(metric s3cachefsd_writeback_upload_errors_total)" \
	"1 $(stat -c %s "$WORK/f6") 1" \
	"the daemon's metrics: one file of its size queued, one upload failed"
is "$(($(metric s3cachefsd_writeback_oldest_seconds) >= 1))" 1 \
	"... and how long it has waited (s3cachefsd_writeback_oldest_seconds)"
check "sync" "$CTL" sync "$MNT"
check "S3 has the file closed while no daemon ran" s3_is c.bin "$WORK/f6"

# Unmount with the daemon gone, module reload: the record stays.
write_across_kill "$MNT/d.bin" "$WORK/f7"
is "$(tail -n 1 "$WORK/w.out")" closed \
	"another file closed with the daemon gone"
check "unmount with the daemon gone returns" umount_s3 "$MNT"
is "$(pending)" 1 "the record is still in the cache"
check_sh "module reloads" reload_module
check_sh "daemon starts" start_daemon --metrics $MADDR
check "mount again" mount_s3 "$BUCKET" "$MNT" "$OPTS"
is "$(wait_until resumed_is 1 && echo yes)" yes \
	"the new mount found the record and queued the file"
check "sync" "$CTL" sync "$MNT"
check "S3 has the file" s3_is d.bin "$WORK/f7"

# A power cut of the cache device: what was acknowledged survives; what
# changed after its acknowledgment is not uploaded half-written.
cp "$WORK/f8" "$MNT/e.bin"
cp "$WORK/f1" "$MNT/g.bin"
# g.bin: changed after its acknowledgment, still open at the power cut.
python3 -c "
import os, sys, time
fd = os.open('$MNT/g.bin', os.O_WRONLY)
os.pwrite(fd, b'X' * 4096, 8192)
os.sync()		# the change reaches the cache file: the record goes
print('ready', flush=True)
time.sleep(600)" >"$WORK/g.out" 2>&1 &
GPID=$!
is "$(wait_until grep -q ready "$WORK/g.out" && echo yes)" yes \
	"a file acknowledged, then changed and written back, is held open"
check "the cache's ext4 goes down as at a power cut (no journal flush)" \
	xfs_io -x -c shutdown "$FSDIR"
kill -KILL $GPID; wait $GPID 2>/dev/null
umount_s3 "$MNT" || umount -l "$MNT"
stop_daemon
check "umount s3cachefs and the cache's ext4" bash -c "! mountpoint -q '$MNT' && umount '$FSDIR'"
check "the cache's ext4 mounts again" mount "$LOOP_DEV" "$FSDIR"
check_sh "daemon starts again" start_daemon --metrics $MADDR
check "mount on the same cache" mount_s3 "$BUCKET" "$MNT" "$OPTS"
"$CTL" sync "$MNT"
check "S3 has the acknowledged file byte for byte" s3_is e.bin "$WORK/f8"
is "$(s3_absent g.bin && echo absent) $(state "$MNT/g.bin")" "absent local" \
	"the file changed after its acknowledgment is not uploaded; it stays local"
check "umount" umount_s3 "$MNT"
tap_done
