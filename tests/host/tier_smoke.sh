#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tier_smoke.sh - the fleet tier (daemon/tier.c), two and more nodes on
# the host: daemon processes in --selftest cache mode, each with its own
# cache directory, one origin (fake_s3.py behind the fault proxy, which
# counts requests) and one tier (another fake_s3.py, which keeps
# x-amz-meta-* and honours If-None-Match on PUT, behind a second fault
# proxy that injects the tier's faults).
#
#   - node B after node A: zero origin data requests, every byte right;
#   - an object changed at origin: origin's new bytes, never the old ones;
#   - a corrupted, truncated or mislabelled block, or an unsigned one with
#     tier_secret: refused, its reason counted, origin's bytes used, the
#     block healed (the next node reads it from the tier);
#   - a block renewed in the cache file before its put: dropped;
#   - tier refused, stalled, 503: origin, within one short timeout, and
#     the breaker opens; a probe after the back-off closes it; 403
#     switches the tier off with one log line.
#
# Host only, no module. Prints TAP; exit 1 if anything failed. Needs
# python3 and curl, and root for the trusted.* xattrs.
#
#   tests/host/tier_smoke.sh [BASE-PORT]      (tests/run.sh host tests)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
base=${1:-4740}
p_origin=$base p_oproxy=$((base + 1)) p_tier=$((base + 2))
p_tproxy=$((base + 3)) p_dead=$((base + 4))
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-tier.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
proxy=$repo/tests/s3server/faultproxy.py
MIB=1048576
# Milliseconds a node waits for its puts (the write-behind) before its
# metrics are read: generous, the host may be busy.
putwait=${TIER_PUTWAIT_MS:-3000}

. "$repo/tests/lib/tap.sh"
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
le() { if [ "$1" -le "$2" ]; then ok "$3 ($1 <= $2)"; else not_ok "$3" "got $1, want <= $2"; fi; }
ge() { if [ "$1" -ge "$2" ]; then ok "$3 ($1 >= $2)"; else not_ok "$3" "got $1, want >= $2"; fi; }

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

listening() { python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null; }
up() {	# PORT: wait until something listens there
	local i
	for ((i = 0; i < 100; i++)); do listening "$1" && return 0; sleep 0.1; done
	return 1
}

# conf NAME [GLOBAL-LINES...]: $work/NAME.conf, the tier behind its proxy
# unless a line says otherwise (tier_endpoint=URL).
conf() {
	local name=$1 tier=http://127.0.0.1:$p_tproxy line
	shift
	{
		echo "[global]"
		echo "endpoint = http://127.0.0.1:$p_oproxy"
		echo "addressing = path"
		echo "allow_http = true"
		echo "tier_bucket = ${tier_bucket:-fleet}"
		echo "tier_connect_timeout_ms = 500"
		echo "tier_stall_timeout = 1"
		for line in "$@"; do
			case $line in
			tier_endpoint=*) tier=${line#tier_endpoint=} ;;
			*) echo "$line" ;;
			esac
		done
		echo "[bucket ${tier_bucket:-fleet}]"
		echo "endpoint = $tier"
		echo "addressing = path"
		echo "allow_http = true"
	} >"$work/$name.conf"
}
# node CONF DIR LOG GROUPS...: one daemon, one cache directory; its
# REPLY and METRIC lines (cache mode, as netlink.c would be driven).
node() {
	local cf=$1 dir=$2 log=$3
	shift 3
	mkdir -p "$dir"
	env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		AWS_EC2_METADATA_DISABLED=true timeout 120 "$daemon" \
		--config "$work/$cf.conf" --lookup-get-max 0 \
		--selftest cache origin "" "$dir" "$@" 2>>"$log" |
		grep --line-buffered -E '^(REPLY|METRIC)' |
		grep --line-buffered -v '^REPLY mount -> 0$'
}
metric() {	# OUTPUT NAME{LABELS}: its value (0 when absent)
	local v
	v=$(grep -F "METRIC $2 " <<<"$1" | awk '{ print $3 }' | tail -n 1)
	echo "${v:-0}"
}
replies_ok() {	# OUTPUT: the number of REPLY lines that are not "-> 0"
	grep '^REPLY' <<<"$1" | grep -vc -- '-> 0$'
}
origin_gets() {	# KEY: object GETs the origin's proxy has seen for KEY
	python3 "$proxy" count "$work/origin.log" --method GET --path "^/origin/$1\$"
}
tier_reqs() {	# METHOD: requests the tier's proxy has seen
	python3 "$proxy" count "$work/tier.log" --method "$1"
}
rules() {	# JSON: the tier proxy's rules (counts reset)
	curl -sf -X PUT --data "$1" "http://127.0.0.1:$p_tproxy/__fault/rules" >/dev/null
}
# origin_put KEY FILE: a version of KEY straight into the origin's store
origin_put() {
	curl -sf -X PUT --data-binary "@$2" "http://127.0.0.1:$p_origin/origin/$1" >/dev/null
}
gen() {	# FILE SIZE SEED: deterministic bytes
	python3 -c 'import random,sys; r = random.Random(sys.argv[3]); open(sys.argv[1], "wb").write(r.randbytes(int(sys.argv[2])))' "$@"
}
# tier_keys OFFSET: the tier's keys holding blocks at OFFSET, from the
# PUTs the tier's fake logged (newest last)
tier_keys() {
	python3 - "$work/tierfake.jsonl" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["method"] == "PUT" and r["status"] == 200 and \
       r["headers"].get("x-amz-meta-s3cfs-offset") == sys.argv[2]:
        print(r["path"])
EOF
}
# tamper MODE PATH [FROM-PATH]: change a stored block behind the daemons'
# backs, straight in the tier's fake: corrupt (a bit of its body),
# truncate (half its body), mislabel (FROM-PATH's body and metadata).
tamper() {
	python3 - "$p_tier" "$@" <<'EOF'
import http.client, sys
port, mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
src = sys.argv[4] if len(sys.argv) > 4 else path
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("GET", src)
r = c.getresponse()
body = r.read()
meta = {k: v for k, v in r.getheaders() if k.lower().startswith("x-amz-meta-")}
assert r.status == 200 and meta, (r.status, meta)
if mode == "corrupt":
    body = body[:100] + bytes([body[100] ^ 1]) + body[101:]
elif mode == "truncate":
    body = body[:len(body) // 2]
c.request("PUT", path, body=body, headers=meta)
assert c.getresponse().status == 200
EOF
}

for t in curl python3; do
	command -v $t >/dev/null || { echo "1..0 # SKIP no $t"; exit 0; }
done
[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"

python3 "$here/fake_s3.py" "$p_origin" "$work/originfake.jsonl" >"$work/originfake.out" 2>&1 &
pids+=($!)
python3 "$here/fake_s3.py" "$p_tier" "$work/tierfake.jsonl" >"$work/tierfake.out" 2>&1 &
pids+=($!)
python3 "$proxy" serve "$p_oproxy" "127.0.0.1:$p_origin" --log "$work/origin.log" \
	>"$work/oproxy.out" 2>&1 &
pids+=($!)
python3 "$proxy" serve "$p_tproxy" "127.0.0.1:$p_tier" --log "$work/tier.log" \
	>"$work/tproxy.out" 2>&1 &
pids+=($!)
for p in "$p_origin" "$p_tier" "$p_oproxy" "$p_tproxy"; do
	up "$p" || { echo "Bail out! nothing listens on $p"; exit 1; }
done
rules '[]'

# Objects: a.bin 3 MiB + 5 (four blocks, the last of 5 bytes), p.bin 3 MiB
# (the poisoned blocks), s.bin 4 MiB (the tier's faults), d.bin 3 MiB.
gen "$work/a.v1" $((3 * MIB + 5)) a1
gen "$work/a.v2" $((3 * MIB + 5)) a2
gen "$work/p" $((3 * MIB)) p
gen "$work/s" $((4 * MIB)) s
gen "$work/d" $((3 * MIB)) d
origin_put a.bin "$work/a.v1"
origin_put p.bin "$work/p"
origin_put s.bin "$work/s"
origin_put d.bin "$work/d"
conf plain
whole=$((4 * MIB))

# --- node A, cold tier -------------------------------------------------------
# (Node A reaches the tier's fake directly: the fault proxy answers an
# Expect: 100-continue itself and drops the header.)
conf direct "tier_endpoint=http://127.0.0.1:$p_tier"
out=$(node direct "$work/A" "$work/A.log" "lookup::a.bin" "fetch:a.bin:0:$whole" sleep:$putwait metrics)
is "$(replies_ok "$out")" 0 "node A: LOOKUP and FETCH answered 0"
check "node A: every byte right" cmp "$work/A/a.bin" "$work/a.v1"
ge "$(origin_gets a.bin)" 1 "node A: the origin sent the object"
is "$(metric "$out" 's3cachefsd_tier_misses_total')" 1 "node A: the tier missed (its first block)"
is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="stored"}')" 4 \
	"node A: the four blocks (the last one of 5 bytes) put into the tier"
is "$(python3 - "$work/tierfake.jsonl" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    h = r["headers"]
    if r["method"] == "PUT" and h.get("if-none-match") == "*" and \
       h.get("expect") == "100-continue" and \
       h.get("x-amz-meta-s3cfs-format") == "1" and len(h.get("x-amz-meta-s3cfs-sha256", "")) == 64:
        n += 1
print(n)
EOF
)" 4 "node A: each put with If-None-Match: *, Expect: 100-continue and its checksum in x-amz-meta"
check "node A: block keys carry the format version" grep -q '"path": "/fleet/s3cachefs/v1/' "$work/tierfake.jsonl"

# --- node B, warm tier -------------------------------------------------------
before=$(origin_gets a.bin)
out=$(node plain "$work/B" "$work/B.log" "lookup::a.bin" "fetch:a.bin:0:$whole" sleep:500 metrics)
is "$(replies_ok "$out")" 0 "node B: answered 0"
is "$(($(origin_gets a.bin) - before))" 0 "node B: zero origin data requests"
check "node B: every byte right" cmp "$work/B/a.bin" "$work/a.v1"
is "$(metric "$out" 's3cachefsd_tier_hits_total')" 4 "node B: four tier hits"
is "$(metric "$out" 's3cachefsd_tier_hit_bytes_total')" $((3 * MIB + 5)) "node B: the object's bytes from the tier"
is "$(metric "$out" 's3cachefsd_s3_received_bytes_total{op="GET"}')" 0 \
	"node B: the origin's byte counter saw none (tier bytes are counted apart)"
ge "$(metric "$out" 's3cachefsd_tier_received_bytes_total')" $((3 * MIB + 5)) \
	"node B: ... the tier's counter did"
is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="stored"}')" 0 "node B: nothing to put"

# --- the object changes at origin --------------------------------------------
origin_put a.bin "$work/a.v2"
before=$(origin_gets a.bin)
out=$(node plain "$work/C" "$work/C.log" "lookup::a.bin" "fetch:a.bin:0:$whole" sleep:$putwait metrics)
is "$(replies_ok "$out")" 0 "changed: node C answered 0"
check "changed: node C has the new bytes, not the tier's old ones" cmp "$work/C/a.bin" "$work/a.v2"
ge "$(($(origin_gets a.bin) - before))" 1 "changed: the new version came from origin"
is "$(metric "$out" 's3cachefsd_tier_hits_total')" 0 "changed: no old block used"
before=$(origin_gets a.bin)
out=$(node plain "$work/C2" "$work/C2.log" "lookup::a.bin" "fetch:a.bin:0:$whole" metrics)
check "changed: the next node reads the new version from the tier" \
	test "$(metric "$out" 's3cachefsd_tier_hits_total')" = 4 -a "$(($(origin_gets a.bin) - before))" = 0
check "changed: ... and its bytes are the new ones" cmp "$work/C2/a.bin" "$work/a.v2"

# --- blocks smaller and larger than the chunk ---------------------------------
# 256 KiB blocks: a 1 MiB chunk is four of them; 2 MiB blocks: one block
# holds two chunks, and is written whole for either (the same version's
# bytes). Other block sizes are other names: they start cold.
for kb in 256 2048; do
	conf "b$kb" "tier_block_kb = $kb"
	out=$(node "b$kb" "$work/b$kb.A" "$work/b$kb.A.log" "lookup::a.bin" "fetch:a.bin:0:$whole" sleep:$putwait metrics)
	blocks=$(((3 * MIB + 5 + kb * 1024 - 1) / (kb * 1024)))
	is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="stored"}')" "$blocks" \
		"$kb KiB blocks: node A put all $blocks of them"
	before=$(origin_gets a.bin)
	out=$(node "b$kb" "$work/b$kb.B" "$work/b$kb.B.log" "lookup::a.bin" "fetch:a.bin:$MIB:$MIB" metrics)
	is "$(replies_ok "$out")" 0 "$kb KiB blocks: node B's FETCH of chunk 1 answered 0"
	is "$(($(origin_gets a.bin) - before))" 0 "$kb KiB blocks: no origin request"
	is "$(metric "$out" 's3cachefsd_tier_hits_total')" $((kb < 1024 ? 1024 / kb : 1)) \
		"$kb KiB blocks: the blocks covering the chunk read ($((kb < 1024 ? 1024 / kb : 1)))"
	lo=$((kb < 1024 ? MIB : 0)) len=$((kb < 1024 ? MIB : 2 * MIB))
	check "$kb KiB blocks: bytes $lo..$((lo + len)) right" \
		cmp <(tail -c +$((lo + 1)) "$work/b$kb.B/a.bin" | head -c $len) \
		<(tail -c +$((lo + 1)) "$work/a.v2" | head -c $len)
done

# --- poisoned blocks ---------------------------------------------------------
out=$(node plain "$work/P0" "$work/P0.log" "lookup::p.bin" "fetch:p.bin:$((0)):$((3 * MIB))" sleep:$putwait metrics)
is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="stored"}')" 3 "poison: p.bin's three blocks in the tier"
k0=$(tier_keys 0 | tail -n 1) k1=$(tier_keys $MIB | tail -n 1) k2=$(tier_keys $((2 * MIB)) | tail -n 1)
n=0
for t in "corrupt:$k0:checksum:0" "truncate:$k1:length:1" "mislabel:$k2:offset:2"; do
	IFS=: read -r mode key reason good <<<"$t"
	n=$((n + 1))
	if [ "$mode" = mislabel ]; then tamper "$mode" "$key" "$k0"; else tamper "$mode" "$key"; fi
	before=$(origin_gets p.bin)
	out=$(node plain "$work/P$n" "$work/P$n.log" "lookup::p.bin" "fetch:p.bin:0:$((3 * MIB))" sleep:$putwait metrics)
	is "$(replies_ok "$out")" 0 "$mode: answered 0"
	check "$mode: every byte right" cmp "$work/P$n/p.bin" "$work/p"
	is "$(metric "$out" "s3cachefsd_tier_invalid_total{reason=\"$reason\"}")" 1 "$mode: refused ($reason)"
	is "$(metric "$out" 's3cachefsd_tier_hits_total')" "$good" "$mode: the good blocks before it used"
	is "$(($(origin_gets p.bin) - before))" 1 "$mode: origin sent the rest in one GET"
	is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="healed"}')" 1 "$mode: the block put back (healed)"
	before=$(origin_gets p.bin)
	out=$(node plain "$work/P$n.h" "$work/P$n.h.log" "lookup::p.bin" "fetch:p.bin:0:$((3 * MIB))" metrics)
	check "$mode: the next node reads all from the tier, none from origin" \
		test "$(metric "$out" 's3cachefsd_tier_hits_total')" = 3 -a "$(($(origin_gets p.bin) - before))" = 0
done
check "poison: each refusal logged with its reason" grep -q 'block refused (checksum)' "$work/P1.log"

# tier_secret: the unsigned blocks are refused, the first one healed signed.
conf secret "tier_secret = a-fleet-secret-0123456789"
out=$(node secret "$work/S1" "$work/S1.log" "lookup::p.bin" "fetch:p.bin:0:$((3 * MIB))" sleep:$putwait metrics)
is "$(metric "$out" 's3cachefsd_tier_invalid_total{reason="hmac"}')" 1 "tier_secret: an unsigned block refused (hmac)"
check "tier_secret: every byte right" cmp "$work/S1/p.bin" "$work/p"
out=$(node secret "$work/S2" "$work/S2.log" "lookup::p.bin" "fetch:p.bin:0:$((3 * MIB))" metrics)
is "$(metric "$out" 's3cachefsd_tier_hits_total')" 1 "tier_secret: the healed block is signed and used"
out=$(node plain "$work/S3" "$work/S3.log" "lookup::p.bin" "fetch:p.bin:0:$((3 * MIB))" metrics)
is "$(metric "$out" 's3cachefsd_tier_hits_total')" 3 "tier_secret: a node without it still reads signed blocks"

# --- the write-behind reads its block back -----------------------------------
# The first tier GET fails (the breaker, at one failure, opens): the
# blocks origin sends wait in the queue; one is changed in the cache file
# meanwhile; the next FETCH's probe closes the breaker and the puts go:
# the changed one is dropped, never uploaded.
conf one "tier_breaker_failures = 1"
rules '[{"method": "GET", "first": 1, "fault": "503"}]'
node one "$work/D" "$work/D.log" "lookup::d.bin" "fetch:d.bin:0:$MIB" \
	"fetch:d.bin:$MIB:$MIB" sleep:2500 "fetch:d.bin:$((2 * MIB)):$MIB" sleep:$putwait metrics \
	>"$work/D.out" &
dpid=$!
for ((i = 0; i < 50; i++)); do
	grep -q "fetch:d.bin:$MIB:$MIB -> 0" "$work/D.out" 2>/dev/null && break
	sleep 0.1
done
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(4096); f.write(b"renewed"); f.close()' "$work/D/d.bin"
wait "$dpid"
out=$(cat "$work/D.out")
is "$(replies_ok "$out")" 0 "write-behind: answered 0"
is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="dropped"}')" 1 \
	"write-behind: the block changed in the cache file dropped"
is "$(metric "$out" 's3cachefsd_tier_puts_total{outcome="stored"}')" 2 \
	"write-behind: the two others put once the breaker closed"
is "$(metric "$out" 's3cachefsd_tier_breaker_opens_total')" 1 "write-behind: the breaker opened once"
is "$(metric "$out" 's3cachefsd_tier_breaker_state')" 0 "write-behind: ... and closed after the probe"
md5() { python3 -c 'import hashlib,sys; d = open(sys.argv[1], "rb").read()[:int(sys.argv[2])]; print(hashlib.md5(d).hexdigest())' "$@"; }
is "$(grep -c -e "\"body_md5\": \"$(md5 "$work/d" $MIB)\"" -e "\"body_md5\": \"$(md5 "$work/D/d.bin" $MIB)\"" "$work/tierfake.jsonl")" 0 \
	"write-behind: block 0 of d.bin never uploaded, neither as fetched nor as changed"
check "write-behind: block 1 of d.bin uploaded as fetched" \
	grep -q "\"body_md5\": \"$(python3 -c 'import hashlib,sys; print(hashlib.md5(open(sys.argv[1], "rb").read()[1048576:2097152]).hexdigest())' "$work/d")\"" "$work/tierfake.jsonl"
rules '[]'

# --- tier trouble ------------------------------------------------------------
# s.bin a chunk at a time: four FETCHes; the breaker opens at two failures
# (reads only: puts off, so that every failure counted is a read's).
fetches=("lookup::s.bin" "fetch:s.bin:0:$MIB" "fetch:s.bin:$MIB:$MIB" \
	 "fetch:s.bin:$((2 * MIB)):$MIB" "fetch:s.bin:$((3 * MIB)):$MIB")
trouble() {	# NAME CONF WHAT REASON
	local name=$1 cf=$2 what=$3 reason=$4 t0
	t0=$(date +%s)
	out=$(node "$cf" "$work/$name" "$work/$name.log" "${fetches[@]}" metrics)
	is "$(replies_ok "$out")" 0 "$what: every FETCH answered 0"
	check "$what: every byte right (from origin)" cmp "$work/$name/s.bin" "$work/s"
	is "$(metric "$out" "s3cachefsd_tier_errors_total{reason=\"$reason\"}")" 2 \
		"$what: two failures counted ($reason), never retried"
	is "$(metric "$out" 's3cachefsd_tier_breaker_state')" 1 "$what: the breaker is open"
	is "$(metric "$out" 's3cachefsd_tier_skipped_total')" 2 "$what: the FETCHes after it do not ask the tier"
	le "$(($(date +%s) - t0))" 8 "$what: done within about one short timeout each (seconds)"
	diag "$what: four FETCHes in $(($(date +%s) - t0)) s"
}
conf dead "tier_endpoint=http://127.0.0.1:$p_dead" "tier_breaker_failures = 2" "tier_put = false"
trouble R1 dead "tier refused" connect
conf two "tier_breaker_failures = 2" "tier_put = false"
rules '[{"method": "GET", "fault": "stall", "seconds": 30}]'
trouble R2 two "tier stalled" timeout
curl -sf -X POST "http://127.0.0.1:$p_tproxy/__fault/release" >/dev/null
rules '[{"method": "GET", "fault": "503"}]'
trouble R3 two "tier 503" server
rules '[{"method": "GET", "fault": "status", "status": 403, "code": "AccessDenied"}]'
before=$(tier_reqs GET)
out=$(node two "$work/R4" "$work/R4.log" "${fetches[@]}" metrics)
is "$(replies_ok "$out")" 0 "tier 403: every FETCH answered 0"
check "tier 403: every byte right" cmp "$work/R4/s.bin" "$work/s"
is "$(metric "$out" 's3cachefsd_tier_enabled')" 0 "tier 403: the tier is switched off"
is "$(($(tier_reqs GET) - before))" 1 "tier 403: one tier request, none after it"
is "$(grep -c 'not authorised): the tier is off' "$work/R4.log")" 1 "tier 403: one clear log line"
rules '[]'

# A full tier (RGW and MinIO say QuotaExceeded, RGW with a 403): puts
# pause, reads go on, the tier stays on.
rules '[{"method": "PUT", "fault": "status", "status": 403, "code": "QuotaExceeded"}]'
gen "$work/q" $((3 * MIB)) q
origin_put q.bin "$work/q"
puts0=$(tier_reqs PUT) gets0=$(tier_reqs GET)
out=$(node plain "$work/Q" "$work/Q.log" "lookup::q.bin" "fetch:q.bin:0:$MIB" sleep:1500 \
	"fetch:q.bin:$MIB:$((2 * MIB))" sleep:500 metrics)
is "$(replies_ok "$out")" 0 "tier full: answered 0"
check "tier full: every byte right" cmp "$work/Q/q.bin" "$work/q"
is "$(metric "$out" 's3cachefsd_tier_enabled')" 1 "tier full: the tier stays on (a quota is no auth error)"
is "$(metric "$out" 's3cachefsd_tier_puts_paused')" 1 "tier full: puts paused"
is "$(($(tier_reqs PUT) - puts0))" 1 "tier full: one PUT refused, none after it"
is "$(metric "$out" 's3cachefsd_tier_put_queue')" 2 "tier full: the later blocks wait in the queue"
is "$(($(tier_reqs GET) - gets0))" 2 "tier full: reads still ask the tier"
check "tier full: logged" grep -q 'the tier is full; puts paused' "$work/Q.log"
rules '[]'

# tier_bucket naming the mount's own bucket: blocks would show in its
# listings. Refused, logged once; reads go to the origin as without a tier.
tier_bucket=origin conf same "tier_endpoint=http://127.0.0.1:$p_oproxy"
before=$(python3 "$proxy" count "$work/origin.log" --path '^/origin/s3cachefs/')
out=$(node same "$work/O" "$work/O.log" "lookup::a.bin" "fetch:a.bin:0:$MIB" "fetch:a.bin:$MIB:$MIB" sleep:500 metrics)
is "$(replies_ok "$out")" 0 "tier = origin bucket: answered 0"
is "$(python3 "$proxy" count "$work/origin.log" --path '^/origin/s3cachefs/')" "$before" \
	"tier = origin bucket: no block asked for or put in the origin bucket"
is "$(grep -c "tier_bucket is this mount's own bucket" "$work/O.log")" 1 "tier = origin bucket: logged once"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; work in $work (KEEP=1 keeps it)"; }
[ "$TAP_FAILED" = 0 ]
