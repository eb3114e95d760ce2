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

# The writer: ROUND SEED. Runs until killed or the cache device fails.
writer() {
	python3 - "$MNT" "$WORK/acks" "$1" "$2" <<'EOF'
import hashlib, os, random, sys
mnt, log, rnd, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
r = random.Random(seed)
out = open(log, 'a', buffering=1)
names = ['n%d.bin' % i for i in range(6)]
gen = 0
while True:
    name = r.choice(names)
    gen += 1
    size = r.choice([0, 1, 4096, 65537, r.randrange(1 << 20),
                     r.randrange(3 << 20)])
    data = hashlib.sha256(b'%d-%s-%d' % (seed, rnd.encode(), gen)).digest()
    data = (data * (size // len(data) + 1))[:size]
    sha = hashlib.sha256(data).hexdigest()
    out.write('open %s %s\n' % (name, sha))
    try:
        fd = os.open(os.path.join(mnt, name),
                     os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
        for off in range(0, size, 1 << 20):
            os.write(fd, data[off:off + (1 << 20)])
        if r.random() < 0.3:
            os.fsync(fd)
        os.close(fd)
    except OSError as e:
        out.write('error %s %s\n' % (name, e))
        sys.exit(0)
    out.write('ack %s %s\n' % (name, sha))
EOF
}

for ((round = 1; round <= ROUNDS; round++)); do
	rseed=$((SEED + round))
	hold_ms=$((200 + rseed * 7919 % 1500))
	mount_s3 "$BUCKET" "$MNT" "$OPTS" || { not_ok "round $round: mount"; continue; }
	writer "$round" "$rseed" &
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
