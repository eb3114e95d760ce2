#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# resilience.sh - s3cachefsd against S3 behaviour that real fleets meet
# (tests/host/fake_s3.py): listings whose ETags are quoted differently from
# HEAD and GET (or weak), listing pages with a broken key, servers that
# ignore Range or send a wrong Content-Range, seconds of 503 SlowDown, an
# endpoint down for good, a server that always fails (the retry budget),
# and a body that trickles a byte every 20 s. Host only, no module: the
# daemon's --selftest cache drives the request handlers (ops.c) exactly as
# netlink.c would, and prints each reply and each progress report.
# Prints TAP; exit 1 if anything failed. Needs python3, and root for the
# trusted.* xattrs of the cache files.
#
#   tests/host/resilience.sh [PORT]      (make -C daemon smoke; tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4612}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-resil.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
reqlog=$work/requests.jsonl
MIB=1048576

. "$repo/tests/lib/tap.sh"
# In this shell, unlike tap.sh's (a bounded bash -c).
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
le() { if [ "$1" -le "$2" ]; then ok "$3 ($1 <= $2)"; else not_ok "$3" "got $1, want <= $2"; fi; }

srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# cache DIR ENDPOINT-PORT LOG [DAEMON OPTIONS...] -- REQUEST-GROUPS...:
# the replies of the selftest; its progress reports ("PROGRESS SPEC done
# N") and replies go to LOG.out too, with the time they came.
# A cache of s3://fake/ laid out by hand before its first MOUNT: it needs
# the format marker (a directory that holds files and has none is refused).
mark_cache() {	# DIR...
	local d
	for d in "$@"; do
		mkdir -p "$d/.s3cachefs" &&
			printf 'version=1\nbucket=fake\nprefix=\n' >"$d/.s3cachefs/format"
	done
}
cache() {
	local dir=$1 p=$2 log=$3 opts=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		"$daemon" --endpoint "http://127.0.0.1:$p" --allow-http --path-style "${opts[@]}" \
		--selftest cache fake "" "$dir" "$@" 2>>"$log" |
		while IFS= read -r line; do
			echo "$(date +%s) $line" >>"$log.out"
			echo "$line"
		done | grep '^REPLY' | grep -v '^REPLY mount -> 0$'
}
expect() {	# KEY OFFSET LENGTH: the bytes fake_s3.py serves
	python3 -c 'import sys, importlib.util
spec = importlib.util.spec_from_file_location("f", sys.argv[1]); f = importlib.util.module_from_spec(spec); spec.loader.exec_module(f)
size = f.OBJECTS[sys.argv[2]][0]
sys.stdout.buffer.write(f.body_of(sys.argv[2], size)[int(sys.argv[3]):int(sys.argv[3]) + int(sys.argv[4])])' \
		"$here/fake_s3.py" "$@"
}
cached() {	# FILE OFFSET LENGTH: the bytes in a cache file
	tail -c +$(($2 + 1)) "$1" | head -c "$3"
}
xattr() {	# FILE NAME (the object's tags: from whichever form it has)
	python3 "$repo/tests/lib/cachemeta.py" get "$1" "$2" 2>/dev/null
}
# Bytes of FILE that are data (not holes).
data_bytes() {
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY); end = os.fstat(fd).st_size; off = 0; n = 0
while off < end:
    try: d = os.lseek(fd, off, os.SEEK_DATA)
    except OSError: break
    h = os.lseek(fd, d, os.SEEK_HOLE); n += h - d; off = h
print(n)' "$1"
}
# Logged requests for paths matching RE (method GET unless given).
nreqs() {
	python3 - "$reqlog" "$1" "${2:-GET}" <<'PY'
import json, re, sys
log, rx, method = sys.argv[1:4]
n = 0
for line in open(log):
    r = json.loads(line)
    if r["method"] == method and re.search(rx, r["path"]):
        n += 1
print(n)
PY
}
now() { date +%s.%N; }
secs() { printf '%.0f' "$(echo "$(now) - $1" | bc)"; }

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
: >"$reqlog"
python3 "$here/fake_s3.py" "$port" "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/server.out" 2>/dev/null && break
	sleep 0.1
done

# --- ETags: listings that quote differently keep cached files -------------------
c=$work/etag
mkdir -p "$c/et"
mark_cache "$c"
# (Each LOOKUP asks S3 itself: a second new name in et/ would otherwise have
# the daemon list et/, and the files would get the listing's ETags.)
out=$(cache "$c" "$port" "$work/etag.log" --lookup-list-pages 0 -- \
	"lookup:et:quoted.bin,lookup:et:weak.bin" \
	"fetch:et/quoted.bin:0:$MIB,fetch:et/weak.bin:0:$MIB")
is "$(grep -c -- '-> 0$' <<<"$out")" 4 "etag: LOOKUP (HEAD, quoted ETag) and FETCH of two files"
d0q=$(data_bytes "$c/et/quoted.bin") d0w=$(data_bytes "$c/et/weak.bin")
is "$d0q $d0w" "$MIB $MIB" "etag: one chunk of each cached"
out=$(cache "$c" "$port" "$work/etag.log" -- "list:et")
is "$out" "REPLY list:et -> 0" "etag: LIST whose ETags are unquoted or W/"
is "$(data_bytes "$c/et/quoted.bin") $(data_bytes "$c/et/weak.bin")" "$MIB $MIB" \
	"etag: the listing kept both cached files (and their chunks)"
is "$(xattr "$c/et/quoted.bin" trusted.s3cachefs.etag)" '"v1-etq"' \
	"etag: the file keeps the ETag as HEAD gave it"
: >"$reqlog"
out=$(cache "$c" "$port" "$work/etag.log" -- "fetch:et/quoted.bin:$MIB:$MIB")
is "$out" "REPLY fetch:et/quoted.bin:$MIB:$MIB -> 0" "etag: the next chunk fetches"
check "etag: bytes right" cmp <(cached "$c/et/quoted.bin" 0 $((MIB + 9))) <(expect et/quoted.bin 0 $((MIB + 9)))
# A file made by a listing (unquoted): the GET answers quoted, no ESTALE.
c2=$work/etag2
mkdir -p "$c2"
: >"$reqlog"
out=$(cache "$c2" "$port" "$work/etag.log" -- "list:et" "fetch:et/quoted.bin:0:$MIB")
is "$out" "REPLY list:et -> 0
REPLY fetch:et/quoted.bin:0:$MIB -> 0" "etag: a file listed unquoted fetches from a quoted GET"
is "$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["method"] == "GET" and r["path"].endswith("/et/quoted.bin"): print(r["headers"].get("if-match"))' "$reqlog")" \
	"v1-etq" "etag: If-Match is sent as the server gave it (the listing's, unquoted)"
is "$(nreqs '/et/quoted.bin$' HEAD)" 0 "etag: no HEAD (the GET was not taken for a changed object)"

# --- one bad key does not fail its listing page -------------------------------
c=$work/badkeys
mkdir -p "$c"
out=$(cache "$c" "$port" "$work/badkeys.log" -- "list:bad")
is "$out" "REPLY list:bad -> 0" "bad keys: the listing of a page with five broken entries succeeds"
is "$(cd "$c/bad" 2>/dev/null && ls | tr '\n' ' ')" "good1.bin good2.bin " \
	"bad keys: the good entries are there, the broken ones are not"
is "$(xattr "$c/bad/good2.bin" trusted.s3cachefs.etag) $(stat -c %s "$c/bad/good2.bin")" \
	'"v1-g2" 200' "bad keys: a good entry has its ETag and size"
is "$(grep -c 'listing: key .* skipped' "$work/badkeys.log")" 5 "bad keys: each broken key logged"
check "bad keys: control characters in a logged key are escaped" \
	grep -qF "key 'bad/ctl\x1b[31m.bin' skipped: bad Size 'nope'" "$work/badkeys.log"
check "bad keys: no raw escape character in the log" bash -c "! grep -q \$'\\x1b' '$work/badkeys.log'"

# --- servers that ignore Range, or label a range wrongly ----------------------------
c=$work/range
mkdir -p "$c"
size=$((4 * MIB + 7))
# The sizes from HEAD: what the GETs below are vetted against.
cache "$c" "$port" "$work/range.log" --lookup-get-max 0 -- "lookup::whole.bin,lookup::crstart.bin,lookup::crend.bin,lookup::crtotal.bin,lookup::wholelen.bin" >/dev/null
: >"$reqlog"
# One daemon, two groups of requests one after the other (it remembers
# which objects came whole while it runs).
out=$(cache "$c" "$port" "$work/range.log" -- "fetch:whole.bin:$MIB:$MIB" \
	"fetch:whole.bin:0:$MIB,fetch:whole.bin:$((2 * MIB)):$MIB,fetch:whole.bin:$((4 * MIB)):$MIB")
is "$(head -n 1 <<<"$out")" "REPLY fetch:whole.bin:$MIB:$MIB -> 0" "Range ignored (200): the FETCH succeeds"
is "$(data_bytes "$c/whole.bin")" "$size" "Range ignored: the whole body is kept, not just the chunk asked for"
check "Range ignored: every byte right" cmp "$c/whole.bin" <(expect whole.bin 0 "$size")
is "$(tail -n +2 <<<"$out" | grep -c -- '-> 0$')" 3 "Range ignored: the other chunks are answered"
is "$(nreqs '/whole.bin$')" 1 "Range ignored: from the cache file, one GET in all (not one whole object per chunk)"
for k in crstart:"start" crend:"end" crtotal:"total"; do
	f=${k%%:*}.bin what=${k#*:}
	: >"$reqlog"
	out=$(cache "$c" "$port" "$work/range.log" -- "fetch:$f:$MIB:$MIB")
	is "$out" "REPLY fetch:$f:$MIB:$MIB -> -5 Input/output error" "Content-Range with a wrong $what: EIO"
	is "$(data_bytes "$c/$f")" 0 "... nothing of it cached"
done
check "Content-Range: the mismatch is logged" \
	grep -q 'crend.bin: asked for bytes 1048576-2097151 of 2097152, got Content-Range 1048576-2093055/2097152' "$work/range.log"
out=$(cache "$c" "$port" "$work/range.log" -- "fetch:wholelen.bin:0:$MIB")
is "$out" "REPLY fetch:wholelen.bin:0:$MIB -> -5 Input/output error" "200 shorter than the object: EIO"
is "$(data_bytes "$c/wholelen.bin")" 0 "... nothing of it cached"

# --- retries: a brown-out, a dead endpoint, the retry budget ---------------------
# Three runs at once (each a daemon of its own): the time is the longest.
c=$work/retry
mkdir -p "$c/slow"
mark_cache "$c"
# Their metadata by HEAD: the faults are the GETs'.
cache "$c" "$port" "$work/slow.log" --lookup-get-max 0 -- "lookup:slow:s0.bin,lookup:slow:s1.bin,lookup::always500.bin,lookup::ok.bin,lookup::trickle.bin" >/dev/null
curl -sf -o /dev/null "http://127.0.0.1:$port/_ctl?slowdown=10"
t0=$(now)
(
	spec=
	for k in s0 s1; do
		for i in 0 1; do spec+="fetch:slow/$k.bin:$((i * MIB)):$MIB,"; done
	done
	cache "$c" "$port" "$work/slow.log" -- "${spec%,}" >"$work/slow.out"
	secs "$t0" >"$work/slow.secs"
) &
p1=$!
(
	# Nothing listens on port + 1: every attempt is refused.
	cache "$c" $((port + 1)) "$work/dead.log" -- "fetch:ok.bin:0:$MIB" >"$work/dead.out"
	secs "$t0" >"$work/dead.secs"
) &
p2=$!
(
	spec=
	for ((i = 0; i < 40; i++)); do spec+="fetch:always500.bin:$((i * MIB)):$MIB,"; done
	cache "$c" "$port" "$work/budget.log" -- "${spec%,}" >"$work/budget.out"
	secs "$t0" >"$work/budget.secs"
) &
p3=$!
(
	# One byte every 20 s: too slow (min_rate over stall_timeout).
	cache "$c" "$port" "$work/trickle.log" -- "fetch:trickle.bin:0:$MIB" >"$work/trickle.out"
	secs "$t0" >"$work/trickle.secs"
) &
p4=$!
wait $p1 $p2 $p3 $p4

is "$(grep -c -- '-> 0$' "$work/slow.out")" 4 "10 s of 503 SlowDown: every FETCH succeeds ($(cat "$work/slow.secs") s)"
check "SlowDown: bytes right" cmp <(cached "$c/slow/s1.bin" 0 $((2 * MIB))) <(expect slow/s1.bin 0 $((2 * MIB)))
le "$(cat "$work/slow.secs")" 45 "SlowDown: done soon after the 10 s (within the retry bound)"
check "SlowDown: the bucket's concurrency was lowered" grep -q 'throttled (HTTP 503): . request.* in flight at most' "$work/slow.log"
is "$(cat "$work/dead.out")" "REPLY fetch:ok.bin:0:$MIB -> -5 Input/output error" "endpoint down for good: EIO"
le "$(cat "$work/dead.secs")" 55 "endpoint down: within the documented bound (retry_max_time 35 + stall_timeout 20)"
is "$(data_bytes "$c/ok.bin")" 0 "endpoint down: nothing cached"
check "endpoint down: retried, then given up (logged)" grep -q 'giving up after .* attempts' "$work/dead.log"
is "$(grep -c ' PROGRESS ' "$work/dead.log.out")" 0 \
	"endpoint down: no progress report while no byte moves (the kernel's fetch_timeout stays armed)"
is "$(cat "$work/trickle.out")" "REPLY fetch:trickle.bin:0:$MIB -> -5 Input/output error" \
	"trickle (a byte every 20 s): EIO, not a read blocked for ever"
le "$(cat "$work/trickle.secs")" 58 "trickle: within the bound (retry_max_time 35 + stall_timeout 20, and slack)"
check "trickle: dropped as too slow and retried" grep -q 'trickle.bin: .*too slow.*retrying' "$work/trickle.log"
is "$(data_bytes "$c/trickle.bin")" 0 "trickle: nothing cached"
is "$(grep -c -- '-> -5 Input/output error$' "$work/budget.out")" 40 "500 always: all 40 FETCHes fail with EIO"
le "$(nreqs '/always500.bin$')" 150 "500 always: the retry budget bounds the load (40 requests, 100 retries; 400 without a budget)"
check "500 always: 'retry budget exhausted' logged" grep -q 'retry budget exhausted' "$work/budget.log"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; daemon logs:"; tail -n 20 "$work"/*.log | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
