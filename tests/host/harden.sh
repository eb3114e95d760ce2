#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# harden.sh - what makes s3cachefsd safe to hand to a fleet, host only:
#   - plain http: an http:// endpoint is refused unless allow_http = true
#     (its section, [global] or --allow-http), with a warning when allowed;
#     the same for s3cachectl;
#   - the daemon is not dumpable: another process of its user cannot read
#     its /proc/PID/environ (the AWS keys) nor ptrace it, and no core file;
#   - the systemd unit (tools/systemd/s3cachefsd.service): valid
#     (systemd-analyze verify), sandboxed (systemd-analyze security
#     --offline: exposure at most 3.0), with the settings the README names,
#     and its capability bounding set is enough for the cache I/O of LIST,
#     LOOKUP and FETCH (run under setpriv with that set).
# Prints TAP; exit 1 if anything failed. Needs python3, root, setpriv.
#
#   tests/host/harden.sh [PORT]                 (tests/run.sh)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4634}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-harden.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
ctl=${S3CTL:-$repo/tools/s3cachectl/s3cachectl}
unit=${S3CFS_UNIT:-$repo/tools/systemd/s3cachefsd.service}
reqlog=$work/requests.jsonl
ep=http://127.0.0.1:$port

. "$repo/tests/lib/tap.sh"
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

srv= dpid=
cleanup() {
	[ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# Keys in the environment, as a service's EnvironmentFile gives them.
export AWS_ACCESS_KEY_ID=AKIDHARDEN AWS_SECRET_ACCESS_KEY=secret-harden-0123
export AWS_EC2_METADATA_DISABLED=true
unset AWS_CA_BUNDLE

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"
chmod 755 "$work"
: >"$reqlog"
python3 "$here/hostile_s3.py" "$port" "$reqlog" >"$work/server.out" 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do
	grep -q ready "$work/server.out" 2>/dev/null && break
	sleep 0.1
done
nreq() { wc -l <"$reqlog"; }

# --- plain http -----------------------------------------------------------------
n0=$(nreq)
"$daemon" --endpoint "$ep" --path-style --selftest list hostile hdr/ >"$work/out" 2>"$work/http.log"; rc=$?
check "http: an http:// endpoint without allow_http: the daemon does not start (rc $rc)" test "$rc" != 0
check "http: ... and says why" grep -q '\[global\]: endpoint http://127.0.0.1:[0-9]* is plain http: refused without allow_http = true' "$work/http.log"
is "$(($(nreq) - n0))" 0 "http: ... before any request"
"$daemon" --endpoint "$ep" --path-style --allow-http --selftest list hostile hdr/ >"$work/out" 2>"$work/http2.log"; rc=$?
is "$rc:$(grep -c '^OBJ hdr/get.bin' "$work/out")" "0:1" "http: --allow-http allows it"
check "http: ... with a warning" grep -q 'warning: \[global\]: endpoint http://127.0.0.1:[0-9]* is plain http (allow_http)' "$work/http2.log"
cat >"$work/ok.conf" <<EOF
[global]
endpoint = https://127.0.0.1:1
[bucket hostile]
endpoint = $ep
addressing = path
allow_http = true
EOF
"$daemon" --config "$work/ok.conf" --selftest list hostile hdr/ >"$work/out" 2>>"$work/http3.log"
is "$(grep -c '^OBJ hdr/get.bin' "$work/out")" 1 "http: allow_http = true in the bucket's section allows it"
sed 's/^allow_http = true/allow_http = false/' "$work/ok.conf" >"$work/no.conf"
"$daemon" --config "$work/no.conf" --allow-http --selftest list hostile hdr/ >"$work/out" 2>"$work/http4.log"
is "$(grep -c '^OBJ' "$work/out")" 0 "http: a section's allow_http = false wins over --allow-http"
check "http: ... the section named as FILE:LINE" grep -q 'no.conf:3: \[bucket hostile\]: endpoint http://127.0.0.1:[0-9]* is plain http: refused' "$work/http4.log"
"$daemon" --config "$work/no.conf" --check-config >"$work/out" 2>&1; rc=$?
check "http: --check-config reports it, exit 2" \
	bash -c "[ $rc = 2 ] && grep -q 'no.conf:3: \[bucket hostile\]: endpoint http://.* is plain http' '$work/out'"
printf '[global]\nallow_http = perhaps\n' >"$work/bad.conf"
"$daemon" --config "$work/bad.conf" --check-config >"$work/out" 2>&1; rc=$?
check "http: --check-config: a bad allow_http is FILE:LINE, exit 2" \
	bash -c "[ $rc = 2 ] && grep -q 'bad.conf:2: allow_http .perhaps.: want true or false' '$work/out'"
if [ -x "$ctl" ]; then
	"$ctl" ls --endpoint "$ep" --path-style s3://hostile/hdr/ >"$work/out" 2>"$work/ctl.err"; rc=$?
	check "http: s3cachectl refuses it too (exit $rc)" \
		bash -c "[ $rc = 1 ] && grep -q 'plain http endpoint http://127.0.0.1:[0-9]* refused' '$work/ctl.err'"
	"$ctl" ls --endpoint "$ep" --path-style --allow-http s3://hostile/hdr/ >"$work/out" 2>"$work/ctl.err"
	check "http: s3cachectl --allow-http" grep -q 'hdr/get.bin' "$work/out"
fi

# --- not dumpable ------------------------------------------------------------------
# The daemon as nobody, waiting for a slow answer; another process of
# nobody's tries to read its environment (where the keys are).
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent)
# (--allow-http where the daemon has it: an older build runs without.)
allow=()
case "$("$daemon" --help 2>&1)" in *--allow-http*) allow=(--allow-http) ;; esac
"${nobody[@]}" "$daemon" --endpoint "$ep" --path-style "${allow[@]}" \
	--selftest get hostile slow.bin >/dev/null 2>"$work/dump.log" &
dpid=$!
for ((i = 0; i < 50; i++)); do
	grep -q '"/hostile/slow.bin", "status": "waiting"' "$reqlog" && break
	sleep 0.1
done
check "dumpable: the daemon runs (as nobody) and waits" kill -0 "$dpid"
"${nobody[@]}" cat "/proc/$dpid/environ" >"$work/environ" 2>"$work/environ.err"; rc=$?
check "dumpable: another process of the same user cannot read its environment (keys)" \
	bash -c "[ $rc != 0 ] && ! grep -q secret-harden '$work/environ'"
is "$(stat -c %U "/proc/$dpid/environ" 2>/dev/null)" root \
	"dumpable: its /proc/PID files belong to root (PR_SET_DUMPABLE 0)"
"${nobody[@]}" python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0 else 1)' "$dpid"   # PTRACE_ATTACH
check "dumpable: nor ptrace it" test $? != 0
kill -9 "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=

# --- the systemd unit ---------------------------------------------------------------
if ! command -v systemd-analyze >/dev/null; then
	ok "# SKIP systemd unit: no systemd-analyze"
else
	# verify wants the binaries to exist: the built daemon stands in.
	mkdir -p "$work/unit"
	sed "s|/usr/local/sbin/s3cachefsd|$daemon|" "$unit" >"$work/unit/s3cachefsd.service"
	(cd "$work/unit" && systemd-analyze verify --man=no ./s3cachefsd.service) >"$work/verify.out" 2>&1
	check "unit: systemd-analyze verify passes" test ! -s "$work/verify.out"
	(cd "$work/unit" && systemd-analyze security --offline=yes --no-pager ./s3cachefsd.service) >"$work/security.out" 2>&1
	exp=$(sed -n 's/.*Overall exposure level for s3cachefsd.service: \([0-9.]*\).*/\1/p' "$work/security.out")
	check "unit: systemd-analyze security: exposure ${exp:-?} <= 3.0" \
		python3 -c 'import sys; sys.exit(0 if sys.argv[1] and float(sys.argv[1]) <= 3.0 else 1)' "${exp:-}"
	for want in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=read-only PrivateTmp=yes \
		    ReadWritePaths=-/var/cache/s3cachefs CacheDirectory=s3cachefs LimitNOFILE=65536 \
		    ProtectKernelModules=yes 'ExecStartPre=-+/sbin/modprobe s3cachefs'; do
		check "unit: $want" grep -qxF "$want" "$unit"
	done
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
	check "unit: CapabilityBoundingSet has CAP_SYS_ADMIN (genl ADMIN_PERM, trusted.* xattrs)" \
		grep -qw CAP_SYS_ADMIN <<<"$caps"
	check "unit: ... and not CAP_SYS_MODULE, CAP_NET_ADMIN, CAP_SYS_PTRACE, CAP_SETUID" \
		bash -c "! grep -qwE 'CAP_SYS_MODULE|CAP_NET_ADMIN|CAP_SYS_PTRACE|CAP_SETUID' <<<'$caps'"
	# The daemon with only the unit's capabilities: LIST, LOOKUP and FETCH
	# write the cache directory and its trusted.* attributes.
	bset=-all
	for cap in $caps; do
		c=${cap#CAP_}
		bset+=",+${c,,}"
	done
	capped() {	# BOUNDING-SET: the replies of a selftest cache run
		mkdir -p "$work/c$2"
		setpriv --bounding-set="$1" --inh-caps=-all --no-new-privs \
			"$daemon" --endpoint "$ep" --path-style --allow-http \
			--selftest cache hostile "" "$work/c$2" "list:hdr" "lookup:shrink:a.bin" \
			"fetch:hdr/ok.bin:0:1048576" 2>"$work/capped$2.log" | grep '^REPLY'
	}
	out=$(capped "$bset" 1)
	is "$(grep -c ' -> 0$' <<<"$out")" 4 \
		"unit: with only its capabilities ($bset) MOUNT, LIST, LOOKUP and FETCH succeed"
	is "$(python3 "$repo/tests/lib/cachemeta.py" get "$work/c1/hdr/ok.bin" trusted.s3cachefs.etag 2>/dev/null) $(du -k "$work/c1/hdr/ok.bin" | cut -f1)" \
		'"v1" 1024' "unit: ... the fetched chunk is in the cache file, its tags too"
	out=$(capped "${bset/,+sys_admin/}" 2)
	check "unit: ... and CAP_SYS_ADMIN is needed (without it the cache's trusted.* attributes cannot be written)" \
		bash -c "! grep -q 'list:hdr -> 0$' <<<'$out'"
fi

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; logs:"; tail -n 5 "$work"/*.log | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
