#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fault_smoke.sh - s3cachefsd's FETCH path against fake_s3.py, a server that
# misbehaves on purpose: 503s, bodies cut short, Range ignored, 412 on a
# changed object, an ETag that changed without a 412 (as s3rver does), 403,
# 404; a 20 MiB range (streamed in pieces); what goes on the wire (Range,
# If-Match, signed headers) and connection reuse; LOOKUPs of new names that
# GET the object's first bytes (a small object arrives whole) against the
# same misbehaviours. Host only, no module.
# Prints TAP; exit 1 if anything failed.
#
#   tests/host/fault_smoke.sh [PORT]      (make -C daemon smoke)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4598}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-fault.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
reqlog=$work/requests.jsonl
c=$work/cache
MIB=1048576

. "$repo/tests/lib/tap.sh"
# In this shell, unlike tap.sh's (a bounded bash -c).
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# Signed, so the signing headers can be checked on the wire.
run() {
	env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		"$daemon" --endpoint "http://127.0.0.1:$port" --allow-http "$@"
}
cache() {
	run "${opts[@]}" --selftest cache fake "" "$c" "$@" 2>>"$work/log" |
		grep '^REPLY' | grep -v '^REPLY mount -> 0$'
}
expect() {	# KEY OFFSET LENGTH: the bytes fake_s3.py serves
	python3 -c 'import sys, importlib.util
spec = importlib.util.spec_from_file_location("f", sys.argv[1]); f = importlib.util.module_from_spec(spec); spec.loader.exec_module(f)
size = f.OBJECTS[sys.argv[2]][0]
sys.stdout.buffer.write(f.body_of(sys.argv[2], size)[int(sys.argv[3]):int(sys.argv[3]) + int(sys.argv[4])])' \
		"$here/fake_s3.py" "$@"
}
cached() {	# KEY OFFSET LENGTH: the bytes in the cache file
	tail -c +$(($2 + 1)) "$c/$1" | head -c "$3"
}
xattr() {	# FILE NAME (the object's tags: from whichever form it has)
	python3 "$repo/tests/lib/cachemeta.py" get "$1" "$2" 2>/dev/null
}
set_etag() {
	python3 "$repo/tests/lib/cachemeta.py" set "$1" etag "$2"
}
first_data() {
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try: print(os.lseek(fd, 0, os.SEEK_DATA))
except OSError: print("none")' "$1"
}
# "missing" when the first chunk of FILE has a hole (the kernel then sees
# the chunk as missing and fetches it again), else "present". The daemon
# writes bodies in 128 KiB pieces, so a cut body may leave correct leading
# pieces behind, never a whole chunk.
first_chunk() {
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("missing" if os.lseek(fd, 0, os.SEEK_HOLE) < int(sys.argv[2]) else "present")' "$1" "$MIB"
}
# Field F of the logged requests for KEY (method GET unless given).
reqs() {
	python3 - "$reqlog" "$1" "$2" "${3:-GET}" <<'EOF'
import json, sys
log, key, field, method = sys.argv[1:5]
for line in open(log):
    r = json.loads(line)
    if r["method"] != method or not r["path"].split("?")[0].endswith("/" + key):
        continue
    v = r.get(field, r["headers"].get(field, "-"))
    print(v)
EOF
}

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
mkdir -p "$c"
: >"$reqlog"
python3 "$here/fake_s3.py" "$port" "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/server.out" 2>/dev/null && break
	sleep 0.1
done
# Three attempts (the default is ten, over up to a minute): quick, and the
# counts below.
opts=(--path-style --retry-attempts 3)

keys="ok.bin flaky.bin short.bin short2.bin norange.bin changed.bin lying.bin denied.bin gone.bin big.bin"
spec=$(for k in $keys; do printf 'lookup::%s,' "$k"; done)
# A HEAD each (the faults below are the GETs').
out=$(opts+=(--lookup-get-max 0); cache "${spec%,}")
is "$(grep -c -- '-> 0$' <<<"$out")" 10 "LOOKUP: ten objects from HEAD"

# --- normal ranged GETs, checked on the wire -----------------------------------
: >"$reqlog"
out=$(cache "fetch:ok.bin:0:$MIB,fetch:ok.bin:$MIB:$MIB,fetch:ok.bin:$((2 * MIB)):$((2 * MIB))")
is "$(grep -c -- '-> 0$' <<<"$out")" 3 "FETCH: three ranges at once"
check "FETCH: bytes equal the object" cmp "$c/ok.bin" <(expect ok.bin 0 $((3 * MIB + 5)))
is "$(reqs ok.bin range | sort | tr '\n' ' ')" \
	"bytes=0-1048575 bytes=1048576-2097151 bytes=2097152-3145732 " \
	"wire: explicit first-last ranges, clamped to the object"
is "$(reqs ok.bin if-match | sort -u)" '"v1-ok"' "wire: If-Match carries the cached ETag"
is "$(reqs ok.bin x-amz-content-sha256 | sort -u)" UNSIGNED-PAYLOAD "wire: UNSIGNED-PAYLOAD"
check "wire: Range and If-Match are signed" \
	grep -q 'SignedHeaders=host;if-match;range;x-amz-content-sha256;x-amz-date' \
	<(reqs ok.bin authorization)

# --- retries ----------------------------------------------------------------------
: >"$reqlog"
out=$(cache "fetch:flaky.bin:0:$MIB")
is "$out" "REPLY fetch:flaky.bin:0:$MIB -> 0" "503 twice: the third attempt succeeds"
is "$(reqs flaky.bin status | tr '\n' ' ')" "503 503 206 " "503 twice: three GETs"
check "503: the retry is logged with the status" grep -q 'GET flaky.bin: HTTP 503 SlowDown (request id RID503-1); retrying' "$work/log"
check "503: bytes right after retries" cmp "$c/flaky.bin" <(expect flaky.bin 0 $MIB)

: >"$reqlog"
out=$(cache "fetch:short.bin:0:$MIB")
is "$out" "REPLY fetch:short.bin:0:$MIB -> -5 Input/output error" "short body: EIO"
is "$(reqs short.bin status | wc -l)" 3 "short body: three attempts"
is "$(first_chunk "$c/short.bin")" missing "short body: the chunk is not written whole (still missing)"

: >"$reqlog"
out=$(cache "fetch:short2.bin:0:$MIB")
is "$out" "REPLY fetch:short2.bin:0:$MIB -> -5 Input/output error" \
	"206 whose Content-Length is half its Content-Range: EIO"
is "$(reqs short2.bin status | wc -l)" 1 "short 206: an error, not data: not retried"
check "short 206: logged" grep -qE 'short2.bin: asked for bytes 0-1048575 of 1048576, got Content-Range 0-1048575/1048576, Content-Length 524288' "$work/log"
is "$(first_chunk "$c/short2.bin")" missing "short 206: the chunk is not written whole (still missing)"

: >"$reqlog"
out=$(cache "fetch:norange.bin:$MIB:$MIB,fetch:norange.bin:$((2 * MIB)):$MIB")
is "$(grep -c -- '-> 0$' <<<"$out")" 2 "Range ignored (200): still the right bytes"
check "Range ignored: middle chunk" cmp <(cached norange.bin $MIB $MIB) <(expect norange.bin $MIB $MIB)
check "Range ignored: tail" cmp <(cached norange.bin $((2 * MIB)) 7) <(expect norange.bin $((2 * MIB)) 7)
is "$(stat -c %s "$c/norange.bin")" $((2 * MIB + 7)) "Range ignored: size kept"

# --- a changed object ---------------------------------------------------------
set_etag "$c/changed.bin" '"v1-changed"'
: >"$reqlog"
out=$(cache "fetch:changed.bin:0:$MIB")
is "$out" "REPLY fetch:changed.bin:0:$MIB -> -116 Stale file handle" "412: ESTALE"
is "$(reqs changed.bin if-match)" '"v1-changed"' "412: If-Match was the old ETag"
is "$(reqs changed.bin method HEAD | wc -l)" 1 "412: then a HEAD"
is "$(xattr "$c/changed.bin" trusted.s3cachefs.etag)" '"v2-changed"' "412: the lower file carries the new ETag"

set_etag "$c/lying.bin" '"v1-lying"'
out=$(cache "fetch:lying.bin:0:$MIB")
is "$out" "REPLY fetch:lying.bin:0:$MIB -> -116 Stale file handle" \
	"ETag changed without 412: ESTALE from the response ETag"
is "$(xattr "$c/lying.bin" trusted.s3cachefs.etag) $(first_data "$c/lying.bin")" '"v2-lying" none' \
	"ETag changed: new lower file, none of the other version's bytes"

# --- errors -----------------------------------------------------------------------
out=$(cache "fetch:denied.bin:0:$MIB")
is "$out" "REPLY fetch:denied.bin:0:$MIB -> -13 Permission denied" "403: EACCES"
check "403: logged with code and request id" \
	grep -q 'GET s3://fake/denied.bin: HTTP 403 AccessDenied: Access Denied (request id RID403)' "$work/log"
out=$(cache "fetch:gone.bin:0:$MIB")
is "$out" "REPLY fetch:gone.bin:0:$MIB -> -2 No such file or directory" "404: ENOENT"

# --- a range bigger than one in-memory piece ------------------------------------
out=$(cache "fetch:big.bin:0:$((21 * MIB))")
is "$out" "REPLY fetch:big.bin:0:$((21 * MIB)) -> 0" "20 MiB range: streamed in 8 MiB pieces"
check "20 MiB range: bytes equal" cmp "$c/big.bin" <(expect big.bin 0 $((20 * MIB + 3)))

# --- identical requests in flight share the work -----------------------------------
: >"$reqlog"
out=$(cache "fetch:big.bin:$((5 * MIB)):$MIB,fetch:big.bin:$((5 * MIB)):$MIB,lookup::ok.bin,lookup::ok.bin")
is "$(grep -c -- '-> 0$' <<<"$out")" 4 "coalescing: two FETCHes and two LOOKUPs, all answered"
is "$(reqs big.bin status | wc -l) $(reqs ok.bin status HEAD | wc -l)" "1 1" \
	"coalescing: one GET and one HEAD on the wire"

# --- connections ------------------------------------------------------------------
: >"$reqlog"
cache "fetch:ok.bin:0:$MIB" "fetch:ok.bin:$MIB:$MIB" "fetch:ok.bin:$((2 * MIB)):$MIB" >/dev/null
is "$(reqs ok.bin conn | sort -u | wc -l)" 1 "keep-alive: sequential requests share one connection"
: >"$reqlog"
opts=(--path-style --retry-attempts 3 --max-inflight 1)
out=$(cache "fetch:big.bin:0:$MIB,fetch:big.bin:$MIB:$MIB,fetch:big.bin:$((2 * MIB)):$MIB,fetch:big.bin:$((3 * MIB)):$MIB")
is "$(grep -c -- '-> 0$' <<<"$out")" 4 "--max-inflight 1: four requests queue and finish"
is "$(reqs big.bin conn | sort -u | wc -l)" 1 "--max-inflight 1: one connection at a time"

# --- LOOKUP of a name new to the cache: a GET of the first bytes ------------------
# "all" if FILE is data from 0 to its size (every chunk present), else "sparse".
all_data() {
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
print("all" if size and os.lseek(fd, 0, os.SEEK_HOLE) >= size else "sparse")' "$1"
}
opts=(--path-style --retry-attempts 3)
: >"$reqlog"
lk="small.bin empty.bin norange.bin crwrong.bin big.bin bignorange.bin flaky.bin"
spec=$(for k in $lk; do printf 'lookup:lk:%s,' "$k"; done)
out=$(cache "${spec}lookup:lk:denied.bin")
is "$(grep -c -- '-> 0$' <<<"$out")" 7 "LOOKUP GET: seven new names found"
is "$(grep denied <<<"$out")" "REPLY lookup:lk:denied.bin -> -13 Permission denied" "LOOKUP GET: 403: EACCES"
is "$(reqs lk/small.bin range) $(reqs lk/small.bin status HEAD | wc -l)" "bytes=0-262143 0" \
	"LOOKUP GET: the first 256 KiB asked for, no HEAD"
check "LOOKUP GET: a small object arrives whole" cmp "$c/lk/small.bin" <(expect lk/small.bin 0 $((100 * 1024 + 3)))
is "$(all_data "$c/lk/small.bin") $(xattr "$c/lk/small.bin" trusted.s3cachefs.etag)" 'all "v1-lks"' \
	"LOOKUP GET: ... as data (its chunk present) under its ETag"
is "$(reqs lk/empty.bin status | tr '\n' ' ')/$(reqs lk/empty.bin status HEAD)" "416 /200" \
	"LOOKUP GET: a zero-byte object (416): then a HEAD"
is "$(stat -c %s "$c/lk/empty.bin") $(xattr "$c/lk/empty.bin" trusted.s3cachefs.etag)" '0 "v1-lke"' \
	"LOOKUP GET: ... an empty file under its ETag"
is "$(reqs lk/norange.bin status)/$(reqs lk/norange.bin status HEAD | wc -l) $(all_data "$c/lk/norange.bin")" "200/0 all" \
	"LOOKUP GET: Range ignored, the whole small object: kept"
check "LOOKUP GET: ... its bytes" cmp "$c/lk/norange.bin" <(expect lk/norange.bin 0 $((100 * 1024)))
is "$(reqs lk/crwrong.bin status HEAD | wc -l) $(all_data "$c/lk/crwrong.bin")" "1 sparse" \
	"LOOKUP GET: a Content-Range that disagrees: nothing kept, a HEAD instead"
check "LOOKUP GET: ... logged" grep -q 'GET s3://fake/lk/crwrong.bin (first 262144 bytes): Content-Range does not match the body; asking with a HEAD' "$work/log"
is "$(reqs lk/big.bin status)/$(reqs lk/big.bin status HEAD | wc -l) $(stat -c %s "$c/lk/big.bin") $(all_data "$c/lk/big.bin")" \
	"206/0 $((MIB + 1)) sparse" "LOOKUP GET: a larger object: its size from Content-Range, no data kept"
is "$(reqs lk/bignorange.bin status)/$(reqs lk/bignorange.bin status HEAD | wc -l) $(stat -c %s "$c/lk/bignorange.bin") $(all_data "$c/lk/bignorange.bin")" \
	"200/0 $((2 * MIB + 7)) sparse" "LOOKUP GET: Range ignored on a larger object: cut short, its size from Content-Length"
is "$(reqs lk/flaky.bin status | tr '\n' ' ')$(all_data "$c/lk/flaky.bin")" "503 503 206 all" \
	"LOOKUP GET: 503 twice: retried, then whole"
: >"$reqlog"
out=$(cache "lookup:lk:small.bin")
is "$out/$(reqs lk/small.bin status | wc -l)/$(reqs lk/small.bin status HEAD)" \
	"REPLY lookup:lk:small.bin -> 0/0/200" "LOOKUP GET: a name the cache has: a HEAD, no GET"
is "$(all_data "$c/lk/small.bin")" all "LOOKUP GET: ... its data kept"
rm -f "$c/lk/norange.bin"
: >"$reqlog"
out=$(opts+=(--lookup-get-max 0); cache "lookup:lk:norange.bin")
is "$out/$(reqs lk/norange.bin status | wc -l)/$(reqs lk/norange.bin status HEAD)" \
	"REPLY lookup:lk:norange.bin -> 0/0/200" "LOOKUP GET: --lookup-get-max 0: a HEAD"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; daemon log:"; tail -n 30 "$work/log" | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
