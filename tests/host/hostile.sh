#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# hostile.sh - s3cachefsd against an S3 server that attacks it
# (tests/host/hostile_s3.py): a listing page of elements nested millions
# deep, a page larger than 1000 entries can need, ETags with CR LF or
# escape sequences in listings, HEAD and GET answers, listings that never
# end (a token cycle, the same token, new tokens with the same keys, empty
# pages, new keys without end), and objects that shrank under a reader
# (416 to a ranged GET from a server that ignores If-Match). Host only, no
# module: the daemon's --selftest drives the request handlers as netlink.c
# would (cache) and the S3 client's listing (list). Prints TAP; exit 1 if
# anything failed. Needs python3, and root for the trusted.* xattrs.
#
#   tests/host/hostile.sh [PORT]          (tests/run.sh; make -C daemon smoke)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4632}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-hostile.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
reqlog=$work/requests.jsonl
MIB=1048576

. "$repo/tests/lib/tap.sh"
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
le() { if [ "$1" -le "$2" ]; then ok "$3 ($1 <= $2)"; else not_ok "$3" "got $1, want <= $2"; fi; }

srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# The server is plain http on loopback: allowed by the flag (a daemon
# without it, an older build, runs without).
allow=()
case "$("$daemon" --help 2>&1)" in *--allow-http*) allow=(--allow-http) ;; esac

# run LOG SECONDS CMD...: CMD's stdout; its peak RSS (KiB) in LOG.rss.
run() {
	local log=$1 secs=$2
	shift 2
	python3 - "$log" "$secs" "$@" <<'PY'
import resource, subprocess, sys
log, secs, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
with open(log, "a") as err:
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, timeout=secs)
        out = p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + "TIMEOUT\n"
sys.stdout.write(out)
open(log + ".rss", "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
# cache DIR LOG SECONDS [DAEMON OPTIONS...] -- REQUEST-GROUPS...: the replies.
cache() {
	local dir=$1 log=$2 secs=$3 opts=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	run "$log" "$secs" env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE \
		AWS_SECRET_ACCESS_KEY=fake AWS_EC2_METADATA_DISABLED=true \
		"$daemon" --endpoint "http://127.0.0.1:$port" --path-style \
		"${allow[@]}" "${opts[@]}" --selftest cache hostile "" "$dir" "$@" |
		grep -E '^REPLY|^TIMEOUT' | grep -v '^REPLY mount -> 0$'
}
# selftest LOG SECONDS ARGS...: the S3 client's --selftest (list, head, get).
selftest() {
	local log=$1 secs=$2
	shift 2
	run "$log" "$secs" env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE \
		AWS_SECRET_ACCESS_KEY=fake AWS_EC2_METADATA_DISABLED=true \
		"$daemon" --endpoint "http://127.0.0.1:$port" --path-style \
		"${allow[@]}" --selftest "$@"
}
xattr() {	# FILE NAME
	python3 "$repo/tests/lib/cachemeta.py" get "$1" "$2" 2>/dev/null
}
nreqs() {	# METHOD PATH-RE: requests logged
	python3 - "$reqlog" "$1" "$2" <<'PY'
import json, re, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["method"] == sys.argv[2] and re.search(sys.argv[3], r["path"]):
        n += 1
print(n)
PY
}
no_ctl() {	# FILE: no raw control character but tab and newline
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1"
}

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
: >"$reqlog"
python3 "$here/hostile_s3.py" "$port" "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/server.out" 2>/dev/null && break
	sleep 0.1
done

# --- XML nested without end ---------------------------------------------------
c=$work/nest
mkdir -p "$c"
out=$(cache "$c" "$work/nest.log" 120 -- "list:nest")
is "$out" "REPLY list:nest -> -5 Input/output error" "nesting: a page of <a> 2.5 million deep: EIO"
check "nesting: refused for its depth (logged)" grep -q 'nested too deep' "$work/nest.log"
le "$(cat "$work/nest.log.rss")" 65536 "nesting: the daemon's peak RSS stays small (KiB; 1.7 GiB for 32 MiB before)"
out=$(selftest "$work/nest2.log" 120 list hostile nest/)
check "nesting: the S3 client's listing (s3cachectl ls) refuses it too" grep -q 'nested too deep' "$work/nest2.log"

# --- a page bigger than 1000 entries need -----------------------------------------
c=$work/big
mkdir -p "$c"
out=$(cache "$c" "$work/big.log" 120 -- "list:big")
is "$out" "REPLY list:big -> -5 Input/output error" "page size: a 9 MiB page is refused (EIO)"
check "page size: a clear message" grep -q 'LIST .*response body over 8388608 bytes (more than 1000 entries of a listing page need): refused' "$work/big.log"
is "$(ls "$c/big" 2>/dev/null | wc -l)" 0 "page size: nothing of it applied"

# --- ETags with control characters ------------------------------------------------
c=$work/ctl
mkdir -p "$c"
out=$(cache "$c" "$work/ctl.log" 60 -- "list:ctl")
is "$out" "REPLY list:ctl -> 0" "listing ETags: the listing stands"
is "$(ls "$c/ctl" 2>/dev/null | tr '\n' ' ')" "good.bin " \
	"listing ETags: entries whose ETag holds CR LF or a tab are left out"
is "$(grep -c "listing: key 'ctl/.*' skipped: ETag empty or holding control characters" "$work/ctl.log")" 2 \
	"listing ETags: each logged"
out=$(cache "$c" "$work/ctl.log" 60 --lookup-get-max 0 -- "lookup:hdr:crlf.bin")
is "$out" "REPLY lookup:hdr:crlf.bin -> -5 Input/output error" "HEAD ETag with a CR inside: the LOOKUP fails (EIO)"
out=$(cache "$c" "$work/ctl.log" 60 -- "lookup:hdr:esc.bin")
is "$out" "REPLY lookup:hdr:esc.bin -> -5 Input/output error" "GET ETag with an escape sequence: the LOOKUP fails (EIO)"
check "HEAD/GET ETags: no cache file made for either" test ! -e "$c/hdr/crlf.bin" -a ! -e "$c/hdr/esc.bin"
check "HEAD/GET ETags: refused (logged)" grep -q "response ETag .* refused" "$work/ctl.log"
check "ETags: the log holds no raw control character" no_ctl "$work/ctl.log"
out=$(cache "$c" "$work/ctl.log" 60 -- "list:hdr" "fetch:hdr/get.bin:0:$MIB")
is "$(tail -n 1 <<<"$out")" "REPLY fetch:hdr/get.bin:0:$MIB -> -5 Input/output error" \
	"FETCH whose GET and HEAD carry an ETag with an escape sequence: EIO, not a renewal"
is "$(xattr "$c/hdr/get.bin" trusted.s3cachefs.etag)" '"v1"' \
	"FETCH: the cache file keeps its ETag (the hostile one never lands)"

# --- listings that never end -----------------------------------------------------
for k in cycle:"token cycle A, B, A" same:"the same token" endless:"new tokens, the same keys" \
	 empty:"new tokens, no entries" grow:"new tokens and new keys, past --list-max-pages 30"; do
	p=${k%%:*} what=${k#*:}
	c=$work/loop-$p
	mkdir -p "$c"
	: >"$reqlog"
	t0=$(date +%s)
	max=()
	[ "$p" = grow ] && max=(--list-max-pages 30)
	out=$(cache "$c" "$work/loop-$p.log" 60 "${max[@]}" -- "list:$p")
	is "$out" "REPLY list:$p -> -5 Input/output error" "endless listing ($what): EIO"
	le "$(($(date +%s) - t0))" 20 "endless listing ($what): ends soon (seconds)"
	le "$(nreqs GET "prefix=$p")" 101 "endless listing ($what): pages asked for"
done
check "endless listing: a cycle is logged as a repeated token" grep -q 'repeats a continuation token' "$work/loop-cycle.log"
check "endless listing: so is the same token again" grep -q 'page 2 repeats a continuation token' "$work/loop-same.log"
check "endless listing: the same keys again are logged as going back" grep -q 'goes back' "$work/loop-endless.log"
check "endless listing: empty pages are logged" grep -q 'truncated pages in a row without an entry' "$work/loop-empty.log"
check "endless listing: too many pages are logged" grep -q 'more than 30 pages' "$work/loop-grow.log"
: >"$reqlog"
out=$(selftest "$work/loop-client.log" 60 list hostile cycle/)
check "endless listing: the S3 client's listing (s3cachectl ls) ends too" grep -q 'repeats a continuation token' "$work/loop-client.log"
le "$(nreqs GET "prefix=cycle")" 10 "endless listing: ... after a few pages"

# --- the object shrank under the reader: 416 -------------------------------------
c=$work/shrink
mkdir -p "$c"
out=$(cache "$c" "$work/shrink.log" 60 -- "list:shrink" \
	"fetch:shrink/a.bin:$((2 * MIB)):$MIB,fetch:shrink/same.bin:$((3 * MIB)):$MIB")
is "$(sed -n 2,3p <<<"$out" | sort | tr '\n' '|')" \
	"REPLY fetch:shrink/a.bin:$((2 * MIB)):$MIB -> -116 Stale file handle|REPLY fetch:shrink/same.bin:$((3 * MIB)):$MIB -> -116 Stale file handle|" \
	"416 (the object is shorter now): ESTALE, as for a 412, not EIO"
is "$(xattr "$c/shrink/a.bin" trusted.s3cachefs.etag) $(stat -c %s "$c/shrink/a.bin")" \
	"\"v2\" $MIB" "416: the cache file is renewed (new ETag, new size)"
is "$(xattr "$c/shrink/same.bin" trusted.s3cachefs.etag) $(stat -c %s "$c/shrink/same.bin")" \
	"\"s1\" $MIB" "416 from a server that keeps the ETag: renewed by its size"
check "416: logged as a changed object" grep -q 'range not satisfiable (the object is shorter now)' "$work/shrink.log"
out=$(cache "$c" "$work/shrink.log" 60 -- "fetch:shrink/a.bin:0:$MIB")
is "$out" "REPLY fetch:shrink/a.bin:0:$MIB -> 0" "416: the renewed file fetches"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; daemon logs:"; tail -n 5 "$work"/*.log | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
