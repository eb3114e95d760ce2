#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# list_memory.sh - the daemon's memory after a big listing: while it lists,
# the daemon keeps the names it has seen (about 55 bytes each, to remove
# what S3 no longer has); at the end it frees them and hands the heap's
# free pages back (glibc would keep them). A directory of 100 000 objects
# on fakes3, listed through the selftest driver; its resident size (the
# metrics endpoint's figure) before and after. Host only, no module.
# Prints TAP; exit 1 if anything failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
port=${1:-4623}
n=${LIST_MEMORY_N:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-listmem.XXXXXX")
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}

. "$repo/tests/lib/tap.sh"
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

[ -x "$daemon" ] || { echo "Bail out! no $daemon (make -C daemon)"; exit 1; }
plan 5
python3 - "$work/manifest.json" "$n" <<'PY'
import json, sys
objs = {"huge/o-%07d" % i: "" for i in range(int(sys.argv[2]))}
objs["small/a"] = "a\n"
json.dump({"bucket": "mem", "objects": objs}, open(sys.argv[1], "w"))
PY
python3 "$repo/tests/s3server/fakes3.py" "$port" "$work/manifest.json" \
	>"$work/fakes3.out" 2>&1 &
srv=$!
for ((i = 0; i < 100; i++)); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/mem?list-type=2&max-keys=1" && break
	sleep 0.1
done
mkdir -p "$work/cache"
out=$(env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDFAKE AWS_SECRET_ACCESS_KEY=fake \
	"$daemon" --endpoint "http://127.0.0.1:$port" --allow-http --path-style \
	--selftest cache mem "" "$work/cache" list:small metrics list:huge metrics \
	2>"$work/daemon.log")
reply() { grep -F -- "$1" <<<"$out" | head -n 1 | cut -d' ' -f2-; }
rss=($(awk '$2 == "s3cachefsd_resident_memory_bytes" { print $3 }' <<<"$out"))
is "$(reply 'list:small ->')" "list:small -> 0" "a small directory listed (the baseline)"
is "$(reply 'list:huge ->')" "list:huge -> 0" "a directory of $n objects listed"
is "$(find "$work/cache/huge" -maxdepth 1 -type f | wc -l)" "$n" "... every object applied"
is "${#rss[@]}" 2 "the resident size read before and after"
grow=$(( (${rss[1]:-0} - ${rss[0]:-0}) / 1024 ))
diag "resident: ${rss[0]:-?} bytes before, ${rss[1]:-?} after (+$grow KiB for $n names)"
if [ "${#rss[@]}" = 2 ] && [ "$grow" -lt $((n * 16 / 1024)) ]; then
	ok "after it the daemon holds less than 16 bytes a name more (+$grow KiB)"
else
	not_ok "after it the daemon holds less than 16 bytes a name more" "+$grow KiB"
fi
tap_done
