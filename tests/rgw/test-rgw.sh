#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-rgw.sh - the project's S3 client against a strict S3 server: a
# single-node Ceph RGW on loopback (tools/rgw/rgw.sh), on the host, no
# kernel module. Checks what s3rver cannot: SigV4 validated by the server
# (a wrong secret or key is refused -> EACCES), If-Match honoured (412 ->
# ESTALE, a new cache file, never wrong bytes), real S3 error codes
# (NoSuchKey/NoSuchBucket -> ENOENT), ListObjectsV2 pagination over more
# than 1000 keys, that RGW takes a 2-part multipart upload, and the write
# path's conditional uploads: the writable mount's probe finds that RGW 16
# takes If-Match only without quotes and ignores conditions on
# CompleteMultipartUpload, and uploads then still never overwrite
# (If-None-Match: * and If-Match -> EEXIST/ESTALE, nothing left open);
# mkdir's marker, rename's copy conditional on the source's ETag (RGW 16
# ignores x-amz-copy-source-if-match: the probe finds it and a HEAD
# checks the source first), delete. Prints TAP; exit 1 if anything failed. Without ceph
# installed it prints one skipped test point and exits 0.
#
#   tests/rgw/test-rgw.sh [PORT]        (default 7480)
#
# Client: `s3cachefsd --selftest` (list/head/get, and cache: the daemon's
# own LIST/LOOKUP/FETCH handlers), and tools/s3cachectl/s3cachectl
# ls/cat/head when it has them (skipped otherwise). RGW_KEEP=1 leaves the cluster running
# (in $RGW_DIR, default a temporary directory) for poking at it.
# Needs: daemon/s3cachefsd built, curl, python3, root (trusted.* xattrs),
# O_DIRECT on $TMPDIR's filesystem.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-7480}
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
rgw=$repo/tools/rgw/rgw.sh
# shellcheck source=../lib/tap.sh
. "$repo/tests/lib/tap.sh"

for t in ceph-mon ceph-osd radosgw radosgw-admin; do
	if ! command -v "$t" >/dev/null; then
		plan 1
		skip "RGW tests" "ceph not installed ($t missing: apt-get install ceph-mon ceph-osd radosgw ceph-common)"
		tap_done
	fi
done
if [ ! -x "$daemon" ]; then
	echo "Bail out! no $daemon (make -C daemon)"
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-rgw.XXXXXX")
# A private copy: the tree's binary may be relinked while this runs.
cp "$daemon" "$work/s3cachefsd" && daemon=$work/s3cachefsd
rgwdir=${RGW_DIR:-$work/rgw}
cleanup() {
	[ -n "${RGW_KEEP:-}" ] || "$rgw" stop "$rgwdir" "$port" >/dev/null 2>&1
	[ -n "${RGW_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

export S3_PORT=$port S3_ENDPOINT=http://127.0.0.1:$port
# shellcheck source=../lib/s3.sh
. "$repo/tests/lib/s3.sh"	# clears AWS_* from the environment
eval "$("$rgw" env "$rgwdir" "$port")"	# S3_AK, S3_SK
export S3_CURL_TIMEOUT=60

sd() {	# the client, signed with the test user's keys
	AWS_ACCESS_KEY_ID=${AK:-$S3_AK} AWS_SECRET_ACCESS_KEY=${SK:-$S3_SK} \
		"$daemon" --endpoint "$S3_ENDPOINT" --allow-http --region us-east-1 --path-style ${SD_OPTS:-} "$@"
}
cache() {	# DIR PREFIX REQ...: REPLY lines (not the mount's), log in $work/log
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
md5etag() { echo "\"$(md5sum <"$1" | cut -d' ' -f1)\""; }

plan 73

# --- the server ---------------------------------------------------------------
t0=$(date +%s%N)
if "$rgw" start "$rgwdir" "$port" >"$work/rgw.out" 2>&1; then
	ok "harness: RGW up on $S3_ENDPOINT"
	diag "RGW start took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
else
	not_ok "harness: RGW up on $S3_ENDPOINT" "$(tail -n 20 "$work/rgw.out")"
	echo "Bail out! RGW does not start (logs: $rgwdir/log)"
	RGW_KEEP=1
	exit 1
fi

# --- fixtures -----------------------------------------------------------------
head -c $((3 * 1048576 + 123)) /dev/urandom >"$work/big.bin"
head -c $((2 * 1048576 + 5)) /dev/urandom >"$work/big2.bin"
echo hello >"$work/small.txt"
: >"$work/empty"
fix_ok=1
for kv in "data/big.bin big.bin" "data/small.txt small.txt" "data/sub/deep.txt small.txt" \
	"data/a b+c&d.txt small.txt" "data/été ሴ.txt small.txt" "data/marker/ empty" \
	"data/sp ace/x=y;z small.txt"; do
	f=${kv##* } k=${kv% *}
	s3_put bkt "$k" "$work/$f" 2>>"$work/put.err" || fix_ok=
done
# 2100 keys -> 3 pages of at most 1000: one curl process, 16 in parallel.
nmany=2100
for ((i = 0; i < nmany; i++)); do
	printf 'upload-file = "%s"\nurl = "%s/bkt/many/obj-%05d"\noutput = "/dev/null"\n' \
		"$work/small.txt" "$S3_ENDPOINT" "$i"
done >"$work/many.curl"
for d in d1 d2; do printf 'upload-file = "%s"\nurl = "%s/bkt/many/%s/x"\noutput = "/dev/null"\n' \
	"$work/small.txt" "$S3_ENDPOINT" "$d"; done >>"$work/many.curl"
t0=$(date +%s%N)
s3_curl --no-progress-meter -Z --parallel-max 16 -K "$work/many.curl" 2>>"$work/put.err" || fix_ok=
diag "$nmany PUTs took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
if [ -n "$fix_ok" ]; then ok "fixtures uploaded (signed curl PUTs)"; else
	not_ok "fixtures uploaded (signed curl PUTs)" "$(tail -n 5 "$work/put.err")"; fi
big_etag=$(md5etag "$work/big.bin")

# --- the harness itself is strict ---------------------------------------------
code=$(curl -s -o /dev/null -w '%{http_code}' "$S3_ENDPOINT/bkt/data/small.txt")
is "$code" 403 "harness: an anonymous GET of a private object is refused"
code=$(curl -s -o "$work/o" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" \
	--user "$S3_AK:wrong$S3_SK" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$S3_ENDPOINT/bkt/data/small.txt")
is "$code $(grep -o '<Code>[^<]*' "$work/o" | cut -c7-)" "403 SignatureDoesNotMatch" \
	"harness: curl with a wrong secret gets 403 SignatureDoesNotMatch"
code=$(s3_curl -s -o /dev/null -w '%{http_code}' -H 'If-Match: "0123456789abcdef0123456789abcdef"' \
	"$S3_ENDPOINT/bkt/data/big.bin" 2>/dev/null)
is "$code" 412 "harness: GET with a stale If-Match gets 412"

# --- the S3 client: list, head, get --------------------------------------------
out=$(sd --selftest list bkt data/ 2>>"$work/log")
is "$(grep -c '^OBJ' <<<"$out") $(grep -c '^PRE' <<<"$out")" "4 3" \
	"list: 4 objects, 3 common prefixes under data/ (SigV4 accepted)" || diag "$out"
check "list: entity-escaped key decoded" grep -qF 'OBJ data/a b+c&d.txt 6' <<<"$out"
check "list: UTF-8 key" grep -qF 'OBJ data/été ሴ.txt 6' <<<"$out"
check "list: ETag and size as RGW sent them" grep -qF "OBJ data/big.bin 3145851 $big_etag" <<<"$out"
out=$(sd --selftest list bkt "data/sp ace/" 2>>"$work/log")
check "list: a prefix with a space (query encoding signed right)" grep -qF 'OBJ data/sp ace/x=y;z 6' <<<"$out"
out=$(sd --selftest list bkt many/ 2>>"$work/log")
is "$(tail -n 1 <<<"$out")" "TOTAL $nmany objects, 2 prefixes, 3 pages" \
	"list: $nmany objects paginated (ListObjectsV2 continuation tokens)"
is "$(grep '^OBJ' <<<"$out" | awk '{print $2}' | LC_ALL=C sort -c && echo sorted)" sorted \
	"list: keys in byte order, no duplicates across pages"
out=$(sd --selftest head bkt data/big.bin 2>>"$work/log")
is "$(sed -n 1,2p <<<"$out" | tr '\n' ' ')" "ETAG $big_etag SIZE 3145851 " "head: ETag and size"
sd --selftest get bkt data/big.bin 2>>"$work/log" >"$work/whole"
check "get: whole object" cmp "$work/whole" "$work/big.bin"
sd --selftest get bkt data/big.bin 1048570 100000 2>>"$work/log" >"$work/range"
check "get: a range returns exactly those bytes" \
	cmp "$work/range" <(tail -c +1048571 "$work/big.bin" | head -c 100000)
out=$(sd --selftest get bkt "data/sp ace/x=y;z" 2>>"$work/log")
is "$out" hello "get: a key with space, '=' and ';' (path encoding signed right)"

# --- credentials refused ------------------------------------------------------
SK="wrong$S3_SK" sd --selftest head bkt data/small.txt >/dev/null 2>"$work/err"
is "$? $(grep -c 'HEAD s3://bkt/data/small.txt: HTTP 403' "$work/err")" "1 1" \
	"head with a wrong secret fails with HTTP 403 (no body, so no S3 code)"
SK="wrong$S3_SK" sd --selftest get bkt data/small.txt >/dev/null 2>"$work/err"
is "$? $(grep -c 'HTTP 403 SignatureDoesNotMatch' "$work/err")" "1 1" \
	"get with a wrong secret fails, logged as HTTP 403 SignatureDoesNotMatch"
mkdir -p "$work/cx"
# A new mount lists one key first (daemon/bucket.c): refused there.
out=$(SK="wrong$S3_SK" sd --selftest cache bkt data/ "$work/cx" list: 2>"$work/err" | grep '^REPLY mount')
is "$out" "REPLY mount -> -13 Permission denied" "a mount's bucket check with a wrong secret -> EACCES"
out=$(AK=NOSUCHACCESSKEY00000 sd --selftest cache bkt data/ "$work/cx" lookup::small.txt 2>"$work/err" | grep '^REPLY mount')
is "$out" "REPLY mount -> -13 Permission denied" "... with an unknown access key -> EACCES"
out=$("$daemon" --endpoint "$S3_ENDPOINT" --allow-http --path-style --anonymous --selftest cache bkt data/ "$work/cx" list: 2>"$work/err" | grep '^REPLY mount')
is "$out" "REPLY mount -> -13 Permission denied" "... unsigned on a private bucket -> EACCES (AccessDenied)"

# --- errors -> errno -----------------------------------------------------------
sd --selftest get bkt data/nothere >/dev/null 2>"$work/err"
check "get: a missing key is HTTP 404 NoSuchKey" grep -q 'HTTP 404 NoSuchKey' "$work/err"
c=$work/cache
mkdir -p "$c"
out=$(cache "$c" data/ list: list:sub)
is "$out" "REPLY list: -> 0
REPLY list:sub -> 0" "LIST: root and sub into a cache"
out=$(cache "$c" data/ lookup::nothere)
is "$out" "REPLY lookup::nothere -> -2 No such file or directory" "LOOKUP: missing key -> ENOENT"
mkdir -p "$work/c4"
out=$(sd --selftest cache nobucket "" "$work/c4" list: 2>"$work/err" | grep '^REPLY mount')
is "$out" "REPLY mount -> -2 No such file or directory" "MOUNT of a bucket that does not exist: NoSuchBucket -> ENOENT"
check "... logged with the S3 code and RGW's request id" \
	grep -qE 'HTTP 404 NoSuchBucket.*\(request id [^-)]' "$work/err"

# --- FETCH, and If-Match on a changed object -------------------------------------
out=$(cache "$c" data/ "fetch:big.bin:0:1048576,fetch:big.bin:1048576:1048576,fetch:big.bin:2097152:1048576,fetch:big.bin:3145728:1048576")
is "$(grep -c -- '-> 0$' <<<"$out")" 4 "FETCH: four chunks concurrently"
check "FETCH: cached bytes equal the object" cmp "$c/big.bin" "$work/big.bin"
s3_put bkt data/big.bin "$work/big2.bin"
new_etag=$(md5etag "$work/big2.bin")
out=$(SD_OPTS=-v cache "$c" data/ "fetch:big.bin:1048576:1048576:$big_etag")
is "$out" "REPLY fetch:big.bin:1048576:1048576:$big_etag -> -116 Stale file handle" \
	"FETCH: changed object, stale ETag -> ESTALE"
check "... RGW answered 412 to If-Match" grep -q 'precondition failed (If-Match)' "$work/log"
is "$(xattr "$c/big.bin" trusted.s3cachefs.etag) $(stat -c %s "$c/big.bin") $(first_data "$c/big.bin")" \
	"$new_etag 2097157 none" "FETCH: a new cache file: new ETag and size, no old bytes"
out=$(cache "$c" data/ "fetch:big.bin:0:1048576:$new_etag,fetch:big.bin:1048576:1048576:$new_etag,fetch:big.bin:2097152:1048576:$new_etag")
is "$(grep -c -- '-> 0$' <<<"$out")" 3 "FETCH: the new version with its ETag"
check "FETCH: new bytes cached, never a mix" cmp "$c/big.bin" "$work/big2.bin"
s3_delete bkt data/small.txt
out=$(cache "$c" data/ "fetch:small.txt:0:1048576:$(md5etag "$work/small.txt")")
check "FETCH: a deleted object is an error, not data ($(sed 's/.*-> //' <<<"$out"))" \
	grep -qE -- '-> -(2|116) ' <<<"$out"

# --- multipart upload (for the write path to come) --------------------------------
head -c $((5 * 1048576)) /dev/urandom >"$work/p1"
head -c $((1048576 + 7)) /dev/urandom >"$work/p2"
mp_ok=
uid=$(s3_curl -X POST "$S3_ENDPOINT/bkt/mp/obj?uploads=" 2>>"$work/mp.err" |
	grep -o '<UploadId>[^<]*' | cut -c11-)
if [ -n "$uid" ]; then
	e1=$(s3_curl -D - -o /dev/null -T "$work/p1" "$S3_ENDPOINT/bkt/mp/obj?partNumber=1&uploadId=$uid" 2>>"$work/mp.err" |
		tr -d '\r' | awk -F': ' 'tolower($1) == "etag" {print $2}')
	e2=$(s3_curl -D - -o /dev/null -T "$work/p2" "$S3_ENDPOINT/bkt/mp/obj?partNumber=2&uploadId=$uid" 2>>"$work/mp.err" |
		tr -d '\r' | awk -F': ' 'tolower($1) == "etag" {print $2}')
	printf '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part><Part><PartNumber>2</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>' \
		"$e1" "$e2" >"$work/complete.xml"
	s3_curl -o "$work/complete.out" -X POST --data-binary @"$work/complete.xml" \
		"$S3_ENDPOINT/bkt/mp/obj?uploadId=$uid" 2>>"$work/mp.err" && mp_ok=1
fi
if [ -n "$mp_ok" ]; then ok "multipart: RGW takes a 2-part upload (5 MiB + 1 MiB)"; else
	not_ok "multipart: RGW takes a 2-part upload (5 MiB + 1 MiB)" "upload id '$uid': $(tail -n 5 "$work/mp.err")"; fi
out=$(sd --selftest head bkt mp/obj 2>>"$work/log")
is "$(sed -n 2p <<<"$out") $(sed -n 1p <<<"$out" | grep -c -- '-2"$')" "SIZE $((6 * 1048576 + 7)) 1" \
	"multipart: HEAD shows the size and a '-2' ETag"
sd --selftest get bkt mp/obj 2>>"$work/log" >"$work/mp.got"
check "multipart: the client reads it back" cmp "$work/mp.got" <(cat "$work/p1" "$work/p2")

# --- uploads: conditional writes, as close/fsync send them (UPLOAD) --------------
# A LOCAL cache file (the kernel's create makes such a file) of SIZE random
# bytes; the daemon puts it with If-None-Match: * (new) or If-Match.
local_file() {	# DIR NAME SIZE
	python3 - "$1/$2" "$3" <<'PY'
import os, struct, sys
path, size = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as f:
    f.write(os.urandom(size))
os.setxattr(path, "trusted.s3cachefs.meta", bytes([2, 2]) + struct.pack("<Qq", size, 0))
PY
}
upl() {	# REQ: its REPLY line, on a writable mount (its probe first), 5 MiB parts
	SD_OPTS="--part-size 5242880" cache "$u" "" "mount:2:bkt:$u:writable" "@2:$1" |
		grep '^REPLY @2:'
}
reply_rc() { sed -n 's/^REPLY [^ ]* -> \(-\{0,1\}[0-9]*\).*/\1/p' <<<"$1"; }
reply_etag() { sed -n 's/.* etag \(.*\)$/\1/p' <<<"$1"; }
u=$work/up
mkdir -p "$u"
out=$(SD_OPTS="--part-size 5242880" sd --selftest cache bkt "" "$u" mount:2:bkt:$u:writable 2>&1 >/dev/null)
check "the writable mount's probe: RGW honours conditional writes, If-Match bare, not on Complete nor CopyObject" \
	grep -q "honours conditional writes; If-Match is sent without quotes.*; not on CompleteMultipartUpload.*; not on CopyObject" <<<"$out"
# RGW 16 ignores conditions on a Complete: an 11 MiB file goes as one PUT.
for spec in "up/small.bin 1000 PUT" "up/multi.bin $((11 * 1048576)) above-part-size"; do
	read -r key size how <<<"$spec"
	local_file "$u" "$key" "$size"
	out=$(upl "upload:$key:new")
	is "$(reply_rc "$out")" 0 "$how: a new key is put with If-None-Match: *"
	sd --selftest get bkt "$key" 2>>"$work/log" | cmp -s - "$u/$key" && ok "... RGW has its bytes" ||
		not_ok "... RGW has its bytes"
	etag=$(reply_etag "$out")
	theirs=$(sd --selftest get bkt "$key" 2>>"$work/log" | md5sum)
	# Another writer's file: a new cache file (the same one, still "new",
	# would be taken for our own earlier upload by its writer token).
	rm -f "$u/$key"
	local_file "$u" "$key" "$size"
	out=$(upl "upload:$key:new")
	is "$(reply_rc "$out")" -17 "$how: the key exists: EEXIST, nothing overwritten (412 to If-None-Match)"
	is "$(sd --selftest get bkt "$key" 2>>"$work/log" | md5sum)" "$theirs" "... RGW keeps the other object"
	out=$(upl "upload:$key:match:\"0123456789abcdef0123456789abcdef\"")
	is "$(reply_rc "$out")" -116 "$how: If-Match another ETag: ESTALE, nothing overwritten"
	out=$(upl "upload:$key:match:$etag")
	is "$(reply_rc "$out")" 0 "$how: If-Match the object's ETag: put"
	sd --selftest get bkt "$key" 2>>"$work/log" | cmp -s - "$u/$key" && ok "... RGW has the new bytes" ||
		not_ok "... RGW has the new bytes"
done
n=$(s3_curl "$S3_ENDPOINT/bkt?uploads=" 2>>"$work/log" | grep -c '<UploadId>')
is "$n" 0 "no multipart upload is left open (the refused ones were aborted)"

# --- names: mkdir's marker, rename's conditional copy, delete ---------------------
head_etag() { sd --selftest head bkt "$1" 2>/dev/null | sed -n 's/^ETAG //p'; }
is "$(reply_rc "$(upl "mkdir::newdir")")" 0 "mkdir: the marker newdir/ is put"
check "... RGW has it" test -n "$(head_etag newdir/)"
is "$(reply_rc "$(upl "mkdir::newdir")")" -17 "mkdir of an existing marker: EEXIST (If-None-Match: *)"
etag=$(head_etag up/small.bin)
is "$(reply_rc "$(upl "rename:up/small.bin:up/moved.bin:1000:\"0123456789abcdef0123456789abcdef\"")")" -116 \
	"rename whose source is another version: ESTALE (RGW ignores x-amz-copy-source-if-match: a HEAD checks)"
check "... the source is still there" test -n "$(head_etag up/small.bin)"
check "... and the destination was not made" test -z "$(head_etag up/moved.bin)"
is "$(reply_rc "$(upl "rename:up/small.bin:up/moved.bin:1000:$etag")")" 0 \
	"rename of the version we have: copied, then the source deleted"
sd --selftest get bkt up/moved.bin 2>>"$work/log" | cmp -s - "$u/up/small.bin" &&
	ok "... RGW has its bytes under the new name" || not_ok "... RGW has its bytes under the new name"
check "... and nothing under the old" test -z "$(head_etag up/small.bin)"
is "$(reply_rc "$(upl "delete:up:moved.bin")")" 0 "delete: the object is gone"
check "... from RGW" test -z "$(head_etag up/moved.bin)"
is "$(reply_rc "$(upl "delete::newdir:dir")")" 0 "rmdir of an empty directory: its marker deleted"
check "... from RGW" test -z "$(head_etag newdir/)"

# --- s3cachectl ls/cat/head, once it has them --------------------------------------
ctl=$repo/tools/s3cachectl/s3cachectl
if [ -x "$ctl" ] && "$ctl" --help 2>&1 | grep -qE '^ +ls '; then
	cp "$ctl" "$work/s3cachectl" && ctl=$work/s3cachectl
	ctlr() {	# COMMAND ARGS...: S3 options go after the command
		local c=$1
		shift
		AWS_ACCESS_KEY_ID=${AK:-$S3_AK} AWS_SECRET_ACCESS_KEY=${SK:-$S3_SK} \
			"$ctl" "$c" --endpoint "$S3_ENDPOINT" --allow-http --region us-east-1 --path-style "$@"
	}
	out=$(ctlr ls s3://bkt/data/ 2>&1)
	check "s3cachectl ls s3://bkt/data/" grep -qE ' 2097157 data/big.bin$' <<<"$out"
	is "$(ctlr ls s3://bkt/many/ 2>>"$work/log" | grep -c 'many/obj-')" "$nmany" \
		"s3cachectl ls: all $nmany keys over the pages"
	ctlr cat s3://bkt/data/big.bin 2>>"$work/log" >"$work/ctl.cat"
	check "s3cachectl cat: the object's bytes" cmp "$work/ctl.cat" "$work/big2.bin"
	out=$(ctlr head s3://bkt/data/big.bin 2>&1)
	check "s3cachectl head: ETag and size" grep -qzF "Size: 2097157
ETag: $new_etag" <<<"$out"
	out=$(SK="wrong$S3_SK" ctlr cat s3://bkt/data/big.bin 2>&1 >/dev/null)
	is "$? $(grep -c 'SignatureDoesNotMatch (HTTP 403' <<<"$out")" "1 1" \
		"s3cachectl cat with a wrong secret: exit 1, SignatureDoesNotMatch"
	out=$(ctlr cat s3://bkt/data/nothere 2>&1 >/dev/null)
	is "$? $(grep -c 'NoSuchKey (HTTP 404' <<<"$out")" "1 1" \
		"s3cachectl cat of a missing key: exit 1, NoSuchKey"
else
	skip_n 6 "s3cachectl ls/cat/head" "tools/s3cachectl has no ls/cat/head yet"
fi

# --- the harness: restart keeps the data --------------------------------------------
t0=$(date +%s%N)
"$rgw" stop "$rgwdir" "$port" >>"$work/rgw.out" 2>&1
if "$rgw" start "$rgwdir" "$port" >>"$work/rgw.out" 2>&1 &&
	sd --selftest get bkt data/big.bin 2>>"$work/log" | cmp - "$work/big2.bin"; then
	ok "harness: objects survive a stop/start"
else
	not_ok "harness: objects survive a stop/start" "$(tail -n 10 "$work/rgw.out")"
fi
diag "RGW restart took $(( ($(date +%s%N) - t0) / 1000000 )) ms"

[ "$TAP_FAILED" = 0 ] || { diag "client log (tail):"; diag "$(tail -n 30 "$work/log")"; }
tap_done
