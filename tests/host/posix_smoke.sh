#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# posix_smoke.sh - POSIX attributes in S3 (protocol 5; s3fs-fuse's
# x-amz-meta-mode, -uid, -gid, -mtime) through the daemon's --selftest
# cache against fake_s3.py, without the module: UPLOAD (one PUT and
# multipart) and MKDIR send the headers the kernel gives them; SETMETA
# replaces them with a CopyObject onto the key that keeps the rest of the
# object's metadata, and refuses another version (ESTALE) without
# touching it; LOOKUP on a posix_meta mount records what S3 says in
# trusted.s3cachefs.posix (a new file, a kept file in place, flags 0 for
# an object without headers, never a LOCAL file, nothing on other
# mounts); s3fs's "DIR_$folder$" markers are not files there.
# Prints TAP; exit 1 if anything failed. Needs python3, curl, and root
# for the trusted.* xattrs of the cache files.
#
#   tests/host/posix_smoke.sh [PORT]      (tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4614}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-posix.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
reqlog=$work/requests.jsonl
MIB=1048576

. "$repo/tests/lib/tap.sh"

srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# One --selftest cache run: mount 1 is $cache (no posix_meta), mount 2 is
# $pc with posix_meta; REQUEST-GROUPS run one after the other. Replies but
# the MOUNTs'.
cache() {
	env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		"$daemon" --endpoint "http://127.0.0.1:$port" --allow-http --path-style \
		--part-size $((5 * MIB)) --retry-base-ms 10 \
		--selftest cache fake "" "$cache" "mount:2:fake:$pc:posix" "$@" \
		2>>"$work/log" | grep '^REPLY' | grep -v '^REPLY mount'
}
# A cache of s3://fake/ laid out by hand before its first MOUNT: it needs
# the format marker (a directory that holds files and has none is refused).
mark_cache() {	# DIR...
	local d
	for d in "$@"; do
		mkdir -p "$d/.s3cachefs" &&
			printf 'version=1\nbucket=fake\nprefix=\n' >"$d/.s3cachefs/format"
	done
}
# A LOCAL cache file (as the kernel's create makes it) of SIZE random bytes.
local_file() {	# PATH SIZE [BASE-ETAG]
	python3 - "$1" "$2" "${3:-}" <<'PY'
import os, struct, sys
path, size, etag = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as f:
    f.write(os.urandom(size))
meta = bytes([2, 2]) + struct.pack("<Qq", size, 0) + etag
os.setxattr(path, "trusted.s3cachefs.meta", meta)
PY
}
# The last logged request's header H for KEY with METHOD ("-": none; KEY
# with a "?QUERY": that request only).
hdr() {	# METHOD KEY HEADER
	python3 - "$reqlog" "$@" <<'PY'
import json, sys
from urllib.parse import unquote
log, method, key, h = sys.argv[1:5]
v = None
for r in map(json.loads, open(log)):
    p = unquote(r["path"]) if "?" in key else unquote(r["path"].split("?")[0])
    if r["method"] == method and p == "/fake/" + key:
        v = r["headers"].get(h, "-")
print("none" if v is None else v)
PY
}
# The daemon's (signed) requests for KEY (any query): "METHOD STATUS" lines.
reqs() {
	python3 - "$reqlog" "$1" <<'PY'
import json, sys
from urllib.parse import unquote
for r in map(json.loads, open(sys.argv[1])):
    if unquote(r["path"].split("?")[0]) == "/fake/" + sys.argv[2] and \
       "authorization" in r["headers"]:
        print(r["method"], r["status"])
PY
}
# What a HEAD of KEY says: "name: value" lines of the headers given.
head_of() {	# KEY HEADER...
	local key=$1
	shift
	curl -sfI "http://127.0.0.1:$port/fake/$key" | tr -d '\r' |
		python3 -c 'import sys
h = {}
for l in sys.stdin:
    k, _, v = l.partition(":")
    h[k.strip().lower()] = v.strip()
print(" ".join("%s=%s" % (a, h.get(a, "-")) for a in sys.argv[1:]))' "$@"
}
# Put KEY (BODY) straight into the fake with extra headers: NAME:VALUE...
put() {	# KEY BODY [HEADER...]
	local key=$1 body=$2 args=()
	shift 2
	for h in "$@"; do args+=(-H "$h"); done
	curl -sf -X PUT --data-binary "$body" "${args[@]}" \
		"http://127.0.0.1:$port/fake/$key" -o /dev/null
}
etag_of() { sed -n 's/.* etag \(.*\)$/\1/p' <<<"$1"; }
# The posix xattr of a cache file, hex ("none" without one).
pxattr() {
	python3 - "$1" <<'PY'
import os, sys
try:
    print(os.getxattr(sys.argv[1], "trusted.s3cachefs.posix").hex())
except OSError:
    print("none")
PY
}
# The xattr S3CFS_XATTR_POSIX holds for FLAGS MODE UID GID MTIME.
want_x() { python3 -c 'import struct, sys
f, m, u, g, t = map(int, sys.argv[1:])
print(struct.pack("<BBHIIIq", 1, f, 0, m, u, g, t).hex())' "$@"; }

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
: >"$reqlog"
python3 "$here/fake_s3.py" "$port" "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/server.out" 2>/dev/null && break
	sleep 0.1
done
grep -q ready "$work/server.out" || { echo "Bail out! fake_s3.py did not start: $(cat "$work/server.out")"; exit 1; }
cache=$work/c
pc=$work/p
mkdir -p "$cache" "$pc"
mark_cache "$cache" "$pc"

# --- UPLOAD: the headers go with the PUT ---------------------------------------
local_file "$pc/up/a.txt" 100
out=$(cache "@2:upload:up/a.txt:new:posix=33188/1000/1001/1700000000.123456789")
is "${out%% etag*}" "REPLY @2:upload:up/a.txt:new:posix=33188/1000/1001/1700000000.123456789 -> 0" \
	"UPLOAD with POSIX: uploaded"
is "$(hdr PUT up/a.txt x-amz-meta-mode) $(hdr PUT up/a.txt x-amz-meta-uid) $(hdr PUT up/a.txt x-amz-meta-gid) $(hdr PUT up/a.txt x-amz-meta-mtime)" \
	"33188 1000 1001 1700000000.123456789" \
	"... the PUT carries x-amz-meta-mode, -uid, -gid, -mtime (SEC.NSEC)"
is "$(head_of up/a.txt x-amz-meta-mode x-amz-meta-uid)" "x-amz-meta-mode=33188 x-amz-meta-uid=1000" \
	"... and the object has them"
if grep -q 'SignedHeaders=[a-z0-9;-]*x-amz-meta-gid;x-amz-meta-mode;x-amz-meta-mtime;x-amz-meta-s3cfs-writer;x-amz-meta-uid' \
	<(hdr PUT up/a.txt authorization); then
	ok "... signed"
else
	not_ok "... signed" "$(hdr PUT up/a.txt authorization)"
fi
local_file "$pc/up/b.txt" 10
cache "@2:upload:up/b.txt:new:posix=33261///1700000001" >/dev/null
is "$(hdr PUT up/b.txt x-amz-meta-mode) $(hdr PUT up/b.txt x-amz-meta-uid) $(hdr PUT up/b.txt x-amz-meta-gid) $(hdr PUT up/b.txt x-amz-meta-mtime)" \
	"33261 - - 1700000001" "UPLOAD: only the fields the kernel names; mtime without nanoseconds is SEC"
local_file "$pc/up/c.txt" 10
cache "@2:upload:up/c.txt:new" >/dev/null
is "$(hdr PUT up/c.txt x-amz-meta-mode) $(hdr PUT up/c.txt x-amz-meta-mtime)" "- -" \
	"UPLOAD without POSIX: no x-amz-meta-*"
local_file "$pc/up/big.bin" $((5 * MIB + 7))
out=$(cache "@2:upload:up/big.bin:new:posix=33152/7/8/1700000002")
is "${out%% etag*}" "REPLY @2:upload:up/big.bin:new:posix=33152/7/8/1700000002 -> 0" \
	"UPLOAD with POSIX in parts: uploaded"
big=$(etag_of "$out")
is "$(hdr POST 'up/big.bin?uploads=' x-amz-meta-mode)" 33152 "... the CreateMultipartUpload carries them"
is "$(head_of up/big.bin x-amz-meta-mode x-amz-meta-uid x-amz-meta-gid x-amz-meta-mtime)" \
	"x-amz-meta-mode=33152 x-amz-meta-uid=7 x-amz-meta-gid=8 x-amz-meta-mtime=1700000002" \
	"... and the object has them"

# --- MKDIR: the marker carries them, and its Content-Type ---------------------
out=$(cache "@2:mkdir::d1:posix=16877/1000/1000/1700000003")
is "$out" "REPLY @2:mkdir::d1:posix=16877/1000/1000/1700000003 -> 0" "MKDIR with POSIX"
is "$(hdr PUT d1/ x-amz-meta-mode) $(hdr PUT d1/ content-type) $(hdr PUT d1/ if-none-match)" \
	"16877 application/x-directory *" "... the marker PUT: mode, Content-Type, If-None-Match"
is "$(head_of d1/ content-type x-amz-meta-uid x-amz-meta-mtime)" \
	"content-type=application/x-directory x-amz-meta-uid=1000 x-amz-meta-mtime=1700000003" \
	"... and the marker has them"

# --- SETMETA: CopyObject onto the key, REPLACE, the rest kept -----------------
put s.txt "hello posix" "Content-Type: text/plain" "x-amz-meta-note: keep me" \
	"x-amz-meta-mode: 33188" "x-amz-meta-uid: 1" "Cache-Control: max-age=60"
etag=$(curl -sfI "http://127.0.0.1:$port/fake/s.txt" | tr -d '\r' | sed -n 's/^ETag: //Ip')
out=$(cache "@2:setmeta:s.txt:11:$etag:posix=33261//1002/")
is "$out" "REPLY @2:setmeta:s.txt:11:$etag:posix=33261//1002/ -> 0 etag $etag" \
	"SETMETA: done, the same ETag (a plain object)"
is "$(head_of s.txt x-amz-meta-mode x-amz-meta-gid x-amz-meta-uid x-amz-meta-mtime)" \
	"x-amz-meta-mode=33261 x-amz-meta-gid=1002 x-amz-meta-uid=1 x-amz-meta-mtime=-" \
	"... mode and gid replaced, uid kept, no mtime made up"
is "$(head_of s.txt content-type x-amz-meta-note cache-control)" \
	"content-type=text/plain x-amz-meta-note=keep me cache-control=max-age=60" \
	"... Content-Type, Cache-Control and other x-amz-meta-* kept"
is "$(curl -sf "http://127.0.0.1:$port/fake/s.txt")" "hello posix" "... and the bytes"
is "$(hdr PUT s.txt x-amz-metadata-directive) $(hdr PUT s.txt x-amz-copy-source) $(hdr PUT s.txt x-amz-copy-source-if-match)" \
	"REPLACE /fake/s.txt $etag" "... the wire: REPLACE, the source, its ETag as the condition"
is "$(reqs s.txt | tail -n 2 | tr '\n' ' ')" "HEAD 200 PUT 200 " "... a HEAD, then the copy"
out=$(cache "@2:setmeta:s.txt:11:\"0123\":posix=384///")
is "$out" "REPLY @2:setmeta:s.txt:11:\"0123\":posix=384/// -> -116 Stale file handle" \
	"SETMETA of another version: ESTALE"
is "$(head_of s.txt x-amz-meta-mode)" "x-amz-meta-mode=33261" "... the object is left alone"
is "$(reqs s.txt | tail -n 1)" "HEAD 200" "... (no copy sent)"
out=$(cache "@2:setmeta:gone.txt:1:\"0123\":posix=384///")
is "$out" "REPLY @2:setmeta:gone.txt:1:\"0123\":posix=384/// -> -116 Stale file handle" \
	"SETMETA of a key that is gone: ESTALE"
out=$(cache "@2:setmeta:s.txt:$((5 * 1024 * MIB + 1)):$etag:posix=384///")
is "$out" "REPLY @2:setmeta:s.txt:$((5 * 1024 * MIB + 1)):$etag:posix=384/// -> -18 Invalid cross-device link" \
	"SETMETA of more than 5 GiB: EXDEV"
out=$(cache "@2:setmeta:up/big.bin:$((5 * MIB + 7)):$big:posix=33188///")
plain="\"$(md5sum <"$pc/up/big.bin" | cut -d' ' -f1)\""
is "$out" "REPLY @2:setmeta:up/big.bin:$((5 * MIB + 7)):$big:posix=33188/// -> 0 etag $plain" \
	"SETMETA of a multipart object: the copy's (plain) ETag"

# --- LOOKUP on a posix_meta mount: trusted.s3cachefs.posix -------------------
put l/has.txt "abc" "x-amz-meta-mode: 33188" "x-amz-meta-uid: 1000" \
	"x-amz-meta-gid: 1001" "x-amz-meta-mtime: 1700000000.5"
put l/none.txt "abc"
put l/bad.txt "abc" "x-amz-meta-mode: rwxr-xr-x" "x-amz-meta-uid: 5"
out=$(cache "@2:lookup:l:has.txt,@2:lookup:l:none.txt,@2:lookup:l:bad.txt,lookup:l:has.txt")
is "$(sort <<<"$out" | tr '\n' '|')" \
	"REPLY @2:lookup:l:bad.txt -> 0|REPLY @2:lookup:l:has.txt -> 0|REPLY @2:lookup:l:none.txt -> 0|REPLY lookup:l:has.txt -> 0|" \
	"LOOKUPs of new names on both mounts"
is "$(pxattr "$pc/l/has.txt")" "$(want_x 15 33188 1000 1001 1700000000)" \
	"a new file: the object's attributes, before its link"
is "$(pxattr "$pc/l/none.txt")" "$(want_x 0 0 0 0 0)" "an object without them: flags 0"
is "$(pxattr "$pc/l/bad.txt")" "$(want_x 2 0 5 0 0)" "a bad mode: left out, the uid kept"
if grep -q "s3://fake/l/bad.txt: unusable x-amz-meta-\* ignored: mode 'rwxr-xr-x'.*(mode bad)" "$work/log"; then
	ok "... with a warning"
else
	not_ok "... with a warning" "$(grep bad.txt "$work/log" | tail -3)"
fi
is "$(pxattr "$cache/l/has.txt")" none "a mount without posix_meta: no attributes recorded"
ino=$(stat -c %i "$pc/l/has.txt")
put l/has.txt "abc" "x-amz-meta-mode: 33216" "x-amz-meta-uid: 0" \
	"x-amz-meta-gid: 0" "x-amz-meta-mtime: 1700000009"
out=$(cache "@2:lookup:l:has.txt")
is "$out" "REPLY @2:lookup:l:has.txt -> 0" "LOOKUP of a cached file whose attributes changed (same ETag)"
is "$(stat -c %i "$pc/l/has.txt")" "$ino" "... the file is kept"
is "$(pxattr "$pc/l/has.txt")" "$(want_x 15 33216 0 0 1700000009)" "... its attributes set in place"
is "$(reqs l/has.txt | tail -n 1)" "HEAD 200" "... from a HEAD"
local_file "$pc/l/loc.txt" 5 "\"$(printf abc | md5sum | cut -d' ' -f1)\""
put l/loc.txt "abc" "x-amz-meta-mode: 33188"
out=$(cache "@2:lookup:l:loc.txt")
is "$out" "REPLY @2:lookup:l:loc.txt -> 0" "LOOKUP of a LOCAL file"
is "$(pxattr "$pc/l/loc.txt")" none "... never gets attributes (they are the kernel's)"

# --- LIST on a posix_meta mount: "DIR_$folder$" is not a file ----------------
put 'f/old_$folder$' ""
put f/x.txt "x"
out=$(cache "@2:list:f" "list:f" '@2:lookup:f:old_$folder$')
is "$out" 'REPLY @2:list:f -> 0
REPLY list:f -> 0
REPLY @2:lookup:f:old_$folder$ -> -2 No such file or directory' "LIST of f on both mounts; LOOKUP of the marker"
is "$(ls "$pc/f" | tr '\n' ' ')" "x.txt " 'posix_meta: the "_$folder$" object is not listed'
is "$(ls "$cache/f" | tr '\n' ' ')" 'old_$folder$ x.txt ' "... (without posix_meta it is a file as before)"
is "$(pxattr "$pc/f/x.txt")" none "a file LIST makes gets no attributes (the kernel LOOKUPs it)"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ]
