#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# s3rver_smoke.sh - s3cachefsd against the S3 test server, on the host,
# without the kernel module: the S3 client (--selftest list/head/get; the
# write requests through tests/host/s3call: PUT, DELETE, multipart) and
# the request handlers (--selftest cache: MOUNT, LIST, LOOKUP, FETCH into
# a real cache directory). Prints TAP; exit 1 if anything failed.
#
#   tests/host/s3rver_smoke.sh [PORT]      (make -C daemon smoke)
#
# Needs: daemon/s3cachefsd and tests/host/s3call built (make -C daemon
# test), s3rver (tests/s3server, `npm ci` there),
# root (trusted.* xattrs) and O_DIRECT on $TMPDIR's filesystem.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4599}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-smoke.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
export S3_PORT=$port S3_DATA=$work/s3data
# shellcheck source=../lib/s3.sh
. "$repo/tests/lib/s3.sh"	# clears AWS_* from the environment

. "$repo/tests/lib/tap.sh"
# In this shell, unlike tap.sh's (a bounded bash -c).
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

cleanup() {
	"$repo/tests/s3server/s3server.sh" stop "$S3_DATA" "$port" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

sd() {
	"$daemon" --endpoint "$S3_ENDPOINT" --allow-http --path-style --anonymous ${SD_OPTS:-} "$@"
}
# One --selftest cache run; REPLY lines on stdout, the log in $work/log.
cache() {
	local dir=$1 prefix=$2
	shift 2
	sd --selftest cache bkt "$prefix" "$dir" "$@" 2>>"$work/log" |
		grep '^REPLY' | grep -v '^REPLY mount -> 0$'
}
xattr() {	# FILE NAME (the object's tags: from whichever form it has)
	python3 "$repo/tests/lib/cachemeta.py" get "$1" "$2" 2>/dev/null
}
first_data() {
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try: print(os.lseek(fd, 0, os.SEEK_DATA))
except OSError: print("none")' "$1"
}
# The first hole at or after offset $2 (default 0).
first_hole() {
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY); print(os.lseek(fd, int(sys.argv[2]), os.SEEK_HOLE))' "$1" "${2:-0}"
}

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
if ! "$repo/tests/s3server/s3server.sh" start "$S3_DATA" "$port" bkt >"$work/server.out" 2>&1; then
	echo "Bail out! s3rver does not start: $(tail -n 3 "$work/server.out")"
	exit 1
fi

# --- fixtures ---------------------------------------------------------------
head -c $((3 * 1048576 + 123)) /dev/urandom >"$work/big.bin"
head -c $((2 * 1048576)) /dev/urandom >"$work/big2.bin"
echo hello >"$work/small.txt"
: >"$work/empty"
s3_put bkt data/big.bin "$work/big.bin"
s3_put bkt data/small.txt "$work/small.txt"
s3_put bkt data/sub/deep.txt "$work/small.txt"
s3_put bkt "data/a b+c&d.txt" "$work/small.txt"
s3_put bkt "data/été ሴ.txt" "$work/small.txt"
s3_put bkt data/marker/ "$work/empty"
s3_put bkt data/clash "$work/small.txt"
s3_put bkt data/clash/inner "$work/small.txt"
s3_put bkt data/.s3cachefs "$work/small.txt"
s3_put bkt data/.s3cfs.evil "$work/small.txt"
s3_put bkt other/empty0 "$work/empty"
s3_put bkt other/tiny.txt "$work/small.txt"
s3_seed_many bkt many/ 10500
for d in d1 d2 d3; do s3_put bkt "many/$d/x" "$work/small.txt"; done
big_etag="\"$(md5sum <"$work/big.bin" | cut -d' ' -f1)\""

# --- the S3 client ------------------------------------------------------------
out=$(sd --selftest list bkt data/ 2>>"$work/log")
is "$(grep -c '^OBJ' <<<"$out") $(grep -c '^PRE' <<<"$out")" "7 3" \
	"list: 7 objects, 3 common prefixes under data/" || diag "$out"
check "list: entity-escaped key decoded" grep -qF 'OBJ data/a b+c&d.txt 6' <<<"$out"
check "list: UTF-8 key" grep -qF 'OBJ data/été ሴ.txt 6' <<<"$out"
check "list: quoted ETag as S3 sent it" grep -qF "OBJ data/big.bin 3145851 $big_etag" <<<"$out"
out=$(sd --selftest list bkt many/ 2>>"$work/log")
is "$(tail -n 1 <<<"$out")" "TOTAL 10500 objects, 3 prefixes, 11 pages" \
	"list: 10500 objects paginated (11 pages of 1000)"
out=$(sd --selftest head bkt data/big.bin 2>>"$work/log")
is "$(sed -n 1,2p <<<"$out" | tr '\n' ' ')" "ETAG $big_etag SIZE 3145851 " "head: ETag and size"
sd --selftest get bkt data/big.bin 1048570 100000 2>>"$work/log" >"$work/range"
check "get: explicit range returns exactly those bytes" \
	cmp "$work/range" <(tail -c +1048571 "$work/big.bin" | head -c 100000)
sd --selftest head bkt data/nothere >/dev/null 2>>"$work/log"
is "$?" 1 "head: a missing key fails"
AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_SESSION_TOKEN=tok \
	"$daemon" --endpoint "$S3_ENDPOINT" --allow-http --selftest list bkt data/sub/ \
	>"$work/signed" 2>>"$work/log"
check "list: signed requests (SigV4, session token) work" grep -q '^OBJ data/sub/deep.txt' "$work/signed"

# --- the write requests of lib/client.c (tests/host/s3call) -------------------
# s3rver has no conditional writes: those are write_smoke.sh's (fake_s3.py).
wr() { "${S3CALL:-$here/s3call}" --endpoint "$S3_ENDPOINT" --anonymous "$@" 2>>"$work/log"; }
md5() { md5sum | cut -d' ' -f1; }
range() { tail -c +$(($2 + 1)) "$1" | head -c "$3"; }	# FILE OFFSET LENGTH
head -c $((6 * 1048576 + 5)) /dev/urandom >"$work/w.bin"
out=$(wr put bkt w/put.bin "$work/w.bin" 1000 1048577)
is "$out" "ETAG \"$(range "$work/w.bin" 1000 1048577 | md5)\"" "put: a file range at an offset, the MD5 ETag"
wr get bkt w/put.bin >"$work/w.got"
check "put: GET gives the range back" cmp "$work/w.got" <(range "$work/w.bin" 1000 1048577)
is "$(wr put bkt w/empty "$work/empty" 0 0)" 'ETAG "d41d8cd98f00b204e9800998ecf8427e"' "put: an empty object"
is "$(wr head bkt w/empty)" 'ETAG "d41d8cd98f00b204e9800998ecf8427e"
SIZE 0' "put: ... HEAD finds it, 0 bytes"
is "$(wr delete bkt w/put.bin)" "" "delete: done"
is "$(wr head bkt w/put.bin)" "ERR -2 ENOENT 404 -" "delete: then HEAD is 404"
# A PUT whose client goes away after 100 KB of its 1 MB body, then a PUT
# and a GET of the same key: the first must not hold the key for ever.
python3 - "$port" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"PUT /bkt/w/cut.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          b"Content-Length: 1048576\r\n\r\n" + b"x" * 102400)
time.sleep(0.5)
s.close()
PY
out=$(S3CALL_TIMEOUT=20 timeout 30 "${S3CALL:-$here/s3call}" --endpoint "$S3_ENDPOINT" --anonymous \
	put bkt w/cut.bin "$work/w.bin" 0 4096 2>>"$work/log")
is "$out" "ETAG \"$(range "$work/w.bin" 0 4096 | md5)\"" "put: a key whose last PUT's client went away mid-body is written again"
check "... and read back" cmp <(timeout 30 "${S3CALL:-$here/s3call}" --endpoint "$S3_ENDPOINT" --anonymous get bkt w/cut.bin 2>>"$work/log") <(range "$work/w.bin" 0 4096)
up=$(wr mpu-create bkt w/mp.bin)
up=${up#UPLOAD }
e1=$(wr mpu-part bkt w/mp.bin "$up" 1 "$work/w.bin" 0 $((5 * 1048576)))
e2=$(wr mpu-part bkt w/mp.bin "$up" 2 "$work/w.bin" $((5 * 1048576)) $((1048576 + 5)))
out=$(wr mpu-complete bkt w/mp.bin "$up" "1=${e1#ETAG }" "2=${e2#ETAG }")
# (s3rver's ETag of it is not S3's MD5 of the parts' MD5s: write_smoke.sh
# checks that one.)
is "${out%% *}" ETAG "multipart: two parts, create, upload, complete"
wr get bkt w/mp.bin >"$work/w.got"
check "multipart: GET gives the whole file back" cmp "$work/w.got" "$work/w.bin"

# --- the request handlers: LIST ---------------------------------------------
c=$work/cache
mkdir -p "$c"
out=$(cache "$c" data/ list: list:sub list:marker)
is "$out" "REPLY list: -> 0
REPLY list:sub -> 0
REPLY list:marker -> 0" "LIST: root, sub and the marker directory"
is "$(cat "$c/.s3cachefs/format")" "version=1
bucket=bkt
prefix=data/" "MOUNT: format marker written"
is "$(cd "$c" && ls -A | tr '\n' '|')" ".s3cachefs|a b+c&d.txt|big.bin|clash|marker|small.txt|sub|été ሴ.txt|" \
	"LIST: lower entries are exactly the listing (dir wins, reserved names skipped)"
check "LIST: clash is a directory (directory wins over the object)" test -d "$c/clash"
is "$(stat -c %s "$c/big.bin")" 3145851 "LIST: lower file has the object's size"
is "$(xattr "$c/big.bin" trusted.s3cachefs.etag)" "$big_etag" "LIST: ETag xattr"
is "$(first_data "$c/big.bin")" none "LIST: lower file is a hole"
check "LIST: listed xattr on the directory" test -n "$(xattr "$c/sub" trusted.s3cachefs.listed)"
check "LIST: skipped keys were logged" grep -q 'data/.s3cfs.evil.*not a usable file name' "$work/log"

# --- FETCH --------------------------------------------------------------------
out=$(cache "$c" data/ "fetch:big.bin:0:1048576,fetch:big.bin:1048576:1048576,fetch:big.bin:2097152:1048576,fetch:big.bin:3145728:1048576")
is "$(grep -c -- '-> 0$' <<<"$out")" 4 "FETCH: four chunks concurrently"
check "FETCH: cached bytes equal the object" cmp "$c/big.bin" "$work/big.bin"
is "$(stat -c %s "$c/big.bin")" 3145851 "FETCH: size restored after the rounded-up tail write"
is "$(first_hole "$c/big.bin")" 3145851 "FETCH: the whole file is data"
rm -rf "$work/c2" && mkdir "$work/c2"
cache "$work/c2" data/ list: >/dev/null
out=$(cache "$work/c2" data/ fetch:big.bin:1048576:1048576)
is "$out" "REPLY fetch:big.bin:1048576:1048576 -> 0" "FETCH: one middle chunk"
is "$(first_data "$work/c2/big.bin") $(first_hole "$work/c2/big.bin" 1048576)" "1048576 2097152" \
	"FETCH: exactly that chunk became data (SEEK_DATA/SEEK_HOLE)"

# --- the object changes -------------------------------------------------------
cp "$work/big2.bin" "$work/big.bin"
s3_put bkt data/big.bin "$work/big.bin"
new_etag="\"$(md5sum <"$work/big.bin" | cut -d' ' -f1)\""
out=$(cache "$c" data/ "fetch:big.bin:0:1048576:$big_etag")
is "$out" "REPLY fetch:big.bin:0:1048576:$big_etag -> -116 Stale file handle" \
	"FETCH: changed object -> ESTALE (response ETag checked, If-Match ignored by s3rver)"
is "$(xattr "$c/big.bin" trusted.s3cachefs.etag) $(stat -c %s "$c/big.bin") $(first_data "$c/big.bin")" \
	"$new_etag 2097152 none" "FETCH: lower file replaced with the new metadata, no data"
out=$(cache "$c" data/ "fetch:big.bin:0:1048576,fetch:big.bin:1048576:1048576")
is "$(grep -c -- '-> 0$' <<<"$out")" 2 "FETCH: the new version"
check "FETCH: new bytes cached" cmp "$c/big.bin" "$work/big.bin"

# --- LIST again: keep, replace, remove ----------------------------------------
s3_delete bkt data/small.txt
s3_put bkt data/new.txt "$work/small.txt"
echo stale >"$c/.s3cfs.99.1"
echo junk >"$c/junk"
mkdir -p "$c/olddir/x"
ino=$(stat -c %i "$c/big.bin")
out=$(cache "$c" data/ list:)
is "$out" "REPLY list: -> 0" "LIST: relist"
check "LIST: deleted object removed" test ! -e "$c/small.txt"
check "LIST: new object added" test -f "$c/new.txt"
check "LIST: stale temporary and strays removed" test ! -e "$c/.s3cfs.99.1" -a ! -e "$c/junk" -a ! -e "$c/olddir"
is "$(stat -c %i "$c/big.bin")" "$ino" "LIST: unchanged object keeps its lower file"
check "LIST: and its cached data" cmp "$c/big.bin" "$work/big.bin"

# --- LOOKUP -------------------------------------------------------------------
echo ghost >"$c/ghost"
out=$(cache "$c" data/ "lookup::new.txt,lookup::marker,lookup:sub:deep.txt,lookup::nothere,lookup::ghost,lookup::.s3cachefs")
for want in "lookup::new.txt -> 0" "lookup::marker -> 0" "lookup:sub:deep.txt -> 0" \
	"lookup::nothere -> -2" "lookup::ghost -> -2" "lookup::.s3cachefs -> -2"; do
	check "LOOKUP: $want" grep -q "^REPLY $want" <<<"$out"
done
check "LOOKUP: negative lookup removes the stale lower entry" test ! -e "$c/ghost"
rm -rf "$work/c3" && mkdir "$work/c3"
out=$(cache "$work/c3" data/ "lookup:sub:deep.txt,lookup::clash,lookup::big.bin")
is "$(grep -c -- '-> 0$' <<<"$out")" 3 "LOOKUP: in an unlisted cache"
check "LOOKUP: creates parents, a file, and a directory for a prefix" \
	test -f "$work/c3/sub/deep.txt" -a -d "$work/c3/clash" -a -f "$work/c3/big.bin"
is "$(xattr "$work/c3/big.bin" trusted.s3cachefs.etag) $(stat -c %s "$work/c3/big.bin") $(first_data "$work/c3/big.bin")" \
	"$new_etag 2097152 none" "LOOKUP: a new name's metadata from the GET of its first bytes (no data kept)"
check "LOOKUP: a small object arrives whole with it" cmp "$work/c3/sub/deep.txt" "$work/small.txt"
is "$(first_hole "$work/c3/sub/deep.txt")" 6 "LOOKUP: ... as data"
rm -rf "$work/c9" && mkdir "$work/c9"
# One daemon each: a second new name looked up in a directory waits for a
# listing of it instead (op_list.c, listing for lookups), which brings no data.
out=$(cache "$work/c9" other/ "lookup::empty0"; cache "$work/c9" other/ "lookup::tiny.txt")
is "$(grep -c -- "-> 0$" <<<"$out")" 2 "LOOKUP: a zero-byte object and a tiny one" || diag "$out" "$(grep -i empty0 "$work/log")"
is "$(stat -c %s "$work/c9/empty0") $(xattr "$work/c9/empty0" trusted.s3cachefs.etag)" \
	'0 "d41d8cd98f00b204e9800998ecf8427e"' "LOOKUP: the zero-byte object: an empty file under its ETag"
check "LOOKUP: the tiny one whole" cmp "$work/c9/tiny.txt" "$work/small.txt"

# --- a lost cache file ----------------------------------------------------------
rm "$c/big.bin"
out=$(cache "$c" data/ "fetch:big.bin:0:1048576:$new_etag")
is "$out" "REPLY fetch:big.bin:0:1048576:$new_etag -> -116 Stale file handle" \
	"FETCH: a vanished cache file is renewed (ESTALE)"
is "$(xattr "$c/big.bin" trusted.s3cachefs.etag)" "$new_etag" "FETCH: renewed from HEAD"

# --- errors -------------------------------------------------------------------
rm -rf "$work/c4" && mkdir "$work/c4"
out=$(sd --selftest cache nobucket "" "$work/c4" list: 2>"$work/err" | grep '^REPLY mount')
is "$out" "REPLY mount -> -2 No such file or directory" "MOUNT: NoSuchBucket -> ENOENT (the bucket check)"
# s3rver sends no RequestId (the log says "-" then); S3 always does.
check "errors: logged with operation, status, S3 code, message and request id" \
	grep -qE 'LIST s3://nobucket/: HTTP 404 NoSuchBucket: The specified bucket does not exist \(request id ' "$work/err"
out=$(cache "$c" other/ list: 2>&1)
check "MOUNT: a cache of another prefix is refused (EXDEV)" grep -q 'REPLY mount -> -18' <<<"$out"
mkdir "$work/c6"
t0=$(date +%s%N)
out=$("$daemon" --endpoint http://127.0.0.1:1 --allow-http --anonymous --retry-attempts 3 --retry-base-ms 50 \
	--selftest cache bkt data/ "$work/c6" list: 2>"$work/err" | grep '^REPLY list')
t1=$(date +%s%N)
is "$out" "REPLY list: -> -5 Input/output error" "errors: connection refused -> EIO"
# The MOUNT's bucket check and the LIST: 2 retries each.
is "$(grep -c 'retrying in' "$work/err")" 4 "errors: after --retry-attempts 3 (2 retries with back-off)"
diag "connection-refused path took $(( (t1 - t0) / 1000000 )) ms"

# --- a 10k directory ----------------------------------------------------------
rm -rf "$work/c5" && mkdir "$work/c5"
t0=$(date +%s%N)
out=$(cache "$work/c5" many/ list:)
t1=$(date +%s%N)
is "$out" "REPLY list: -> 0" "LIST: 10500 objects + 3 prefixes"
is "$(find "$work/c5" -mindepth 1 -maxdepth 1 ! -name .s3cachefs | wc -l)" 10503 \
	"LIST: all 10503 entries in the lower directory"
diag "10k listing into the cache took $(( (t1 - t0) / 1000000 )) ms"
out=$(SD_OPTS=-v cache "$work/c5" many/ "list:,list:")
is "$out" "REPLY list: -> 0
REPLY list: -> 0" "LIST: a second identical LIST joins the one in progress"
check "LIST: ... and does not list again" grep -q 'joins request' "$work/log"
t0=$(date +%s%N)
cache "$work/c5" many/ list: >/dev/null
t1=$(date +%s%N)
diag "relisting it (nothing changed) took $(( (t1 - t0) / 1000000 )) ms"

# --- POSIX attributes (protocol 5): s3rver keeps x-amz-meta-* and honours --
# --- REPLACE on a copy onto the key (the VM tests' chmod relies on both) ----
printf 'posix!' >"$work/m.txt"
etag=$(wr put bkt w/meta.txt "$work/m.txt" 0 6 --type text/plain --meta note=keep --meta mode=33188)
etag=${etag#ETAG }
mkdir -p "$work/c7" "$work/c7p"
out=$(cache "$work/c7" "" "mount:2:bkt:$work/c7p:posix" "@2:setmeta:w/meta.txt:6:$etag:posix=33261//5/" \
	"@2:setmeta:w/meta.txt:6:\"0123\":posix=384///" "@2:lookup:w:meta.txt" | grep -v '^REPLY mount')
is "$out" "REPLY @2:setmeta:w/meta.txt:6:$etag:posix=33261//5/ -> 0 etag $etag
REPLY @2:setmeta:w/meta.txt:6:\"0123\":posix=384/// -> -116 Stale file handle
REPLY @2:lookup:w:meta.txt -> 0" "SETMETA: done (same ETag); another version: ESTALE; LOOKUP"
is "$(curl -sfI "$S3_ENDPOINT/bkt/w/meta.txt" | tr -d '\r' | grep -iE '^(content-type|x-amz-meta-[a-z]*):' | tr 'A-Z' 'a-z' | sort | tr '\n' ' ')" \
	"content-type: text/plain x-amz-meta-gid: 5 x-amz-meta-mode: 33261 x-amz-meta-note: keep " \
	"SETMETA: s3rver replaced mode, added gid, kept Content-Type and note"
is "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "trusted.s3cachefs.posix").hex())' "$work/c7p/w/meta.txt")" \
	"01050000ed81000000000000050000000000000000000000" \
	"LOOKUP on a posix_meta mount: the attributes s3rver returns"

# A directory's (protocol 11): on its marker, made where there is none.
s3_put bkt w/dir/inner "$work/small.txt"
out=$(cache "$work/c7" "" "mount:2:bkt:$work/c7p:posix" "@2:setmeta:w/dir:dir:posix=16872/1234/2345/" \
	"@2:setmeta:w/dir:dir:posix=16832///" | grep -v '^REPLY mount' | sed 's/etag "[0-9a-f]*"/etag E/')
is "$out" "REPLY @2:setmeta:w/dir:dir:posix=16872/1234/2345/ -> 0 etag E
REPLY @2:setmeta:w/dir:dir:posix=16832/// -> 0 etag E" "SETMETA of a directory: done twice"
is "$(curl -sfI "$S3_ENDPOINT/bkt/w/dir/" | tr -d '\r' | grep -iE '^(content-type|x-amz-meta-[a-z]*):' | tr 'A-Z' 'a-z' | sort | tr '\n' ' ')" \
	"content-type: application/x-directory x-amz-meta-gid: 2345 x-amz-meta-mode: 16832 x-amz-meta-uid: 1234 " \
	"SETMETA of a directory: a marker put, then copied onto itself with the new mode"


# --- the test server itself -------------------------------------------------
# A PUT whose client goes away in the middle (a node's power cut) leaves the
# key as it was, as S3 does: s3rver wrote the body over the object as it
# came (tests/powercut.sh found part of a body in the bucket).
cut_put() {	# KEY: half of a 1 MiB body, then the connection closes
	python3 - "$port" "$1" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"PUT /bkt/%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          b"Content-Length: 1048576\r\n\r\n" % sys.argv[2].encode() + b"x" * 524288)
time.sleep(1)
s.close()
time.sleep(1)
PY
}
cut_put cut/new.bin
check "test server: a PUT cut short creates nothing" \
	bash -c "! curl -sf -o /dev/null '$S3_ENDPOINT/bkt/cut/new.bin'"
s3_put bkt cut/old.bin "$work/big2.bin"
old_etag=$(curl -sfI "$S3_ENDPOINT/bkt/cut/old.bin" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
cut_put cut/old.bin
curl -sf -o "$work/cut-old" "$S3_ENDPOINT/bkt/cut/old.bin"
check "test server: a PUT cut short leaves the object's bytes" cmp "$work/cut-old" "$work/big2.bin"
is "$(curl -sfI "$S3_ENDPOINT/bkt/cut/old.bin" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')" "$old_etag" \
	"test server: ... and its ETag"
s3_put bkt cut/old.bin "$work/small.txt"
curl -sf -o "$work/cut-old" "$S3_ENDPOINT/bkt/cut/old.bin"
check "test server: the next PUT of the key is stored whole" cmp "$work/cut-old" "$work/small.txt"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; daemon log:"; tail -n 30 "$work/log" | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
