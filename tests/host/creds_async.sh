#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# creds_async.sh - a bucket whose credential endpoint hangs or fails must
# not hold up the others: s3cachefsd resolves credentials on its event
# loop, not with a blocking curl call, and remembers a failure with a
# back-off instead of asking the endpoint again for every request.
#
# Bucket "slowcreds" has a [bucket] section whose profile takes web
# identity credentials from STS (tests/host/fake_metadata.py); every other
# bucket uses [global]'s static keys against tests/host/fake_s3.py. The
# daemon's --selftest cache drives ops.c as netlink.c would (MOUNT,
# LOOKUP, LIST; "sleep:MS" keeps the loop running), with each reply
# timestamped here. Host only, no module; needs python3, and root for the
# trusted.* xattrs of the cache files. Prints TAP; exit 1 on a failure.
#
#   tests/host/creds_async.sh [PORT]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4632}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-credsasync.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}

. "$repo/tests/lib/tap.sh"
# In this shell, unlike tap.sh's (a bounded bash -c).
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
lt() { if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; then ok "$3 ($1 < $2)"; else not_ok "$3" "got $1, want < $2"; fi; }
ge() { if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; then ok "$3 ($1 >= $2)"; else not_ok "$3" "got $1, want >= $2"; fi; }

s3pid= mdpid=
cleanup() {
	[ -n "$s3pid" ] && kill "$s3pid" 2>/dev/null
	[ -n "$mdpid" ] && kill "$mdpid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
python3 "$here/fake_s3.py" "$port" "$work/s3.jsonl" >"$work/s3.out" 2>&1 &
s3pid=$!
coproc MD { exec python3 "$here/fake_metadata.py" 2>"$work/md.err"; }
mdpid=$MD_PID
read -r -t 10 mport <&"${MD[0]}" || { echo "Bail out! fake_metadata.py"; exit 1; }
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/s3.out" 2>/dev/null && break
	sleep 0.1
done
md() { curl -sf --noproxy '*' "http://127.0.0.1:$mport$1"; }
sts_hits() { md /_stats | python3 -c 'import json,sys; print(json.load(sys.stdin).get("sts", 0))'; }

cat >"$work/s3cachefsd.conf" <<EOT
[global]
endpoint = http://127.0.0.1:$port
allow_http = true
addressing = path

[bucket slowcreds]
profile = wi
EOT
cat >"$work/aws-config" <<EOT
[profile wi]
web_identity_token_file = $work/token
role_arn = arn:aws:iam::123456789012:role/s3cachefs
EOT
echo web-identity-token >"$work/token"

# run LOG GROUPS...: mount 1 is bucket "fake" (static keys); each reply
# as "SECONDS-SINCE-START REPLY ...".
run() {
	local log=$1 t0
	shift
	mkdir -p "$work/c1" "$work/c2" "$work/c3"
	t0=$(date +%s.%N)
	env -u AWS_PROFILE -u AWS_WEB_IDENTITY_TOKEN_FILE -u AWS_ROLE_ARN \
		-u AWS_CONTAINER_CREDENTIALS_RELATIVE_URI \
		-u AWS_CONTAINER_CREDENTIALS_FULL_URI -u AWS_CA_BUNDLE \
		AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		AWS_CONFIG_FILE="$work/aws-config" \
		AWS_SHARED_CREDENTIALS_FILE=/nonexistent \
		AWS_EC2_METADATA_DISABLED=true \
		AWS_ENDPOINT_URL_STS="http://127.0.0.1:$mport" \
		"$daemon" --config "$work/s3cachefsd.conf" \
		--selftest cache fake "" "$work/c1" "$@" 2>>"$log" |
		while IFS= read -r line; do
			[[ $line == REPLY* ]] || continue
			echo "$(echo "$(date +%s.%N) - $t0" | bc) $line"
		done
}
at() { awk -v w="$2" 'index($0, w) { print $1; exit }' <<<"$1"; }	# OUT REPLY-TEXT
reply() { grep -F -- "$2" <<<"$1" | head -n 1 | cut -d' ' -f2-; }

# --- a hung STS: the other bucket is served meanwhile -----------------------
md "/_ctl?reset=1&hang=sts" >/dev/null
out=$(run "$work/hang.log" \
	"mount:2:slowcreds:$work/c2,sleep:500,lookup::ok.bin,list:,lookup::nosuch.bin")
md "/_ctl?reset=1" >/dev/null
echo "$out" | sed 's/^/# /'
is "$(reply "$out" 'lookup::ok.bin ->')" "REPLY lookup::ok.bin -> 0" \
	"hung STS for slowcreds: LOOKUP of the static-key bucket answered"
lt "$(at "$out" 'lookup::ok.bin ->')" 8 \
	"... at once (seconds from the start; the MOUNT waiting for STS came first)"
lt "$(at "$out" 'list: ->')" 8 "... and its LIST too"
lt "$(at "$out" 'lookup::nosuch.bin ->')" 8 "... and a LOOKUP of a missing key"
check "the MOUNT of slowcreds fails once STS times out" \
	grep -q "^[0-9.]* REPLY mount:2:slowcreds:.* -> -[0-9]" <<<"$out"
ge "$(at "$out" 'mount:2:slowcreds')" 15 "... after STS's timeout, not before"

# --- a failing STS: one attempt per back-off, not one per request -------------
md "/_ctl?reset=1&fail=sts:100" >/dev/null
m2="mount:2:slowcreds:$work/c2" m3="mount:3:slowcreds:$work/c3"
out=$(run "$work/fail.log" "$m2,$m3,$m2,$m3" "$m2" "$m3" "lookup::ok.bin" \
	"sleep:1300" "$m2,$m3" "$m2" "$m3")
hits=$(sts_hits)
echo "$out" | sed 's/^/# /'
is "$(grep -c "REPLY mount:.:slowcreds:.* -> -5 " <<<"$out")" 10 \
	"STS answers 500: all ten MOUNTs of slowcreds fail (EIO)"
is "$(reply "$out" 'lookup::ok.bin ->')" "REPLY lookup::ok.bin -> 0" \
	"... while the static-key bucket is served"
is "$hits" 2 "STS asked twice for ten MOUNTs: once, then once after the 1 s back-off"
check "the failure is logged with the back-off" \
	grep -q "slowcreds: cannot load AWS credentials (Input/output error); its requests fail for 1000 ms" "$work/fail.log"
check "requests failing meanwhile are logged" \
	grep -q "slowcreds: requests fail without AWS credentials" "$work/fail.log"

# --- recovery: the attempt after the back-off brings credentials --------------
md "/_ctl?reset=1&fail=sts:1" >/dev/null
out=$(run "$work/recover.log" "$m2" "$m2" "sleep:1300" "$m2" "@2:lookup::ok.bin")
hits=$(sts_hits)
echo "$out" | sed 's/^/# /'
is "$(grep -c "REPLY mount:2:slowcreds:.* -> -5 " <<<"$out")" 2 \
	"STS fails once: the MOUNT fails, and again within the back-off"
is "$(grep -c "REPLY mount:2:slowcreds:.* -> 0$" <<<"$out")" 1 \
	"... the MOUNT after the back-off succeeds"
is "$(reply "$out" '@2:lookup::ok.bin ->')" "REPLY @2:lookup::ok.bin -> 0" \
	"... and slowcreds is served with STS's credentials"
is "$hits" 2 "STS asked twice"
check "credentials from STS logged" \
	grep -q "slowcreds: credentials from the web identity token (STS) (key id ASIASTS" "$work/recover.log"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; daemon logs:"; tail -n 15 "$work"/*.log | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
