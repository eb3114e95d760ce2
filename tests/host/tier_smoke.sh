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
#     switches the tier off with one log line;
#   - leases: two nodes cold at once fetch about 1x the object from origin
#     (about 2x with tier_lease = false); the lease holder killed mid-fetch:
#     the other node completes within its wait and its own fetch; a lease
#     stale by the tier's clock is taken over; a tier that ignores
#     If-None-Match: no leases, logged.
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
		case " $* " in
		*" tier_stall_timeout = "*) ;;
		*) echo "tier_stall_timeout = 1" ;;
		esac
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
		--config "$work/$cf.conf" \
		--selftest cache origin "" "$dir" "$@" 2>>"$log" |
		grep --line-buffered -E '^(REPLY|METRIC|PROGRESS)' |
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
tier_reqs() {	# METHOD [PATH-RE]: requests the tier's proxy has seen
	python3 "$proxy" count "$work/tier.log" --method "$1" ${2:+--path "$2"}
}
# Block keys end in "<KiB>k/<index>"; leases in "/lease/<stripe>".
blocks_re='k/[0-9]+$'
origin_bytes() {	# KEY: body bytes the origin's proxy sent for GETs of KEY
	python3 - "$work/origin.log" "$1" <<'EOF'
import json, sys
seqs, total = set(), 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "method" in e:
        if e["method"] == "GET" and e["path"] == "/origin/" + sys.argv[2]:
            seqs.add(e["seq"])
    elif e.get("seq") in seqs:
        total += e.get("sent", 0)
print(total)
EOF
}
stamp() {	# each line of stdin after the time it came, in ms
	python3 -u -c 'import sys, time
for l in sys.stdin:
    print("%d %s" % (time.time() * 1000, l), end="", flush=True)'
}
# progress_gap STAMPED-OUTPUT REQ: the longest time, in ms, the request
# REQ went without a report, from its first PROGRESS line to its REPLY
progress_gap() {
	python3 - "$@" <<'EOF'
import sys
ts = []
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) > 2 and f[1] in ("PROGRESS", "REPLY") and f[2].startswith(sys.argv[2]):
        ts.append(int(f[0]))
        if f[1] == "REPLY":
            break
print(max((b - a for a, b in zip(ts, ts[1:])), default=99999))
EOF
}
orules() {	# JSON: the origin proxy's rules
	curl -sf -X PUT --data "$1" "http://127.0.0.1:$p_oproxy/__fault/rules" >/dev/null
}
lease_puts() {	# lease PUTs the tier's fake created (200)
	grep -c '"method": "PUT", "path": "/fleet/s3cachefs/v1/[^"]*/lease/[0-9]*", "status": 200' "$work/tierfake.jsonl"
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
FAKE_LAST_MODIFIED=1 python3 "$here/fake_s3.py" "$p_tier" "$work/tierfake.jsonl" >"$work/tierfake.out" 2>&1 &
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
	local name=$1 cf=$2 what=$3 reason=$4 t0 errs
	t0=$(date +%s)
	out=$(node "$cf" "$work/$name" "$work/$name.log" "${fetches[@]}" metrics)
	is "$(replies_ok "$out")" 0 "$what: every FETCH answered 0"
	check "$what: every byte right (from origin)" cmp "$work/$name/s.bin" "$work/s"
	# Two failures open the breaker; on a slow host its first probe (after
	# 1 s) may be one of the later FETCHes: a third failure, one skip less.
	errs=$(metric "$out" "s3cachefsd_tier_errors_total{reason=\"$reason\"}")
	check "$what: two failures counted ($reason), never retried (a third: the breaker's probe; got $errs)" \
		test "$errs" -ge 2 -a "$errs" -le 3
	is "$(metric "$out" 's3cachefsd_tier_breaker_state')" 1 "$what: the breaker is open"
	is "$(metric "$out" 's3cachefsd_tier_skipped_total')" $((4 - errs)) \
		"$what: the FETCHes after it do not ask the tier (but a probe)"
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
puts0=$(tier_reqs PUT "$blocks_re") gets0=$(tier_reqs GET)
out=$(node plain "$work/Q" "$work/Q.log" "lookup::q.bin" "fetch:q.bin:0:$MIB" sleep:1500 \
	"fetch:q.bin:$MIB:$((2 * MIB))" sleep:500 metrics)
is "$(replies_ok "$out")" 0 "tier full: answered 0"
check "tier full: every byte right" cmp "$work/Q/q.bin" "$work/q"
is "$(metric "$out" 's3cachefsd_tier_enabled')" 1 "tier full: the tier stays on (a quota is no auth error)"
is "$(metric "$out" 's3cachefsd_tier_puts_paused')" 1 "tier full: puts paused"
is "$(($(tier_reqs PUT "$blocks_re") - puts0))" 1 "tier full: one block PUT refused, none after it"
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

# --- leases: single flight across nodes ---------------------------------------
# Two nodes cold at once, each reading l.bin (24 MiB, three stripes) as a
# sequential reader does, one 8 MiB readahead window after the other: one
# of them fetches each stripe from origin, the other waits for its blocks
# (10 s at most: generous, the host may be busy).
gen "$work/l" $((24 * MIB)) l
gen "$work/m" $((24 * MIB)) m
origin_put l.bin "$work/l"
origin_put m.bin "$work/m"
conf lease "tier_lease_wait_ms = 10000"
windows() {	# KEY: LOOKUP, then three 8 MiB FETCHes in turn
	echo "lookup::$1" "fetch:$1:0:$((8 * MIB))" "fetch:$1:$((8 * MIB)):$((8 * MIB))" \
		"fetch:$1:$((16 * MIB)):$((8 * MIB))"
}
# shellcheck disable=SC2046
node lease "$work/L1" "$work/L1.log" $(windows l.bin) sleep:$putwait metrics >"$work/L1.out" &
l1=$!
# shellcheck disable=SC2046
node lease "$work/L2" "$work/L2.log" $(windows l.bin) sleep:$putwait metrics >"$work/L2.out" &
l2=$!
wait "$l1" "$l2"
o1=$(cat "$work/L1.out") o2=$(cat "$work/L2.out")
is "$(($(replies_ok "$o1") + $(replies_ok "$o2")))" 0 "leases: two nodes at once: every FETCH answered 0"
check "leases: node 1: every byte right" cmp "$work/L1/l.bin" "$work/l"
check "leases: node 2: every byte right" cmp "$work/L2/l.bin" "$work/l"
leased=$(origin_bytes l.bin)
diag "leases on: two nodes at once fetched $leased origin bytes of a $((24 * MIB))-byte object ($(python3 -c "print('%.2f' % ($leased / $((24 * MIB))))")x)"
le "$leased" $((24 * MIB * 11 / 10)) "leases: origin bytes at most 1.1x the object"
outcomes() {	# OUTPUT: the lease outcomes counted, as "name=N ..."
	local o n
	for o in won taken_over own lost_tier lost_origin failed unsupported claim_lost; do
		n=$(metric "$1" "s3cachefsd_tier_leases_total{outcome=\"$o\"}")
		[ "$n" = 0 ] || printf '%s=%s ' "$o" "$n"
	done
}
diag "leases: node 1: $(outcomes "$o1"); node 2: $(outcomes "$o2")"
is "$(($(metric "$o1" 's3cachefsd_tier_leases_total{outcome="won"}') + \
	$(metric "$o2" 's3cachefsd_tier_leases_total{outcome="won"}')))" 3 \
	"leases: each of the three stripes won by one node"
ge "$(($(metric "$o1" 's3cachefsd_tier_leases_total{outcome="lost_tier"}') + \
	$(metric "$o2" 's3cachefsd_tier_leases_total{outcome="lost_tier"}')))" 1 \
	"leases: the other node served from the tier (lost_tier)"
ge "$(($(metric "$o1" 's3cachefsd_tier_lease_polls_total') + $(metric "$o2" 's3cachefsd_tier_lease_polls_total')))" 1 \
	"leases: ... polling for the blocks"
is "$(metric "$o1" 's3cachefsd_tier_lease_support')" 1 "leases: the probe found conditional PUTs honoured"
is "$(python3 "$proxy" count "$work/origin.log" --method PUT)" 0 \
	"leases: no lease or probe request ever reaches the origin"
check "leases: the holder is named in the lease" \
	grep -q '"x-amz-meta-s3cfs-lease-holder": "[^"]* [0-9]*"' "$work/tierfake.jsonl"
check "leases: ... with the blocks it fetches (stripe 1 of l.bin: blocks 8-15)" \
	grep -q '"x-amz-meta-s3cfs-lease-blocks": "8-15"' "$work/tierfake.jsonl"

# The same without leases: each node fetches what it misses.
conf nolease "tier_lease = false"
# shellcheck disable=SC2046
node nolease "$work/M1" "$work/M1.log" $(windows m.bin) sleep:$putwait metrics >"$work/M1.out" &
l1=$!
# shellcheck disable=SC2046
node nolease "$work/M2" "$work/M2.log" $(windows m.bin) sleep:$putwait metrics >"$work/M2.out" &
l2=$!
wait "$l1" "$l2"
check "no leases: every byte right on both nodes" \
	eval 'cmp "$work/M1/m.bin" "$work/m" && cmp "$work/M2/m.bin" "$work/m"'
unleased=$(origin_bytes m.bin)
diag "leases off: two nodes at once fetched $unleased origin bytes of a $((24 * MIB))-byte object ($(python3 -c "print('%.2f' % ($unleased / $((24 * MIB))))")x)"
check "no leases: more origin bytes than with leases ($unleased > $leased)" test "$unleased" -gt "$leased"
is "$(metric "$(cat "$work/M1.out")" 's3cachefsd_tier_leases_total{outcome="won"}')" 0 "no leases: none taken"

# The holder killed mid-fetch: its origin trickles, 1 MiB/s (the first
# GET of k.bin only). Node B, which lost the lease, gets the blocks node A
# puts as soon as they are written, while A's FETCH runs; A is killed;
# B waits tier_lease_wait_ms (10 s) in all, then fetches the rest itself,
# its progress reports going on all the while (the kernel's fetch_timeout
# must not end a FETCH that waits).
gen "$work/k" $((16 * MIB)) k
origin_put k.bin "$work/k"
conf kill "tier_lease_wait_ms = 10000"
orules '[{"method": "GET", "path": "^/origin/k\\.bin$", "first": 1, "fault": "trickle", "rate": 1048576}]'
before=$(lease_puts)
mkdir -p "$work/KA"
env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
	AWS_EC2_METADATA_DISABLED=true "$daemon" --config "$work/kill.conf" \
	--selftest cache origin "" "$work/KA" \
	"lookup::k.bin" "fetch:k.bin:0:$((16 * MIB))" >"$work/KA.out" 2>"$work/KA.log" &
ka=$!
pids+=("$ka")
# Its leases: stripe 0, and stripe 1 claimed (its range covers both).
for ((i = 0; i < 100; i++)); do
	[ "$(($(lease_puts) - before))" -ge 2 ] && break
	sleep 0.1
done
is "$(($(lease_puts) - before))" 2 "holder killed: node A holds the leases of both stripes"
t0=$(date +%s%N)
node kill "$work/KB" "$work/KB.log" "lookup::k.bin" "fetch:k.bin:0:$((8 * MIB))" metrics |
	stamp >"$work/KB.out" &
kb=$!
sleep 2.5
kill -9 "$ka"
wait "$ka" 2>/dev/null
wait "$kb"
took=$((($(date +%s%N) - t0) / 1000000))
out=$(cut -d' ' -f2- "$work/KB.out")
is "$(replies_ok "$out")" 0 "holder killed: node B's FETCH answered 0"
check "holder killed: node B's bytes right" \
	cmp <(head -c $((8 * MIB)) "$work/KB/k.bin") <(head -c $((8 * MIB)) "$work/k")
diag "holder killed: node B done in $took ms ($(outcomes "$out"))"
le "$took" 16000 "holder killed: node B done within its wait (10 s) and its own fetch (ms)"
# Reports every 3 s (S3D_PROGRESS_MS, on a 1 s tick): a gap of 6 s is
# none missed on a busy host; without them the wait is silent 7 s or more.
gap=$(progress_gap "$work/KB.out" "fetch:k.bin")
diag "holder killed: node B's longest time without a progress report: $gap ms"
le "$gap" 6000 "holder killed: node B's progress reports go on while it waits (ms)"
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="lost_origin"}')" 1 \
	"holder killed: node B waited, then origin (lost_origin)"
ge "$(metric "$out" 's3cachefsd_tier_hits_total')" 1 \
	"holder killed: ... having used the holder's first blocks from the tier"
is "$(grep -c '^REPLY fetch' "$work/KA.out")" 0 \
	"holder killed: ... put while the holder's FETCH ran (it never ended)"
orules '[]'

# A lease stale by the tier's clock (tier_lease_ttl = 2 s): the dead
# holder's lease of stripe 1 is taken over with If-Match by node C.
sleep 2
conf stale "tier_lease_ttl = 2"
out=$(node stale "$work/KC" "$work/KC.log" "lookup::k.bin" "fetch:k.bin:$((8 * MIB)):$((8 * MIB))" metrics)
is "$(replies_ok "$out")" 0 "stale lease: answered 0"
check "stale lease: bytes right" \
	cmp <(tail -c +$((8 * MIB + 1)) "$work/KC/k.bin") <(tail -c +$((8 * MIB + 1)) "$work/k")
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="taken_over"}')" 1 \
	"stale lease: taken over (its age by the tier's Date and Last-Modified)"
check "stale lease: ... with If-Match" \
	grep -q '"method": "PUT", "path": "/fleet/s3cachefs/v1/[^"]*/lease/1", "status": 200, "conn": "[^"]*", "headers": {[^}]*"if-match"' "$work/tierfake.jsonl"

# A tier that takes If-None-Match: * but does not honour it: the probe
# says so, no leases, one log line.
gen "$work/u" $((3 * MIB)) u
origin_put u.bin "$work/u"
curl -sf "http://127.0.0.1:$p_tier/_ctl?conditions=0" >/dev/null
before=$(lease_puts)
out=$(node plain "$work/U" "$work/U.log" "lookup::u.bin" "fetch:u.bin:0:$((3 * MIB))" metrics)
curl -sf "http://127.0.0.1:$p_tier/_ctl?conditions=1" >/dev/null
is "$(replies_ok "$out")" 0 "no conditions: answered 0"
check "no conditions: every byte right" cmp "$work/U/u.bin" "$work/u"
is "$(metric "$out" 's3cachefsd_tier_lease_support')" 2 "no conditions: the probe says ignored"
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="unsupported"}')" 1 "no conditions: no lease (unsupported)"
is "$(($(lease_puts) - before))" 0 "no conditions: no lease PUT"
is "$(grep -c 'ignores If-None-Match on PUT: no leases' "$work/U.log")" 1 "no conditions: one clear log line"

# A conditional PUT refused outright (403 to the probe's create), or a PUT
# answered without an ETag: no leases, one log line naming why, decided
# (not re-probed; support 2, not 0).
probe_refused() {	# NAME WHAT
	local name=$1 what=$2
	gen "$work/$name.v1" $((2 * MIB)) "$name"
	origin_put "$name.bin" "$work/$name.v1"
	before=$(lease_puts)
	out=$(node plain "$work/$name" "$work/$name.log" "lookup::$name.bin" \
		"fetch:$name.bin:0:$((2 * MIB))" metrics)
	is "$(replies_ok "$out")" 0 "$what: answered 0"
	check "$what: every byte right" cmp "$work/$name/$name.bin" "$work/$name.v1"
	is "$(metric "$out" 's3cachefsd_tier_lease_support')" 2 "$what: the probe's verdict: unusable (2), not unknown"
	is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="unsupported"}')" 1 "$what: no lease (unsupported)"
	is "$(($(lease_puts) - before))" 0 "$what: no lease PUT"
	is "$(metric "$out" 's3cachefsd_tier_enabled')" 1 "$what: the tier stays on"
	is "$(grep -c 'no leases until the configuration is reloaded' "$work/$name.log")" 1 "$what: one log line ..."
	is "$(grep -c -e 's3cfs-probe' -e 'could not be probed' "$work/$name.log")" 0 "$what: ... and no other"
	diag "$what: $(grep 'no leases until' "$work/$name.log" | sed 's/.*tier s3:/tier s3:/')"
}
rules '[{"method": "PUT", "path": "\\.s3cfs-probe-", "fault": "status", "status": 403, "code": "AccessDenied"}]'
probe_refused pr1 "probe create 403"
rules '[]'
curl -sf "http://127.0.0.1:$p_tier/_ctl?put_etag=0" >/dev/null
probe_refused pr2 "PUT without ETag"
curl -sf "http://127.0.0.1:$p_tier/_ctl?put_etag=1" >/dev/null

# Two nodes take over one stale lease at once. A lease's body names its
# writer (holder, random bytes), so its ETag does: If-Match the stale
# lease's ETag lets exactly one of them replace it. The lease is node Z's,
# whose block PUTs failed. The lease PUTs are held 2 s at the tier's proxy,
# so that both nodes' HEADs see it stale before either takeover lands
# (TTL 3 s, by the tier's clock).
gen "$work/t" $((8 * MIB)) t
origin_put t.bin "$work/t"
rules '[{"method": "PUT", "path": "k/[0-9]+$", "fault": "status", "status": 500, "code": "InternalError"}]'
out=$(node plain "$work/TZ" "$work/TZ.log" "lookup::t.bin" "fetch:t.bin:0:$((8 * MIB))" sleep:500 metrics)
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="won"}')" 1 "stale race: node Z holds the lease, its blocks never put"
rules '[{"method": "PUT", "path": "/lease/0$", "fault": "stall", "seconds": 2}]'
sleep 3
conf race "tier_lease_ttl = 3" "tier_lease_wait_ms = 10000" "tier_stall_timeout = 30"
node race "$work/T1" "$work/T1.log" "lookup::t.bin" "fetch:t.bin:0:$((8 * MIB))" sleep:$putwait metrics >"$work/T1.out" &
l1=$!
node race "$work/T2" "$work/T2.log" "lookup::t.bin" "fetch:t.bin:0:$((8 * MIB))" sleep:$putwait metrics >"$work/T2.out" &
l2=$!
wait "$l1" "$l2"
rules '[]'
o1=$(cat "$work/T1.out") o2=$(cat "$work/T2.out")
diag "stale race: node 1: $(outcomes "$o1"); node 2: $(outcomes "$o2")"
is "$(($(replies_ok "$o1") + $(replies_ok "$o2")))" 0 "stale race: both FETCHes answered 0"
check "stale race: every byte right on both nodes" \
	eval 'cmp "$work/T1/t.bin" "$work/t" && cmp "$work/T2/t.bin" "$work/t"'
sum() {	# NAME{LABELS}: its value on node 1 plus node 2
	echo $(($(metric "$o1" "$1") + $(metric "$o2" "$1")))
}
is "$(sum 's3cachefsd_tier_leases_total{outcome="taken_over"}')" 1 \
	"stale race: exactly one node took the stale lease over"
is "$(($(sum 's3cachefsd_tier_leases_total{outcome="lost_tier"}') + \
	$(sum 's3cachefsd_tier_leases_total{outcome="lost_origin"}')))" 1 \
	"stale race: the other lost it (412 to its If-Match), and waited"
le "$(origin_bytes t.bin)" $((8 * MIB * 2 + MIB)) "stale race: the origin sent the stripe to node Z and one other node"

# Blocks larger than a FETCH (tier_block_kb = 4096, FETCHes of 1 MiB): no
# FETCH brings a block whole, so no lease can promise one; two nodes at
# once each go to origin at once, neither waits.
gen "$work/w" $((8 * MIB)) w
origin_put w.bin "$work/w"
conf big "tier_block_kb = 4096" "tier_lease_wait_ms = 8000"
before=$(lease_puts)
t0=$(date +%s%N)
node big "$work/W1" "$work/W1.log" "lookup::w.bin" "fetch:w.bin:0:$MIB" metrics >"$work/W1.out" &
l1=$!
node big "$work/W2" "$work/W2.log" "lookup::w.bin" "fetch:w.bin:0:$MIB" metrics >"$work/W2.out" &
l2=$!
wait "$l1" "$l2"
took=$((($(date +%s%N) - t0) / 1000000))
o1=$(cat "$work/W1.out") o2=$(cat "$work/W2.out")
diag "big blocks: two nodes in $took ms; node 1: $(outcomes "$o1"); node 2: $(outcomes "$o2")"
is "$(($(replies_ok "$o1") + $(replies_ok "$o2")))" 0 "big blocks: both FETCHes answered 0"
check "big blocks: bytes right" \
	eval 'cmp <(head -c $MIB "$work/W1/w.bin") <(head -c $MIB "$work/w") && cmp <(head -c $MIB "$work/W2/w.bin") <(head -c $MIB "$work/w")'
is "$(($(lease_puts) - before))" 0 "big blocks: no lease taken"
is "$(sum 's3cachefsd_tier_lease_polls_total')" 0 "big blocks: no poll"
is "$(sum 's3cachefsd_tier_leases_total{outcome="lost_origin"}')" 0 "big blocks: nobody waited"
le "$took" 6000 "big blocks: both done well within the wait (8 s) (ms)"

# A stripe waited for comes whole from the tier; the next one's first GET
# misses (a miss, not a poll), its lease is won. Node H holds stripe 0 of
# c.bin, its origin trickling (2 MiB/s); node X reads stripes 0 and 1.
gen "$work/c" $((16 * MIB)) c
origin_put c.bin "$work/c"
orules '[{"method": "GET", "path": "^/origin/c\\.bin$", "first": 1, "fault": "trickle", "rate": 2097152}]'
conf wait10 "tier_lease_wait_ms = 10000"
before=$(lease_puts)
node wait10 "$work/CH" "$work/CH.log" "lookup::c.bin" "fetch:c.bin:0:$((8 * MIB))" sleep:$putwait metrics >"$work/CH.out" &
l1=$!
for ((i = 0; i < 100; i++)); do
	[ "$(($(lease_puts) - before))" -ge 1 ] && break
	sleep 0.1
done
out=$(node wait10 "$work/CX" "$work/CX.log" "lookup::c.bin" "fetch:c.bin:0:$((16 * MIB))" sleep:$putwait metrics)
wait "$l1"
orules '[]'
diag "next stripe: node X: $(outcomes "$out"), $(metric "$out" 's3cachefsd_tier_misses_total') misses, $(metric "$out" 's3cachefsd_tier_lease_polls_total') polls"
is "$(replies_ok "$out")" 0 "next stripe: answered 0"
check "next stripe: bytes right" cmp "$work/CX/c.bin" "$work/c"
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="lost_tier"}')" 1 "next stripe: stripe 0 came from the tier (lost_tier)"
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="won"}')" 1 "next stripe: stripe 1's lease won"
is "$(metric "$out" 's3cachefsd_tier_misses_total')" 2 "next stripe: two misses (block 0, block 8), block 8's not a poll"

# Claims: at most four later stripes per FETCH (e.bin: six stripes); a
# claim lost (f.bin's stripe 1 is node Y's) counts claim_lost, not
# lost_origin, and is remembered: the next FETCH of the range (the cache
# file punched, every tier GET a miss) claims it no more.
gen "$work/e" $((48 * MIB)) e
origin_put e.bin "$work/e"
before=$(lease_puts)
out=$(node plain "$work/E" "$work/E.log" "lookup::e.bin" "fetch:e.bin:0:$((48 * MIB))" metrics)
is "$(replies_ok "$out")" 0 "claims: a 48 MiB FETCH answered 0"
is "$(($(lease_puts) - before))" 5 "claims: its stripe's lease and four claims, not six"
gen "$work/f" $((16 * MIB)) f
origin_put f.bin "$work/f"
rules '[{"method": "GET", "path": "k/[0-9]+$", "fault": "status", "status": 404, "code": "NoSuchKey"}]'
out=$(node plain "$work/FY" "$work/FY.log" "lookup::f.bin" "fetch:f.bin:$((8 * MIB)):$((8 * MIB))" metrics)
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="won"}')" 1 "claims: node Y holds stripe 1"
before=$(tier_reqs PUT '/lease/1$')
node plain "$work/FX" "$work/FX.log" "lookup::f.bin" "fetch:f.bin:0:$((16 * MIB))" sleep:1500 \
	"fetch:f.bin:0:$((16 * MIB))" metrics >"$work/FX.out" &
l1=$!
for ((i = 0; i < 100; i++)); do
	grep -q "^REPLY fetch:f.bin:0:$((16 * MIB)) -> 0" "$work/FX.out" 2>/dev/null && break
	sleep 0.1
done
fallocate -p -o 0 -l $((16 * MIB)) "$work/FX/f.bin"
wait "$l1"
rules '[]'
out=$(cat "$work/FX.out")
diag "claims: node X: $(outcomes "$out")"
is "$(grep -c '^REPLY fetch:f.bin.* -> 0$' <<<"$out")" 2 "claims: both FETCHes answered 0"
check "claims: bytes right" cmp "$work/FX/f.bin" "$work/f"
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="claim_lost"}')" 1 "claims: the claim lost counted claim_lost"
is "$(metric "$out" 's3cachefsd_tier_leases_total{outcome="lost_origin"}')" 0 "claims: ... not lost_origin"
is "$(($(tier_reqs PUT '/lease/1$') - before))" 1 "claims: the second FETCH did not claim it again"

# The blocks of a claimed stripe wait for the claim's answer, then go at
# once, while the FETCH runs: the claim held at the tier's proxy until the
# FETCH (its origin trickling, 2 MiB/s) has written blocks 8 and 9.
gen "$work/g" $((16 * MIB)) g
origin_put g.bin "$work/g"
conf slowclaim "tier_stall_timeout = 30"
rules '[{"method": "PUT", "path": "/lease/1$", "fault": "stall"}]'
orules '[{"method": "GET", "path": "^/origin/g\\.bin$", "first": 1, "fault": "trickle", "rate": 2097152}]'
puts8=$(tier_keys $((8 * MIB)) | wc -l)
mkdir -p "$work/G"
env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
	AWS_EC2_METADATA_DISABLED=true "$daemon" --config "$work/slowclaim.conf" \
	--selftest cache origin "" "$work/G" \
	"lookup::g.bin" "fetch:g.bin:0:$((16 * MIB))" >"$work/G.out" 2>"$work/G.log" &
gp=$!
pids+=("$gp")
for ((i = 0; i < 150; i++)); do
	[ "$(python3 -c 'import os,sys; print(os.stat(sys.argv[1]).st_blocks * 512)' "$work/G/g.bin" 2>/dev/null || echo 0)" -ge $((10 * MIB)) ] && break
	sleep 0.1
done
curl -sf -X POST "http://127.0.0.1:$p_tproxy/__fault/release" >/dev/null
for ((i = 0; i < 30; i++)); do
	[ "$(tier_keys $((8 * MIB)) | wc -l)" -gt "$puts8" ] && break
	sleep 0.1
done
ended=$(grep -c '^REPLY fetch' "$work/G.out")
kill -9 "$gp"
wait "$gp" 2>/dev/null
rules '[]'
orules '[]'
is "$ended" 0 "claim answered late: the FETCH still ran"
ge "$(tier_keys $((8 * MIB)) | wc -l)" $((puts8 + 1)) "claim answered late: ... and block 8 was put (the claim's answer let it go)"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; work in $work (KEEP=1 keeps it)"; }
[ "$TAP_FAILED" = 0 ]
