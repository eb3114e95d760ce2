#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_streamrun: a sequential reader's chunks are fetched in stream runs
# (kmod/chunk.c, s3cfs_stream_extend()). Once a reader's prefetches follow
# each other, one GET covers up to 64 MiB ahead of it: a cold stream used
# to cost one ranged GET per 8 MiB readahead window, and a stream of 1 MiB
# O_DIRECT reads one GET per read. The fault proxy's log shows the ranges
# asked for. A random reader gets no run beyond its reads; one that stops
# leaves at most a run and a half fetched past its readahead window.
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init streamrun
plan 18

MIB=$((1 << 20))
printf 'seq.bin %d\ndirect.bin %d\nrand.bin %d\nstop.bin %d\nra0.bin %d\n' \
	$((128 * MIB)) $((64 * MIB)) $((32 * MIB)) $((160 * MIB)) $((24 * MIB)) | fp_seed "$BUCKET" "$WORK"
gets() { fp_count --method GET --path "^/$BUCKET/$1\$"; }
# longest -> the longest Range of a GET of object $1, in bytes
longest() {
	fp_count --method GET --path "^/$BUCKET/$1\$" --list |
		awk '{ split($3, r, /[=-]/); if (r[3] - r[2] + 1 > m) m = r[3] - r[2] + 1 }
		     END { print m + 0 }'
}
ranges() { fp_count --method GET --path "^/$BUCKET/$1\$" --list | awk '{ print $3 }' | xargs; }

check "module loads" load_module
if ! start_faultproxy 9107; then
	not_ok "fault proxy starts"
	tap_done
fi
ok "fault proxy starts"
check_sh "daemon starts (through the proxy)" start_daemon
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,readahead=8192,meta_ttl=3600"
timeout 60 ls -l "$MNT" >/dev/null

# --- buffered: dd of the whole object --------------------------------------
# The reads' checks count requests, not seconds: 128 MiB through the proxy
# under TCG on a loaded host passed 60 s (dd has 180).
SLOW=$((180 * ${S3CFS_TIMEOUT_SCALE:-1}))
TAP_TIMEOUT=$SLOW check "a cold sequential read returns the object's bytes" \
	cmp <(timeout 180 dd if="$MNT/seq.bin" bs=1M status=none) "$WORK/seq.bin"
n=$(gets seq.bin) l=$(longest seq.bin)
# One GET per 8 MiB window would be 17; runs of 16, 32 and 64 MiB make 5.
test "$n" -le 7
is "$?" 0 "... in $n GETs (ranges: $(ranges seq.bin))"
test "$l" -ge $((32 * MIB))
is "$?" 0 "... one of them of at least 32 MiB (the longest: $((l / MIB)) MiB)"

# --- O_DIRECT: 1 MiB reads, each prefetching the next window ---------------
TAP_TIMEOUT=$SLOW check "a cold stream of 1 MiB O_DIRECT reads returns the object's bytes" \
	cmp <(timeout 180 dd if="$MNT/direct.bin" iflag=direct bs=1M status=none) \
	"$WORK/direct.bin"
n=$(gets direct.bin) l=$(longest direct.bin)
test "$n" -le 8
is "$?" 0 "... in $n GETs, not one per read (ranges: $(ranges direct.bin))"
test "$l" -ge $((32 * MIB))
is "$?" 0 "... one of them of at least 32 MiB (the longest: $((l / MIB)) MiB)"

# --- random: no run beyond what it reads ------------------------------------
fb0=$(mnt_stat fetch_bytes)
python3 - "$MNT/rand.bin" "$WORK/rand.bin" >"$WORK/rand.out" <<'EOF'
import os, random, sys
mib = 1 << 20
offs = list(range(0, 32, 2))	# every other MiB: no read follows another
random.Random(7).shuffle(offs)
a, b = os.open(sys.argv[1], os.O_RDONLY), open(sys.argv[2], "rb")
os.posix_fadvise(a, 0, 0, os.POSIX_FADV_RANDOM)
bad = 0
for o in offs:
    b.seek(o * mib)
    bad += os.pread(a, mib, o * mib) != b.read(mib)
print(len(offs), bad)
EOF
is "$(cat "$WORK/rand.out")" "16 0" "16 random 1 MiB reads return the object's bytes"
fb=$(($(mnt_stat fetch_bytes) - fb0))
is "$fb $(longest rand.bin)" "$((16 * MIB)) $MIB" \
	"... fetching just those 16 MiB, in GETs of 1 MiB (ranges: $(ranges rand.bin))"

# --- a reader that stops: at most a run and a half past its window ------------
fb0=$(mnt_stat fetch_bytes)
timeout 120 dd if="$MNT/stop.bin" bs=1M count=24 status=none >"$WORK/stop.out"
check "the first 24 MiB of a 160 MiB object read right" \
	cmp -n $((24 * MIB)) "$WORK/stop.out" "$WORK/stop.bin"
# Until the runs sent for it have landed: none pending (a run's bytes count
# when all of it has landed, which under load can take longer than the
# 3 s without a change this waited for alone), and no change for 3 s.
last=-1
for ((i = 0; i < 120; i++)); do
	fb=$(mnt_stat fetch_bytes)
	[ "$fb" = "$last" ] && [ "$(mnt_stat pending)" = 0 ] && break
	last=$fb
	sleep 3
done
fb=$(((fb - fb0) / MIB))
# 24 read, the 8 MiB window past them, and at most 1.5 runs of 64 MiB.
test "$fb" -ge 24 -a "$fb" -le $((24 + 8 + 96))
is "$?" 0 "... fetching $fb MiB of it (ranges: $(ranges stop.bin))"

# --- readahead=0: no stream either -----------------------------------------
mnt_set readahead_kb 0
TAP_TIMEOUT=$SLOW check "with readahead=0, a cold sequential read returns the object's bytes" \
	cmp <(timeout 180 dd if="$MNT/ra0.bin" bs=1M status=none) "$WORK/ra0.bin"
is "$(longest ra0.bin)" $MIB "... in GETs of a chunk each (ranges: $(ranges ra0.bin))"
mnt_set readahead_kb 8192

is "$(mnt_stat fetch_errors)" 0 "no fetch errors"
drop_caches
check "from the cache, both streamed objects read right again" \
	sh -c "cmp '$MNT/seq.bin' '$WORK/seq.bin' && cmp '$MNT/direct.bin' '$WORK/direct.bin'"

umount_s3 "$MNT"
stop_daemon
stop_faultproxy
tap_done
