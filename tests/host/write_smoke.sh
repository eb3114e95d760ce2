#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# write_smoke.sh - the S3 write requests of libs3c.a (client.c: PUT from a
# file range, conditional PUT, DELETE, the multipart upload) against
# fake_s3.py, through tests/host/s3call: bytes read back and compared,
# ETags as S3 computes them, conditions, an <Error> inside Complete's 200,
# a 503 retried with the whole body sent again, what goes on the wire.
# Host only: no module, no root. Prints TAP; exit 1 if anything failed.
#
#   tests/host/write_smoke.sh          (make -C daemon test)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
s3call=${S3CALL:-$here/s3call}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-write.XXXXXX")
reqlog=$work/requests.jsonl
MIB=1048576

. "$here/../lib/tap.sh"
# In this shell, unlike tap.sh's (a bounded bash -c).
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

[ -x "$s3call" ] || { echo "Bail out! no $s3call (make -C daemon test)"; exit 1; }
echo "TAP version 13"
: >"$reqlog"
python3 "$here/fake_s3.py" 0 "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q '^ready ' "$work/server.out" 2>/dev/null && break
	sleep 0.1
done
port=$(sed -n 's/^ready //p' "$work/server.out")
[ -n "$port" ] || { echo "Bail out! fake_s3.py did not start: $(cat "$work/server.out")"; exit 1; }

# Signed, so the signed headers can be checked on the wire; three attempts.
call() {
	env -u AWS_SESSION_TOKEN AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		"$s3call" --endpoint "http://127.0.0.1:$port" --attempts 3 "$@" 2>>"$work/log"
}
ctl() { python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \
	"http://127.0.0.1:$port/_ctl?$1"; }
md5() { md5sum | cut -d' ' -f1; }
range() { tail -c +$(($2 + 1)) "$1" | head -c "$3"; }	# FILE OFFSET LENGTH
# Field F of the logged requests for KEY, method M (GET unless given).
reqs() {
	python3 - "$reqlog" "$1" "$2" "${3:-GET}" <<'EOF'
import json, sys
from urllib.parse import unquote
log, key, field, method = sys.argv[1:5]
for line in open(log):
    r = json.loads(line)
    if r["method"] != method or unquote(r["path"].split("?")[0]) != "/fake/" + key:
        continue
    print(r.get(field, r["headers"].get(field, "-")))
EOF
}
# S3's ETag of a multipart object: the MD5 of the parts' binary MD5s, -N.
mpu_etag() {	# FILE OFFSET LENGTH [OFFSET LENGTH]...
	python3 - "$@" <<'EOF'
import hashlib, sys
data = open(sys.argv[1], "rb").read()
args = [int(a) for a in sys.argv[2:]]
parts = [data[args[i]:args[i] + args[i + 1]] for i in range(0, len(args), 2)]
print('"%s-%d"' % (hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest(), len(parts)))
EOF
}

src=$work/src.bin
head -c $((12 * MIB)) /dev/urandom >"$src"
big=$((5 * MIB + 1))

# --- PUT from a file range, read back -----------------------------------------
: >"$reqlog"
for spec in "empty 0 0" "one 7 1" "big 12345 $big"; do
	read -r name off len <<<"$spec"
	out=$(call put fake "w/$name" "$src" "$off" "$len")
	is "$out" "ETAG \"$(range "$src" "$off" "$len" | md5)\"" "PUT $len B at offset $off: the MD5 ETag"
	call get fake "w/$name" >"$work/got"
	check "PUT $len B: GET gives the range back" cmp "$work/got" <(range "$src" "$off" "$len")
done
is "$(reqs w/big body_len PUT)" "$big" "wire: the body is the whole range"
is "$(reqs w/big content-length PUT)" "$big" "wire: Content-Length"
is "$(reqs w/big expect PUT)" "-" "wire: no Expect: 100-continue"
is "$(reqs w/big x-amz-content-sha256 PUT)" UNSIGNED-PAYLOAD "wire: UNSIGNED-PAYLOAD"
check "wire: Content-Length is signed" \
	grep -q 'SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date,' \
	<(reqs w/big authorization PUT)
is "$(reqs w/empty body_len PUT) $(reqs w/empty content-length PUT)" "0 0" "wire: an empty PUT says Content-Length: 0"

# --- metadata and type --------------------------------------------------------
: >"$reqlog"
out=$(call put fake w/meta "$src" 0 10 --type text/plain --meta mode=33188 --meta note=)
is "${out%% *}" ETAG "PUT with x-amz-meta-* and Content-Type"
is "$(reqs w/meta x-amz-meta-mode PUT)|$(reqs w/meta x-amz-meta-note PUT)|$(reqs w/meta content-type PUT)" \
	"33188||text/plain" "wire: metadata (an empty value too) and type sent"
check "wire: metadata and type signed" \
	grep -q 'SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-mode;x-amz-meta-note,' \
	<(reqs w/meta authorization PUT)

# --- conditional PUT ----------------------------------------------------------
etag1=$(call put fake w/cond "$src" 100 1000 --if-none-match)
is "$etag1" "ETAG \"$(range "$src" 100 1000 | md5)\"" "If-None-Match: * on a new key: created"
etag1=${etag1#ETAG }
is "$(call put fake w/cond "$src" 0 10 --if-none-match)" "ERR -17 EEXIST 412 PreconditionFailed" \
	"If-None-Match: * on an existing key: EEXIST (412)"
is "$(call put fake w/cond "$src" 0 10 --if-match '"0123"')" "ERR -116 ESTALE 412 PreconditionFailed" \
	"If-Match another ETag: ESTALE (412)"
call get fake w/cond >"$work/got"
check "failed conditions left the object alone" cmp "$work/got" <(range "$src" 100 1000)
out=$(call put fake w/cond "$src" 5 20 --if-match "$etag1")
is "$out" "ETAG \"$(range "$src" 5 20 | md5)\"" "If-Match the current ETag: replaced"
is "$(call put fake w/nothere "$src" 0 10 --if-match "$etag1")" "ERR -2 ENOENT 404 NoSuchKey" \
	"If-Match on a missing key: ENOENT (404)"
is "$(call put fake w/cond "$src" 0 10 --if-match x --if-none-match)" "ERR -22 EINVAL 0 -" \
	"both conditions at once: EINVAL, nothing sent"

# --- DELETE ---------------------------------------------------------------------
: >"$reqlog"
out=$(call delete fake w/one)
is "$out/$(reqs w/one status DELETE)" "/204" "DELETE: 204"
is "$(call head fake w/one)" "ERR -2 ENOENT 404 -" "DELETE: then HEAD is 404"

# --- a 503 on the first attempt: retried, the body sent whole again -------------
: >"$reqlog"
ctl fail=1
out=$(call put fake w/retry "$src" 4096 "$big")
is "$out" "ETAG \"$(range "$src" 4096 "$big" | md5)\"" "503 on the first PUT: retried, done"
is "$(reqs w/retry status PUT | tr '\n' ' ')" "503 200 " "503: two attempts"
is "$(reqs w/retry body_len PUT | tr '\n' ' ')" "$big $big " "503: each attempt sent the whole body"
is "$(reqs w/retry body_md5 PUT | sort -u)" "$(range "$src" 4096 "$big" | md5)" \
	"503: ... the same bytes, from the range's start"
call get fake w/retry >"$work/got"
check "503: the object is the range" cmp "$work/got" <(range "$src" 4096 "$big")

# A range past the end of the file: a local error, not retried.
: >"$reqlog"
out=$(call put fake w/short "$src" $((12 * MIB - 10)) 100)
is "$out" "ERR -5 EIO 0 -" "a file shorter than the range: EIO"
check "short file: logged" grep -q 'PUT w/short: reading the body at byte 10 of 100: the file is shorter' "$work/log"
check "short file: not retried" bash -c '! grep -q "PUT w/short: .*retrying" "$1"' - "$work/log"
is "$(call head fake w/short)" "ERR -2 ENOENT 404 -" "short file: no object (the server saw a body cut short)"

# --- multipart ------------------------------------------------------------------
p1=$((5 * MIB)) p3=7
: >"$reqlog"
up=$(call mpu-create fake "w/mp u" --type application/x-test)
is "${up%% *}" UPLOAD "CreateMultipartUpload: an UploadId"
up=${up#UPLOAD }
is "$(reqs "w/mp u" content-type POST)" application/x-test "create: the object's Content-Type sent"
e1=$(call mpu-part fake "w/mp u" "$up" 1 "$src" 0 "$p1")
e2=$(call mpu-part fake "w/mp u" "$up" 2 "$src" "$p1" "$p1")
e3=$(call mpu-part fake "w/mp u" "$up" 3 "$src" $((2 * p1)) "$p3")
is "$e1|$e3" "ETAG \"$(range "$src" 0 "$p1" | md5)\"|ETAG \"$(range "$src" $((2 * p1)) "$p3" | md5)\"" \
	"UploadPart: each part's MD5 ETag (upload id '$up' round trips)"
e1=${e1#ETAG } e2=${e2#ETAG } e3=${e3#ETAG }
out=$(call mpu-complete fake "w/mp u" "$up" "1=$e1" "2=$e2" "3=$e3" --if-none-match)
is "$out" "ETAG $(mpu_etag "$src" 0 "$p1" "$p1" "$p1" $((2 * p1)) "$p3")" \
	"CompleteMultipartUpload: the ETag S3 computes (MD5 of the MD5s, -3)"
call get fake "w/mp u" >"$work/got"
check "multipart: GET gives the three parts back" cmp "$work/got" <(range "$src" 0 $((2 * p1 + p3)))
is "$(reqs "w/mp u" content-type POST | tail -n 1)" application/xml "complete: an XML body, labelled so"
is "$(call mpu-complete fake "w/mp u" "$up" "1=$e1")" "ERR -2 ENOENT 404 NoSuchUpload" \
	"complete again: NoSuchUpload is ENOENT"

# Complete's 200 with an <Error> inside.
up=$(call mpu-create fake w/mperr); up=${up#UPLOAD }
e1=$(call mpu-part fake w/mperr "$up" 1 "$src" 0 "$p1"); e1=${e1#ETAG }
e2=$(call mpu-part fake w/mperr "$up" 2 "$src" 0 1); e2=${e2#ETAG }
: >"$reqlog"
ctl "complete_error=InternalError&n=1"
out=$(call mpu-complete fake w/mperr "$up" "1=$e1" "2=$e2")
is "${out%% *} $(reqs w/mperr status POST | tr '\n' ' ')" "ETAG 200 200 " \
	"Complete: an InternalError inside a 200 is retried"
up=$(call mpu-create fake w/mperr2); up=${up#UPLOAD }
e1=$(call mpu-part fake w/mperr2 "$up" 1 "$src" 0 "$p1"); e1=${e1#ETAG }
ctl "complete_error=AccessDenied&n=5"
: >"$reqlog"
out=$(call mpu-complete fake w/mperr2 "$up" "1=$e1")
is "$out" "ERR -13 EACCES 200 AccessDenied" "Complete: an AccessDenied inside a 200 is an error, with its code"
is "$(reqs w/mperr2 status POST | wc -l | tr -d ' ')" 1 "... not retried"
is "$(call head fake w/mperr2)" "ERR -2 ENOENT 404 -" "... and no object"
ctl "complete_error=x&n=0"

# S3's checks at Complete.
up=$(call mpu-create fake w/small); up=${up#UPLOAD }
e1=$(call mpu-part fake w/small "$up" 1 "$src" 0 1024); e1=${e1#ETAG }
e2=$(call mpu-part fake w/small "$up" 2 "$src" 0 1024); e2=${e2#ETAG }
is "$(call mpu-complete fake w/small "$up" "1=$e1" "2=$e2")" "ERR -22 EINVAL 400 EntityTooSmall" \
	"Complete: a part under 5 MiB but the last: EntityTooSmall is EINVAL"
is "$(call mpu-complete fake w/small "$up" '1="bad"' "2=$e2")" "ERR -22 EINVAL 400 InvalidPart" \
	"Complete: a wrong part ETag: InvalidPart is EINVAL"
is "$(call mpu-complete fake w/small "$up" "2=$e2" "1=$e1")" "ERR -22 EINVAL 0 -" \
	"Complete: parts out of order refused before sending"
is "$(call mpu-complete fake "w/mp u" "$up" "1=$e1" --if-none-match)" "ERR -2 ENOENT 404 NoSuchUpload" \
	"Complete: the upload id of another key: NoSuchUpload"
out=$(call mpu-abort fake w/small "$up")
is "$out" "" "AbortMultipartUpload: done"
is "$(call mpu-abort fake w/small "$up")" "ERR -2 ENOENT 404 NoSuchUpload" "abort again: ENOENT"
is "$(call mpu-part fake w/small "$up" 3 "$src" 0 10)" "ERR -2 ENOENT 404 NoSuchUpload" \
	"UploadPart after the abort: ENOENT"
up=$(call mpu-create fake "w/mp u"); up=${up#UPLOAD }
e1=$(call mpu-part fake "w/mp u" "$up" 1 "$src" 0 10); e1=${e1#ETAG }
is "$(call mpu-complete fake "w/mp u" "$up" "1=$e1" --if-none-match)" "ERR -17 EEXIST 412 PreconditionFailed" \
	"Complete with If-None-Match: * on an existing key: EEXIST"
call mpu-abort fake "w/mp u" "$up" >/dev/null

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; client log:"; tail -n 30 "$work/log" | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
