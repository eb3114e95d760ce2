#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_liststream: a listing is streamed. A directory of 1501 names lists in
# two pages; the fault proxy holds the second until released, and a
# reader gets the first page's names meanwhile (readdir reads the
# listing's log). The first page holds the object "k", and the second
# the common prefix "k/", which wins: "k" is not passed up early as a
# file, and comes once, as a directory. The log goes when the listing
# ends; the readdir after it reads the lower directory and gives the same
# names. On s3rver, a name written here and not yet in S3 (a file held
# open) is in the next listing too, once.
# Mounts with nodir_index: the streamed log of a mount without indexes.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init liststream
plan 24

# Part 1 on fakes3, which lists in S3's order (UTF-8 bytes): "k" on page
# 1, "k-0000".."k-1499", then the prefix "k/" on page 2.
python3 - "$WORK/manifest.json" "$BUCKET" <<'PY'
import json, sys
objs = {"big/k": "k\n", "big/k/child": "child\n"}
objs.update({"big/k-%04d" % i: "%d\n" % i for i in range(1500)})
json.dump({"bucket": sys.argv[2], "objects": objs}, open(sys.argv[1], "w"))
PY
s3rver=$S3_ENDPOINT
check "module loads" load_module
if start_fakes3 9472 "$WORK/manifest.json"; then ok "fake S3 starts"; else not_ok "fake S3 starts"; fi
S3_ENDPOINT=$FAKES3_ENDPOINT
check_sh "fault proxy starts (in front of it)" start_faultproxy 9471
check_sh "daemon starts" start_daemon
check "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=120,meta_ttl=3600,nodir_index"

# A reader that writes each name (and whether it is a directory) as it
# comes, and stops at the end of the directory.
reader() {	# DIR OUT
	python3 -c "import os, sys
with open(sys.argv[2], 'w', buffering=1) as out, os.scandir(sys.argv[1]) as it:
    for e in it:
        out.write('%s %s\n' % (e.name, 'd' if e.is_dir(follow_symlinks=False) else 'f'))
    out.write('END\n')" "$1" "$2"
}
lines() {	# FILE: its line count
	wc -l 2>/dev/null <"$1" || echo 0
}
at_least() {	# FILE N
	[ "$(lines "$1")" -ge "$2" ]
}

# --- page 2 held: page 1's names come at once -------------------------------
fp_rules '[{"method": "GET", "query": "continuation-token", "fault": "stall"}]'
streamed=$(mnt_stat lists_streamed)
reader "$MNT/big" "$WORK/r1" &
r1=$!
is "$(wait_until at_least "$WORK/r1" 500 && echo yes)" yes "the first names come while page 2 is held"
sleep 2
check "... page 2 is still held" test "$(fp_stat stalled)" -ge 1
n1=$(lines "$WORK/r1")
check "... the reader has page 1's names and waits ($n1)" \
	bash -c "[ $n1 -ge 900 ] && [ $n1 -le 1000 ] && ! grep -q END '$WORK/r1'"
check "... but not the file k, which a later page may make a directory" \
	bash -c "! grep -q '^k ' '$WORK/r1'"
check "... the listing's log exists meanwhile" \
	bash -c "[ \$(ls -A '$CACHE/.s3cachefs/lists' | wc -l) = 1 ]"
fp_release
wait $r1
is "$?" 0 "the reader ends once page 2 is released"
is "$(($(mnt_stat lists_streamed) - streamed))" 1 "... it read the listing's log"
grep -v END "$WORK/r1" | sort >"$WORK/r1.sorted"
is "$(wc -l <"$WORK/r1.sorted")/$(sort -u "$WORK/r1.sorted" | wc -l)" "1501/1501" \
	"1501 names, none twice"
is "$(grep '^k ' "$WORK/r1.sorted")" "k d" "k comes once, as a directory"
is "$(grep -c '^k-[0-9]* f$' "$WORK/r1.sorted")" 1500 "... and the 1500 files k-NNNN"
check "the log is gone after the listing" \
	bash -c "[ -z \"\$(ls -A '$CACHE/.s3cachefs/lists')\" ]"

# --- a second readdir: the same names -----------------------------------------
fp_rules '[]'
reader "$MNT/big" "$WORK/r2"
grep -v END "$WORK/r2" | sort >"$WORK/r2.sorted"
check "a second readdir gives the same names" cmp "$WORK/r1.sorted" "$WORK/r2.sorted"

# --- part 2, on s3rver: a file written here, not in S3 yet ------------------
check "umount" umount_s3 "$MNT"
stop_daemon
stop_faultproxy
S3_ENDPOINT=$s3rver
s3_seed_many "$BUCKET" big2/ 1500
mkdir -p "$CACHE.2"
check_sh "daemon starts (s3rver)" start_daemon
check "writable mount (meta_ttl 2 s)" mount_s3 "$BUCKET" "$MNT" \
	"cache=$CACHE.2,fetch_timeout=120,meta_ttl=2,writable"
reader "$MNT/big2" "$WORK/r3"
rm -f "$WORK/stop"
python3 -c "import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY)
os.write(fd, b'local\\n')
open(sys.argv[2], 'w').close()
while not os.path.exists(sys.argv[3]): time.sleep(0.1)
os.close(fd)" "$MNT/big2/zz-open" "$WORK/opened" "$WORK/stop" &
writer=$!
is "$(wait_until test -e "$WORK/opened" && echo yes)" yes "a file is held open for writing"
sleep 3		# past meta_ttl: the next readdir lists again
streamed=$(mnt_stat lists_streamed)
reader "$MNT/big2" "$WORK/r4"
grep -v END "$WORK/r4" | sort >"$WORK/r4.sorted"
is "$(grep -c '^zz-open f$' "$WORK/r4.sorted")/$(sort -u "$WORK/r4.sorted" | wc -l)" "1/1501" \
	"the next listing has it once, with the 1500 objects"
is "$(($(mnt_stat lists_streamed) - streamed))" 1 "... read from its log"
touch "$WORK/stop"
wait $writer

check "umount" umount_s3 "$MNT"
rm -rf "$CACHE.2"
tap_done
