#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# TAP: the manual pages (man/) format without a warning (man --warnings
# at 80 columns), have a NAME line lexgrog can read, carry VERSION, and
# document everything the sources define, so that a page cannot fall
# behind its code:
#   s3cachefs(5)        every mount option (kmod/params.c), module parameter
#                       (module_param* in kmod/) and sysfs file (kmod/sysfs.c)
#   s3cachefsd(8)       every long option (daemon/main.c), configuration key
#                       (daemon/lib/config.c) and metric family (the daemon's
#                       own exposition, --selftest ... metrics)
#   s3cachectl(8)       every command (tools/s3cachectl/s3cachectl.c)
#   mount.s3cachefs(8)  every option letter (tools/mount/mount.s3cachefs.c)
# A control run removes one documented option from a copy of a page and
# checks that the check notices.
set -uo pipefail
cd "$(dirname "$0")/../.."
n=0 failed=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; failed=$((failed + 1)); [ -z "${2:-}" ] || sed 's/^/#   /' <<<"$2"; }
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }

ver=$(cat VERSION)
pages="man/s3cachefs.5 man/s3cachefsd.8 man/s3cachectl.8 man/mount.s3cachefs.8"
for p in $pages; do
	name=$(basename "${p%.*}")
	out=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
	if [ $? = 0 ] && [ -z "$out" ]; then pass "$p: man --warnings -l is silent"; else fail "$p: man --warnings -l is silent" "$out"; fi
	out=$(lexgrog "$p" 2>&1)
	if grep -qF "\"$name - " <<<"$out"; then pass "$p: lexgrog reads its NAME"; else fail "$p: lexgrog reads its NAME" "$out"; fi
	check "$p: .TH names version $ver" grep -qE "^\.TH .*\"s3cachefs $ver\"" "$p"
done

# The body of section SH of PAGE, hyphens unescaped (\- is -).
section() {	# PAGE SH
	awk -v sh="$2" '/^\.SH / { on = (substr($0, 5) == sh || substr($0, 5) == "\"" sh "\"") ; next } on' "$1" |
		sed 's/\\-/-/g'
}
# The names of NAMES not on a macro line (.B, .BI, .BR, ...) of TEXT, as
# a word ("name", "name=", "--name", "-x").
missing() {	# TEXT_FILE NAME...
	local f=$1 w
	shift
	for w in "$@"; do
		grep -qE "^\.(B|BI|BR|IB|RB) (.*[ \"(])?$w([=\" ,)]|$)" "$f" || echo "$w"
	done
}
documents() {	# DESC PAGE SECTION NAME...
	local desc=$1 page=$2 sh=$3 tmp miss
	shift 3
	tmp=$(mktemp)
	section "$page" "$sh" >"$tmp"
	if [ $# = 0 ]; then
		fail "$desc: none found in the sources (extraction broken?)"
	else
		miss=$(missing "$tmp" "$@")
		if [ -z "$miss" ]; then pass "$desc ($# of them)"; else fail "$desc" "missing: $(echo $miss)"; fi
	fi
	rm -f "$tmp"
}

# s3cachefs(5)
mapfile -t opts < <(sed -nE 's/.*fsparam_([a-z0-9]+)\("([a-z_]+)".*/\1 \2/p' kmod/params.c |
	awk '{ print $2; if ($1 == "flag_no") print "no" $2 }')
documents "s3cachefs(5) documents every mount option of kmod/params.c" man/s3cachefs.5 "MOUNT OPTIONS" "${opts[@]}"
mapfile -t params < <(grep -hoE '^module_param(_cb|_string|_named)?\([a-z_0-9]+' kmod/*.c | sed 's/.*(//' | sort -u)
documents "s3cachefs(5) documents every module parameter of kmod/" man/s3cachefs.5 "MODULE PARAMETERS" "${params[@]}"
mapfile -t knobs < <(grep -oE '&s3cfs_attr_[a-z_0-9]+\.attr' kmod/sysfs.c | sed 's/&s3cfs_attr_//; s/\.attr//' | sort -u)
documents "s3cachefs(5) documents every sysfs file of kmod/sysfs.c" man/s3cachefs.5 "SYSFS" "${knobs[@]}"

# s3cachefsd(8)
mapfile -t flags < <(sed -nE 's/^[[:space:]]*\{ "([a-z-]+)", (no|required|optional)_argument.*/--\1/p' daemon/main.c)
documents "s3cachefsd(8) documents every long option of daemon/main.c" man/s3cachefsd.8 "OPTIONS" "${flags[@]}"
mapfile -t keys < <(sed -nE 's/^[[:space:]]*\[K_[A-Z_ +]+\] = \{ "([a-z_]+)".*/\1/p' daemon/lib/config.c)
documents "s3cachefsd(8) documents every configuration key of daemon/lib/config.c" man/s3cachefsd.8 "CONFIGURATION" "${keys[@]}"
families=()
if [ -x daemon/s3cachefsd ]; then
	cache=$(mktemp -d)
	mapfile -t families < <(timeout 30 daemon/s3cachefsd --endpoint http://127.0.0.1:1 --allow-http \
		--anonymous --selftest cache b "" "$cache" metrics 2>/dev/null |
		sed -nE 's/^METRIC # TYPE ([a-z_0-9]+) .*/\1/p')
	rm -rf "$cache"
	documents "s3cachefsd(8) documents every metric the daemon exports" man/s3cachefsd.8 "METRICS" "${families[@]}"
else
	n=$((n + 1)); echo "ok $n - s3cachefsd(8) documents every metric # SKIP daemon/s3cachefsd not built"
fi
sigs=()
for s in $(grep -oE 'sigaddset\(&set, SIG[A-Z]+\)' daemon/main.c | grep -oE 'SIG[A-Z]+' | sort -u); do
	sigs+=("$s")
done
documents "s3cachefsd(8) documents every signal daemon/main.c handles" man/s3cachefsd.8 "SIGNALS" "${sigs[@]}"

# s3cachectl(8)
mapfile -t cmds < <(grep -oE 'strcmp\(argv\[1\], "[a-z-]+"\)' tools/s3cachectl/s3cachectl.c | sed -E 's/.*"(.*)".*/\1/' | sort -u)
documents "s3cachectl(8) documents every command of s3cachectl.c" man/s3cachectl.8 "COMMANDS" "${cmds[@]}"

# mount.s3cachefs(8)
letters=$(sed -nE 's/.*getopt_long\(argc, argv, "([^"]+)".*/\1/p' tools/mount/mount.s3cachefs.c | tr -d ':')
mapfile -t mopts < <(grep -o . <<<"$letters" | sed 's/^/-/')
documents "mount.s3cachefs(8) documents every option of mount.s3cachefs.c" man/mount.s3cachefs.8 "OPTIONS" "${mopts[@]}"

# Control: the check fails when a page lacks one option.
ctl=$(mktemp)
grep -v '^\.BI chunk= SIZE$' man/s3cachefs.5 >"$ctl"
tmp=$(mktemp)
section "$ctl" "MOUNT OPTIONS" >"$tmp"
check "control: a page without chunk= is caught" test "$(missing "$tmp" "${opts[@]}")" = chunk
rm -f "$ctl" "$tmp"

echo "1..$n"
[ "$failed" = 0 ]
