#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-sigv4.sh - s3cachefsd's SigV4 (daemon/libs3c.a) against an
# independent signer, @smithy/signature-v4 (pinned in package-lock.json;
# `npm ci` here, tools/setup.sh does it). Host only, no network.
#
#   tests/sigv4/test-sigv4.sh [COUNT] [SEED...]     (defaults: 300, 1 and 20240229)
#
# 1. smithy reproduces the S3 API reference's signed GET example (so it is
#    set up as S3 wants: service s3, no path re-encoding or normalizing);
# 2. per seed, sigv4-vectors.js generates COUNT requests (GET, GET with
#    Range/If-Match, HEAD, ListObjectsV2, hashed payloads, PUT with
#    conditions and metadata, the multipart requests, DELETE, copies; odd
#    keys, session tokens, regions, dates) signed by smithy; sigv4-check builds and signs
#    the same with s3d_s3_build()/s3d_sigv4(); one TAP point per request
#    class plus a total (URL and Authorization must be identical; the first
#    mismatch is printed with both canonical requests);
# 3. controls: a vector file with one signature altered, and a request
#    whose signing time is changed on the C side, must both be caught.
# Prints TAP; exit 1 if anything failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
count=${1:-300}
shift $(($# > 0 ? 1 : 0))
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 20240229)
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-sigv4.XXXXXX")
trap 'rm -rf "$work"' EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && sed 's/^/# /' <<<"$2"
	return 0
}
# Re-number the TAP points of compare's output into ours.
relay() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "$(sed 's/^ok [0-9]* - //' <<<"$line")" ;;
		"not ok "*) not_ok "$(sed 's/^not ok [0-9]* - //' <<<"$line")" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done
}
vectors="node $here/sigv4-vectors.js"

if [ ! -d "$here/node_modules/@smithy/signature-v4" ]; then
	echo "Bail out! $here/node_modules is missing: run npm ci there (tools/setup.sh does)"
	exit 1
fi
if ! make -s -C "$here" sigv4-check >"$work/build.log" 2>&1; then
	not_ok "build sigv4-check (daemon/libs3c.a)" "$(tail -n 20 "$work/build.log")"
	echo "1..$n"
	exit 1
fi

# The S3 API reference, "Example: GET Object" (examplebucket, test.txt,
# Range: bytes=0-9, 20130524T000000Z, AKIAIOSFODNN7EXAMPLE).
want=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41
got=$($vectors known 2>&1)
if [[ "$got" == *"Signature=$want" ]]; then
	ok "smithy reproduces the S3 reference GET Object signature"
else
	not_ok "smithy reproduces the S3 reference GET Object signature" "$got"
fi

for seed in "${seeds[@]}"; do
	v=$work/v$seed.jsonl
	echo "# seed $seed, $count requests"
	if ! $vectors gen "$seed" "$count" >"$v" 2>"$work/gen.err" ||
	   [ "$(wc -l <"$v")" != "$count" ]; then
		not_ok "seed $seed: smithy signs $count requests" "$(tail -n 20 "$work/gen.err")"
		continue
	fi
	$vectors cinput "$v" >"$work/in$seed"
	if ! "$here/sigv4-check" <"$work/in$seed" >"$work/c$seed" 2>"$work/c.err"; then
		not_ok "seed $seed: sigv4-check signs every request" "$(head -n 20 "$work/c.err")"
	fi
	relay < <($vectors compare "$v" "$work/c$seed" 2>&1)
done

# Controls: the comparison must notice one flipped signature digit...
s=${seeds[0]}
python3 - "$work/v$s.jsonl" "$work/bad.jsonl" <<'EOF'
import json, sys
vs = [json.loads(l) for l in open(sys.argv[1])]
a = vs[len(vs) // 2]["expect"]
a["authorization"] = a["authorization"][:-1] + ("0" if a["authorization"][-1] != "0" else "1")
with open(sys.argv[2], "w") as f:
    for v in vs:
        f.write(json.dumps(v) + "\n")
EOF
out=$($vectors compare "$work/bad.jsonl" "$work/c$s" 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q '^not ok .* 1 of ' <<<"$out" && grep -q '^# smithy canonical request' <<<"$out"; then
	ok "control: one altered signature in the vector file is reported"
else
	not_ok "control: one altered signature in the vector file is reported" "exit $rc
$out"
fi
# ...and a C side that signs at another time (one second later).
python3 -c 'import re, sys
lines = open(sys.argv[1]).readlines()
lines[0] = re.sub(r" time=(\d+)", lambda m: " time=%d" % (int(m.group(1)) + 1), lines[0])
sys.stdout.write("".join(lines))' "$work/in$s" >"$work/bad.in"
"$here/sigv4-check" <"$work/bad.in" >"$work/bad.c" 2>/dev/null
out=$($vectors compare "$work/v$s.jsonl" "$work/bad.c" 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q '^not ok .* 1 of ' <<<"$out" && ! cmp -s "$work/in$s" "$work/bad.in"; then
	ok "control: a request signed one second off is reported"
else
	not_ok "control: a request signed one second off is reported" "exit $rc
$out"
fi

echo "1..$n"
[ "$failed" = 0 ]
