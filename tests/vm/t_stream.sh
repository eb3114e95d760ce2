#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_stream: streamed uploads (protocol 8, kmod/stream.c, daemon/stream.c).
# A file written in order has its finished parts uploaded while it is
# written (seen at the fault proxy before the close), and the close sends
# only the rest: each part once, the object byte for byte the file. Any
# other change after parts went up (a write into a sent part, a truncate,
# a mapped write) must not let a sent part stand in for new bytes: the
# stream is aborted and the file goes up whole. So must an unlink (no
# upload left open), a rename (the object under the new name), a conflict
# (the other writer's object kept), a daemon killed mid-stream (the next
# one aborts its upload and starts the stream again from the file), and a
# rewrite that lands while the
# worker is between writing a part back and telling the daemon (held
# there by the fault point stream_send). Write-back mounts use streams
# too; stream_part_mb=0 turns them off.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init stream
plan 55

MIB=1048576
PART=$((5 * MIB))
P=/sys/module/s3cachefs/parameters
OPTS="cache=$CACHE,fetch_timeout=120,meta_ttl=3600,writable"

# writer.py FILE SIZE SEED [--hold-at BYTES GATE] [--then OP...]: writes
# SIZE bytes of a seeded stream in 1 MiB writes; with --hold-at, stops
# after BYTES until GATE exists (the test looks meanwhile); then the OPs
# (pwrite:OFF:LEN, trunc:SIZE, mmap:OFF, fsync, append:LEN, unlink,
# rename:NEW, kmsg:TEXT into the kernel log), then closes. Prints "ok" or the close's errno name, and
# leaves the content the file must have in FILE.want (WORK).
cat >"$WORK/writer.py" <<'PY'
import errno, hashlib, mmap, os, sys, time
path, size, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
args = sys.argv[4:]
hold = gate = None
if args[:1] == ['--hold-at']:
    hold, gate, args = int(args[1]), args[2], args[3:]
ops = args[1:] if args[:1] == ['--then'] else []
def data(n, salt):
    out, i = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(b'%s-%s-%d' % (seed.encode(), salt, i)).digest() * 64
        i += 1
    return bytes(out[:n])
want = bytearray(data(size, b'a'))
fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC)
for off in range(0, size, 1 << 20):
    os.write(fd, want[off:off + (1 << 20)])
    if hold is not None and off + (1 << 20) >= hold:
        while not os.path.exists(gate):
            time.sleep(0.05)
        hold = None
name = path
for op in ops:
    f = op.split(':')
    if f[0] == 'pwrite':
        off, n = int(f[1]), int(f[2])
        b = data(n, b'p' + f[1].encode())
        os.pwrite(fd, b, off)
        want[off:off + n] = b
    elif f[0] == 'trunc':
        os.ftruncate(fd, int(f[1]))
        del want[int(f[1]):]
    elif f[0] == 'append':
        b = data(int(f[1]), b'e')
        os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, b)
        want += b
    elif f[0] == 'mmap':
        off = int(f[1])
        m = mmap.mmap(fd, len(want))
        m[off:off + 5] = b'MMAPD'
        m.flush()
        m.close()
        want[off:off + 5] = b'MMAPD'
    elif f[0] == 'kmsg':
        with open('/dev/kmsg', 'w') as k:
            k.write('t_stream: %s\n' % f[1])
    elif f[0] == 'fsync':
        os.fsync(fd)
    elif f[0] == 'unlink':
        os.unlink(name)
    elif f[0] == 'rename':
        os.rename(name, f[1])
        name = f[1]
open(os.environ['WANT'], 'wb').write(want)
try:
    os.close(fd)
    print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])
PY

s3_etag() {	# KEY: its ETag, unquoted
	s3_curl -I "$S3_ENDPOINT/$BUCKET/$1" 2>/dev/null | tr -d '\r"' |
		awk 'tolower($1) == "etag:" { print $2 }'
}
parts_put() {	# KEY [PART]: UploadParts of KEY (of part PART) at the proxy
	fp_count --method PUT --path "/$BUCKET/$1\$" --query "partNumber=${2:-[0-9]+}(&|\$)"
}
# A writer held after BYTES until the parts before it are at the proxy;
# prints the close's result, then whether the parts came before the close.
held_write() {	# NAME SIZE BYTES NPARTS [--then OP...]
	local name=$1 size=$2 at=$3 n=$4 gate=$WORK/gate-$1 res seen=0 i
	shift 4
	rm -f "$gate"
	WANT=$WORK/$name.want python3 "$WORK/writer.py" "$MNT/$name" "$size" "$name" \
		--hold-at "$at" "$gate" "$@" >"$WORK/$name.res" &
	local pid=$!
	for ((i = 0; i < 300; i++)); do
		[ "$(parts_put "$name")" -ge "$n" ] && { seen=1; break; }
		sleep 0.1
	done
	touch "$gate"
	wait $pid
	res=$(cat "$WORK/$name.res")
	echo "$res $seen"
}
# The daemon's counters (no mount label): streams used and dropped.
MADDR=127.0.0.1:9472
dmetric() {	# NAME
	curl -s -m 10 "http://$MADDR/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}
used() { echo "$(dmetric s3cachefsd_upload_streamed_total)/$(dmetric s3cachefsd_upload_stream_dropped_total)"; }
export -f parts_put

check_sh "fault proxy starts" start_faultproxy 9463
cleanup_more() {
	echo 16 >$P/stream_part_mb 2>/dev/null
	echo >$P/fault_points 2>/dev/null
	test_cleanup
}
trap cleanup_more EXIT
check "module loads" load_module
check "stream parts of 5 MiB (stream_part_mb)" bash -c "echo 5 >$P/stream_part_mb"
check_sh "daemon starts (5 MiB parts)" start_daemon --part-size $PART --metrics $MADDR
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"

# --- in order: parts go up while it is written; the close sends the rest ---
is "$(held_write seq $((3 * PART + 7)) $((2 * PART + MIB)) 2)" "ok 1" \
	"a file written in order: parts 1 and 2 at S3 before its close; close ok"
check "the object is the file" s3_is seq "$WORK/seq.want"
is "$(parts_put seq 1) $(parts_put seq 2) $(parts_put seq)" "1 1 4" \
	"parts 1 and 2 sent once each, 4 parts in all"
is "$(s3_etag seq | sed 's/.*-//')" 4 "its ETag says 4 parts"
is "$(mnt_stat stream_uploads) $(mnt_stat stream_parts) $(used)" "1 3 1/0" \
	"one stream offered (3 parts told: the third while the rest was written) and used"
is "$(s3_uploads_open)" 0 "no multipart upload is left open"

# --- changes after parts went up: the file goes up whole, right ----------
for spec in "rew:pwrite:100:4096" "tru:trunc:$((PART / 2))" "mmp:mmap:200"; do
	name=${spec%%:*} op=${spec#*:}
	is "$(held_write "$name" $((2 * PART + 3)) $((PART + MIB)) 1 --then "$op" append:$((MIB + 5)))" "ok 1" \
		"$name: part 1 went up, then $op into it, then an append: close ok"
	check "$name: the object is the file as changed (no stale part)" s3_is "$name" "$WORK/$name.want"
done
is "$(mnt_stat stream_uploads) $(used)" "1 1/3" "none of the three streams was offered; the daemon dropped them"
is "$(s3_uploads_open)" 0 "... and their uploads are aborted"

# --- fsync mid-stream: that upload uses the stream; the rest goes whole ---
is "$(held_write fsy $((2 * PART + 9)) $((PART + MIB)) 1 --then fsync append:$((PART + 1)))" "ok 1" \
	"fsync after part 1 went up, then more written: close ok"
check "the object is the whole file" s3_is fsy "$WORK/fsy.want"
is "$(mnt_stat stream_uploads) $(used)" "2 2/3" "the fsync's upload used the stream"

# --- unlinked, renamed --------------------------------------------------
is "$(held_write gone $((2 * PART)) $((PART + MIB)) 1 --then unlink)" "ok 1" \
	"unlinked while open after part 1 went up: close ok"
wait_until bash -c '[ "$(s3_uploads_open)" = 0 ]'
is "$(s3_uploads_open) $(s3_absent gone && echo absent) $(used)" "0 absent 2/4" \
	"... its stream is dropped and its upload aborted; no object"
is "$(held_write ren $((2 * PART + 1)) $((PART + MIB)) 1 --then "rename:$MNT/ren2")" "ok 1" \
	"renamed while open after part 1 went up: close ok"
check "the object is under the new name" s3_is ren2 "$WORK/ren.want"
check "no object under the old name" s3_absent ren
is "$(s3_uploads_open) $(used)" "0 2/5" "the stream under the old name is dropped and aborted"

# --- a conflict: the key is created meanwhile -----------------------------
make_fixture "$WORK/theirs" 4096 theirs >/dev/null
rm -f "$WORK/gate-cfl"
WANT=$WORK/cfl.want python3 "$WORK/writer.py" "$MNT/cfl" $((2 * PART)) cfl \
	--hold-at $((PART + MIB)) "$WORK/gate-cfl" >"$WORK/cfl.res" &
pid=$!
wait_until bash -c '[ "$(parts_put cfl)" -ge 1 ]'
s3_put "$BUCKET" cfl "$WORK/theirs"
touch "$WORK/gate-cfl"
wait $pid
is "$(cat "$WORK/cfl.res")" ESTALE "the key created in S3 while parts went up: close fails (ESTALE)"
check "S3 keeps the other writer's object" s3_is cfl "$WORK/theirs"
is "$(s3_uploads_open) $(used)" "0 3/5" "the stream was used, and its upload aborted at the failed Complete"
check "our bytes are kept under conflicts/" \
	bash -c "cmp \"\$(ls -t $CACHE/.s3cachefs/conflicts/*cfl | head -1)\" $WORK/cfl.want"

# --- the daemon killed mid-stream: the next one aborts the stream's upload --
# --- (its journal) and opens it again at the next announcement -------------
rm -f "$WORK/gate-kil"
WANT=$WORK/kil.want python3 "$WORK/writer.py" "$MNT/kil" $((3 * PART + 3)) kil \
	--hold-at $((2 * PART + MIB)) "$WORK/gate-kil" >"$WORK/kil.res" &
pid=$!
wait_until bash -c '[ "$(parts_put kil)" -ge 2 ]'
kill_daemon
left=$(ls -A "$S3_DATA/$BUCKET/._S3rver_uploads" 2>/dev/null)
is "$(echo $left | wc -w)" 1 "a daemon killed while a stream's parts were up leaves its upload open"
check_sh "a new daemon starts" start_daemon --part-size $PART --metrics $MADDR
# The announcement the killed daemon had not answered is sent again to the
# new one, which may open a new upload for it at once: what must go is the
# upload the dead daemon left.
wait_until bash -c "[ ! -e '$S3_DATA/$BUCKET/._S3rver_uploads/$left' ]"
is "$([ -e "$S3_DATA/$BUCKET/._S3rver_uploads/$left" ] || echo gone) \
$(grep -c "upload $left was left by an earlier daemon: aborting it" "$DAEMON_LOG")" "gone 1" \
	"... which aborts it at MOUNT (from the journal)"
touch "$WORK/gate-kil"
wait $pid
is "$(cat "$WORK/kil.res")" ok "the writer goes on and closes: ok"
check "the object is the file" s3_is kil "$WORK/kil.want"
is "$(used) $(parts_put kil 1)" "1/0 2" \
	"the new daemon took the stream up at its next announcement (part 1 sent again)"
is "$(s3_uploads_open)" 0 "no upload is left open"

# --- the race: a rewrite while the worker holds a part written back but ----
# --- not yet told (fault point stream_send) ---------------------------------
d0=$(dmesg | wc -l)
echo 3000 >$P/fault_delay_ms
echo stream_send >$P/fault_points
rm -f "$WORK/gate-race"
WANT=$WORK/race.want python3 "$WORK/writer.py" "$MNT/race" $((2 * PART + 11)) race \
	--hold-at $((PART + MIB)) "$WORK/gate-race" --then pwrite:0:8192 kmsg:rewritten >"$WORK/race.res" &
pid=$!
wait_until bash -c "dmesg | tail -n +$((d0 + 1)) | grep -q 'fault point stream_send'"
held=$(parts_put race)
touch "$WORK/gate-race"
wait $pid
echo >$P/fault_points
echo 0 >$P/fault_delay_ms
is "$(cat "$WORK/race.res") $held" "ok 0" \
	"a rewrite of part 1 while its announcement was held: close ok (nothing sent yet then)"
is "$(dmesg | tail -n +$((d0 + 1)) | grep -o 'fault point stream_send: [0-9]* ms\|t_stream: rewritten\|fault point stream_send: done' | head -3 | tr '\n' ,)" \
	"fault point stream_send: 3000 ms,t_stream: rewritten,fault point stream_send: done," \
	"... the rewrite came while the worker was held (the interleaving happened)"
check "the object is the rewritten file" s3_is race "$WORK/race.want"
wait_until bash -c '[ "$(s3_uploads_open)" = 0 ]'
is "$(s3_uploads_open) $(used)" "0 1/1" "that stream was dropped and its upload aborted"

# --- write-back mounts stream too; stream_part_mb=0 turns streams off ------
check "umount" umount_s3 "$MNT"
check "write-back mount" mount_s3 "$BUCKET" "$MNT" "$OPTS,writeback,upload_delay=30"
is "$(held_write wb $((2 * PART + 5)) $((PART + MIB)) 1)" "ok 1" \
	"write-back: part 1 went up while written; close ok"
check "s3cachectl sync" "$REPO/tools/s3cachectl/s3cachectl" sync "$MNT"
check "the object is the file" s3_is wb "$WORK/wb.want"
is "$(mnt_stat stream_uploads) $(parts_put wb 1) $(used)" "1 1 2/1" "the queued upload used the stream (part 1 sent once)"
echo 0 >$P/stream_part_mb
WANT=$WORK/off.want python3 "$WORK/writer.py" "$MNT/off" $((2 * PART)) off >/dev/null
check "s3cachectl sync" "$REPO/tools/s3cachectl/s3cachectl" sync "$MNT"
check "stream_part_mb=0: the object is the file" s3_is off "$WORK/off.want"
is "$(mnt_stat stream_uploads) $(mnt_stat stream_parts) $(used)" "1 2 2/1" "... and no stream was offered or told"
check_fails "stream_part_mb=3 is refused (S3's parts are 5 MiB at least)" \
	bash -c "echo 3 >$P/stream_part_mb"
echo 16 >$P/stream_part_mb
check "umount" umount_s3 "$MNT"
is "$(s3_uploads_open)" 0 "no multipart upload is left open at the end"
stop_faultproxy
tap_done
