#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh - the in-VM half of tools/bench/bench.sh: one boot, one dataset,
# every system measured on the same emulated NVMe, one after the other.
#
#   (inside tools/vm/run-vm.sh) bash tools/bench/guest.sh
#
# Environment: VM_OUT (results go to $VM_OUT/bench), BENCH_QUICK=1 (small
# dataset, short runs), BENCH_SYSTEMS (default "ext4 curl s3cachefs s3fs
# rclone"), BENCH_PROFILE=1 (perf profiles of s3cachefs at the end; the
# default in the full run), S3CFS_KO/S3CFS_DAEMON (what to measure).
#
# Output, in $VM_OUT/bench:
#   results.tsv   one line per measurement:
#                 system mode workload status MiB/s IOPS p50_us p99_us secs note round
#                 (round: 1.. for the rows measured in rounds, see ROUNDS)
#   phases.tsv    phase, seconds (for the report's timing table)
#   env.txt       guest facts (kernel, cpus, memory, tool versions)
#   logs/         fio JSON, daemon and peer logs, sysfs counters, profiles
#
# Every step runs under a deadline; a system that fails or hangs is recorded
# (status "fail"/"timeout"/"skip") and the run goes on with the next one.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
export REPO

: "${VM_OUT:=/tmp/vm-out}"
OUT=$VM_OUT/bench
LOGS=$OUT/logs
mkdir -p "$LOGS"
export S3CFS_LOGDIR=$LOGS
RES=$OUT/results.tsv
PHASES_TSV=$OUT/phases.tsv
: >"$RES"
: >"$PHASES_TSV"

# --- sizes ------------------------------------------------------------------
# Every knob can be overridden with BENCH_<NAME> (BENCH_SHARD_MB=...).
# Quick: a smoke run that must finish in ~5 minutes on an idle 2-core host
# (CI runs it); it keeps one row per target and little else.
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	MODE=quick
	SHARD_MB=16		# each of the 4 shards (a multiple of 16)
	HOT_PCT=100		# hot working set: this % of each shard
	BIG_MB=16		# the time-to-first-byte object (s3fs reads it
				# whole before the first byte, at ~3-5 MiB/s)
	RUNTIME=3		# s per fio run
	COLD_RUNTIME=4		# s per cold 1-stream run
	META_LS=100		# objects in the ls -l directory
	META_DIRS=2		# find: META_DIRS x META_PER_DIR objects
	META_PER_DIR=50
	META_TIMEOUT=8		# s per metadata walk (s3fs: 10-25 objects/s cold)
	TTFB_DEADLINE=15	# s
	FIO_SLACK=30		# s a fio run may overrun its run time
	PROFILE=0
	# One row per target: sequential = seq1, random = rand4k (each fio
	# run costs ~2 s of fio's own start-up and exit on top of its run time;
	# cold seq4 cost ~40 s more, s3fs reading whole objects, although the
	# fill then has less to read: BENCH_COLD_WL="ttfb seq1 seq4" for it).
	COLD_WL="ttfb seq1"
	WARM_WL="seq1 rand4k dseq1"
	HOT_WL="seq1"
	SMALL_N=400		# small objects of 100 KiB
	SMALL_RUNTIME=4		# s per small-object run
	SMALLF_RUNTIME=4	# the same on fakes3
	BIGLS_N=2000		# the big directory (fakes3)
	BIGLS_DIRS=20		# find: BIGLS_DIRS x BIGLS_PER_DIR objects (fakes3)
	BIGLS_PER_DIR=50
	BIGLS_TIMEOUT=60	# s per walk of it
	HUGELS_N=5000		# the huge directory, listed to the end (fakes3)
	HUGELS_TIMEOUT=60
	CREATE_RUNTIME=3	# s per small-file create run
	CKPT_TIMEOUT=120	# s for one system's checkpoint write
	CKPT_FILES=2		# of the shards, written as a checkpoint's ranks
	ROUNDS=2		# rounds of the cold, warm and hot rows
else
	MODE=full
	SHARD_MB=256
	HOT_PCT=25		# 64 MiB of each shard: loading 4 systems' copies
				# of the whole dataset would take minutes
	BIG_MB=1024
	RUNTIME=5		# 40 warm and hot runs of ~2 s overhead each
	COLD_RUNTIME=12
	META_LS=10000
	META_DIRS=16
	META_PER_DIR=1000
	META_TIMEOUT=20		# every cold walk reached 30 s under TCG (the fastest,
				# rclone's find, 163 objects/s); the entries by then
				# give the rate
	TTFB_DEADLINE=30	# s3fs reads whole objects before the first byte
	FIO_SLACK=60
	PROFILE=1
	# Cold random reads are no target and took ~90 s (BENCH_COLD_WL adds them).
	COLD_WL="ttfb seq1 seq1r seq4 seq4r"
	WARM_WL="seq1 seq4 rand4k rand128k mmap4k dseq1 drand4k"
	HOT_WL="seq1 seq4 rand4k rand128k mmap4k"
	SMALL_N=20000
	SMALL_RUNTIME=15	# every reader is cut there: files/s, not all read
	SMALLF_RUNTIME=300	# on fakes3: all of them (about 100 s)
	BIGLS_N=100000
	BIGLS_DIRS=1000
	BIGLS_PER_DIR=100
	BIGLS_TIMEOUT=600
	HUGELS_N=1000000	# ~0.25 ms an entry under TCG: some 5 minutes
	HUGELS_TIMEOUT=1800
	CREATE_RUNTIME=15
	CKPT_TIMEOUT=900
	CKPT_FILES=4
	ROUNDS=3
fi
# What the full run measures, whatever this run's knobs (env.txt records
# both, so that the report can say what a run left out).
FULL_COLD_WL="ttfb seq1 seq1r seq4 seq4r"
FULL_WARM_WL="seq1 seq4 rand4k rand128k mmap4k dseq1 drand4k"
FULL_HOT_WL="seq1 seq4 rand4k rand128k mmap4k"
ALL_SYSTEMS="ext4 curl s3cachefs s3fs rclone"
# Rounds: the cold, warm and hot rows of ROUND_SYSTEMS (the limits and
# s3cachefs) are measured ROUNDS times, interleaved per workload (limit,
# s3cachefs, limit, s3cachefs, ...), so that the report gives each ratio as
# the median of its per-round ratios with their spread (min-max). The peers
# run the first round only (their ratios to us are 2-30x, far above the
# noise; a round of them costs what the fill does).
ROUND_SYSTEMS="ext4 curl s3cachefs"
# The big-directory phase's mounts list with directory indexes
# (dir_index: no cache file per listed object); BENCH_DIR_INDEX=0 without.
DIR_INDEX=${BENCH_DIR_INDEX:-1}
# perf profiles (full run): one perf record -a -g run costs ~40 s under TCG.
PROFILES="warm-rand4k cold-seq1"	# of warm-seq1 warm-seq4 warm-rand4k warm-dseq1 cold-seq1
# The phases, in order (a subset for experiments: BENCH_PHASES="cold").
ALL_PHASES="cold fill warm hot profile meta small bigls smallf ckpt"
PHASES=$ALL_PHASES
for v in SHARD_MB HOT_PCT BIG_MB RUNTIME COLD_RUNTIME META_LS META_DIRS META_PER_DIR \
	 META_TIMEOUT TTFB_DEADLINE FIO_SLACK PROFILE COLD_WL WARM_WL HOT_WL PROFILES PHASES \
	 SMALL_N SMALL_RUNTIME SMALLF_RUNTIME BIGLS_N BIGLS_DIRS BIGLS_PER_DIR BIGLS_TIMEOUT HUGELS_N HUGELS_TIMEOUT \
	 CREATE_RUNTIME CKPT_TIMEOUT CKPT_FILES ROUNDS ROUND_SYSTEMS; do
	bv=BENCH_$v
	[ -n "${!bv:-}" ] && printf -v "$v" '%s' "${!bv}"
done
[ "${BENCH_PROFILE:-}" = 1 ] && PROFILE=1
SYSTEMS=${BENCH_SYSTEMS:-$ALL_SYSTEMS}
# The readahead of s3cachefs (its default) and of the ext4 limit, KiB.
RA_KB=8192
NSHARDS=4
SMALL_LIST=/tmp/bench-small.list
BUCKET=bench
export S3_PORT=9000 S3_DATA=/nvme/s3
. "$REPO/tests/lib/s3.sh"
. "$REPO/tests/lib/s3cfs.sh"

# --- small helpers -----------------------------------------------------------
# Time without exec: under TCG every exec of a program costs 0.2-0.6 s (more
# right after drop_caches, when it comes over 9p again), a fork ~1 ms. So the
# clock is bash's own ($EPOCHREALTIME), shifted to the uptime that the
# console's "bench[...]" stamps and the kernel log use, and the arithmetic
# on it is bash's (integer milliseconds), not awk's.
read -r UP0 _ </proc/uptime
EP0=${EPOCHREALTIME/./}
UP0_US=$(( ${UP0%.*} * 1000000 + 10#${UP0#*.} * 10000 ))
now() {	# seconds since boot, 3 decimals
	local t=$(( (${EPOCHREALTIME/./} - EP0 + UP0_US) / 1000 ))
	printf '%d.%03d\n' $((t / 1000)) $((t % 1000))
}
# ms_of SECONDS: MS=its value in integer milliseconds ("12", "1.5", "0.519600")
ms_of() {
	local i=${1%%.*} f=000
	[[ $1 == *.* ]] && f=${1#*.}000
	MS=$(( ${i:-0} * 1000 + 10#${f:0:3} ))
}
# us_of SECONDS: US=its value in integer microseconds
us_of() {
	local i=${1%%.*} f=000000
	[[ $1 == *.* ]] && f=${1#*.}000000
	US=$(( ${i:-0} * 1000000 + 10#${f:0:6} ))
}
# elapsed_ms T0 (from now): EMS=milliseconds since then
elapsed_ms() {
	ms_of "$1"
	EMS=$(( (${EPOCHREALTIME/./} - EP0 + UP0_US) / 1000 - MS ))
}
elapsed() {	# seconds since T0, 3 decimals
	elapsed_ms "$1"
	printf '%d.%03d' $((EMS / 1000)) $((EMS % 1000))
}
# cpu_mark; ...; cpu_idle: the share of the guest's CPU time (all CPUs) that
# was idle or waiting for I/O since the mark, in %: whether a row was bound
# by the CPUs (0) or waited (TCG emulates every instruction, so CPU-bound
# rows under it say little about real hardware).
cpu_now() {	# CPU_NOW="TOTAL IDLE": ticks of all CPUs so far, and idle ones
	local c u n s i w q sq st
	read -r c u n s i w q sq st _ </proc/stat
	CPU_NOW="$((u + n + s + i + w + q + sq + st)) $((i + w))"
}
cpu_mark() {
	cpu_now
	CPU_MARK=$CPU_NOW
}
cpu_idle() {
	local t i t0 i0
	cpu_now
	read -r t i <<<"$CPU_NOW"
	read -r t0 i0 <<<"$CPU_MARK"
	[ $((t - t0)) -gt 0 ] || { echo "?"; return; }
	echo $(( (i - i0) * 100 / (t - t0) ))
}
# snooze SECONDS: sleep without exec (a read that times out on a FIFO that
# nobody writes to; made in main).
snooze() {
	if [ -n "$SNOOZE_FD" ]; then read -r -t "$1" -u "$SNOOZE_FD" _ 2>/dev/null; else sleep "$1"; fi
	return 0
}
SNOOZE_FD=
# div_fmt NUM DEN DECIMALS: NUM/DEN rounded, with that many decimals
# (integers in, bash arithmetic).
div_fmt() {
	local p=1 i q
	for ((i = 0; i < $3; i++)); do p=$((p * 10)); done
	[ "$2" -gt 0 ] 2>/dev/null || { echo 0; return; }
	q=$(( ($1 * p * 2 + $2) / ($2 * 2) ))
	if [ "$3" = 0 ]; then echo "$q"; else printf '%d.%0*d' $((q / p)) "$3" $((q % p)); fi
}
# mounted DIR: whether DIR is a mount point, from /proc (no exec; and unlike
# mountpoint(1) it does not stat DIR, which blocks on a hung FUSE daemon).
# MNT_DEV is then its MAJ:MIN.
mounted() {
	local id parent dev root mp rest
	MNT_DEV=
	while read -r id parent dev root mp rest; do
		[ "$mp" = "$1" ] && MNT_DEV=$dev
	done </proc/self/mountinfo
	[ -n "$MNT_DEV" ]
}
say() { echo "bench[$(now)]: $*"; }
T_START=$(now)
# BENCH_TRACE=1: a timestamped trace of every command in logs/trace.log.
# The stamp is bash's own clock (no fork per traced line: a fork costs a
# good fraction of a second under TCG, so a $(...) in PS4 tripled the run),
# the trace goes to the guest's tmpfs (a write per line over 9p is slow) and
# is copied into logs/ at the end; the first line maps the stamps to the
# uptime that the console's "bench[...]" lines show.
TRACE=
if [ "${BENCH_TRACE:-0}" = 1 ]; then
	TRACE=/tmp/bench-trace.log
	exec 9>"$TRACE"
	echo "# epoch $EPOCHREALTIME = uptime $T_START" >&9
	BASH_XTRACEFD=9
	PS4='+[${EPOCHREALTIME}] '
	trap 'cp -f "$TRACE" "$LOGS/trace.log" 2>/dev/null' EXIT
	set -x
fi

# rec SYSTEM MODE WORKLOAD STATUS MIBS IOPS P50_US P99_US SECS NOTE: one
# row, of round $ROUND (the report pairs rows of the same round).
ROUND=1 RD=
rec() {
	local IFS=$'\t' a=("$@")
	while [ ${#a[@]} -lt 10 ]; do a+=(""); done
	a+=("$ROUND")
	echo "${a[*]}" >>"$RES"
	say "result: ${a[*]}"
}
# in_round SYSTEM: whether SYSTEM runs in this round (the first: all).
in_round() {
	[ "$ROUND" = 1 ] && return 0
	case " $ROUND_SYSTEMS " in *" $1 "*) return 0 ;; esac
	return 1
}
# round_dir: RD, where this round's cold objects are (round 1: the
# bucket's root; round N: rN/, hard links to the same bytes, unread).
round_dir() { if [ "$ROUND" = 1 ]; then RD=; else RD=/r$ROUND; fi; }

phase_start() { PHASE_NAME=$1; PHASE_T0=$(now); say "=== $1"; }
phase_end() { printf '%s\t%s\n' "$PHASE_NAME" "$(elapsed "$PHASE_T0")" >>"$PHASES_TSV"; }

drop_caches() {
	local t0
	t0=$(now)
	helper_sync || sync
	echo 3 >/proc/sys/vm/drop_caches
	say "caches dropped in $(elapsed "$t0") s"
}

# An in-guest copy of the kernel log and the memory picture, for the report.
snap() {
	{ echo "== $1 at $(now)"; grep -E 'MemFree|^Cached|Dirty' /proc/meminfo; } >>"$LOGS/meminfo.log"
}

# The guest's root is the host's, over 9p: after each drop_caches, fio and
# its ~60 libraries would be read over 9p again (6 s per run under TCG), and
# so would every small tool the script runs between two measurements (0.2-
# 0.5 s an exec). Mapped pages survive drop_caches, so one process keeps the
# tools mapped (the peers' binaries too: their remounts start them again).
PIN_PID=
pin_tools() {
	python3 - fio jq curl python3 cat head stat ls find perf awk timeout env sync \
		grep wc sleep rm mkdir cp cut sort tr tail umount mount fusermount \
		fusermount3 s3fs rclone setsid sed dmesg md5sum du insmod <<'EOF' &
import mmap, os, shutil, subprocess, sys, time
files = set()
for b in sys.argv[1:]:
    b = shutil.which(b)
    if not b:
        continue
    files.add(os.path.realpath(b))
    out = subprocess.run(["ldd", b], capture_output=True, text=True).stdout
    for l in out.splitlines():
        p = l.split("=>")[-1].split("(")[0].strip()
        if p.startswith("/"):
            files.add(os.path.realpath(p))
maps, total = [], 0
for f in sorted(files):
    try:
        fd = os.open(f, os.O_RDONLY)
        size = os.fstat(fd).st_size
        if size:
            m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
            for i in range(0, size, 4096):
                m[i]
            maps.append(m)
            total += size
        os.close(fd)
    except OSError:
        pass
print("bench: %d files (%d MiB) of the tools kept mapped" % (len(maps), total >> 20), flush=True)
open("/tmp/bench-pinned", "w").close()
while True:
    time.sleep(3600)
EOF
	PIN_PID=$!
}

# The pinning reads ~170 MiB over 9p: nothing is measured until it is done
# (it ran into the first cold runs when the setup was quick).
wait_pinned() {
	local i
	for ((i = 0; i < 240; i++)); do
		[ -e /tmp/bench-pinned ] && return 0
		snooze 0.5
	done
	say "the tools were not pinned after 120 s: measuring anyway"
}

# --- disk, dataset, server ----------------------------------------------------
setup_disk() {
	local dev=/dev/nvme0n1
	[ -b $dev ] || { say "no $dev"; return 1; }
	# No lazy init: ext4lazyinit writing inode tables in the background
	# would disturb every measurement.
	# An inode per 8 KiB: the huge directory's HUGELS_N lower files.
	mkfs.ext4 -q -F -i 8192 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 $dev || return 1
	mkdir -p /nvme && mount -o noatime $dev /nvme || return 1
	# An honest limit: ext4 reads ahead as far as s3cachefs does
	# (RA_KB), not the device's default 128 KiB. s3cachefs reads its
	# cache with O_DIRECT, which this does not touch.
	echo $RA_KB >/sys/block/nvme0n1/queue/read_ahead_kb || return 1
	say "readahead: $(cat /sys/block/nvme0n1/queue/read_ahead_kb) KiB for ext4 (read_ahead_kb), $RA_KB KiB for s3cachefs (readahead=)"
}

# One python process lays the whole dataset out in s3rver's directory
# (forks cost a second each under TCG):
#  - shards/s0..s3: SHARD_MB of real random bytes each (16 MiB from
#    urandom, repeated, with a different first MiB per shard);
#  - cold/, coldr/, prof/: hard links to the shards -- the same bytes on
#    the NVMe, but objects no system has cached yet (cold 1-job sequential,
#    cold random, profiles);
#  - big/ttfb.bin: BIG_MB, sparse (only its head is ever read);
#  - ls/: META_LS tiny objects in one directory; tree/dNN/: META_DIRS
#    directories of META_PER_DIR tiny objects, all with the same 7 bytes:
#    each object's three files are hard links to one set (a link is one
#    system call where a new file is three plus a block: 26 000 objects in
#    the full run; ext4 allows 65 000 links to an inode);
#  - small/dNNN/o-NNNNN: SMALL_N objects of 100 KiB, 100 per directory
#    (random bytes, all the same: hard links again), and SMALL_LIST, their
#    names shuffled (the order in which every system reads them). Not all
#    in one directory: s3rver answers a ListObjectsV2 with a prefix by
#    reading the whole directory (S3 does not), and a lookup sends one.
# s3rver serves the .md5 file as the ETag and does not check it.
make_dataset() {
	python3 - "$S3_DATA/$BUCKET" "$NSHARDS" "$SHARD_MB" "$BIG_MB" \
		"$META_LS" "$META_DIRS" "$META_PER_DIR" "$SMALL_N" "$SMALL_LIST" "$ROUNDS" <<'EOF'
import hashlib, os, random, sys
root = sys.argv[1]
nshards, shard_mb, big_mb, nls, ndirs, per, nsmall = map(int, sys.argv[2:9])
small_list = sys.argv[9]
rounds = int(sys.argv[10])
# Round N > 1 of the cold rows reads rN/{shards,cold,coldr}/sI, rN/big/.
rdirs = ["r%d/%s" % (n, d) for n in range(2, rounds + 1) for d in ("shards", "cold", "coldr", "big")]
META = b'{"content-type":"application/octet-stream"}\n'
def side(base, etag):
    with open(base + "._S3rver_object.md5", "w") as f:
        f.write(etag)
    with open(base + "._S3rver_metadata.json", "wb") as f:
        f.write(META)
def put(key, data):
    base = os.path.join(root, key)
    with open(base + "._S3rver_object", "wb") as f:
        f.write(data)
    side(base, hashlib.md5(data).hexdigest())
for d in ["shards", "cold", "coldr", "prof", "big", "ls"] + rdirs:
    os.makedirs(os.path.join(root, d), exist_ok=True)
blk = os.urandom(16 << 20)
for i in range(nshards):
    base = os.path.join(root, "shards", "s%d" % i)
    with open(base + "._S3rver_object", "wb") as f:
        f.write(os.urandom(1 << 20))
        f.write(blk[1 << 20:])
        for _ in range(shard_mb // 16 - 1):
            f.write(blk)
    etag = "%032x" % (i + 1)
    side(base, etag)
    for d in ["cold", "coldr", "prof"] + [r for r in rdirs if not r.endswith("/big")]:
        link = os.path.join(root, d, "s%d" % i)
        os.link(base + "._S3rver_object", link + "._S3rver_object")
        side(link, etag)
base = os.path.join(root, "big", "ttfb.bin")
with open(base + "._S3rver_object", "wb") as f:
    f.truncate(big_mb << 20)
side(base, "%032x" % 4096)
for r in rdirs:
    if r.endswith("/big"):
        link = os.path.join(root, r, "ttfb.bin")
        os.link(base + "._S3rver_object", link + "._S3rver_object")
        side(link, "%032x" % 4096)
SUF = ("._S3rver_object", "._S3rver_object.md5", "._S3rver_metadata.json")
small = os.path.join(root, "small-master")
put("small-master", b"object\n")
def put_small(key):
    base = os.path.join(root, key)
    for s in SUF:
        os.link(small + s, base + s)
for i in range(nls):
    put_small("ls/obj-%05d" % i)
for d in range(ndirs):
    os.makedirs(os.path.join(root, "tree/d%02d" % d), exist_ok=True)
    for i in range(per):
        put_small("tree/d%02d/obj-%05d" % (d, i))
for s in SUF:
    os.unlink(small + s)
os.makedirs(os.path.join(root, "small"), exist_ok=True)
put("small100k-master", os.urandom(100 << 10))
small = os.path.join(root, "small100k-master")
names = ["d%03d/o-%05d" % (i // 100, i) for i in range(nsmall)]
for d in range((nsmall + 99) // 100):
    os.makedirs(os.path.join(root, "small/d%03d" % d), exist_ok=True)
for n in names:
    put_small("small/" + n)
for s in SUF:
    os.unlink(small + s)
random.Random(42).shuffle(names)
with open(small_list, "w") as f:
    f.write("\n".join(names) + "\n")
EOF
}

# --- fio ------------------------------------------------------------------------
# fio_run SYSTEM MODE WORKLOAD DEADLINE ENV... -- JOBFILE
# Runs fio with the given environment, parses the JSON, records one row.
# Returns 0 if fio produced figures, 2 if it hit the deadline.
FIO_IO_BYTES=0
fio_run() {
	local sys=$1 mode=$2 wl=$3 deadline=$4 envs=() job rc t0 secs js line
	local note=${NAMES_NOTE:-}
	NAMES_NOTE=
	shift 4
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	job=$2
	js=$LOGS/fio-$sys-$mode-$wl.json
	[ "$ROUND" = 1 ] || js=$LOGS/fio-$sys-$mode-$wl-r$ROUND.json
	FIO_IO_BYTES=0
	t0=$(now)
	# (a subshell exports the job's variables: no env(1) to exec)
	( export "${envs[@]}"; exec timeout -k 10 "$deadline" fio --output-format=json \
		--output="$js" "$job" 2>"$js.stderr" )
	rc=$?
	secs=$(elapsed "$t0")
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		rec "$sys" "$mode" "$wl" timeout "" "" "" "" "$secs" "fio still running after ${deadline} s"
		return 2
	fi
	line=$(fio_figures "$js")
	if [ $rc != 0 ] || [ -z "$line" ]; then
		rec "$sys" "$mode" "$wl" fail "" "" "" "" "$secs" \
			"fio exit $rc: $(grep -v '^$' "$js.stderr" | tail -n 1 | tr '\t' ' ' | cut -c1-160)"
		return 1
	fi
	local bw iops p50 p99 iob rt err
	IFS=$'\t' read -r bw iops p50 p99 iob rt err <<<"$line"
	FIO_IO_BYTES=$iob
	if [ "${err:-0}" != 0 ] || [ "$iob" = 0 ]; then
		rec "$sys" "$mode" "$wl" fail "" "" "" "" "$secs" \
			"fio error $err, $iob bytes: $(grep -v '^$' "$js.stderr" | tail -n 1 | tr '\t' ' ' | cut -c1-160)"
		return 1
	fi
	rec "$sys" "$mode" "$wl" ok "$(printf %.2f "$bw")" "$(printf %.0f "$iops")" \
		"$(printf %.0f "$p50")" "$(printf %.0f "$p99")" "$rt" \
		"$((iob >> 20)) MiB read$note"
	return 0
}

# names_checked FILE...: stat each, untimed, before a warm or hot run, as the
# time to first byte's name is: those rows measure the data path. Past
# meta_ttl s3cachefs asks S3 about a name at its open (a LOOKUP: HEAD and a
# one-key LIST), which the metadata rows measure; fio would count it in its
# runtime (the warm O_DIRECT row: 4 LOOKUPs, a quarter of the fio samples).
# The time it took goes in the row's note (NAMES_NOTE, read by fio_run).
NAMES_NOTE=
names_checked() {
	local t0
	t0=$(now)
	timeout -k 5 60 stat "$@" >/dev/null 2>&1
	NAMES_NOTE="; names checked before it, untimed: $(elapsed "$t0") s"
}

# fio_figures JSON: "MiB/s IOPS p50_us p99_us io_bytes runtime_s error"
# (tab-separated) of the first job's reads. Asked of a python process
# started once (JSONP, a coprocess): jq costs an exec and ~0.6 s a run under
# TCG. jq if that process is gone. The same process does drop_caches' sync
# (helper_sync: "sync" in, "synced" out), saving sync(1)'s exec.
JSONP_PID=
start_json_parser() {
	coproc JSONP { exec python3 -u -c '
import json, os, sys
for path in sys.stdin:
    out = ""
    if path == "sync\n":	# sync(2) without an exec of sync(1)
        os.sync()
        print("synced", flush=True)
        continue
    try:
        j = json.load(open(path.rstrip("\n")))["jobs"][0]
        r, pc = j["read"], j["read"]["clat_ns"].get("percentile", {})
        out = "\t".join(str(x) for x in (
            r["bw_bytes"] / 1048576, r["iops"],
            pc.get("50.000000", 0) / 1000, pc.get("99.000000", 0) / 1000,
            r["io_bytes"], r["runtime"] / 1000, j["error"]))
    except Exception:
        pass
    print(out, flush=True)
' 2>/dev/null; }
	JSONP_PID=$JSONP_PID
}
helper_sync() {
	local line=
	[ -n "$JSONP_PID" ] && kill -0 "$JSONP_PID" 2>/dev/null &&
		echo sync >&"${JSONP[1]}" 2>/dev/null &&
		read -r -t 120 line <&"${JSONP[0]}" && [ "$line" = synced ]
}
fio_figures() {
	local line=
	if [ -n "$JSONP_PID" ] && kill -0 "$JSONP_PID" 2>/dev/null &&
	   echo "$1" >&"${JSONP[1]}" 2>/dev/null &&
	   read -r -t 30 line <&"${JSONP[0]}"; then
		echo "$line"
		return
	fi
	jq -r '.jobs[0] as $j | $j.read |
		[ (.bw_bytes / 1048576), .iops,
		  ((.clat_ns.percentile["50.000000"] // 0) / 1000),
		  ((.clat_ns.percentile["99.000000"] // 0) / 1000),
		  .io_bytes, (.runtime / 1000), $j.error ] | @tsv' "$1" 2>/dev/null
}

# workload SYSTEM MODE WORKLOAD DIR SUFFIX [RUNTIME]
# DIR/sN$SUFFIX are the four shard files.
workload() {
	local sys=$1 mode=$2 wl=$3 d=$4 sfx=${5:-} rt=${6:-$RUNTIME} f=() i dl
	local tb=0 size=100% direct=0
	for ((i = 0; i < NSHARDS; i++)); do f+=("$d/s$i$sfx"); done
	dl=$((rt + ${DEADLINE_SLACK:-$FIO_SLACK}))
	# Hot runs: time-based over the hot working set (in the page cache).
	case $mode in hot|pagecache) tb=1 size=$HOT_PCT% ;; esac
	# dseq1, drand4k: the same reads with O_DIRECT (loaders such as
	# cuFile or fastsafetensors), against ext4's own O_DIRECT.
	case "$wl" in d*) direct=1 ;; esac
	case $mode in warm|nvme|hot|pagecache) names_checked "${f[@]}" ;; esac
	case "$wl" in
	seq1|dseq1)
		fio_run "$sys" "$mode" "$wl" $dl RUNTIME="$rt" TIME_BASED=$tb SIZE=$size \
			DIRECT=$direct FILES="$(IFS=:; echo "${f[*]}")" -- tests/fio/seq1.fio ;;
	seq1c)	# cold, one object: only the first shard
		fio_run "$sys" "$mode" seq1 $dl RUNTIME="$rt" TIME_BASED=0 SIZE=100% \
			DIRECT=0 FILES="${f[0]}" -- tests/fio/seq1.fio ;;
	seq4)	fio_run "$sys" "$mode" "$wl" $dl RUNTIME="$rt" TIME_BASED=$tb SIZE=$size \
			DIRECT=0 F0="${f[0]}" F1="${f[1]}" F2="${f[2]}" F3="${f[3]}" -- tests/fio/seq4.fio ;;
	rand4k|rand128k|mmap4k|drand4k)
		local bs=4k eng=psync
		[ "$wl" = rand128k ] && bs=128k
		[ "$wl" = mmap4k ] && eng=mmap
		fio_run "$sys" "$mode" "$wl" $dl RUNTIME="$rt" BS=$bs IOENGINE=$eng SIZE=$size \
			DIRECT=$direct F0="${f[0]}" F1="${f[1]}" F2="${f[2]}" F3="${f[3]}" \
			-- tests/fio/randread.fio ;;
	esac
}

# Time to first byte: stat (untimed: the name is known), then open + read
# of one byte, timed inside one process.
ttfb() {
	local sys=$1 path=$2 out rc
	timeout -k 5 60 stat "$path" >/dev/null 2>&1
	out=$(timeout -k 5 "$TTFB_DEADLINE" python3 -c '
import os, sys, time
t = time.perf_counter()
fd = os.open(sys.argv[1], os.O_RDONLY)
b = os.read(fd, 1)
t = time.perf_counter() - t
os.close(fd)
print("%.6f %d" % (t, len(b)))' "$path" 2>&1)
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		rec "$sys" cold ttfb timeout "" "" "" "" "$TTFB_DEADLINE" "no first byte after $TTFB_DEADLINE s"
		return 2
	fi
	if [ $rc != 0 ] || [ "${out#* }" != 1 ]; then
		rec "$sys" cold ttfb fail "" "" "" "" "" "$(echo "$out" | tail -n 1 | cut -c1-160)"
		return 1
	fi
	us_of "${out% *}"
	rec "$sys" cold ttfb ok "" "" "$US" "" "${out% *}" \
		"open+read(1 byte) of a ${BIG_MB} MiB object"
}

# Time a metadata walk: meta SYSTEM MODE WORKLOAD EXPECTED CMD...
# (the command prints one line per entry; the count is checked).
meta() {
	local sys=$1 mode=$2 wl=$3 want=$4 t0 n rc secs lines=()
	shift 4
	t0=$(now)
	timeout -k 5 "$META_TIMEOUT" "$@" >/tmp/meta.out 2>"$LOGS/meta-$sys-$mode-$wl.stderr"
	rc=$?
	secs=$(elapsed "$t0")
	mapfile -t lines </tmp/meta.out
	n=${#lines[@]}
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		# What it printed by then gives its rate (ls -l prints nothing
		# before it has listed and stat'ed the whole directory).
		ms_of "$secs"
		rec "$sys" "$mode" "$wl" timeout "" "" "" "" "$secs" \
			"not done after $META_TIMEOUT s ($n entries by then: $(div_fmt $((n * 1000)) "$MS" 0)/s)"
		return 2
	fi
	if [ "$n" != "$want" ]; then
		rec "$sys" "$mode" "$wl" fail "" "" "" "" "$secs" "$n entries, expected $want (exit $rc)"
		return 1
	fi
	ms_of "$secs"
	rec "$sys" "$mode" "$wl" ok "" "$(div_fmt $((want * 1000)) "$MS" 0)" \
		"" "" "$secs" "$want entries"
}

# Two pairs of walks: ls -l of the big directory, then find over the tree,
# each cold (caches dropped; nothing under that directory listed, looked up
# or stat'ed since the mount) then warm (right after). One mount serves both
# pairs: ls/ and tree/ share nothing but the root, so the ls -l walks leave
# nothing behind that the cold find could use (a remount in between cost a
# FUSE peer's start-up, ~10 s under TCG, for nothing). A cold walk that
# times out leaves its warm walk out, and its peer is remounted (it may still
# be busy with the walk), so the next cold walk starts on a fresh mount.
meta_all() {	# SYSTEM MOUNTPOINT
	local sys=$1 m=$2 wl st mode
	for wl in ls-l find; do
		if [ -n "${DOWN[$sys]:-}" ]; then
			rec "$sys" cold $wl skip "" "" "" "" "" "${DOWN[$sys]}"
			continue
		fi
		for mode in cold warm; do
			[ $mode = cold ] && drop_caches
			case $wl in
			# ls -l prints "total N" plus one line per object.
			ls-l)	meta "$sys" $mode ls-l $((META_LS + 1)) ls -l "$m/ls" ;;
			find)	meta "$sys" $mode find $((META_DIRS * META_PER_DIR)) find "$m/tree" -type f ;;
			esac
			st=$?
			meta_after "$sys" "$mode $wl" $st
			if [ $mode = cold ] && [ $st = 2 ]; then
				rec "$sys" warm $wl skip "" "" "" "" "" "the cold walk timed out"
				break
			fi
		done
	done
}

# After a walk: counters; after a walk that timed out, a FUSE peer may still
# be busy with it (a HEAD per object): remount it so that it is not.
meta_after() {	# SYSTEM LABEL STATUS
	[ "$1" = s3cachefs ] && stats_s3cachefs "$2"
	if [ "$3" = 2 ] && [ "$1" != s3cachefs ]; then
		"abort_$1"
		"mount_$1" || DOWN[$1]="skipped: remount after a metadata walk failed"
	fi
	return 0
}

# --- the systems -----------------------------------------------------------------
# Each mounted system provides mount_X, umount_X (bounded, forcing if needed)
# and wipe_X (empty its cache). MNT_X is its mount point.

# FUSE: a peer that stops answering is aborted through fusectl, then lazily
# unmounted, so nothing waits on it for ever.
fuse_abort() {	# MOUNTPOINT PID
	local dev
	mounted "$1" && dev=$MNT_DEV
	if [ -n "$dev" ] && [ -w "/sys/fs/fuse/connections/${dev#*:}/abort" ]; then
		echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort"
	fi
	[ -n "${2:-}" ] && kill -KILL "$2" 2>/dev/null
	timeout 20 fusermount -u -z "$1" 2>/dev/null || timeout 20 umount -l "$1" 2>/dev/null
}

fuse_umount() {	# MOUNTPOINT PID
	local i
	mounted "$1" || return 0
	timeout 30 fusermount -u "$1" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		[ -n "${2:-}" ] && kill -0 "$2" 2>/dev/null || break
		snooze 0.1
	done
	if mounted "$1" || { [ -n "${2:-}" ] && kill -0 "$2" 2>/dev/null; }; then
		fuse_abort "$1" "${2:-}"
	fi
	return 0
}

wait_mounted() {	# MOUNTPOINT PID SECONDS
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		mounted "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		snooze 0.1
	done
	return 1
}

# s3cachefs ---------------------------------------------------------------
MNT_s3cachefs=/mnt/s3cachefs
CACHE_s3cachefs=/nvme/s3cachefs-cache
mount_s3cachefs() {
	load_module || return 1
	if ! daemon_alive; then
		start_bench_daemon || return 1
	fi
	[ -d $CACHE_s3cachefs ] || mkdir -p $CACHE_s3cachefs
	S3CFS_MOUNT_WAIT=20 mount_s3 "$BUCKET" $MNT_s3cachefs \
		"cache=$CACHE_s3cachefs,fetch_timeout=60,readahead=$RA_KB"
}
# As start_daemon in tests/lib, without -v: per-request debug logging would
# be part of what is measured.
start_bench_daemon() {
	local i
	DAEMON_LOG=$LOGS/${BENCH_DAEMON_LOG:-s3cachefsd.log}
	AWS_ACCESS_KEY_ID=$S3_AK AWS_SECRET_ACCESS_KEY=$S3_SK \
		setsid "$S3CFS_DAEMON" --endpoint "$S3_ENDPOINT" --region "$S3_REGION" \
		--allow-http --path-style ${BENCH_DAEMON_ARGS:-} </dev/null >>"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	for ((i = 0; i < 300; i++)); do
		[[ $(<"$DAEMON_LOG") == *'registered with the s3cachefs module'* ]] 2>/dev/null && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		snooze 0.1
	done
	say "s3cachefsd did not register; its log:"
	tail -n 20 "$DAEMON_LOG"
	return 1
}
umount_s3cachefs() {
	mounted $MNT_s3cachefs || return 0
	timeout -k 5 60 umount $MNT_s3cachefs || timeout 30 umount -l $MNT_s3cachefs
}
abort_s3cachefs() { timeout 30 umount -l $MNT_s3cachefs 2>/dev/null; }
wipe_s3cachefs() { rm -rf $CACHE_s3cachefs; }
stats_s3cachefs() {	# LABEL: counters of the mount, into the log
	local f d v lines=()
	mounted $MNT_s3cachefs || return 0
	d=/sys/fs/s3cachefs/$MNT_DEV
	{	# read builtins only: this runs after every s3cachefs step
		echo "== $1"
		for f in fetches chunk_misses chunk_hits fetch_bytes fetch_errors fetch_timeouts lookups lists read_retries; do
			v=
			read -r v <"$d/$f" 2>/dev/null
			printf '%s=%s ' $f "$v"
		done
		echo
		mapfile -t lines <"$d/fetch_latency" 2>/dev/null
		echo "${lines[*]}"
	} >>"$LOGS/s3cachefs-sysfs.log"
}

# s3fs-fuse ----------------------------------------------------------------
MNT_s3fs=/mnt/s3fs
CACHE_s3fs=/nvme/s3fs-cache
PID_s3fs=
mount_s3fs() {
	[ -n "$PID_s3fs" ] || spawn_s3fs || return 1
	wait_mounted $MNT_s3fs "$PID_s3fs" 30
}
spawn_s3fs() {	# start s3fs, do not wait for its mount (mount_s3fs does)
	command -v s3fs >/dev/null || { echo "s3fs is not installed" >"$LOGS/s3fs.log"; return 1; }
	echo "$S3_AK:$S3_SK" >/tmp/passwd-s3fs && chmod 600 /tmp/passwd-s3fs
	[ -d $MNT_s3fs ] && [ -d $CACHE_s3fs ] || mkdir -p $MNT_s3fs $CACHE_s3fs
	setsid s3fs "$BUCKET" $MNT_s3fs -f \
		-o passwd_file=/tmp/passwd-s3fs,use_cache=$CACHE_s3fs \
		-o use_path_request_style,url=$S3_ENDPOINT,endpoint=$S3_REGION \
		-o dbglevel=warn </dev/null >>"$LOGS/s3fs.log" 2>&1 &
	PID_s3fs=$!
}
umount_s3fs() { fuse_umount $MNT_s3fs "$PID_s3fs"; PID_s3fs=; }
abort_s3fs() { fuse_abort $MNT_s3fs "$PID_s3fs"; PID_s3fs=; }
wipe_s3fs() { rm -rf $CACHE_s3fs; }

# rclone mount ---------------------------------------------------------------
MNT_rclone=/mnt/rclone
CACHE_rclone=/nvme/rclone-cache
PID_rclone=
mount_rclone() {
	[ -n "$PID_rclone" ] || spawn_rclone || return 1
	wait_mounted $MNT_rclone "$PID_rclone" 30
}
spawn_rclone() {	# start rclone, do not wait for its mount (mount_rclone does)
	command -v rclone >/dev/null || { echo "rclone is not installed" >"$LOGS/rclone.log"; return 1; }
	cat >/tmp/rclone.conf <<EOF
[s3]
type = s3
provider = Other
env_auth = false
access_key_id = $S3_AK
secret_access_key = $S3_SK
region = $S3_REGION
endpoint = $S3_ENDPOINT
force_path_style = true
EOF
	[ -d $MNT_rclone ] && [ -d $CACHE_rclone ] || mkdir -p $MNT_rclone $CACHE_rclone
	# rclone 1.60 fails when AWS_CA_BUNDLE is set (tests/lib/s3.sh unset it).
	env -u AWS_CA_BUNDLE setsid rclone --config /tmp/rclone.conf mount \
		"s3:$BUCKET" $MNT_rclone --vfs-cache-mode full --cache-dir $CACHE_rclone \
		--log-level NOTICE </dev/null >>"$LOGS/rclone.log" 2>&1 &
	PID_rclone=$!
}
umount_rclone() { fuse_umount $MNT_rclone "$PID_rclone"; PID_rclone=; }
abort_rclone() { fuse_abort $MNT_rclone "$PID_rclone"; PID_rclone=; }
wipe_rclone() { rm -rf $CACHE_rclone; }

# --- orchestration ---------------------------------------------------------------
# The systems are measured interleaved: every cold, warm and hot workload
# runs on the limit and on each system back to back, and then again, ROUNDS
# times in all for the limits and s3cachefs (limit, s3cachefs, peers,
# limit, s3cachefs, limit, s3cachefs), so that each ratio is the median of
# ROUNDS ratios of runs taken within a minute or so of each other, with its
# spread (the build hosts are shared; their load drifts over minutes). Run
# once, one system after the other: the metadata walks, small objects, the
# big directory and the writes (a system's cold and warm runs between the
# limit's and the next system's); their ratios have no spread.
MOUNTED=()	# the mounted systems that are up
declare -A DOWN	# system -> why it is out of the run (mount failed, hung)

# step SYSTEM MODE WORKLOAD CMD...: one measurement. A system that hung
# (status 2) is out of the rest of the run; its remaining rows say so.
step() {
	local sys=$1 mode=$2 wl=$3 rc
	shift 3
	if [ -n "${DOWN[$sys]:-}" ]; then
		rec "$sys" "$mode" "$wl" skip "" "" "" "" "" "${DOWN[$sys]}"
		return 1
	fi
	say "$sys $mode $wl"
	"$@"
	rc=$?
	if [ $rc = 2 ] && [ "$mode" = cold ] && [ "$sys" != curl ]; then
		# Slow, not necessarily stuck (s3fs downloads whole objects
		# before the first byte): start it over with an empty cache, so
		# that what it was still doing does not weigh on the next runs.
		say "$sys: $mode $wl ran out of time: remounting it with an empty cache"
		"abort_$sys"
		"wipe_$sys"
		"mount_$sys" || DOWN[$sys]="skipped: remount after its $mode $wl run failed"
	elif [ $rc = 2 ]; then
		DOWN[$sys]="skipped: its $mode $wl run hung"
		"abort_$sys"
	fi
	[ "$sys" = s3cachefs ] && stats_s3cachefs "$mode $wl$([ "$ROUND" = 1 ] || echo " (round $ROUND)")"
	return $rc
}

shards_of() {	# SYSTEM: "DIR SUFFIX" of its four shard files
	case $1 in
	ext4)	echo "$S3_DATA/$BUCKET/shards ._S3rver_object" ;;
	*)	local mv="MNT_$1"; echo "${!mv}/shards" ;;
	esac
}

# All at once: the FUSE peers take 5-15 s each to start under TCG (and
# s3cachefs' daemon a few); nothing is measured while they do.
mount_all() {
	local sys
	for sys in $SYSTEMS; do
		case $sys in s3fs|rclone) "wipe_$sys"; "spawn_$sys" ;; esac
	done
	for sys in $SYSTEMS; do
		case $sys in s3cachefs|s3fs|rclone) ;; *) continue ;; esac
		[ $sys = s3cachefs ] && wipe_s3cachefs
		if "mount_$sys"; then
			MOUNTED+=("$sys")
		else
			DOWN[$sys]="mount failed (see logs/$sys*.log)"
			rec "$sys" cold mount fail "" "" "" "" "" "${DOWN[$sys]}"
			"umount_$sys"
		fi
	done
	has s3cachefs && stats_s3cachefs "mounted"
}

has() { case " $SYSTEMS " in *" $1 "*) return 0 ;; esac; return 1; }

# Cold: nothing cached. Each run reads objects its system has never read
# (cold/, coldr/, big/, and rN/ in round N); the S3 server's page cache is
# dropped before each. Two limits for the sequential rows: curl streaming
# to /dev/null, and curl writing into a file on the same NVMe (s3cachefs
# writes every byte it reads into its cache there).
phase_cold() {
	local sys wl mv
	phase_start "cold (empty caches)"
	for wl in $COLD_WL; do
		for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
			round_dir
			case $wl in
			seq1r|seq4r) [ $ROUND = 1 ] || continue ;;	# references
			esac
			if has curl && in_round curl; then
				drop_caches
				CURL_SINK= "curl_$wl"
				case $wl in
				seq1|seq4) drop_caches; CURL_SINK=/nvme/curl-sink "curl_$wl" ;;
				esac
			fi
			for sys in ${MOUNTED[@]+"${MOUNTED[@]}"}; do
				in_round "$sys" || continue
				mv="MNT_$sys"
				drop_caches
				case $wl in
				ttfb)	step "$sys" cold ttfb ttfb "$sys" "${!mv}$RD/big/ttfb.bin" ;;
				seq1)	step "$sys" cold seq1 workload "$sys" cold seq1c "${!mv}$RD/cold" "" "$COLD_RUNTIME" ;;
				rand4k)	DEADLINE_SLACK=30 step "$sys" cold rand4k workload "$sys" cold rand4k "${!mv}$RD/coldr" "" ;;
				seq4)	step "$sys" cold seq4 workload "$sys" cold seq4 "${!mv}$RD/shards" "" "$COLD_RUNTIME" ;;
				esac
			done
		done
	done
	ROUND=1 RD=
	if has s3cachefs && mounted $MNT_s3cachefs; then
		cp "/sys/fs/s3cachefs/$MNT_DEV/fetch_latency" \
			"$LOGS/s3cachefs-fetch-latency-cold.txt" 2>/dev/null
	fi
	phase_end
}

# Fill every cache for the warm and hot runs: all systems at once (each is
# bound by its own client, not by s3rver, so together they take half the
# time they take one after the other); not measured.
phase_fill() {
	local sys mv f pids=() names=() i rc
	phase_start "fill the caches (not measured)"
	drop_caches
	for sys in ${MOUNTED[@]+"${MOUNTED[@]}"}; do
		[ -n "${DOWN[$sys]:-}" ] && continue
		mv="MNT_$sys"
		# (the names, not a glob: listing shards/ through a FUSE peer
		# takes seconds under TCG, and the next system would wait)
		for ((i = 0; i < NSHARDS; i++)); do
			f=${!mv}/shards/s$i
			timeout -k 5 "$FILL_DEADLINE" cat "$f" >/dev/null &
			pids+=($!)
			names+=("$sys")
		done
	done
	for i in ${pids[@]+"${!pids[@]}"}; do
		wait "${pids[$i]}"
		rc=$?
		[ $rc = 0 ] || DOWN[${names[$i]}]="skipped: filling its cache failed or hung (status $rc)"
	done
	has s3cachefs && stats_s3cachefs "filled"
	phase_end
}

# Warm: caches full, page cache dropped before every run.
phase_warm() {
	local wl sys
	phase_start "warm (caches full, page cache dropped)"
	for wl in $WARM_WL; do
		for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
			for sys in ext4 ${MOUNTED[@]+"${MOUNTED[@]}"}; do
				[ $sys = ext4 ] && ! has ext4 && continue
				in_round "$sys" || continue
				drop_caches
				local mode=warm
				[ $sys = ext4 ] && mode=nvme
				step "$sys" $mode "$wl" workload "$sys" $mode "$wl" $(shards_of $sys)
			done
		done
	done
	ROUND=1
	phase_end
}

# Hot: everything in the page cache at once (fio does not invalidate).
phase_hot() {
	local wl sys d
	phase_start "hot (page cache)"
	drop_caches
	# Every system's working set loaded at once (not measured; each reader
	# is bound by its own system), one reader per shard.
	local f hot=$((SHARD_MB * HOT_PCT / 100)) pids=() names=() i
	for sys in ext4 ${MOUNTED[@]+"${MOUNTED[@]}"}; do
		[ $sys = ext4 ] && ! has ext4 && continue
		[ -n "${DOWN[$sys]:-}" ] && continue
		set -- $(shards_of $sys)
		say "$sys: loading the hot working set into the page cache"
		for ((i = 0; i < NSHARDS; i++)); do
			f=$1/s$i${2:-}
			timeout -k 5 "$FILL_DEADLINE" head -c "${hot}M" "$f" >/dev/null &
			pids+=($!)
			names+=("$sys")
		done
	done
	for i in ${pids[@]+"${!pids[@]}"}; do
		wait "${pids[$i]}" || DOWN[${names[$i]}]="skipped: reading its shards failed or hung"
	done
	snap "hot, loaded"
	for wl in $HOT_WL; do
		for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
			for sys in ext4 ${MOUNTED[@]+"${MOUNTED[@]}"}; do
				[ $sys = ext4 ] && ! has ext4 && continue
				in_round "$sys" || continue
				local mode=hot
				[ $sys = ext4 ] && mode=pagecache
				step "$sys" $mode "$wl" workload "$sys" $mode "$wl" $(shards_of $sys)
			done
		done
	done
	ROUND=1
	snap "hot, done"
	phase_end
}

# Metadata: each system remounted (no dentries, listings or stat caches),
# caches dropped; then the same walks again, warm.
phase_meta() {
	local sys mv
	phase_start "metadata"
	# Every system remounted at once (the peers' start-ups overlap), then
	# walked one after the other.
	local up=()
	for sys in ${MOUNTED[@]+"${MOUNTED[@]}"}; do
		[ -n "${DOWN[$sys]:-}" ] && continue
		up+=("$sys")
		"umount_$sys"
		case $sys in s3fs|rclone) "spawn_$sys" ;; esac
	done
	for sys in ${up[@]+"${up[@]}"}; do
		"mount_$sys" || DOWN[$sys]="remount failed"
	done
	for sys in ${up[@]+"${up[@]}"}; do
		mv="MNT_$sys"
		if [ -n "${DOWN[$sys]:-}" ]; then
			rec "$sys" cold "ls-l" fail "" "" "" "" "" "${DOWN[$sys]}"
			continue
		fi
		meta_all "$sys" "${!mv}"
	done
	phase_end
}

# --- small objects: a loader opening files it knows by name --------------------
# small_read SYSTEM MODE ROOT LIST DONE_OUT: 8 threads open and read whole
# files ROOT/NAME, NAME in LIST order, until SMALL_RUNTIME s have passed
# (the files begun by then are finished) or LIST is done; DONE_OUT gets the
# names read. One row: files/s (iops), MiB/s.
small_read() {
	local sys=$1 mode=$2 wl=${SMALL_WL:-small} out rc t idle
	cpu_mark
	out=$(timeout -k 5 $((SMALL_RUNTIME + 120)) python3 - "$3" "$4" "$SMALL_RUNTIME" "$5" <<'EOF' 2>&1
import os, sys, threading, time
root, listf, runtime, done_out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
names = open(listf).read().split()
lock = threading.Lock()
state = {"next": 0, "bytes": 0}
done, errs = [], []
t0 = time.perf_counter()
end = t0 + runtime
def worker():
    while True:
        with lock:
            i = state["next"]
            if i >= len(names) or time.perf_counter() >= end:
                return
            state["next"] = i + 1
        try:
            fd = os.open(os.path.join(root, names[i]), os.O_RDONLY)
            got = 0
            try:
                while True:
                    b = os.read(fd, 1 << 20)
                    if not b:
                        break
                    got += len(b)
            finally:
                os.close(fd)
        except OSError as e:
            with lock:
                errs.append("%s: %s" % (names[i], e))
            continue
        with lock:
            done.append(names[i])
            state["bytes"] += got
            if got != 100 << 10:
                errs.append("%s: %d bytes" % (names[i], got))
threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
secs = time.perf_counter() - t0
with open(done_out, "w") as f:
    f.write("\n".join(done) + "\n")
print("%d %d %.3f %d %s" % (len(done), state["bytes"], secs, len(errs), errs[0] if errs else ""))
EOF
)
	rc=$?
	idle=$(cpu_idle)
	local n bytes secs nerr first
	read -r n bytes secs nerr first <<<"$out"
	if [ $rc != 0 ] || ! [[ ${n:-} =~ ^[0-9]+$ ]]; then
		rec "$sys" "$mode" "$wl" fail "" "" "" "" "" "reader exit $rc: $(echo "$out" | tail -n 1 | cut -c1-160)"
		return 1
	fi
	if [ "$nerr" != 0 ] || [ "$n" = 0 ]; then
		rec "$sys" "$mode" "$wl" fail "" "" "" "" "$secs" "$n files read, $nerr errors ($first)"
		return 1
	fi
	ms_of "$secs"
	rec "$sys" "$mode" "$wl" ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 2)" \
		"$(div_fmt $((n * 1000)) "$MS" 0)" "" "" "$secs" "$n files of 100 KiB, 8 readers; CPUs idle $idle %"
}

# The server's limit: curl, 8 keep-alive transfers at a time over the same
# names, cut at SMALL_RUNTIME s like the readers.
curl_small() {	# [URL WORKLOAD]: the bucket's URL (default s3rver's), the row
	local cfg=/tmp/curl-small.cfg n t0 secs name url=${1:-$CURL_U} wl=${2:-small}
	say "curl cold $wl"
	{
		while read -r name; do
			printf 'url = "%s/small/%s"\n' "$url" "$name"
			printf 'aws-sigv4 = "aws:amz:%s:s3"\nuser = "%s:%s"\n' "$S3_REGION" "$S3_AK" "$S3_SK"
			printf 'header = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\n'
			printf 'silent\noutput = "/dev/null"\n'
			# (to stderr: unbuffered, so that a run cut by timeout keeps it)
			printf 'write-out = "%%{stderr}%%{http_code} %%{size_download}\\n"\nnext\n'
		done <"$SMALL_LIST"
	} >"$cfg"
	t0=$(now)
	cpu_mark
	timeout -k 5 "$SMALL_RUNTIME" curl --parallel --parallel-max 8 -K "$cfg" \
		2>"$LOGS/curl-$wl.out" >/dev/null
	secs=$(elapsed "$t0")
	local idle=$(cpu_idle)
	n=$(grep -c '^200 102400$' "$LOGS/curl-$wl.out")
	if [ "${n:-0}" -gt 0 ]; then
		ms_of "$secs"
		rec curl cold "$wl" ok "$(div_fmt $((n * 102400 * 1000)) $((MS * 1048576)) 2)" \
			"$(div_fmt $((n * 1000)) "$MS" 0)" "" "" "$secs" "$n GETs of 100 KiB, 8 in parallel; CPUs idle $idle %"
	else
		rec curl cold "$wl" fail "" "" "" "" "$secs" "no GET done: $(tail -n 1 "$LOGS/curl-$wl.out" | cut -c1-160)"
	fi
}

# Cold: each system reads the shuffled names (nothing of small/ cached,
# not even listed: the loader opens names it has from an index). Warm: it
# reads again what it read cold, right after (within s3cachefs' meta_ttl,
# 60 s, of the cold reads: older names are checked with S3 again); the
# limit is the same files read from s3cachefs' cache directory on the
# ext4 (its lower files).
phase_small() {
	local sys mv lower
	phase_start "small objects"
	if has curl; then drop_caches; curl_small; fi
	for sys in ${MOUNTED[@]+"${MOUNTED[@]}"}; do
		mv="MNT_$sys"
		drop_caches
		step "$sys" cold small small_read "$sys" cold "${!mv}/small" "$SMALL_LIST" "/tmp/small-done-$sys"
		[ -s "/tmp/small-done-$sys" ] || continue
		if [ $sys = s3cachefs ]; then
			lower=$(find $CACHE_s3cachefs -maxdepth 3 -type d -name small -print -quit 2>/dev/null)
			if [ -n "$lower" ]; then
				drop_caches
				step ext4 nvme small small_read ext4 nvme "$lower" /tmp/small-done-s3cachefs /tmp/small-done-ext4
			else
				rec ext4 nvme small fail "" "" "" "" "" "no small/ in $CACHE_s3cachefs"
			fi
		fi
		drop_caches
		step "$sys" warm small small_read "$sys" warm "${!mv}/small" "/tmp/small-done-$sys" /dev/null
	done
	has s3cachefs && stats_s3cachefs "small"
	phase_end
}

# --- a big directory: listing cost, first entry, warm ls, per-entry cost -------
# Served by fakes3 (s3rver pages a 100 000-object bucket in minutes under
# TCG); its pages cost their own entries (a bisect into its sorted keys).
# The limit lists it over one keep-alive connection from python: a curl
# exec per page costs 0.3 s under TCG, more than fakes3's page.
BIGLS_BUCKET=bigdir
BIGLS_PORT=9100
MNT_big=/mnt/s3cachefs-big
CACHE_big=/nvme/s3cachefs-big
# The limit of listing PREFIX of the bucket: its pages over one keep-alive
# connection; records curl's WL row, and with FIRST its first page as FIRST.
dir_limit() {	# WL PREFIX KEYS [FIRST]
	local out first total n
	out=$(python3 "$REPO/tools/bench/listlimit.py" "$BIGLS_PORT" "$BIGLS_BUCKET" dir "$2" 2>&1)
	read -r first total n <<<"$out"
	if [ "${n:-}" != "$3" ]; then
		rec curl cold "$1" fail "" "" "" "" "" "$(echo "$out" | tail -n 1 | cut -c1-160)"
		return
	fi
	if [ -n "${4:-}" ]; then
		us_of "$first"
		rec curl cold "$4" ok "" "" "$US" "" "$first" "one ListObjectsV2 page"
	fi
	ms_of "$total"
	rec curl cold "$1" ok "" "$(div_fmt $((n * 1000)) "$MS" 0)" "" "" "$total" \
		"$n keys, paginated ListObjectsV2 (1000 a page)"
}
# The limit of a cold find over tree/: list tree/ (its directories), then
# every directory, paginated, over one keep-alive connection in turn and
# over 8 connections at once; prints "best_s seq_s par_s keys dirs".
bigfind_limit() {
	python3 "$REPO/tools/bench/listlimit.py" "$BIGLS_PORT" "$BIGLS_BUCKET" tree tree/
}
# The time to the first entry of a cold directory, through readdir.
first_entry() {	# SYSTEM DIR
	local out rc
	out=$(timeout -k 5 "$BIGLS_TIMEOUT" python3 -c '
import os, sys, time
t = time.perf_counter()
it = os.scandir(sys.argv[1])
e = next(it)
print("%.6f %s" % (time.perf_counter() - t, e.name))' "$2" 2>&1)
	rc=$?
	if [ $rc != 0 ]; then
		rec "$1" cold bigls-first fail "" "" "" "" "" "exit $rc: $(echo "$out" | tail -n 1 | cut -c1-160)"
		return 1
	fi
	us_of "${out%% *}"
	rec "$1" cold bigls-first ok "" "" "$US" "" "${out%% *}" "first entry of a cold readdir"
}
# A fresh s3cachefs mount of the big directory's bucket, on an empty cache.
fresh_big_mount() {
	if mounted $MNT_big; then
		timeout -k 5 60 umount $MNT_big || timeout 30 umount -l $MNT_big
	fi
	rm -rf $CACHE_big
	mkdir -p $CACHE_big
	S3CFS_MOUNT_WAIT=20 mount_s3 $BIGLS_BUCKET $MNT_big \
		"cache=$CACHE_big,fetch_timeout=120$([ "$DIR_INDEX" = 1 ] && echo ,dir_index)"
}
# The limit of a warm ls -l: as many empty files in one directory of the
# cache ext4 (made once, untimed; with dir_index the lower directory holds
# no file per object), their dentries as warm as ours (a first walk).
ext4_bigdir() {	# N: prints the directory
	local d=/nvme/bigls-ext4
	if [ "$(find "$d" -maxdepth 1 -type f 2>/dev/null | wc -l)" != "$1" ]; then
		rm -rf "$d"
		python3 -c 'import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d)
for i in range(n):
    os.close(os.open(os.path.join(d, "obj-%06d" % i), os.O_CREAT | os.O_WRONLY, 0o644))' "$d" "$1" || return 1
	fi
	timeout -k 5 "$BIGLS_TIMEOUT" ls -l "$d" >/dev/null 2>&1
	echo "$d"
}
# The daemon serves one endpoint: it moves to fakes3 (FAKES3_ENDPOINT) for
# the phases on it, logging to LOGS/LOG, and back to s3rver after them.
daemon_to_fakes3() {	# LOG
	stats_s3cachefs "end"
	umount_s3cachefs
	stop_daemon
	S3_ENDPOINT=$FAKES3_ENDPOINT BENCH_DAEMON_LOG=$1 start_bench_daemon
}
daemon_back() {	# CACHE: the fakes3 mount's cache directory, removed
	stop_daemon
	rm -rf "$1"
	# Back on s3rver for the phases after this one.
	start_bench_daemon || say "s3cachefsd did not start again on s3rver"
}
phase_bigls() {
	local out n lower
	phase_start "big directory ($BIGLS_N objects, fakes3)"
	python3 - "$BIGLS_BUCKET" "$BIGLS_N" "$BIGLS_DIRS" "$BIGLS_PER_DIR" "$HUGELS_N" >/tmp/bigls.json <<'EOF'
import json, sys
n, dirs, per, huge = (int(v) for v in sys.argv[2:6])
objs = {"big/obj-%06d" % i: "x" for i in range(n)}
objs.update(("tree/d%04d/obj-%05d" % (i // per, i), "x") for i in range(dirs * per))
objs.update(("huge/obj-%07d" % i, "x") for i in range(huge))
print(json.dumps({"bucket": sys.argv[1], "objects": objs}))
EOF
	if ! start_fakes3 $BIGLS_PORT /tmp/bigls.json; then
		rec curl cold bigls fail "" "" "" "" "" "fakes3 did not start"
		phase_end
		return
	fi
	dir_limit bigls big/ "$BIGLS_N" bigls-first
	[ "$HUGELS_N" -gt 0 ] && dir_limit hugels huge/ "$HUGELS_N"
	local best seq par dirs
	out=$(bigfind_limit 2>&1)
	read -r best seq par n dirs <<<"$out"
	if [ "${n:-}" = "$((BIGLS_DIRS * BIGLS_PER_DIR))" ]; then
		ms_of "$best"
		rec curl cold bigfind ok "" "$(div_fmt $((n * 1000)) "$MS" 0)" "" "" "$best" \
			"$n keys in $dirs directories: best of one connection (${seq} s) and 8 (${par} s)"
	else
		rec curl cold bigfind fail "" "" "" "" "" "$(echo "$out" | tail -n 1 | cut -c1-160)"
	fi
	if has s3cachefs && [ -z "${DOWN[s3cachefs]:-}" ]; then
		if daemon_to_fakes3 s3cachefsd-fakes3.log && fresh_big_mount; then
			drop_caches
			first_entry s3cachefs $MNT_big/big
			# ls -l cold again, on an empty cache and a fresh mount.
			fresh_big_mount
			drop_caches
			META_TIMEOUT=$BIGLS_TIMEOUT meta s3cachefs cold bigls $((BIGLS_N + 1)) ls -l $MNT_big/big
			META_TIMEOUT=$BIGLS_TIMEOUT meta s3cachefs warm bigls $((BIGLS_N + 1)) ls -l $MNT_big/big
			listing_left big
			lower=$LEFT_DIR
			if [ -n "$lower" ]; then
				rec s3cachefs cold bigls-cost ok "" "" "" "" "" \
					"daemon peak RSS ${LEFT_HWM:-?} KiB; cache device $LEFT_KB KiB for $BIGLS_N entries ($((LEFT_KB * 1024 / BIGLS_N)) B each: lower directory and its index)"
			fi
			lower=$(ext4_bigdir "$BIGLS_N")
			[ -n "$lower" ] &&
				META_TIMEOUT=$BIGLS_TIMEOUT meta ext4 warm bigls $((BIGLS_N + 1)) ls -l "$lower"
			# Where a cold ls -l spends the CPUs (the profile runs: perf
			# over one more cold walk, after the measured ones).
			if [ "$PROFILE" = 1 ] && command -v perf >/dev/null && fresh_big_mount; then
				drop_caches
				say "profile cold-bigls"
				profile_run cold-bigls "$BIGLS_TIMEOUT" ls -l $MNT_big/big
			fi
			# find over tree/, cold: a fresh mount (the walks above gave
			# the list-ahead time to list tree/ in the background).
			if fresh_big_mount; then
				drop_caches
				META_TIMEOUT=$BIGLS_TIMEOUT meta s3cachefs cold bigfind \
					$((BIGLS_DIRS * BIGLS_PER_DIR)) find $MNT_big/tree -type f
			fi
			[ "$HUGELS_N" -gt 0 ] && fresh_big_mount && huge_listing
			timeout -k 5 60 umount $MNT_big || timeout 30 umount -l $MNT_big
		else
			rec s3cachefs cold bigls fail "" "" "" "" "" "no mount on fakes3 (logs/s3cachefsd-fakes3.log)"
		fi
		# Not removed: unlinking a million files takes minutes under
		# TCG, and the disk has inodes to spare (setup_disk).
		[ "$HUGELS_N" -gt 1000 ] && mv $CACHE_big /nvme/s3cachefs-huge.old
		daemon_back $CACHE_big
	fi
	stop_fakes3
	phase_end
}
# ls -f (readdir only, no stat) of huge/ to the end, cold on a fresh mount;
# then what it left: the daemon's memory and the cache device's space per
# entry (du: blocks allocated; each lower file also has its ext4 inode).
huge_listing() {
	drop_caches
	META_TIMEOUT=$HUGELS_TIMEOUT meta s3cachefs cold hugels $((HUGELS_N + 2)) ls -f $MNT_big/huge
	listing_left huge
	[ -n "$LEFT_DIR" ] || return 0
	rec s3cachefs cold hugels-cost ok "" "" "" "" "" \
		"daemon RSS ${LEFT_RSS:-?} KiB after it (peak ${LEFT_HWM:-?} KiB); cache directory $LEFT_KB KiB for $HUGELS_N entries ($((LEFT_KB * 1024 / HUGELS_N)) B each$([ "$DIR_INDEX" = 1 ] && echo ": its index; no inode per entry" || echo ", and an inode of 256 B"))"
}
# listing_left NAME: what listing NAME/ of the fakes3 bucket left. The
# daemon's memory (LEFT_RSS, LEFT_HWM: its peak, KiB), the lower directory
# (LEFT_DIR, empty if none) and its blocks (LEFT_KB, du: blocks allocated).
listing_left() {
	local k v
	LEFT_RSS= LEFT_HWM= LEFT_KB=
	while read -r k v _; do
		[ "$k" = VmHWM: ] && LEFT_HWM=$v
		[ "$k" = VmRSS: ] && LEFT_RSS=$v
	done </proc/"$DAEMON_PID"/status
	LEFT_DIR=$(find $CACHE_big -maxdepth 3 -type d -name "$1" -print -quit 2>/dev/null)
	[ -n "$LEFT_DIR" ] || return 0
	# The directory's index, if it has one (dir_index), counts too.
	LEFT_KB=$(du -sk "$LEFT_DIR" "$CACHE_big/.s3cachefs/lists/$(stat -c %i "$LEFT_DIR")" \
		2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	return 0
}

# --- small objects on fakes3: the same loader where a LIST costs a GET's ------
# s3rver answers a ListObjectsV2 in 1-2 s under TCG whatever its prefix (it
# reads far more of its store than the prefix needs), so on it the cold
# small rows measure its listing; S3 answers a LIST about as fast as a GET.
# The same SMALL_N names (one shared 100 KiB body) on fakes3, in the same
# run: curl's GETs, s3cachefs cold, and warm; the daemon moves to fakes3
# for it, as for the big directory.
SMALLF_BUCKET=smallobj
SMALLF_PORT=9101
MNT_sf=/mnt/s3cachefs-sf
CACHE_sf=/nvme/s3cachefs-sf
phase_smallf() {
	local d
	phase_start "small objects on fakes3"
	python3 - "$SMALLF_BUCKET" "$SMALL_LIST" >/tmp/smallf.json <<'EOF'
import json, sys
names = open(sys.argv[2]).read().split()
body = {"bytes": 102400, "seed": 1}
print(json.dumps({"bucket": sys.argv[1], "objects": {"small/" + n: body for n in names}}))
EOF
	if ! start_fakes3 $SMALLF_PORT /tmp/smallf.json; then
		rec curl cold smallf fail "" "" "" "" "" "fakes3 did not start"
		phase_end
		return
	fi
	if has curl; then
		drop_caches
		SMALL_RUNTIME=$SMALLF_RUNTIME curl_small "$FAKES3_ENDPOINT/$SMALLF_BUCKET" smallf
	fi
	if has s3cachefs && [ -z "${DOWN[s3cachefs]:-}" ]; then
		rm -rf $CACHE_sf && mkdir -p $CACHE_sf $MNT_sf
		# meta_ttl: the warm run reads names the cold one checked up to
		# SMALLF_RUNTIME s before (a dataset that does not change).
		if daemon_to_fakes3 s3cachefsd-smallf.log &&
		   S3CFS_MOUNT_WAIT=20 mount_s3 $SMALLF_BUCKET $MNT_sf "cache=$CACHE_sf,fetch_timeout=60,meta_ttl=3600"; then
			drop_caches
			SMALL_RUNTIME=$SMALLF_RUNTIME SMALL_WL=smallf small_read s3cachefs cold \
				"$MNT_sf/small" "$SMALL_LIST" /tmp/smallf-done
			if [ -s /tmp/smallf-done ]; then
				drop_caches
				SMALL_RUNTIME=$SMALLF_RUNTIME SMALL_WL=smallf small_read s3cachefs warm \
					"$MNT_sf/small" /tmp/smallf-done /dev/null
				# The limit: the same files on the cache ext4 (the lower ones).
				drop_caches
				SMALL_RUNTIME=$SMALLF_RUNTIME SMALL_WL=smallf small_read ext4 nvme \
					"$CACHE_sf/small" /tmp/smallf-done /dev/null
			fi
			d=/sys/fs/s3cachefs/$(mountpoint -d $MNT_sf 2>/dev/null)
			say "smallf: lookups $(cat $d/lookups 2>/dev/null), fetches $(cat $d/fetches 2>/dev/null)"
			timeout -k 5 60 umount $MNT_sf || timeout 30 umount -l $MNT_sf
			# The profile runs: cold and warm reads once more under perf,
			# SMALL_RUNTIME s each (their rows in logs/profile-results.tsv).
			if [ "$PROFILE" = 1 ] && command -v perf >/dev/null && [ -s /tmp/smallf-done ]; then
				profile_smallf
			fi
		else
			rec s3cachefs cold smallf fail "" "" "" "" "" "no mount on fakes3 (logs/s3cachefsd-smallf.log)"
		fi
		daemon_back $CACHE_sf
	fi
	stop_fakes3
	phase_end
}
profile_smallf() {
	rm -rf $CACHE_sf && mkdir -p $CACHE_sf
	S3CFS_MOUNT_WAIT=20 mount_s3 $SMALLF_BUCKET $MNT_sf "cache=$CACHE_sf,fetch_timeout=60,meta_ttl=3600" || return
	say "profile cold-smallf, warm-smallf, warm-smallf-ext4"
	drop_caches
	profile_start cold-smallf $SMALL_RUNTIME
	RES=$LOGS/profile-results.tsv SMALL_WL=smallf small_read s3cachefs cold \
		"$MNT_sf/small" "$SMALL_LIST" /tmp/smallf-prof-done
	profile_stop cold-smallf
	# Past the directories' first names (every directory listed): the
	# steady state, a run of 2 x SMALL_RUNTIME on the names left over,
	# profiled over its second half.
	if [ "$SMALLF_RUNTIME" -gt "$SMALL_RUNTIME" ]; then
		grep -vxF -f /tmp/smallf-prof-done "$SMALL_LIST" >/tmp/smallf-rest
		profile_start cold-smallf-steady $SMALL_RUNTIME $SMALL_RUNTIME
		SMALL_RUNTIME=$((2 * SMALL_RUNTIME)) RES=$LOGS/profile-results.tsv SMALL_WL=smallf \
			small_read s3cachefs cold "$MNT_sf/small" /tmp/smallf-rest /dev/null
		profile_stop cold-smallf-steady
	fi
	profile_warm_small warm-smallf s3cachefs warm "$MNT_sf/small"
	profile_warm_small warm-smallf-ext4 ext4 nvme "$CACHE_sf/small"
	timeout -k 5 60 umount $MNT_sf || timeout 30 umount -l $MNT_sf
}

# A warm read of the profile run's files is short: three of them in one
# profile.
profile_warm_small() {	# NAME SYSTEM MODE DIR
	local i
	profile_start "$1" $SMALL_RUNTIME
	for i in 1 2 3; do
		drop_caches
		RES=$LOGS/profile-results.tsv SMALL_WL=smallf small_read "$2" "$3" \
			"$4" /tmp/smallf-prof-done /dev/null
	done
	profile_stop "$1"
}

# --- writes: a sharded checkpoint, small files ---------------------------------
# A checkpoint: CKPT_FILES of the shards (four, two in a quick run; SHARD_MB
# of random bytes each, read from the ext4 copies, in the page cache first)
# written at once into a directory of the system, one writer each (create,
# 4 MiB writes, fsync, close), timed until S3 has all of them (rclone
# uploads after close).
# Limit: the same files as parallel multipart uploads straight to s3rver,
# 16 MiB parts, 4 in flight per file (s3cachefs' defaults). ext4 with fsync
# is a second reference (what a write-back mode would be measured against).
# Small files: 8 threads create 4 KiB files for CREATE_RUNTIME s; limit:
# 8 keep-alive PutObject streams.
MNT_w=/mnt/s3cachefs-w
CACHE_w=/nvme/s3cachefs-wcache
CKPT_SRC=/nvme/ckpt-src
ckpt_row() {	# SYSTEM MODE DIR PORT KEYPREFIX
	local sys=$1 mode=$2 dir=$3 out secs closed bytes idle
	cpu_mark
	out=$(timeout -k 5 "$CKPT_TIMEOUT" python3 "$REPO/tools/bench/fswrite.py" ckpt "$dir" "$4" "$BUCKET" "$5" \
		"$CKPT_SRC"/rank*.pt 2>"$LOGS/ckpt-$sys.stderr")
	idle=$(cpu_idle)
	read -r secs closed bytes <<<"$out"
	if [[ $secs =~ ^[0-9.]+$ ]]; then
		ms_of "$secs"
		rec "$sys" "$mode" ckpt ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 1)" "" "" "" "$secs" \
			"$((bytes >> 20)) MiB in $CKPT_FILES files; last close after $closed s; CPUs idle $idle %"
		# Write-back: when the writers were done, measured on its own.
		if [ "$sys" = s3cachefs-wb ]; then
			ms_of "$closed"
			rec "$sys" ack ckpt ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 1)" "" "" "" "$closed" \
				"$((bytes >> 20)) MiB in $CKPT_FILES files, every close returned (fsync'd to the cache device)"
		fi
	else
		rec "$sys" "$mode" ckpt fail "" "" "" "" "" "$(echo "$out" | cut -c1-160) (logs/ckpt-$sys.stderr)"
	fi
}
creates_row() {	# SYSTEM MODE DIR
	local out secs n
	out=$(timeout -k 5 $((CREATE_RUNTIME + 120)) python3 "$REPO/tools/bench/fswrite.py" creates "$3" \
		4096 8 "$CREATE_RUNTIME" 2>"$LOGS/creates-$1.stderr")
	read -r secs n <<<"$out"
	if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ]; then
		ms_of "$secs"
		rec "$1" "$2" creates ok "" "$(div_fmt $((n * 1000)) "$MS" 0)" "" "" "$secs" \
			"$n files of 4 KiB, 8 writers"
	else
		rec "$1" "$2" creates fail "" "" "" "" "" "$(echo "$out" | cut -c1-160) (logs/creates-$1.stderr)"
	fi
}
phase_ckpt() {
	local sys i out secs bytes n mv dir
	phase_start "writes: checkpoint, small files"
	rm -rf $CKPT_SRC && mkdir -p $CKPT_SRC
	for ((i = 0; i < CKPT_FILES; i++)); do
		ln -s "$S3_DATA/$BUCKET/shards/s$i._S3rver_object" $CKPT_SRC/rank$i.pt
	done
	cat $CKPT_SRC/rank*.pt >/dev/null
	if has ext4; then
		rm -rf /nvme/ckpt-ext4 && mkdir -p /nvme/ckpt-ext4
		say "ext4 nvme ckpt"
		ckpt_row ext4 nvme /nvme/ckpt-ext4 0 ""
		rm -rf /nvme/ckpt-ext4
	fi
	if has curl; then
		say "curl write ckpt"
		cpu_mark
		out=$(timeout -k 5 "$CKPT_TIMEOUT" python3 "$REPO/tools/bench/putlimit.py" "$S3_PORT" "$BUCKET" mpu \
			ckpt/curl/ 16 4 $CKPT_SRC/rank*.pt 2>"$LOGS/ckpt-curl.stderr")
		local idle=$(cpu_idle)
		read -r secs bytes <<<"$out"
		if [[ $secs =~ ^[0-9.]+$ ]]; then
			ms_of "$secs"
			rec curl write ckpt ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 1)" "" "" "" "$secs" \
				"multipart, 16 MiB parts, 4 per file in flight, $CKPT_FILES files at once; CPUs idle $idle %"
		else
			rec curl write ckpt fail "" "" "" "" "" "$(echo "$out" | cut -c1-160)"
		fi
		say "curl write creates"
		out=$(timeout -k 5 $((CREATE_RUNTIME + 120)) python3 "$REPO/tools/bench/putlimit.py" \
			"$S3_PORT" "$BUCKET" puts creates/curl/ 4096 8 "$CREATE_RUNTIME" 2>"$LOGS/creates-curl.stderr")
		read -r secs n <<<"$out"
		if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ]; then
			ms_of "$secs"
			rec curl write creates ok "" "$(div_fmt $((n * 1000)) "$MS" 0)" "" "" "$secs" \
				"$n PutObjects of 4 KiB, 8 keep-alive streams"
		else
			rec curl write creates fail "" "" "" "" "" "$(echo "$out" | cut -c1-160)"
		fi
	fi
	for sys in s3cachefs s3fs rclone; do
		has $sys || continue
		if [ $sys = s3cachefs ]; then
			rm -rf $CACHE_w && mkdir -p $CACHE_w $MNT_w
			if ! S3CFS_MOUNT_WAIT=20 mount_s3 "$BUCKET" $MNT_w \
				"cache=$CACHE_w,fetch_timeout=300,writable"; then
				rec s3cachefs write ckpt fail "" "" "" "" "" "writable mount failed"
				continue
			fi
			dir=$MNT_w
		else
			[ -n "${DOWN[$sys]:-}" ] && { rec $sys write ckpt skip "" "" "" "" "" "${DOWN[$sys]}"; continue; }
			mv="MNT_$sys"
			dir=${!mv}
		fi
		mkdir -p "$dir/ckpt/$sys" "$dir/creates/$sys"
		say "$sys write ckpt"
		ckpt_row $sys write "$dir/ckpt/$sys" "$S3_PORT" "ckpt/$sys/"
		# The same without streamed uploads (stream_part_mb=0): what
		# uploading parts while the files are written gains, in this run.
		if [ $sys = s3cachefs ] && [ -w /sys/module/s3cachefs/parameters/stream_part_mb ]; then
			sp=$(cat /sys/module/s3cachefs/parameters/stream_part_mb)
			echo 0 >/sys/module/s3cachefs/parameters/stream_part_mb
			mkdir -p "$dir/ckpt/nostream"
			say "s3cachefs write ckpt, no streams"
			ckpt_row s3cachefs-nostream write "$dir/ckpt/nostream" "$S3_PORT" "ckpt/nostream/"
			echo "$sp" >/sys/module/s3cachefs/parameters/stream_part_mb
		fi
		# Where the CPUs go while s3cachefs writes a checkpoint (the
		# profile runs: one more, after the measured ones).
		if [ $sys = s3cachefs ] && [ "$PROFILE" = 1 ] && command -v perf >/dev/null; then
			mkdir -p "$dir/ckpt/prof"
			say "profile write-ckpt"
			profile_run write-ckpt "$CKPT_TIMEOUT" python3 "$REPO/tools/bench/fswrite.py" ckpt \
				"$dir/ckpt/prof" "$S3_PORT" "$BUCKET" ckpt/prof/ "$CKPT_SRC"/rank*.pt
		fi
		say "$sys write creates"
		creates_row $sys write "$dir/creates/$sys"
		[ $sys = s3cachefs ] && { timeout -k 5 120 umount $MNT_w || timeout 30 umount -l $MNT_w; }
	done
	# s3cachefs in write-back mode: an fsync or close returns once the
	# cache device has the file; the uploads would start 1 s later
	# (upload_delay=1), but the writer runs `s3cachectl sync` once its
	# closes returned, as a job does before it exits. (With upload_delay=0
	# the uploads ran beside the other writers' fsyncs and, CPU-bound under
	# TCG, slowed them: the closes 0.68x ext4 in a quick run, against
	# 1.03x.) Its time to the last close is measured against ext4 with
	# fsync, its time to durable in S3 (the sync included) against curl.
	if has s3cachefs; then
		rm -rf $CACHE_w && mkdir -p $CACHE_w $MNT_w
		if S3CFS_MOUNT_WAIT=20 mount_s3 "$BUCKET" $MNT_w \
			"cache=$CACHE_w,fetch_timeout=300,writable,writeback,upload_delay=1"; then
			mkdir -p "$MNT_w/ckpt/wb" "$MNT_w/creates/wb"
			say "s3cachefs-wb write ckpt"
			CKPT_SYNC="$REPO/tools/s3cachectl/s3cachectl sync" \
				ckpt_row s3cachefs-wb write "$MNT_w/ckpt/wb" "$S3_PORT" "ckpt/wb/"
			say "s3cachefs-wb write creates"
			creates_row s3cachefs-wb write "$MNT_w/creates/wb"
			timeout -k 5 300 umount $MNT_w || timeout 30 umount -l $MNT_w
		else
			rec s3cachefs-wb write ckpt fail "" "" "" "" "" "writable,writeback mount failed"
		fi
	fi
	phase_end
}

teardown() {
	local sys
	has s3cachefs && stats_s3cachefs "end"
	for sys in ${MOUNTED[@]+"${MOUNTED[@]}"}; do
		"umount_$sys"
	done
	stop_daemon
}

# The S3 server's limit: curl with nothing in between.
# curl -K: options are per transfer ("next" separates them), so each one
# carries its own signing, output and write-out.
curl_cfg_common() {
	printf 'aws-sigv4 = "aws:amz:%s:s3"\nuser = "%s:%s"\n' "$S3_REGION" "$S3_AK" "$S3_SK"
	printf 'header = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\n'
	printf 'silent\nshow-error\noutput = "/dev/null"\n'
	printf 'write-out = "%%{http_code} %%{time_total}\\n"\n'
}
CURL_U=
curl_ttfb() {
	local out
	say "curl cold ttfb"
	# bytes=0-4095: s3rver 3.7.1 answers bytes=0-0 with the whole object.
	out=$(s3_curl -r 0-4095 -o /dev/null -w '%{time_starttransfer}' "$CURL_U$RD/big/ttfb.bin" 2>&1)
	if [[ $out =~ ^[0-9.]+$ ]]; then
		us_of "$out"
		rec curl cold ttfb ok "" "" "$US" "" "$out" \
			"ranged GET of the first 4 KiB"
	else
		rec curl cold ttfb fail "" "" "" "" "" "$(echo "$out" | tail -n 1 | cut -c1-160)"
	fi
}
# Where the streams of a curl limit go: /dev/null, or with CURL_SINK=DIR
# (the "curl-file" limit) files in DIR, on the cache's NVMe ext4, as
# s3cachefs writes what it fetches (buffered writes, no fsync: the next
# drop_caches writes them back, untimed). curl_sink, before the clock
# starts, makes DIR empty and sets SYS (the row's system) and SINK_NOTE;
# sink_of I: SINK, the output of stream I (no exec: the streams start
# together).
curl_sink() {
	if [ -n "${CURL_SINK:-}" ]; then
		SYS=curl-file SINK_NOTE=", into a file on the NVMe"
		rm -rf "$CURL_SINK" && mkdir -p "$CURL_SINK"
	else
		SYS=curl SINK_NOTE=
	fi
}
sink_of() { if [ -n "${CURL_SINK:-}" ]; then SINK=$CURL_SINK/s$1; else SINK=/dev/null; fi; }
# One stream: one GET of a whole shard, cut after COLD_RUNTIME s (as the
# cold 1-job fio runs).
curl_seq1() {
	local out bytes secs SINK SYS SINK_NOTE
	curl_sink
	sink_of 0
	say "$SYS cold seq1"
	out=$(S3_CURL_TIMEOUT=$COLD_RUNTIME s3_curl -o "$SINK" -w '%{size_download} %{time_total}' \
		"$CURL_U$RD/cold/s0" 2>/dev/null)
	bytes=${out% *} secs=${out#* }
	if [ "${bytes:-0}" -gt 0 ] 2>/dev/null; then
		ms_of "$secs"
		rec $SYS cold seq1 ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 2)" \
			"" "" "" "$secs" "$((bytes >> 20)) MiB, one GET$SINK_NOTE"
	else
		rec $SYS cold seq1 fail "" "" "" "" "" "curl: $out"
	fi
	[ -z "${CURL_SINK:-}" ] || rm -rf "$CURL_SINK"
}
# Four streams at once, one per shard.
curl_seq4() {
	local i t0 secs bytes out= pids=() SINK SYS SINK_NOTE
	curl_sink
	say "$SYS cold seq4"
	t0=$(now)
	for ((i = 0; i < NSHARDS; i++)); do
		sink_of $i
		S3_CURL_TIMEOUT=$COLD_RUNTIME s3_curl -o "$SINK" -w '%{size_download}\n' \
			"$CURL_U$RD/shards/s$i" >"$LOGS/curl-seq4-$i.out" 2>/dev/null &
		pids+=($!)
	done
	wait "${pids[@]}"
	secs=$(elapsed "$t0")
	bytes=0
	for ((i = 0; i < NSHARDS; i++)); do
		read -r out <"$LOGS/curl-seq4-$i.out" 2>/dev/null
		[[ ${out:-} =~ ^[0-9]+$ ]] && bytes=$((bytes + out))
		out=
	done
	if [ "$bytes" -gt 0 ]; then
		ms_of "$secs"
		rec $SYS cold seq4 ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 2)" \
			"" "" "" "$secs" "$((bytes >> 20)) MiB, 4 parallel GETs$SINK_NOTE"
	else
		rec $SYS cold seq4 fail "" "" "" "" "" "no bytes"
	fi
	[ -z "${CURL_SINK:-}" ] || rm -rf "$CURL_SINK"
}
# The same streams as ranged GETs of one readahead window each (8 MiB),
# two in flight per stream: the request pattern of s3cachefs's FETCHes
# (the kernel's window and the next one), with no cache in between. Not a
# target: it tells the server's per-request cost from the cache's. Each
# stream reads as many ranges as its whole-object GET moved in
# COLD_RUNTIME s (at least 2), to the end; the rate is bytes over wall time.
RANGE_MB=8
metric_of() {	# SYS MODE WL: its MiB/s in this run's results, else 0
	awk -F'\t' -v s="$1" -v m="$2" -v w="$3" \
		'$1 == s && $2 == m && $3 == w && $4 == "ok" { v = $5 } END { print v + 0 }' "$RES"
}
curl_ranged() {	# WL URL...
	local wl=$1 n u i=0 t0 secs bytes out pids=() cfg
	shift
	say "curl cold $wl"
	n=$(( (${CURL_MIBS%.*} * COLD_RUNTIME + RANGE_MB - 1) / RANGE_MB ))
	[ "$n" -ge 2 ] || n=2
	[ "$n" -le $((SHARD_MB / RANGE_MB)) ] || n=$((SHARD_MB / RANGE_MB))
	for u in "$@"; do
		cfg=$LOGS/curl-$wl-$i.cfg
		python3 - "$u" "$n" "$((RANGE_MB << 20))" "$(curl_cfg_common)" >"$cfg" <<'PY'
import sys
u, n, sz, common = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
common = common.replace("%{http_code} %{time_total}", "%{size_download}")
print("\nnext\n".join('url = "%s"\nrange = "%d-%d"\n%s' % (u, k * sz, k * sz + sz - 1, common)
                      for k in range(n)))
PY
		i=$((i + 1))
	done
	t0=$(now)
	for ((i = 0; i < $#; i++)); do
		timeout -k 5 120 curl -s -Z --parallel-max 2 -K "$LOGS/curl-$wl-$i.cfg" \
			>"$LOGS/curl-$wl-$i.out" 2>"$LOGS/curl-$wl-$i.stderr" &
		pids+=($!)
	done
	wait "${pids[@]}"
	secs=$(elapsed "$t0")
	bytes=$(cat "$LOGS"/curl-"$wl"-*.out 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { b += $1 } END { print b + 0 }')
	if [ "$bytes" -gt 0 ]; then
		ms_of "$secs"
		rec curl cold "$wl" ok "$(div_fmt $((bytes * 1000)) $((MS * 1048576)) 2)" \
			"" "" "" "$secs" "$((bytes >> 20)) MiB, $RANGE_MB MiB ranged GETs, 2 in flight per stream"
	else
		rec curl cold "$wl" fail "" "" "" "" "" "no bytes"
	fi
}
curl_seq1r() {
	CURL_MIBS=$(metric_of curl cold seq1)
	curl_ranged seq1r "$CURL_U/cold/s0"
}
curl_seq4r() {
	local i u=()
	CURL_MIBS=$(( $(metric_of curl cold seq4 | cut -d. -f1) / NSHARDS + 1 ))
	for ((i = 0; i < NSHARDS; i++)); do u+=("$CURL_U/shards/s$i"); done
	curl_ranged seq4r "${u[@]}"
}
# Random 4 KiB ranged GETs, 4 in flight (curl -Z), in rounds (one curl
# process each, configs made beforehand) until RUNTIME s have passed. Rounds
# start at 16 requests and double while a round takes under 2 s, so that
# neither curl's start-up nor the last round's overrun weighs much.
curl_rand4k() {
	local lat=$LOGS/curl-rand4k.lat cfg t0 t1 secs n size=16 i=0
	say "curl cold rand4k"
	: >"$lat"
	rm -rf "$LOGS/curl-cfg"
	mkdir -p "$LOGS/curl-cfg"
	python3 - "$CURL_U$RD/coldr" "$NSHARDS" "$((SHARD_MB << 8))" "$(curl_cfg_common)" "$LOGS/curl-cfg" <<'EOF'
import random, sys
u, ns, blocks, common, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
for size in (16, 32, 64, 128, 256):
    for r in range(40 if size == 256 else 4):
        with open("%s/%03d-%02d" % (d, size, r), "w") as f:
            ops = []
            for i in range(size):
                b = random.randrange(blocks)
                ops.append('url = "%s/s%d"\nrange = "%d-%d"\n%s' % (
                    u, random.randrange(ns), b * 4096, b * 4096 + 4095, common))
            f.write("\nnext\n".join(ops) + "\n")
EOF
	t0=$(now)
	while elapsed_ms "$t0"; [ "$EMS" -lt $((RUNTIME * 1000)) ]; do
		cfg=$LOGS/curl-cfg/$(printf '%03d-%02d' $size $i)
		[ -f "$cfg" ] || break
		t1=$(now)
		timeout -k 5 120 curl -s -Z --parallel-max 4 -K "$cfg" \
			>>"$lat" 2>>"$LOGS/curl-rand4k.stderr" || break
		elapsed_ms "$t1"
		if [ $size -lt 256 ] && [ "$EMS" -lt 2000 ]; then
			size=$((size * 2)) i=0
		else
			i=$((i + 1))
		fi
	done
	secs=$(elapsed "$t0")
	n=$(grep -c '^206 ' "$lat")
	if [ "$n" -gt 0 ]; then
		rec curl cold rand4k ok "$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.2f", n * 4096 / s / 1048576 }')" \
			"$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')" \
			"$(awk '/^206 / { print $2 * 1e6 }' "$lat" | sort -n | awk '{ a[NR] = $1 } END { printf "%.0f", a[int(NR * 0.5) + 1] }')" \
			"$(awk '/^206 / { print $2 * 1e6 }' "$lat" | sort -n | awk '{ a[NR] = $1 } END { i = int(NR * 0.99) + 1; if (i > NR) i = NR; printf "%.0f", a[i] }')" \
			"$secs" "$n ranged GETs, 4 in flight"
	else
		rec curl cold rand4k fail "" "" "" "" "" "no 206 answers"
	fi
}

# Kernel stacks of the fio workers (and of s3cachefsd), every 0.2 s, with
# bash builtins only (no fork per sample).
sample_stacks() {
	local f c pids=() p line i
	for ((i = 0; i < 600; i++)); do
		if ((i % 5 == 0)); then	# fio forks its workers after a while
			pids=()
			for f in /proc/[0-9]*/comm; do
				read -r c <"$f" 2>/dev/null || continue
				case $c in fio|s3cachefsd) p=${f#/proc/}; pids+=("${p%/comm}:$c") ;; esac
			done
		fi
		for p in ${pids[@]+"${pids[@]}"}; do
			[ -r "/proc/${p%:*}/stack" ] || continue
			echo "== ${p#*:} ${p%:*}"
			while read -r line; do echo "$line"; done <"/proc/${p%:*}/stack"
		done
		snooze 0.2
	done
}

# perf_rec NAME TIMEOUT CMD...: perf record -a of the whole guest while CMD
# runs (at most TIMEOUT s), into /tmp/perf-NAME.data; profile_keep NAME
# keeps it as LOGS/perf-NAME.data, with the kernel's symbols, for the host
# to report. profile_run NAME TIMEOUT CMD...: both, around CMD.
perf_rec() {
	timeout -k 5 "$2" perf record -a -g -F 499 -e cpu-clock -o "/tmp/perf-$1.data" \
		-- "${@:3}" >/dev/null 2>"$LOGS/perf-$1.stderr"
}
profile_keep() {
	cp "/tmp/perf-$1.data" "$LOGS/" 2>/dev/null
	rm -f "/tmp/perf-$1.data"
	cat /proc/kallsyms >"$LOGS/kallsyms"
}
profile_run() {
	perf_rec "$@"
	profile_keep "$1"
}
# profile_start NAME SECONDS ... profile_stop NAME: perf record -a over the
# next SECONDS (in the background, while the caller runs a workload).
profile_start() {	# NAME SECONDS [DELAY: start that much later, not waited for]
	if [ -n "${3:-}" ]; then
		(snooze "$3"; perf_rec "$1" $(($2 + 60)) sleep "$2") &
		PERF_PID=$!
		return
	fi
	perf_rec "$1" $(($2 + 60)) sleep "$2" &
	PERF_PID=$!
	# perf takes seconds to start under TCG: the workload waits for it.
	local i
	for ((i = 0; i < 100; i++)); do
		[ -s "/tmp/perf-$1.data" ] && break
		snooze 0.1
	done
	snooze 1
}
profile_stop() {
	wait "$PERF_PID" 2>/dev/null
	profile_keep "$1"
}

# perf profiles (cpu-clock: TCG has no PMU) of s3cachefs runs, taken apart
# from the measured runs: warm sequential and random reads of the shards
# (cached), a cold sequential read of an object not fetched yet (prof/). The
# data is reported on the host (bench.sh), where symbol loading is fast.
profile_s3cachefs() {
	local m=$MNT_s3cachefs p rt=$((RUNTIME / 2 + 1))
	command -v perf >/dev/null || { say "no perf: no profiles"; return 0; }
	[ -n "${DOWN[s3cachefs]:-}" ] && return 0
	phase_start "s3cachefs: profiles"
	for p in $PROFILES; do
		drop_caches
		case $p in
		warm-seq1)   set -- FILES="$m/shards/s0:$m/shards/s1" tests/fio/seq1.fio ;;
		warm-seq4)   set -- F0="$m/shards/s0" F1="$m/shards/s1" \
				F2="$m/shards/s2" F3="$m/shards/s3" tests/fio/seq4.fio ;;
		warm-rand4k) set -- BS=4k IOENGINE=psync F0="$m/shards/s0" \
				F1="$m/shards/s1" F2="$m/shards/s2" F3="$m/shards/s3" tests/fio/randread.fio ;;
		cold-seq1)   set -- FILES="$m/prof/s0" tests/fio/seq1.fio ;;
		warm-dseq1)  set -- FILES="$m/shards/s0:$m/shards/s1" tests/fio/seq1.fio ;;
		*)	     say "no profile $p"; continue ;;
		esac
		# warm: the names checked first, as for the measured runs
		[[ $p == warm-* ]] && names_checked "$m"/shards/s{0,1,2,3}
		NAMES_NOTE=
		stats_s3cachefs "profile $p start"
		say "profile $p"
		# The jobs' direct=${DIRECT}: O_DIRECT for the d* profiles only.
		set -- DIRECT=$([[ $p == *-d* ]] && echo 1 || echo 0) "$@"
		# Where the readers wait (off-CPU, which perf's cpu-clock does
		# not see): their kernel stacks, sampled every 0.2 s.
		sample_stacks >"$LOGS/stacks-$p.txt" 2>/dev/null &
		local sampler=$!
		perf_rec "$p" $((rt + 90)) env RUNTIME=$rt TIME_BASED=0 SIZE=100% \
			"${@:1:$#-1}" fio --output-format=json \
			--output="$LOGS/fio-profile-$p.json" "${@: -1}"
		kill $sampler 2>/dev/null
		wait $sampler 2>/dev/null
		stats_s3cachefs "profile $p end"
		profile_keep "$p"
	done
	phase_end
}

# --- main -------------------------------------------------------------------
# (one function, parsed whole before it runs: editing this file during a
# run cannot change what the run does)
write_env() {
	{
		echo "mode=$MODE"
		echo "systems=$SYSTEMS"
		echo "systems_all=$ALL_SYSTEMS"
		echo "phases=$PHASES"
		echo "phases_all=$ALL_PHASES"
		echo "cold_wl=$COLD_WL"
		echo "cold_wl_full=$FULL_COLD_WL"
		echo "warm_wl=$WARM_WL"
		echo "warm_wl_full=$FULL_WARM_WL"
		echo "hot_wl=$HOT_WL"
		echo "hot_wl_full=$FULL_HOT_WL"
		echo "profile=$PROFILE"
		echo "rounds=$ROUNDS"
		echo "round_systems=$ROUND_SYSTEMS"
		echo "shards=$NSHARDS"
		echo "shard_mb=$SHARD_MB"
		echo "big_mb=$BIG_MB"
		echo "runtime=$RUNTIME"
		echo "cold_runtime=$COLD_RUNTIME"
		echo "hot_pct=$HOT_PCT"
		echo "ttfb_deadline=$TTFB_DEADLINE"
		echo "meta_ls=$META_LS"
		echo "meta_find=$((META_DIRS * META_PER_DIR))"
		echo "meta_dirs=$META_DIRS"
		echo "meta_timeout=$META_TIMEOUT"
		echo "small_n=$SMALL_N"
		echo "small_runtime=$SMALL_RUNTIME"
		echo "smallf_runtime=$SMALLF_RUNTIME"
		echo "create_runtime=$CREATE_RUNTIME"
		echo "ckpt_files=$CKPT_FILES"
		echo "bigls_n=$BIGLS_N"
		echo "dir_index=$DIR_INDEX"
		echo "hugels_n=$HUGELS_N"
		echo "bigfind_n=$((BIGLS_DIRS * BIGLS_PER_DIR))"
		echo "bigfind_dirs=$BIGLS_DIRS"
		echo "bigls_timeout=$BIGLS_TIMEOUT"
		echo "kernel=$(uname -r)"
		echo "cpus=$(nproc)"
		echo "mem_mib=$(($(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo) / 1024))"
		echo "module=$(md5sum <"$S3CFS_KO" | cut -c1-12)"
		echo "daemon=$(md5sum <"$S3CFS_DAEMON" | cut -c1-12)"
	} >"$OUT/env.txt"
	say "$(tr '\n' ' ' <"$OUT/env.txt")"
}

main() {
	mkfifo /tmp/bench-snooze 2>/dev/null && exec {SNOOZE_FD}<>/tmp/bench-snooze
	FILL_DEADLINE=$((SHARD_MB * NSHARDS + 60))	# s: 1 MiB/s (under load, fills ran at 2)


	phase_start "setup: disk, dataset, s3rver"
	if ! setup_disk; then
		rec setup - disk fail "" "" "" "" "" "cannot format/mount /dev/nvme0n1"
		phase_end
		exit 1
	fi
	# s3rver takes ~20 s to start under TCG: lay the dataset out meanwhile.
	mkdir -p "$S3_DATA"
	tests/s3server/s3server.sh start "$S3_DATA" "$S3_PORT" "$BUCKET" >"$LOGS/s3server-start.log" 2>&1 &
	srv=$!
	write_env
	make_dataset || rec setup - dataset fail "" "" "" "" "" "could not lay out the dataset"
	# While s3rver still starts: map the tools, start the fio JSON reader.
	pin_tools
	start_json_parser
	# s3cachefs' module and daemon (they do not need s3rver yet).
	if has s3cachefs; then
		load_module && start_bench_daemon
	fi
	# FUSE for the peers.
	modprobe fuse 2>/dev/null
	mounted /sys/fs/fuse/connections || mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null
	if ! wait $srv; then
		rec setup - s3rver fail "" "" "" "" "" "s3rver did not start (logs/s3server-start.log)"
		phase_end
		exit 1
	fi
	sync
	CURL_U=$S3_ENDPOINT/$BUCKET
	phase_end
	say "dataset: $(du -sh "$S3_DATA" | cut -f1) in $S3_DATA"

	[ -c /dev/fuse ] || say "no /dev/fuse: the FUSE peers will fail"
	command -v fusermount >/dev/null || say "no fusermount: the FUSE peers will fail"

	phase_start "mount"
	mount_all
	wait_pinned
	phase_end
	local ph
	for ph in $PHASES; do
		case $ph in
		cold)	 phase_cold ;;
		fill)	 phase_fill ;;
		warm)	 phase_warm ;;
		hot)	 phase_hot ;;
		profile) has s3cachefs && [ "$PROFILE" = 1 ] && profile_s3cachefs ;;
		meta)	 phase_meta ;;
		small)	 phase_small ;;
		bigls)	 phase_bigls ;;
		smallf)	 phase_smallf ;;
		ckpt)	 phase_ckpt ;;
		*)	 say "unknown phase $ph (BENCH_PHASES)" ;;
		esac
	done
	teardown

	[ -n "$PIN_PID" ] && kill "$PIN_PID" 2>/dev/null
	[ -n "$JSONP_PID" ] && kill "$JSONP_PID" 2>/dev/null
	tests/s3server/s3server.sh stop "$S3_DATA" "$S3_PORT"
	cp -f "$S3_DATA.s3server.log" "$LOGS/s3server.log" 2>/dev/null
	printf 'total\t%s\n' "$(elapsed "$T_START")" >>"$PHASES_TSV"
	dmesg >"$LOGS/dmesg.txt"
	say "done in $(elapsed "$T_START") s"
	return 0
}

# (on one line: bash has read the exit too before main runs, so that a file
# edited during the run is not read on from a stale offset afterwards)
main "$@"; exit $?
