#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# lookup_list.sh - listing for lookups (daemon/op_list.c): the second name
# new to the cache looked up in a directory within a minute has the
# directory listed, and lookups in it wait for that listing instead of a
# GET and a LIST each. Against fakes3 behind the fault proxy, whose log
# counts what went to the server: one listing, no request of the waiting
# lookups' own, the whole directory applied; lookups that arrive while
# the listing runs wait for it too; a directory bigger than
# --lookup-list-pages is left alone (its lookups ask S3); a listing that
# fails, or --lookup-list-pages 0, leaves each lookup to ask S3; a lookup
# the kernel gives up while it waits is dropped and the listing goes on.
# Host only, no module. Prints TAP; exit 1 if anything failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4613}
pport=$((port + 1))
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-lookuplist.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
plog=$work/proxy.log

. "$repo/tests/lib/tap.sh"
REPO=$repo . "$repo/tests/lib/faultproxy.sh"
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

srv= proxy=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	[ -n "$proxy" ] && kill "$proxy" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
echo "TAP version 13"

# d/: 20 small objects; big/: 1001 (two pages); e/, f/, g/: 3 each.
python3 - "$work/manifest.json" <<'PY'
import json, sys
objs = {}
for d, n in (("d", 20), ("big", 1001), ("e", 3), ("f", 3), ("g", 3), ("h", 3)):
    for i in range(n):
        objs["%s/o-%04d" % (d, i)] = "%s %d\n" % (d, i)
objs["d/sub/x"] = "x\n"
json.dump({"bucket": "lkup", "objects": objs}, open(sys.argv[1], "w"))
PY
python3 "$repo/tests/s3server/fakes3.py" "$port" "$work/manifest.json" \
	>"$work/fakes3.out" 2>&1 &
srv=$!
python3 "$repo/tests/s3server/faultproxy.py" serve "$pport" "127.0.0.1:$port" \
	--log "$plog" >"$work/proxy.out" 2>&1 &
proxy=$!
for ((i = 0; i < 100; i++)); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/lkup?list-type=2&max-keys=1" &&
		curl -sf -o /dev/null "http://127.0.0.1:$pport/__fault/stats" && break
	sleep 0.1
done
FP_LOG=$plog FP_URL=http://127.0.0.1:$pport
rules() { fp_rules "$1"; }
# Requests the server got after line SINCE of the proxy log (mark).
mark() { fp_lines; }
count() {	# SINCE METHOD PATH-RE [QUERY-RE]
	fp_count --from "$1" --method "$2" --path "$3" ${4:+--query "$4"}
}

c=$work/cache
opts=(--path-style --retry-attempts 2 --retry-base-ms 50)
cache() {	# LOG GROUPS...: the replies
	env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
		"$daemon" --endpoint "http://127.0.0.1:$pport" --allow-http "${opts[@]}" -v \
		--selftest cache lkup "" "$c" "${@:2}" 2>>"$1" | grep -v '^REPLY mount -> 0$'
}
reply() { grep -F -- "$2" <<<"$1" | head -n 1 | cut -d' ' -f2-; }
metric() { grep "^METRIC s3cachefsd_$2 " <<<"$1" | awk '{ print $3 }'; }
d_listing='^delimiter=.*prefix=d%2F$'
mkdir -p "$c"

# --- a loader opening names: the second new one lists the directory --------
m0=$(mark)
out=$(cache "$work/d.log" lookup:d:o-0003 lookup:d:o-0007 lookup:d:o-0019 metrics)
echo "$out" | grep REPLY | sed 's/^/# /'
is "$(reply "$out" 'lookup:d:o-0003 ->')" "lookup:d:o-0003 -> 0" "the first new name: looked up"
is "$(count "$m0" GET '^/lkup/d/o-0003$')" 1 "... with its own GET (the object arrives whole)"
is "$(reply "$out" 'lookup:d:o-0007 ->')" "lookup:d:o-0007 -> 0" "the second: answered"
is "$(count "$m0" GET '^/lkup$' "$d_listing")" 1 "... by one listing of d/"
is "$(count "$m0" GET '^/lkup/d/o-0007$')/$(count "$m0" HEAD '^/lkup/d/o-0007$')/$(count "$m0" GET '^/lkup$' 'prefix=d%2Fo-0007%2F')" \
	"0/0/0" "... and no request of its own (no GET, HEAD or LIST of o-0007/)"
is "$(find "$c/d" -maxdepth 1 -type f -name 'o-*' | wc -l)" 20 "the listing applied the directory's 20 files"
check "... and its subdirectory" test -d "$c/d/sub"
is "$(stat -c %s "$c/d/o-0011")" 5 "... sizes from the listing"
check "... and marked it listed" \
	python3 -c 'import os, sys; os.getxattr(sys.argv[1], "trusted.s3cachefs.listed")' "$c/d"
is "$(metric "$out" lookup_listings_total)/$(metric "$out" lookup_listed_total)/$(metric "$out" lookup_listings_big_total)" \
	"1/1/0" "metrics: 1 listing for lookups, 1 lookup answered by it, none too big"
is "$(count "$m0" GET '^/lkup$' "$d_listing")" 1 "a lookup after it: no second listing"

# --- a lookup that comes once the listing's page is on its way asks S3 ------
# (the listing's answer could be older than that lookup)
rules '[{"method": "GET", "query": "prefix=e%2F$", "fault": "stall", "seconds": 2}]'
m0=$(mark)
out=$(cache "$work/e.log" lookup:e:o-0000 lookup:e:o-0001,sleep:500,lookup:e:o-0002 metrics)
echo "$out" | grep REPLY | sed 's/^/# /'
is "$(reply "$out" 'lookup:e:o-0001 ->')/$(reply "$out" 'lookup:e:o-0002 ->')" \
	"lookup:e:o-0001 -> 0/lookup:e:o-0002 -> 0" \
	"two lookups, the second sent while the listing's page is held: both answered"
is "$(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=e%2F$')" 1 "... one listing"
is "$(count "$m0" GET '^/lkup/e/o-0001$')/$(count "$m0" GET '^/lkup$' 'prefix=e%2Fo-0001%2F')" \
	"0/0" "... the first waited for it (no request of its own)"
is "$(count "$m0" GET '^/lkup/e/o-0002$')/$(count "$m0" GET '^/lkup$' 'prefix=e%2Fo-0002%2F')" \
	"1/1" "... the second, later than the listing's request, asked S3 itself"
is "$(metric "$out" lookup_listed_total)" 1 "metrics: 1 lookup answered by the listing"

# --- a readdir riding on a listing for lookups: the listing goes on whole ----
rules '[]'
m0=$(mark)
rm -rf "$c/big"
out=$(opts+=(--lookup-list-pages 1); cache "$work/ride.log" lookup:big:o-0001 lookup:big:o-0002,list:big metrics)
echo "$out" | grep REPLY | sed 's/^/# /'
is "$(reply "$out" 'list:big ->')/$(reply "$out" 'lookup:big:o-0002 ->')" "list:big -> 0/lookup:big:o-0002 -> 0" \
	"a LIST of big/ (two pages) rides on its listing for lookups (one page allowed): both answered"
is "$(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=big%2F$')" 1 "... one listing, not capped (its first page asked once)"
is "$(find "$c/big" -type f | wc -l)" 1001 "... applied whole, for the LIST"
is "$(count "$m0" GET '^/lkup/big/o-0002$')" 1 "... the waiting lookup was let go at the first page: it asked S3"
rm -rf "$c/big"

# --- a directory of more pages than allowed is left alone --------------------
rules '[]'
m0=$(mark)
out=$(opts+=(--lookup-list-pages 1); cache "$work/big.log" lookup:big:o-0001 lookup:big:o-0500 lookup:big:o-0900 metrics)
echo "$out" | grep REPLY | sed 's/^/# /'
is "$(reply "$out" 'lookup:big:o-0500 ->')/$(reply "$out" 'lookup:big:o-0900 ->')" \
	"lookup:big:o-0500 -> 0/lookup:big:o-0900 -> 0" \
	"big/ (1001 objects, --lookup-list-pages 1): lookups answered"
is "$(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=big%2F$')" 1 "... one page asked for"
is "$(count "$m0" GET '^/lkup/big/o-0(500|900)$')" 2 "... then each asked S3 itself"
is "$(find "$c/big" -type f | wc -l)" 3 "... nothing of the listing applied (3 files: the lookups')"
is "$(metric "$out" lookup_listings_big_total)/$(metric "$out" lookup_listed_total)" "1/0" \
	"metrics: the listing given up, no lookup answered by it"
check "... and no second listing of big/ within the minute" \
	test "$(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=big%2F$')" = 1

# --- a listing that fails: its lookups ask S3 themselves ---------------------
rules '[{"method": "GET", "query": "prefix=f%2F$", "fault": "500"}]'
m0=$(mark)
out=$(cache "$work/f.log" lookup:f:o-0000 lookup:f:o-0001,lookup:f:o-0002 lookup:f:nosuch)
echo "$out" | grep REPLY | sed 's/^/# /'
is "$(reply "$out" 'lookup:f:o-0001 ->')/$(reply "$out" 'lookup:f:o-0002 ->')" \
	"lookup:f:o-0001 -> 0/lookup:f:o-0002 -> 0" \
	"the listing of f/ fails (500): the lookups are answered"
check "... the listing was tried ($(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=f%2F$') times)" \
	test "$(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=f%2F$')" -ge 1
is "$(count "$m0" GET '^/lkup/f/o-000[12]$')" 2 "... each then asked S3 itself"
is "$(cat "$c/f/o-0002")" "f 2" "... and has its bytes"
is "$(reply "$out" 'lookup:f:nosuch ->')" "lookup:f:nosuch -> -2 No such file or directory" "a missing name: ENOENT"

# --- --lookup-list-pages 0: no listing ---------------------------------------
rules '[]'
m0=$(mark)
out=$(opts+=(--lookup-list-pages 0); cache "$work/g.log" lookup:g:o-0000 lookup:g:o-0001 lookup:g:o-0002)
is "$(count "$m0" GET '^/lkup$' '^delimiter=.*prefix=g%2F$')/$(count "$m0" GET '^/lkup/g/o-000[0-2]$')" "0/3" \
	"--lookup-list-pages 0: no listing, a GET per lookup"

# --- a waiting lookup the kernel gives up -----------------------------------
rules '[{"method": "GET", "query": "prefix=h%2F$", "fault": "stall", "seconds": 2}]'
m0=$(mark)
out=$(cache "$work/h.log" lookup:h:o-0000 lookup:h:o-0001,cancel,sleep:3000 lookup:h:o-0002 metrics)
echo "$out" | grep REPLY | sed 's/^/# /'
is "$(reply "$out" 'lookup:h:o-0001 ->')" "" "a waiting lookup given up: no answer"
check "... the daemon dropped it" grep -q 'cancelled by the kernel' "$work/h.log"
is "$(find "$c/h" -type f | wc -l)" 3 "... the listing went on: h/ was applied"
is "$(reply "$out" 'lookup:h:o-0002 ->')" "lookup:h:o-0002 -> 0" "... the next lookup answered"

echo "1..$TAP_N"
[ "$TAP_FAILED" = 0 ] || { echo "# $TAP_FAILED failed; daemon logs:"; tail -n 15 "$work"/*.log | sed 's/^/# /'; }
[ "$TAP_FAILED" = 0 ]
