#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-ctl.sh - s3cachectl ls/head/cat against s3rver on the host (no
# kernel module). Prints TAP; exit 1 if anything failed. ~5 s.
#
#   tools/s3cachectl/test-ctl.sh [PORT]     (make -C tools/s3cachectl test)
#
# Needs: tools/s3cachectl/s3cachectl built, s3rver (tests/s3server, `npm ci`).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4621}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3ctl-test.XXXXXX")
ctl=${S3CACHECTL:-$here/s3cachectl}
export S3_PORT=$port S3_DATA=$work/s3data
# shellcheck source=../../tests/lib/s3.sh
. "$repo/tests/lib/s3.sh"	# clears AWS_* from the environment

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && sed 's/^/# /' <<<"$2"
	return 0
}
is() { if [ "$1" == "$2" ]; then ok "$3"; else not_ok "$3" "got:  $1
want: $2"; fi; }

cleanup() {
	"$repo/tests/s3server/s3server.sh" stop "$S3_DATA" "$port" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# Never the host's /etc/s3cachefs/s3cachefsd.conf: tests name their own.
: >"$work/empty.conf"
export S3CACHEFSD_CONFIG=$work/empty.conf

mkdir -p "$S3_DATA"
if ! "$repo/tests/s3server/s3server.sh" start "$S3_DATA" "$port" bkt >"$work/start.log" 2>&1; then
	echo "1..0 # SKIP s3rver did not start: $(tail -1 "$work/start.log")"
	exit 0
fi

# Signed (credentials from the environment, as the daemon takes them).
export AWS_ACCESS_KEY_ID=$S3_AK AWS_SECRET_ACCESS_KEY=$S3_SK
c() { "$ctl" "$1" --endpoint "$S3_ENDPOINT" --allow-http --region us-east-1 --path-style "${@:2}"; }
# The daemon's order too: options before the command (tests/rgw does that).
cpre() { "$ctl" --endpoint "$S3_ENDPOINT" --allow-http --region us-east-1 --path-style "$@"; }

printf 'hello, world\n' >"$work/a"
head -c 3000000 /dev/urandom >"$work/big"
: >"$work/empty"
s3_put bkt top.txt "$work/a"
s3_put bkt dir/one.bin "$work/big"
s3_put bkt dir/sub/two.txt "$work/a"
s3_put bkt dir/empty "$work/empty"

# cat: byte for byte.
c cat s3://bkt/dir/one.bin >"$work/out"; rc=$?
is "$rc" 0 "cat: exit 0"
if cmp -s "$work/big" "$work/out"; then ok "cat: 3 MB object byte for byte"
else not_ok "cat: 3 MB object byte for byte"; fi
is "$(c cat s3://bkt/top.txt | od -c)" "$(od -c <"$work/a")" "cat: small object"
is "$(c cat s3://bkt/dir/empty | wc -c)" 0 "cat: empty object"
is "$(c cat --anonymous s3://bkt/top.txt)" "hello, world" "cat --anonymous"
is "$(cpre cat s3://bkt/top.txt)" "hello, world" "options before the command"
is "$(cpre ls s3://bkt/ | tail -1 | cut -c21-)" "          13 top.txt" "ls, options first"

# head: key, size, ETag (MD5 for a single-part upload), Last-Modified.
out=$(c head s3://bkt/dir/one.bin); rc=$?
is "$rc" 0 "head: exit 0"
md5=$(md5sum <"$work/big" | cut -d' ' -f1)
is "$(sed -n 1,3p <<<"$out")" "Key: dir/one.bin
Size: 3000000
ETag: \"$md5\"" "head: key, size, etag"
if grep -Eq '^Last-Modified: [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC$' <<<"$out"; then
	ok "head: Last-Modified"
else not_ok "head: Last-Modified" "$out"; fi

# ls: one level (prefixes, then objects); -r: everything below. Dates vary.
strip() { sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}/DATE/'; }
pre() { printf '%19s %12s %s' '' PRE "$1"; }
is "$(c ls s3://bkt/ | strip)" "$(pre dir/)
DATE           13 top.txt" "ls: bucket root"
is "$(c ls s3://bkt/dir/ | strip)" "$(pre dir/sub/)
DATE            0 dir/empty
DATE      3000000 dir/one.bin" "ls: a prefix (S3 key order)"
is "$(c ls -r s3://bkt/dir/ | strip | sort)" "$(printf '%s\n' \
	'DATE            0 dir/empty' \
	'DATE           13 dir/sub/two.txt' \
	'DATE      3000000 dir/one.bin' | sort)" "ls -r: all keys below"
is "$(c ls s3://bkt/nothing/)" "" "ls: empty prefix prints nothing"

# Errors: the S3 code and request id on stderr, exit 1.
c cat s3://bkt/missing >"$work/out" 2>"$work/err"; rc=$?
is "$rc" 1 "cat missing: exit 1"
if grep -Eq '^s3cachectl: GET s3://bkt/missing: NoSuchKey.*\(HTTP 404, request id [^ )]+\)$' "$work/err"; then
	ok "cat missing: NoSuchKey with request id"
else not_ok "cat missing: NoSuchKey with request id" "$(cat "$work/err")"; fi
is "$(wc -c <"$work/out")" 0 "cat missing: nothing on stdout"
c head s3://bkt/missing >/dev/null 2>"$work/err"; rc=$?
is "$rc" 1 "head missing: exit 1"
if grep -q '^s3cachectl: HEAD s3://bkt/missing: HTTP 404' "$work/err"; then
	ok "head missing: HTTP 404 (a HEAD has no error body)"
else not_ok "head missing: HTTP 404" "$(cat "$work/err")"; fi
c ls s3://nosuchbucket/ >/dev/null 2>"$work/err"; rc=$?
is "$rc" 1 "ls missing bucket: exit 1"
if grep -q 'NoSuchBucket' "$work/err"; then ok "ls missing bucket: NoSuchBucket"
else not_ok "ls missing bucket: NoSuchBucket" "$(cat "$work/err")"; fi
"$ctl" cat --endpoint http://127.0.0.1:1 --allow-http --path-style s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
is "$rc" 1 "unreachable endpoint: exit 1"
if grep -qi 'connect' "$work/err"; then ok "unreachable endpoint: says so"
else not_ok "unreachable endpoint: says so" "$(cat "$work/err")"; fi
"$ctl" cat s3:/bad >/dev/null 2>&1; is "$?" 2 "bad URL: usage exit 2"

# No credentials at all: a clear message naming the providers tried. IMDS
# is off here (AWS_EC2_METADATA_DISABLED): off EC2 its probe costs up to
# the 1 s connect timeout, and whatever answers 169.254.169.254 on a test
# host is not to be relied on.
nocreds() {
	(unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
	 HOME=$work AWS_SHARED_CREDENTIALS_FILE=$work/none "$@")
}
nocreds env AWS_EC2_METADATA_DISABLED=true "$ctl" cat --endpoint "$S3_ENDPOINT" \
	--allow-http --path-style s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
is "$rc" 1 "no credentials: exit 1"
if grep -qF 's3cachectl: no AWS credentials found (env, ~/.aws/credentials, web identity, container, IMDS); use --anonymous for public buckets' "$work/err" &&
   grep -q '^  tried: environment: .*; shared files: .*; web identity: .*; container: .*; IMDS: disabled' "$work/err"; then
	ok "no credentials: says so, naming each provider and what it said"
else not_ok "no credentials: says so, naming each provider and what it said" "$(cat "$work/err")"; fi

# IMDS probed where nothing listens: still "none found", and quickly.
t0=$(date +%s%N)
nocreds env AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:1 "$ctl" cat \
	--endpoint "$S3_ENDPOINT" --allow-http --path-style s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ "$rc" = 1 ] && grep -q 'no AWS credentials found' "$work/err" &&
   grep -q 'IMDS: no instance metadata service' "$work/err"; then
	ok "no IMDS: no credentials found"
else not_ok "no IMDS: no credentials found" "rc=$rc $(cat "$work/err")"; fi
if [ "$ms" -lt 3000 ]; then ok "no IMDS: the probe gives up fast (${ms} ms)"
else not_ok "no IMDS: the probe gives up fast" "${ms} ms"; fi

# A provider that is configured but fails is a different message.
nocreds env AWS_EC2_METADATA_DISABLED=true \
	AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:1/creds "$ctl" cat \
	--endpoint "$S3_ENDPOINT" --allow-http --path-style s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
is "$rc" 1 "failing provider: exit 1"
if grep -q '^s3cachectl: cannot load AWS credentials: .*container: .*127.0.0.1:1' "$work/err" &&
   ! grep -q 'no AWS credentials found' "$work/err"; then
	ok "failing provider: names it, not 'none found'"
else not_ok "failing provider: names it, not 'none found'" "$(cat "$work/err")"; fi

# ---- the configuration file (s3cachefsd's) ----
conf=$work/s3cachefsd.conf
cat >"$conf" <<EOF
[global]
endpoint = http://127.0.0.1:1
allow_http = true

[bucket bkt]
endpoint = $S3_ENDPOINT
region = us-east-1
addressing = path
EOF
is "$("$ctl" cat --config "$conf" s3://bkt/top.txt 2>&1)" "hello, world" \
	"config: the bucket's section gives endpoint and addressing"
is "$(S3CACHEFSD_CONFIG=$conf "$ctl" cat s3://bkt/top.txt 2>&1)" "hello, world" \
	"config: \$S3CACHEFSD_CONFIG names the file"
is "$("$ctl" --config "$conf" ls s3://bkt/ | tail -1 | cut -c21-)" "          13 top.txt" \
	"config: --config before the command"
"$ctl" cat --config "$conf" --endpoint http://127.0.0.1:1 s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
if [ "$rc" = 1 ] && grep -qi 'connect' "$work/err"; then
	ok "config: --endpoint wins over the bucket's section"
else not_ok "config: --endpoint wins over the bucket's section" "rc=$rc $(cat "$work/err")"; fi
"$ctl" ls --config "$conf" --path-style s3://other/ >/dev/null 2>"$work/err"; rc=$?
if [ "$rc" = 1 ] && grep -qi 'connect' "$work/err"; then
	ok "config: a bucket without a section gets [global]'s endpoint"
else not_ok "config: a bucket without a section gets [global]'s endpoint" "rc=$rc $(cat "$work/err")"; fi

printf '[bucket bkt]\nendpoint = %s\nallow_http = true\naddressing = path\nanonymous = true\n' "$S3_ENDPOINT" >"$work/anon.conf"
is "$(nocreds env AWS_EC2_METADATA_DISABLED=true "$ctl" cat --config "$work/anon.conf" s3://bkt/top.txt 2>&1)" \
	"hello, world" "config: anonymous = true needs no credentials"

printf '[p1]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$S3_AK" "$S3_SK" >"$work/credentials"
printf '[bucket bkt]\nendpoint = %s\nallow_http = true\naddressing = path\nprofile = %s\n' "$S3_ENDPOINT" nosuch >"$work/prof.conf"
AWS_SHARED_CREDENTIALS_FILE=$work/credentials AWS_CONFIG_FILE=$work/none \
	"$ctl" cat --config "$work/prof.conf" s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
if [ "$rc" = 1 ] && grep -q "no AWS credentials found for profile 'nosuch'" "$work/err" &&
   grep -q "profile 'nosuch' is in neither" "$work/err"; then
	ok "config: its profile is used, not the environment's keys"
else not_ok "config: its profile is used, not the environment's keys" "rc=$rc $(cat "$work/err")"; fi
is "$(nocreds env AWS_SHARED_CREDENTIALS_FILE="$work/credentials" AWS_EC2_METADATA_DISABLED=true \
	"$ctl" cat --config "$work/prof.conf" --profile p1 s3://bkt/top.txt 2>&1)" \
	"hello, world" "config: --profile wins over the section's profile"

printf '[global]\nbogus = 1\n[bucket bkt]\naddressing = sideways\n' >"$work/bad.conf"
"$ctl" cat --config "$work/bad.conf" s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
is "$rc" 2 "config: a bad file: exit 2"
if grep -qF "$work/bad.conf:2: unknown key 'bogus'" "$work/err" &&
   grep -qF "$work/bad.conf:4: addressing 'sideways'" "$work/err"; then
	ok "config: a bad file: every bad line as FILE:LINE"
else not_ok "config: a bad file: every bad line as FILE:LINE" "$(cat "$work/err")"; fi
"$ctl" cat --config "$work/missing.conf" s3://bkt/top.txt >/dev/null 2>"$work/err"; rc=$?
if [ "$rc" = 2 ] && grep -q 'No such file' "$work/err"; then
	ok "config: --config of a missing file: exit 2"
else not_ok "config: --config of a missing file: exit 2" "rc=$rc $(cat "$work/err")"; fi

# sync outside a mount: a clear error, exit 1.
"$ctl" sync "$work" 2>"$work/err"; rc=$?
if [ "$rc" = 1 ] && grep -q 'not on an s3cachefs mount' "$work/err"; then
	ok "sync of a path outside s3cachefs: exit 1, says so"
else not_ok "sync of a path outside s3cachefs: exit 1, says so" "rc=$rc $(cat "$work/err")"; fi

echo "1..$n"
[ "$failed" = 0 ]
