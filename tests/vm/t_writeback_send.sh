#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_writeback_send: a queued upload (write-back mode) sends holding the
# file's wb_sem only, not its i_rwsem. Each case holds one queued UPLOAD
# 4 s (times S3CFS_TIMEOUT_SCALE) at the upload_send fault point, before it goes to the daemon, and
# does one thing to the file meanwhile: a write(2) returns at once and
# S3 gets what was acknowledged, the next close the rest; a truncate, a
# fallocate (punch) and a rename of the file wait for the answer: S3
# never gets a torn object, nor a rename's copy of what was there before.
# An unlink and a rename over the file, while S3 (the fault proxy) holds
# the upload's PUT, wait for it: the DELETE never goes before the PUT, nor
# does the replacing file's upload find a version it was not based on.
# (A close while the answer waits to be applied: t_writeback.)
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init writeback_send
plan 23

FSDIR=/mnt/writeback-send-cache
CTL=$REPO/tools/s3cachectl/s3cachectl
P=/sys/module/s3cachefs/parameters
OPTS="cache=$FSDIR,fetch_timeout=20,meta_ttl=3600,writable,writeback,upload_delay=30,allow_delete"
HOLD_MS=$((4000 * ${S3CFS_TIMEOUT_SCALE:-1}))

cleanup_more() {
	echo >$P/fault_points 2>/dev/null
	echo 0 >$P/fault_delay_ms 2>/dev/null
	test_cleanup
	stop_faultproxy
	loop_ext4_cleanup
}
trap cleanup_more EXIT

pending() {	# records in the cache's pending directory
	ls -A "$FSDIR/.s3cachefs/pending" 2>/dev/null | wc -l
}
hold() {	# POINT: the queued uploads run now (a sync in the background), held at POINT
	POINT=$1 R0=$(mnt_stat wb_runs) D0=$(dmesg | wc -l)
	export POINT R0 D0
	echo $HOLD_MS >$P/fault_delay_ms
	echo "$POINT" >$P/fault_points
	"$CTL" sync "$MNT" &
	SPID=$!
	wait_until bash -c "dmesg | tail -n +$((D0 + 1)) | grep -q 'fault point $POINT: $HOLD_MS ms'"
}
held_ended() {	# the held point has ended
	[ "$(dmesg | tail -n +$((D0 + 1)) | grep -c "fault point $POINT: done")" -ge 1 ]
}
ran() {	# the held upload's run has ended
	[ "$(mnt_stat wb_runs)" -gt "$R0" ]
}
release() {	# the fault point off; everything queued uploaded
	echo >$P/fault_points
	echo 0 >$P/fault_delay_ms
	"$CTL" sync "$MNT"
	wait $SPID
}
timed() {	# CMD...: $T, the seconds it took; $ENDED, whether the hold ended before it returned
	local t0 rc
	t0=$(date +%s.%N)
	"$@"
	rc=$?
	T=$(printf %.1f "$(echo "$(date +%s.%N) - $t0" | bc)")
	held_ended && ENDED=1 || ENDED=0
	return $rc
}
waited() {	# DESC: the timed command waited for the held upload
	is "$(echo "$T > 2" | bc) $ENDED" "1 1" "$1 (${T} s)"
}
hold_put() {	# KEY: the queued uploads run now, the PUT of KEY held by S3 (the proxy)
	fp_rules "[{\"method\": \"PUT\", \"path\": \"^/$BUCKET/$1\$\",
		    \"nth\": [1], \"fault\": \"stall\"}]"
	"$CTL" sync "$MNT" &
	SPID=$!
	wait_until bash -c '[ "$(fp_stat stalled)" = 1 ]'
}
still() {	# PID: still running 2 s after the held PUT began
	sleep 2
	kill -0 "$1" 2>/dev/null && echo waits
}
release_put() {	# the PUT goes on; everything queued uploaded
	fp_release
	fp_rules "[]"
	"$CTL" sync "$MNT"
	wait $SPID
}
export -f held_ended ran fp_stat

for i in 1 2 3 4 5 6 7; do
	make_fixture "$WORK/f$i" $((1048576 + i * 4099)) "wbs-$i" >/dev/null
done

check_sh "an ext4 of 256 MiB on a loop device for the cache" loop_ext4 "$FSDIR" 256M
check "module loads" load_module
S3_DIRECT=$S3_ENDPOINT
check_sh "fault proxy starts" start_faultproxy 9441
check_sh "daemon starts (through the proxy)" start_daemon --stall-timeout 300
S3_ENDPOINT=$S3_DIRECT	# the daemon goes through the proxy, the test does not
check "writable,writeback mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"

# A write(2) during the send goes into the page cache at once. It waited
# for the whole upload while the send held i_rwsem.
cp "$WORK/f1" "$MNT/w.bin"
python3 -c "
import os, subprocess, time
def after(name):
    while not os.path.exists('$WORK/' + name):
        time.sleep(0.05)
open('$WORK/w.ready', 'w').close()
after('w.go')
d0, point = open('$WORK/w.go').read().split()
t0 = time.monotonic()
fd = os.open('$MNT/w.bin', os.O_WRONLY)
os.pwrite(fd, b'X' * 4096, 0)
t = time.monotonic() - t0
ended = subprocess.run(['bash', '-c', 'held_ended'],
                       env=dict(os.environ, D0=d0, POINT=point)).returncode == 0
open('$WORK/w.t', 'w').write('%.2f %d\\n' % (t, ended))
after('w.close')
os.close(fd)" &
WPID=$!
wait_until test -e "$WORK/w.ready"
hold upload_send
echo "$D0 $POINT" >"$WORK/w.go.tmp" && mv "$WORK/w.go.tmp" "$WORK/w.go"
wait_until test -s "$WORK/w.t"
read -r t ended <"$WORK/w.t"
is "$(echo "$t < 1.5" | bc) $ended" "1 0" \
	"an open and a write(2) during the held send return at once, before the send ends (${t} s)"
wait_until ran
check "S3 has what was acknowledged, not the write made during the send" \
	s3_is w.bin "$WORK/f1"
touch "$WORK/w.close"
wait $WPID
release
python3 -c "
b = bytearray(open('$WORK/f1', 'rb').read()); b[:4096] = b'X' * 4096
open('$WORK/w.exp', 'wb').write(b)"
check "the writer's close uploads the write" s3_is w.bin "$WORK/w.exp"

# A truncate waits for the answer: the daemon reads the lower file whole.
cp "$WORK/f2" "$MNT/t.bin"
hold upload_send
timed truncate -s 1000 "$MNT/t.bin"
waited "a truncate during the held send waits for its answer"
check "S3 has the acknowledged file whole" s3_is t.bin "$WORK/f2"
release
head -c 1000 "$WORK/f2" >"$WORK/t.exp"
check "then the truncated one" s3_is t.bin "$WORK/t.exp"

# So does a fallocate that punches a hole.
cp "$WORK/f3" "$MNT/p.bin"
hold upload_send
timed fallocate -p -o 0 -l 65536 "$MNT/p.bin"
waited "a hole punched during the held send waits for its answer"
check "S3 has the acknowledged file whole" s3_is p.bin "$WORK/f3"
release
cp "$WORK/f3" "$WORK/p.exp"
fallocate -p -o 0 -l 65536 "$WORK/p.exp"
check "then the punched one" s3_is p.bin "$WORK/p.exp"

# An unlink's DELETE goes after the upload's PUT, not before it: the PUT
# is held by S3 (the fault proxy) while the file is removed.
cp "$WORK/f4" "$MNT/u.bin"
hold_put u.bin
rm "$MNT/u.bin" &
RPID=$!
is "$(still $RPID)" waits "an unlink while S3 holds the upload's PUT waits for it"
release_put
wait $RPID
is "$(s3_absent u.bin && echo absent) $(pending)" "absent 0" \
	"the object is gone (the DELETE went after the PUT); no record left"

# A rename of the file: its S3 copy is made from the uploaded object.
cp "$WORK/f5" "$MNT/r.bin"
hold upload_send
timed mv "$MNT/r.bin" "$MNT/r2.bin"
waited "a rename during the held send waits for its answer"
release
check "S3 has it under the new name" s3_is r2.bin "$WORK/f5"
check "and not under the old one" s3_absent r.bin

# A rename over the file while S3 holds its PUT: what replaces it is
# based on the uploaded version, so its own upload is no conflict.
c0=$(mnt_stat conflicts)
cp "$WORK/f6" "$MNT/v.bin"
hold_put v.bin
cp "$WORK/f7" "$MNT/n.bin"
mv "$MNT/n.bin" "$MNT/v.bin" &
RPID=$!
is "$(still $RPID)" waits "a rename over a file while S3 holds its upload's PUT waits for it"
release_put
wait $RPID
check "S3 has the new file under the name" s3_is v.bin "$WORK/f7"
check "and nothing under the other" s3_absent n.bin
is "$(mnt_stat conflicts)" "$c0" "no conflict"

tap_done
