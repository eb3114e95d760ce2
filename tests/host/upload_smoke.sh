#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# upload_smoke.sh - the daemon's UPLOAD (op_upload.c, mpu.c) against
# fake_s3.py, without the module: the daemon's --selftest cache feeds it
# UPLOAD requests for LOCAL cache files (what the kernel's close/fsync
# sends). Multipart uploads with 5 MiB parts: the bytes and ETag S3 ends
# up with, the parts in flight at once, If-None-Match / If-Match on the
# Complete, and no upload left open after a failed condition, a part that
# fails for good, or a cancel; a PUT or Complete whose answer was lost is
# a success once a HEAD shows the object is ours, not a conflict. The
# journal: an upload a killed daemon left open is aborted by the next
# daemon's MOUNT; a MOUNT sent again leaves running uploads alone. And a
# LIST never replaces a file the kernel creates while it runs. Streams
# (protocol 8): parts put while a file is written, used by its close (only
# the rest sent, the close's condition on the Complete), or aborted when
# the kernel drops them, the close cannot use them, or a part fails.
# Prints TAP; exit 1 if anything failed. Needs python3, and root for the
# trusted.* xattrs of the cache files.
#
#   tests/host/upload_smoke.sh [PORT]      (tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4613}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-upload.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
reqlog=$work/requests.jsonl
MIB=1048576

. "$repo/tests/lib/tap.sh"

srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT

# One --selftest cache run on $cache: selftest OPTS... -- REQUEST-GROUPS...
# (its output on stdout, its log in $work/log). It execs the daemon: call it
# only in a pipeline or in the background (where $! is then the daemon).
selftest() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	exec env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE \
		AWS_SECRET_ACCESS_KEY=fake \
		"$daemon" --endpoint "http://127.0.0.1:$port" --allow-http --path-style \
		"${opts[@]}" --selftest cache fake "" "$cache" "$@" 2>>"$work/log"
}
# Its replies (but the initial MOUNT's), with these options.
cache_opts() { selftest "$@" | grep '^REPLY' | grep -v '^REPLY mount -> 0$'; }
OPTS=(--part-size $((5 * MIB)) --upload-parallel 2 --retry-base-ms 10)
# ... with OPTS: cache REQUEST-GROUPS...
cache() { cache_opts "${OPTS[@]}" -- "$@"; }
# A cache of s3://fake/ laid out by hand before its first MOUNT: it needs
# the format marker (a directory that holds files and has none is refused).
mark_cache() {	# DIR...
	local d
	for d in "$@"; do
		mkdir -p "$d/.s3cachefs" &&
			printf 'version=1\nbucket=fake\nprefix=\n' >"$d/.s3cachefs/format"
	done
}
# ... the upload metrics ("metrics" requests) instead: "NAME VALUE".
cache_metrics() {
	selftest "${OPTS[@]}" -- "$@" |
		sed -n 's/^METRIC \(s3cachefsd_upload_[a-z_]*\) /\1 /p'
}
# A LOCAL cache file (as the kernel's create makes it) of SIZE random bytes.
local_file() {	# NAME SIZE [BASE-ETAG]
	python3 - "$cache/$1" "$2" "${3:-}" <<'PY'
import os, struct, sys
path, size, etag = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as f:
    f.write(os.urandom(size))
meta = bytes([2, 2]) + struct.pack("<Qq", size, 0) + etag
os.setxattr(path, "trusted.s3cachefs.meta", meta)
PY
}
ctl() { curl -sf "http://127.0.0.1:$port/_ctl?$1"; }
open_uploads() { ctl open_uploads=1; }
served_md5() { curl -sf "http://127.0.0.1:$port/fake/$1" | md5sum | cut -d' ' -f1; }
file_md5() { md5sum <"$cache/$1" | cut -d' ' -f1; }
# The ETag S3 gives these parts: MD5 of the parts' MD5s, "-N".
mpu_etag() {	# FILE PART-SIZE
	python3 - "$1" "$2" <<'PY'
import hashlib, sys
data = open(sys.argv[1], "rb").read()
p = int(sys.argv[2])
parts = [data[i:i + p] for i in range(0, len(data), p)]
print('"%s-%d"' % (hashlib.md5(b"".join(hashlib.md5(x).digest() for x in parts)).hexdigest(), len(parts)))
PY
}
# Logged requests: METHOD and a regex on the path.
nreqs() {
	python3 - "$reqlog" "$1" "$2" <<'PY'
import json, re, sys
log, method, rx = sys.argv[1:4]
print(sum(1 for l in open(log) if (r := json.loads(l))["method"] == method
          and re.search(rx, r["path"])))
PY
}
etag_of() { sed -n 's/.* etag \(.*\)$/\1/p' <<<"$1"; }

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
: >"$reqlog"
python3 "$here/fake_s3.py" "$port" "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/server.out" 2>/dev/null && break
	sleep 0.1
done
cache=$work/c
mkdir -p "$cache"
mark_cache "$cache"

# --- sizes: one PUT up to the part size, parts above it ---------------------
for spec in "up/one.bin $((5 * MIB)) 0" "up/two.bin $((5 * MIB + 1)) 2" \
	    "up/four.bin $((15 * MIB + 7)) 4"; do
	read -r key size parts <<<"$spec"
	local_file "$key" "$size"
	out=$(cache "upload:$key:new")
	is "${out%% etag*}" "REPLY upload:$key:new -> 0" "$key ($size B): uploaded"
	is "$(served_md5 "$key")" "$(file_md5 "$key")" "... S3 has exactly its bytes"
	if [ "$parts" = 0 ]; then
		is "$(nreqs PUT "^/fake/$key\$")" 1 "... in one PUT"
		is "$(nreqs POST "^/fake/$key\\?uploads")" 0 "... not a multipart upload"
	else
		is "$(nreqs POST "^/fake/$key\\?uploads")" 1 "... one multipart upload"
		is "$(nreqs PUT "^/fake/$key\\?.*partNumber")" "$parts" "... of $parts parts"
		is "$(etag_of "$out")" "$(mpu_etag "$cache/$key" $((5 * MIB)))" \
			"... its ETag is the one S3 gives those parts"
	fi
done
is "$(open_uploads)" 0 "no upload is left open"

# --- parts in flight: upload_parallel (2) at once, no more -------------------
local_file up/par.bin $((20 * MIB))
ctl parts_max >/dev/null
ctl "part_delay=0.5" >/dev/null
out=$(cache "upload:up/par.bin:new")
ctl "part_delay=0" >/dev/null
is "${out%% etag*}" "REPLY upload:up/par.bin:new -> 0" "a 20 MiB file with slow parts: uploaded"
is "$(ctl parts_max)" 2 "... its 4 parts went 2 at a time (upload_parallel)"
if python3 -c 'import json, sys
sys.exit(0 if any(r["method"] == "POST" and "uploadId" in r["path"] and r["headers"].get("if-none-match") == "*"
                  for r in map(json.loads, open(sys.argv[1]))) else 1)' "$reqlog"; then
	ok "the Complete of a new file carries If-None-Match: *"
else
	not_ok "the Complete of a new file carries If-None-Match: *"
fi

# --- the next upload of the same file: If-Match its ETag --------------------
base=$(etag_of "$(cache "upload:up/four.bin:match:$(mpu_etag "$cache/up/four.bin" $((5 * MIB)))")")
is "$base" "$(mpu_etag "$cache/up/four.bin" $((5 * MIB)))" \
	"a second upload If-Match the first's ETag succeeds"

# --- conflicts: the condition fails at Complete; the upload is aborted ------
theirs=$(served_md5 up/four.bin)
local_file up/four.bin $((11 * MIB))
out=$(cache "upload:up/four.bin:new")
is "$out" "REPLY upload:up/four.bin:new -> -17 File exists" \
	"a new file whose key was created meanwhile: EEXIST (If-None-Match)"
is "$(open_uploads)" 0 "... and its upload is aborted"
out=$(cache 'upload:up/four.bin:match:"0123456789abcdef0123456789abcdef-3"')
is "$out" 'REPLY upload:up/four.bin:match:"0123456789abcdef0123456789abcdef-3" -> -116 Stale file handle' \
	"a file whose object changed meanwhile: ESTALE (If-Match)"
is "$(open_uploads)" 0 "... and its upload is aborted"
is "$(served_md5 up/four.bin)" "$theirs" "... S3 keeps the other writer's object"

# --- a part that fails for good ---------------------------------------------
local_file up/bad.bin $((16 * MIB))
ctl "part_fail=2&status=403" >/dev/null
out=$(cache "upload:up/bad.bin:new")
ctl "part_fail=0" >/dev/null
is "$out" "REPLY upload:up/bad.bin:new -> -13 Permission denied" \
	"a part the server refuses fails the upload (EACCES)"
is "$(open_uploads)" 0 "... no upload is left open (aborted)"
is "$(nreqs DELETE "^/fake/up/bad.bin\\?uploadId")" 1 "... one AbortMultipartUpload"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/fake/up/bad.bin")" 404 \
	"... and no object"

# --- a Complete whose answer is lost: sent again, NoSuchUpload, HEAD --------
local_file up/lost.bin $((12 * MIB + 3))
ctl "complete_lost=1" >/dev/null
out=$(cache "upload:up/lost.bin:new")
is "${out%% etag*}" "REPLY upload:up/lost.bin:new -> 0" \
	"a Complete that took effect but lost its answer is a success, not a conflict"
is "$(etag_of "$out")" "$(mpu_etag "$cache/up/lost.bin" $((5 * MIB)))" "... with the object's ETag"
is "$(nreqs POST "^/fake/up/lost.bin\\?uploadId")" 2 "... (the Complete was sent twice)"
is "$(nreqs HEAD "^/fake/up/lost.bin\$")" 1 "... (and a HEAD checked the object)"
is "$(served_md5 up/lost.bin)" "$(file_md5 up/lost.bin)" "... S3 has its bytes"

# --- a Complete's 200 that is no CompleteMultipartUploadResult: HEAD decides --
local_file up/garbage.bin $((6 * MIB))
ctl "complete_garbage=1" >/dev/null
out=$(cache "upload:up/garbage.bin:new")
is "$out" "REPLY upload:up/garbage.bin:new -> 0 etag $(mpu_etag "$cache/up/garbage.bin" $((5 * MIB)))" \
	"a Complete answered 200 with no result in it: the object is ours (HEAD), a success"
is "$(open_uploads)" 0 "... and no upload is left open"

# --- a Complete that S3 answers with keep-alive spaces for a while ---------
local_file up/slow.bin $((6 * MIB))
ctl "complete_slow=5" >/dev/null
out=$(cache_opts --part-size $((5 * MIB)) --stall-timeout 2 -- "upload:up/slow.bin:new")
is "${out%% etag*}" "REPLY upload:up/slow.bin:new -> 0" \
	"a Complete answered with spaces for 5 s (stall timeout 2 s) succeeds"
is "$(nreqs POST "^/fake/up/slow.bin\\?uploadId")" 1 "... in one attempt (not dropped as stalled)"

# --- an Error inside Complete's 200 is retried -------------------------------
local_file up/ie.bin $((6 * MIB))
ctl "complete_error=InternalError&n=1" >/dev/null
out=$(cache "upload:up/ie.bin:new")
is "${out%% etag*}" "REPLY upload:up/ie.bin:new -> 0" \
	"an InternalError inside Complete's 200 is retried, and the upload succeeds"
is "$(served_md5 up/ie.bin)" "$(file_md5 up/ie.bin)" "... S3 has its bytes"
is "$(open_uploads)" 0 "no upload is left open at the end"

# --- a PUT whose answer is lost: sent again, 412, HEAD ----------------------
local_file up/plost.bin 70000
ctl "put_lost=1" >/dev/null
out=$(cache "upload:up/plost.bin:new")
is "$out" "REPLY upload:up/plost.bin:new -> 0 etag \"$(file_md5 up/plost.bin)\"" \
	"a PUT that took effect but lost its answer is a success, not a conflict"
is "$(nreqs PUT "^/fake/up/plost.bin\$")" 2 "... (the PUT was sent twice)"
is "$(nreqs HEAD "^/fake/up/plost.bin\$")" 1 "... (and a HEAD checked the object)"
local_file up/plost.bin 70001
curl -sf -o /dev/null -X PUT --data-binary "theirs" "http://127.0.0.1:$port/fake/up/plost.bin"
ctl "fail=1&status=500" >/dev/null
out=$(cache "upload:up/plost.bin:new")
is "$out" "REPLY upload:up/plost.bin:new -> -17 File exists" \
	"a PUT retried into somebody else's object is still a conflict"

# --- an upload that took effect unknown to the kernel (its answer lost after
# --- the last try): the file's next upload, of other bytes, fails its
# --- condition on our own object, which its writer token recognises ---------
local_file up/tok.bin 70000
ctl "put_lost=1" >/dev/null
out=$(cache_opts "${OPTS[@]}" --retry-attempts 1 -- "upload:up/tok.bin:new")
is "$out" "REPLY upload:up/tok.bin:new -> -5 Input/output error" \
	"a PUT that took effect, its answer lost, not tried again: the kernel hears of a failure"
is "$(served_md5 up/tok.bin)" "$(file_md5 up/tok.bin)" "... yet S3 has those bytes"
local_file up/tok.bin 70001
out=$(selftest "${OPTS[@]}" -- "upload:up/tok.bin:new" metrics | grep -v '^REPLY mount')
is "$(grep '^METRIC s3cachefsd_upload_again_total ' <<<"$out" | cut -d' ' -f3)" 1 \
	"metrics: upload_again_total 1"
is "$(grep '^REPLY' <<<"$out")" "REPLY upload:up/tok.bin:new -> 0 etag \"$(file_md5 up/tok.bin)\"" \
	"the file's next upload (other bytes, still a create): put over our own object, not a conflict"
is "$(served_md5 up/tok.bin)" "$(file_md5 up/tok.bin)" "... S3 has the new bytes"
is "$(nreqs PUT "^/fake/up/tok.bin\$")/$(nreqs HEAD "^/fake/up/tok.bin\$")" "3/1" \
	"... (a PUT refused, a HEAD that found our token, the PUT again)"
check "... the PUTs carried the writer token" \
	test "$(python3 -c 'import json, sys
print(sum(1 for r in map(json.loads, open(sys.argv[1])) if r["method"] == "PUT" and r["path"] == "/fake/up/tok.bin" and r["headers"].get("x-amz-meta-s3cfs-writer")))' "$reqlog")" = 3
# With If-Match: an object the file was based on, rewritten twice.
e1=$(etag_of "$(grep '^REPLY' <<<"$out")")
local_file up/tok.bin 70002 "$e1"
ctl "put_lost=1" >/dev/null
out=$(cache_opts "${OPTS[@]}" --retry-attempts 1 -- "upload:up/tok.bin:match:$e1")
is "$out" "REPLY upload:up/tok.bin:match:$e1 -> -5 Input/output error" \
	"If-Match: a PUT that took effect, its answer lost: a failure for the kernel"
local_file up/tok.bin 70003 "$e1"
out=$(cache "upload:up/tok.bin:match:$e1")
is "$out" "REPLY upload:up/tok.bin:match:$e1 -> 0 etag \"$(file_md5 up/tok.bin)\"" \
	"... the next upload, still If-Match the old ETag: put over our own object"
is "$(served_md5 up/tok.bin)" "$(file_md5 up/tok.bin)" "... S3 has the newest bytes"
# Somebody else's object: a conflict, as before.
curl -sf -o /dev/null -X PUT --data-binary "theirs" "http://127.0.0.1:$port/fake/up/tok.bin"
local_file up/tok.bin 70004 "$e1"
out=$(cache "upload:up/tok.bin:match:$e1")
is "$out" "REPLY upload:up/tok.bin:match:$e1 -> -116 Stale file handle" \
	"another writer's object (no token of ours): still a conflict"
is "$(curl -sf "http://127.0.0.1:$port/fake/up/tok.bin")" "theirs" "... theirs is kept"
# A multipart upload: its Complete took effect, its answer lost for good.
local_file up/tok-mp.bin $((11 * MIB))
ctl "complete_lost=1" >/dev/null
out=$(cache_opts "${OPTS[@]}" --retry-attempts 1 -- "upload:up/tok-mp.bin:new")
is "$out" "REPLY upload:up/tok-mp.bin:new -> -5 Input/output error" \
	"a Complete that took effect, its answer lost, not tried again: a failure for the kernel"
local_file up/tok-mp.bin $((11 * MIB + 1))
out=$(cache "upload:up/tok-mp.bin:new")
is "$out" "REPLY upload:up/tok-mp.bin:new -> 0 etag $(mpu_etag "$cache/up/tok-mp.bin" $((5 * MIB)))" \
	"the next multipart upload: completed over our own object, not a conflict"
is "$(served_md5 up/tok-mp.bin)" "$(file_md5 up/tok-mp.bin)" "... S3 has the new bytes"
is "$(open_uploads)" 0 "... and no upload is left open"

# --- an UPLOAD sent again after a daemon died past its PUT or Complete: ------
# --- the condition fails on our own object, which a HEAD recognises -------
out=$(cache "upload:up/two.bin:new")
is "$out" "REPLY upload:up/two.bin:new -> 0 etag $(mpu_etag "$cache/up/two.bin" $((5 * MIB)))" \
	"a multipart UPLOAD whose object S3 already has (ours): a success"
is "$(open_uploads)" 0 "... and the upload it began is aborted"
local_file up/again.bin 5000
cache "upload:up/again.bin:new" >/dev/null
out=$(cache "upload:up/again.bin:new")
is "$out" "REPLY upload:up/again.bin:new -> 0 etag \"$(file_md5 up/again.bin)\"" \
	"a PUT whose object S3 already has (ours): a success"

# --- the kernel gives an upload up (a killed writer): parts stop, abort ----
local_file up/cancel.bin $((20 * MIB))
ctl "part_delay=1" >/dev/null
out=$(cache "upload:up/cancel.bin:new,sleep:500,cancel,sleep:3000")
ctl "part_delay=0" >/dev/null
is "$out" "" "a cancelled upload gets no reply"
if grep -q "UPLOAD s3://fake/up/cancel.bin: given up by the kernel; stopped" "$work/log"; then
	ok "... it was stopped while its parts were in flight"
else
	not_ok "... it was stopped while its parts were in flight" "$(tail -5 "$work/log")"
fi
is "$(open_uploads)" 0 "... and is aborted in the background (no upload left open)"
is "$(nreqs DELETE "^/fake/up/cancel.bin\\?uploadId")" 1 "... by one AbortMultipartUpload"
is "$(nreqs POST "^/fake/up/cancel.bin\\?uploadId")" 0 "... with no Complete sent"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/fake/up/cancel.bin")" 404 \
	"... and no object"

# --- streams (protocol 8): parts put while the file is written --------------
P=$((5 * MIB))
local_file up/s1.bin $((3 * P + 7))
ctl "part_delay=0.3" >/dev/null
out=$(cache_metrics "part:up/s1.bin:11:1:$P" "part:up/s1.bin:11:2:$P" "sleep:800" \
	"upload:up/s1.bin:new:stream=11/2/$P" metrics)
ctl "part_delay=0" >/dev/null
is "$(grep -E '_(streamed|stream_dropped|parts)_total' <<<"$out" | tr '\n' ' ')" \
	"s3cachefsd_upload_parts_total 4 s3cachefsd_upload_streamed_total 1 s3cachefsd_upload_stream_dropped_total 0 " \
	"a stream of 2 parts, then its close: 4 parts in all, the stream used"
is "$(served_md5 up/s1.bin)" "$(file_md5 up/s1.bin)" "... S3 has exactly the file's bytes"
is "$(nreqs POST "^/fake/up/s1.bin\\?uploads")" 1 "... in one multipart upload"
is "$(nreqs PUT "^/fake/up/s1.bin\\?.*partNumber=[12]&")" 2 "... parts 1 and 2 sent once each"
if python3 -c 'import json, sys
sys.exit(0 if any(r["method"] == "POST" and "uploadId" in r["path"] and r["headers"].get("if-none-match") == "*"
                  and "s1.bin" in r["path"] for r in map(json.loads, open(sys.argv[1]))) else 1)' "$reqlog"; then
	ok "... its Complete carries the close's condition (If-None-Match: *)"
else
	not_ok "... its Complete carries the close's condition (If-None-Match: *)"
fi
# Its ETag is the one S3 gives the parts, as the kernel's next If-Match needs.
out=$(cache "part:up/s1.bin:12:1:$P" "upload:up/s1.bin:match:$(mpu_etag "$cache/up/s1.bin" "$P"):stream=12/1/$P")
is "$(etag_of "$out")" "$(mpu_etag "$cache/up/s1.bin" "$P")" \
	"a second stream of the same bytes If-Match the first's ETag: the same ETag"
# A file whose size is a whole number of streamed parts: nothing left to send.
local_file up/s2.bin $((2 * P))
out=$(cache_metrics "part:up/s2.bin:13:2:$P" "sleep:500" "upload:up/s2.bin:new:stream=13/2/$P" metrics)
is "$(served_md5 up/s2.bin)" "$(file_md5 up/s2.bin)" "a file of exactly 2 streamed parts: S3 has its bytes"
is "$(nreqs PUT "^/fake/up/s2.bin\\?.*partNumber")" 2 "... from the 2 streamed parts alone"
# Aborted by the kernel (rewritten, unlinked): no upload left open.
local_file up/s3.bin $((2 * P + 1))
out=$(selftest "${OPTS[@]}" -- "part:up/s3.bin:14:1:$P" "sleep:300" "part:up/s3.bin:14:0:$P" "sleep:500" metrics)
is "$(grep -c '^REPLY part:up/s3.bin:14:[01]:[0-9]* -> 0$' <<<"$out")" 2 "a stream, then its abort: both answered 0"
is "$(open_uploads)" 0 "... no upload is left open"
is "$(nreqs DELETE "^/fake/up/s3.bin\\?uploadId")" 1 "... one AbortMultipartUpload"
is "$(grep '^METRIC s3cachefsd_upload_stream_dropped_total' <<<"$out")" "METRIC s3cachefsd_upload_stream_dropped_total 1" "... counted as dropped"
# A close that cannot use its stream (renamed, another layout): the stream
# is aborted, the file goes up whole.
local_file up/s4.bin $((2 * P + 1))
local_file up/s4b.bin $((2 * P + 1))
cp "$cache/up/s4.bin" "$cache/up/s4b.bin"
out=$(cache "part:up/s4.bin:15:1:$P" "sleep:300" "upload:up/s4b.bin:new:stream=15/1/$P" | tail -n 1)
is "${out%% etag*}" "REPLY upload:up/s4b.bin:new:stream=15/1/$P -> 0" \
	"a close under another name than its stream's: uploaded"
is "$(served_md5 up/s4b.bin)" "$(file_md5 up/s4b.bin)" "... whole, with the right bytes"
is "$(nreqs PUT "^/fake/up/s4b.bin\\?.*partNumber")" 3 "... in 3 parts of its own"
is "$(open_uploads)" 0 "... and the stream's upload is aborted"
out=$(cache "upload:up/s4.bin:new:stream=99/1/$P")
is "${out%% etag*}" "REPLY upload:up/s4.bin:new:stream=99/1/$P -> 0" "a close naming a stream this daemon never saw: uploaded whole"
is "$(served_md5 up/s4.bin)" "$(file_md5 up/s4.bin)" "... with the right bytes"
# A conflict at the Complete of a stream (another writer's object): refused,
# and nothing left open.
local_file up/s4.bin $((2 * P + 1))
curl -sf -o /dev/null -X PUT --data-binary "theirs" "http://127.0.0.1:$port/fake/up/s4.bin"
out=$(cache "part:up/s4.bin:16:1:$P" "sleep:300" "upload:up/s4.bin:new:stream=16/1/$P" | tail -n 1)
is "$out" "REPLY upload:up/s4.bin:new:stream=16/1/$P -> -17 File exists" \
	"a stream whose key was created meanwhile: EEXIST at its close"
is "$(open_uploads)" 0 "... and its upload is aborted"
# POSIX attributes: the upload is created with the first parts' (no mtime:
# the object's time is S3's); a close with other ones does not use it.
local_file up/s6.bin $((2 * P + 1))
out=$(cache "part:up/s6.bin:18:1:$P:posix=33188/1000/1001/" "sleep:300" \
	"upload:up/s6.bin:new:posix=33188/1000/1001/1700000000.5:stream=18/1/$P" | tail -n 1)
is "${out%% etag*}" "REPLY upload:up/s6.bin:new:posix=33188/1000/1001/1700000000.5:stream=18/1/$P -> 0" \
	"a stream with attributes, closed with the same ones and an mtime: uploaded"
is "$(nreqs POST "^/fake/up/s6.bin\\?uploads") $(nreqs DELETE "^/fake/up/s6.bin\\?uploadId")" "1 0" \
	"... by the stream's upload (one created, none aborted)"
hdrs=$(curl -sfI "http://127.0.0.1:$port/fake/up/s6.bin" | tr -d '\r' | grep -i '^x-amz-meta-' | sort)
is "$(grep -v '^x-amz-meta-s3cfs-writer:' <<<"$hdrs" | tr '\n' ' ')" "x-amz-meta-gid: 1001 x-amz-meta-mode: 33188 x-amz-meta-uid: 1000 " \
	"... with the stream's mode, uid and gid, and no mtime of its own"
check_sh "... and the writer token of its base (a new file), as a close's own upload has" \
	grep -qx 'x-amz-meta-s3cfs-writer: [0-9a-f]\{32\}' <<<"$hdrs"
out=$(cache "part:up/s6.bin:19:1:$P:posix=33188/1000/1001/" "sleep:300" \
	"upload:up/s6.bin:match:$(mpu_etag "$cache/up/s6.bin" "$P"):posix=33261/1000/1001/1700000000.5:stream=19/1/$P" | tail -n 1)
is "${out%% etag*}" "REPLY upload:up/s6.bin:match:$(mpu_etag "$cache/up/s6.bin" "$P"):posix=33261/1000/1001/1700000000.5:stream=19/1/$P -> 0" \
	"a close with another mode than its stream's: uploaded"
is "$(curl -sfI "http://127.0.0.1:$port/fake/up/s6.bin" | tr -d '\r' | grep -ci '^x-amz-meta-mode: 33261')" 1 \
	"... whole, with the close's attributes"
# A close conditional on another version than the one its stream's upload
# was created on (the file's LOCAL tag then, whose writer token it carries):
# the stream is aborted, the file goes up whole.
local_file up/s7.bin $((2 * P + 1)) '"0123456789abcdef0123456789abcdef"'
out=$(cache "part:up/s7.bin:20:1:$P" "sleep:300" "upload:up/s7.bin:new:stream=20/1/$P" | tail -n 1)
is "${out%% etag*}" "REPLY upload:up/s7.bin:new:stream=20/1/$P -> 0" \
	"a close on another base than its stream's (new, where the tag named an ETag): uploaded"
is "$(nreqs DELETE "^/fake/up/s7.bin\\?uploadId") $(served_md5 up/s7.bin)" "1 $(file_md5 up/s7.bin)" \
	"... whole, the stream's upload aborted"
check "... the daemon said why" grep -q 'stream 20 not used (another base version)' "$work/log"
# A stream whose part fails: the close uploads whole (one PUT: part size
# 16 MiB for the daemon's own uploads).
local_file up/s5.bin $((2 * P + 1))
ctl "part_fail=1&status=403" >/dev/null
out=$(selftest --part-size $((16 * MIB)) --retry-base-ms 10 -- \
	"part:up/s5.bin:17:1:$P" "sleep:800" "upload:up/s5.bin:new:stream=17/1/$P" metrics)
ctl "part_fail=0" >/dev/null
if grep -q "stream 17 failed" "$work/log"; then
	ok "a stream whose part the server refuses fails"
else
	not_ok "a stream whose part the server refuses fails" "$(tail -5 "$work/log")"
fi
is "$(served_md5 up/s5.bin)" "$(file_md5 up/s5.bin)" "a stream whose upload failed: the close uploads the file whole"
is "$(grep '^METRIC s3cachefsd_upload_stream_dropped_total' <<<"$out")" "METRIC s3cachefsd_upload_stream_dropped_total 1" "... the stream counted as dropped"
is "$(open_uploads)" 0 "no upload is left open after the streams"

# --- metrics of one multipart upload -----------------------------------------
local_file up/metrics.bin $((12 * MIB + 3))
is "$(cache_metrics "upload:up/metrics.bin:new" metrics | tr '\n' ' ')" \
	"s3cachefsd_upload_bytes_total $((12 * MIB + 3)) s3cachefsd_upload_multipart_total 1 s3cachefsd_upload_parts_total 3 s3cachefsd_upload_aborted_total 0 s3cachefsd_upload_abort_failures_total 0 s3cachefsd_upload_ours_total 0 s3cachefsd_upload_again_total 0 s3cachefsd_upload_recovered_total 0 s3cachefsd_upload_streamed_total 0 s3cachefsd_upload_stream_dropped_total 0 " \
	"metrics: the bytes, the multipart upload and its 3 parts"

# --- the journal: a daemon killed mid-upload leaves a record; the next --------
# --- daemon's MOUNT aborts that upload ---------------------------------------
journal() { ls -A "$cache/.s3cachefs/uploads" 2>/dev/null | wc -l; }
local_file up/crash.bin $((20 * MIB))
ctl "part_delay=5" >/dev/null
selftest --part-size $((5 * MIB)) -- "upload:up/crash.bin:new" >/dev/null &
pid=$!
for ((i = 0; i < 100; i++)); do
	[ "$(journal)" -gt 0 ] && break
	sleep 0.1
done
sleep 0.5
{ kill -9 "$pid"; wait "$pid"; } 2>/dev/null
ctl "part_delay=0" >/dev/null
is "$(open_uploads)" 1 "a daemon killed mid-upload leaves its upload open in S3"
is "$(journal)" 1 "... and its record in the journal"
printf 'torn' >"$cache/.s3cachefs/uploads/u0123"
m=$(cache_metrics "sleep:2000" metrics)
is "$(open_uploads)" 0 "the next daemon's MOUNT aborts it"
is "$(nreqs DELETE "^/fake/up/crash.bin\\?uploadId")" 1 "... (one AbortMultipartUpload)"
is "$(journal)" 0 "... and the journal is empty (a torn record removed too)"
is "$(grep -E '_(recovered|aborted)_total' <<<"$m" | tr '\n' ' ')" \
	"s3cachefsd_upload_aborted_total 1 s3cachefsd_upload_recovered_total 1 " \
	"... metrics: one upload recovered and aborted"

# A MOUNT sent again while an upload runs leaves that upload alone.
local_file up/remount.bin $((12 * MIB))
ctl "part_delay=1" >/dev/null
out=$(cache "upload:up/remount.bin:new,sleep:1500,mount:1:fake:$cache")
ctl "part_delay=0" >/dev/null
is "$(grep -c '^REPLY upload:up/remount.bin:new -> 0 ' <<<"$out")" 1 \
	"an upload running while its mount is sent again completes"
is "$(served_md5 up/remount.bin)" "$(file_md5 up/remount.bin)" "... S3 has its bytes"
is "$(journal)" 0 "... and the journal is empty"

# --- a LIST that adds a name the kernel creates at that moment keeps the ---
# --- kernel's file (a fault point in the daemon makes the interleaving) ---
race=$work/race
mkdir -p "$race"
out=$(S3D_TEST_CREATE_AT_LINK=small.bin cache=$race cache "list:lk")
is "$out" "REPLY list:lk -> 0" "a listing of lk/ while the kernel creates lk/small.bin"
if grep -q "test: created LOCAL small.bin just before the listing links it" "$work/log"; then
	ok "... the create came between the listing's look and its link"
else
	not_ok "... the create came between the listing's look and its link"
fi
is "$(cat "$race/lk/small.bin")" "written here" "... the file written here keeps its bytes"
is "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "trusted.s3cachefs.meta")[0])' \
	"$race/lk/small.bin")" 2 "... and stays LOCAL (meta version 2)"
is "$(ls "$race/lk" | wc -l)" 8 "... and the listing's 7 other names are there"

# --- conditional writes, probed at a writable MOUNT -------------------------
probe_puts() { nreqs PUT '\.s3cfs-probe-[0-9a-f]{16}$'; }
before=$(probe_puts)
out=$(cache "mount:2:fake:$race")
is "$out" "REPLY mount:2:fake:$race -> 0" "a read-only MOUNT"
is "$(probe_puts)" "$before" "... probes nothing"
out=$(cache "mount:2:fake:$race:writable")
is "$out" "REPLY mount:2:fake:$race:writable -> 0" "a writable MOUNT of a server with conditional writes"
is "$(probe_puts)" $((before + 3)) \
	"... probes once: PUTs with If-Match (absent key), If-None-Match: *, If-Match its ETag"
is "$(python3 -c 'import json, re, sys
print(sum(1 for r in map(json.loads, open(sys.argv[1])) if re.search(r"\.s3cfs-probe-", r["path"]) and r["method"] == "PUT" and r["status"] == 404 and r["headers"].get("if-match")))' "$reqlog")" 1 \
	"... the first answered 404: nothing created"
is "$(python3 -c 'import json, re, sys
print(sum(1 for r in map(json.loads, open(sys.argv[1])) if re.search(r"\.s3cfs-probe-.*uploadId", r["path"]) and r["method"] == "POST" and r["status"] == 412 and r["headers"].get("if-match")))' "$reqlog")" 1 \
	"... and a one-part upload's Complete with a made-up If-Match: 412"
# (fake_s3.py has no CopyObject: its copy is a PUT, which the probe sees.)
if grep -qE "s3://fake: the server honours conditional writes(; not on CopyObject[^;]*)?$" "$work/log"; then
	ok "... so the server honours them, quoted, on Complete too"
else
	not_ok "... so the server honours them, quoted, on Complete too" "$(grep probe "$work/log" | tail -3)"
fi
is "$(curl -s "http://127.0.0.1:$port/_ctl?open_uploads=1")" 0 "... its upload aborted"
ctl "conditions=0" >/dev/null
deletes=$(nreqs DELETE '\.s3cfs-probe-[0-9a-f]{16}$')
out=$(cache "mount:2:fake:$race:writable")
is "$out" "REPLY mount:2:fake:$race:writable -> 0" "a server that ignores conditions: the writable MOUNT goes on"
if grep -q "s3://fake: the server ignores conditional writes" "$work/log"; then
	ok "... with a warning"
else
	not_ok "... with a warning"
fi
is "$(nreqs DELETE '\.s3cfs-probe-[0-9a-f]{16}$')" $((deletes + 1)) "... and the probe object it created is deleted"
probe_key=$(python3 -c 'import json, re, sys
print([r["path"] for r in map(json.loads, open(sys.argv[1])) if r["method"] == "PUT" and r["status"] == 200 and re.search(r"\.s3cfs-probe-", r["path"])][-1])' "$reqlog")
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$probe_key")" 404 \
	"... (S3 has no probe object: ${probe_key##*/})"
out=$(cache_opts --require-conditions 1 -- "mount:2:fake:$race:writable")
is "$out" "REPLY mount:2:fake:$race:writable -> -95 Operation not supported" \
	"with require_conditions = 1 the writable MOUNT is refused (EOPNOTSUPP)"
ctl "conditions=1" >/dev/null
# A probe the server keeps failing (503, retried) does not hold the MOUNT.
ctl "fail=1000&status=503" >/dev/null
t0=$(date +%s)
out=$(cache_opts --retry-base-ms 1000 -- "mount:3:fake:$race:writable")
t1=$(date +%s)
ctl "fail=0" >/dev/null
is "$out" "REPLY mount:3:fake:$race:writable -> 0" \
	"a writable MOUNT whose probe gets no answer goes on"
if [ $((t1 - t0)) -lt 20 ] &&
   grep -q "no answer to the conditional-write probe within 5000 ms" "$work/log"; then
	ok "... after the probe's 5 s wait ($((t1 - t0)) s)"
else
	not_ok "... after the probe's 5 s wait" "took $((t1 - t0)) s; $(tail -3 "$work/log")"
fi

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ]
