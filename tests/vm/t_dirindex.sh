#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_dirindex: a mount with dir_index. A cold `ls -l` of a directory of 300
# objects makes no cache file per object: the listing leaves an index, the
# readdir makes each name's dentry from it, and the stats that follow ask
# nothing. A file read gets its cache file from the index (no HEAD) and
# its exact bytes; so does a name opened after the dentries were dropped,
# and a missing name is ENOENT without a request. An object changed in S3
# since the listing reads as its new version, whole; one deleted since
# fails, with no bytes. After meta_ttl the directory is listed again and
# shows what S3 has. A mount of the same cache without dir_index lists
# again and finds every object. dir_index with writable is refused.
# Counted on both sides: the module's counters, the requests that reached
# the server (fault proxy log).
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init dirindex
plan 74
P=/sys/module/s3cachefs/parameters
fault_off() {
	echo >$P/fault_points 2>/dev/null
	echo 0 >$P/fault_delay_ms 2>/dev/null
	echo Y >$P/dir_index 2>/dev/null	# the module's default
}
cleanup_more() {
	fault_off
	test_cleanup
	stop_faultproxy
	stop_fakes3
}
trap cleanup_more EXIT

N=300
python3 - "$WORK/manifest.json" "$BUCKET" "$N" <<'PY'
import json, sys
n = int(sys.argv[3])
objs = {"d/o-%04d" % i: ("d object %d\n" % i) * (1 + i % 7) for i in range(n)}
objs["d/sub/x"] = "x\n"
objs["e/one"] = "one\n"
objs.update({"l/o-%04d" % i: ("d object %d\n" % i) * (1 + i % 7) for i in range(40)})
json.dump({"bucket": sys.argv[2], "objects": objs}, open(sys.argv[1], "w"))
PY
body() {	# I: the bytes of d/o-I
	python3 -c 'import sys; i = int(sys.argv[1]); sys.stdout.write(("d object %d\n" % i) * (1 + i % 7))' "$1"
}
# Files (not directories) of the lower directory d.
lower_files() {
	find "$CACHE/d" -maxdepth 1 -type f | wc -l
}
heads() {	# FROM: HEADs since that log line
	fp_count --from "$1" --method HEAD --path '/d/'
}
check "module loads" load_module
if start_fakes3 9492 "$WORK/manifest.json"; then ok "fake S3 starts"; else not_ok "fake S3 starts"; fi
direct=$FAKES3_ENDPOINT
S3_ENDPOINT=$FAKES3_ENDPOINT
check_sh "fault proxy starts (in front of it)" start_faultproxy 9491
check_sh "daemon starts" start_daemon
check "mount (dir_index)" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,dir_index"

# --- a cold ls -l: one listing, no file per object ----------------------------
p0=$(fp_lines)
primed0=$(mnt_stat primed)
ls -ln "$MNT/d" >"$WORK/ls1"
is "$(grep -c ' o-[0-9]*$' "$WORK/ls1")/$(grep -c ' sub$' "$WORK/ls1")" "$N/1" \
	"ls -l shows the $N files and the directory"
is "$(python3 - "$MNT/d" "$N" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
bad = [i for i in range(n)
       if os.stat(os.path.join(d, "o-%04d" % i)).st_size != len(("d object %d\n" % i) * (1 + i % 7))]
print(" ".join(map(str, bad)))
PY
)" "" "... each with its object's size"
is "$(lower_files)" 0 "no cache file for any listed object"
check "the directory's index is named on the lower directory" \
	python3 -c "import os, re, sys; sys.exit(not re.fullmatch(rb'[0-9]+ [0-9]+ [0-9]+', os.getxattr('$CACHE/d', 'trusted.s3cachefs.index')))"
check "... and is a file under .s3cachefs/lists" \
	test -f "$CACHE/.s3cachefs/lists/$(stat -c %i "$CACHE/d")"
check "the readdir made the names' dentries ($(($(mnt_stat primed) - primed0)))" \
	test "$(($(mnt_stat primed) - primed0))" -ge "$N"
is "$(heads "$p0")/$(fp_count --from "$p0" --method GET --path '/d/o-')" "0/0" \
	"... no HEAD, no GET of an object"
is "$(fp_count --from "$p0" --method GET --query 'delimiter=.*prefix=d%2F$')" 1 "... one listing of d/"

# --- again: the same, from the index -------------------------------------------
p1=$(fp_lines)
l1=$(mnt_stat lookups)
ls -ln "$MNT/d" >"$WORK/ls2"
check "a second ls -l shows the same" cmp "$WORK/ls1" "$WORK/ls2"
is "$(python3 -c 'import os, sys; a = os.listdir(sys.argv[1]); b = os.listdir(sys.argv[1]); print(len(a), a == b)' "$MNT/d")" \
	"$((N + 1)) True" "... and two readdirs the same names in the same order"
is "$(($(mnt_stat lookups) - l1))/$(($(fp_lines) - p1))" "0/0" "... with no LOOKUP and no request"

# --- a read: the bytes, one cache file made from the index, no HEAD ------------
p2=$(fp_lines)
x2=$(mnt_stat lookups_indexed)
check "o-0007 reads right" cmp "$MNT/d/o-0007" <(body 7)
is "$(lower_files)" 1 "... it has its cache file now, the only one"
is "$(($(mnt_stat lookups_indexed) - x2))/$(heads "$p2")" "1/0" \
	"... made by a LOOKUP the index answered: no HEAD"
is "$(fp_count --from "$p2" --method GET --path '/d/o-0007')" 1 "... and one GET for its bytes"
ino_dent=$(ls -i "$MNT/d/o-0008" | cut -d' ' -f1)
check "a listed name's inode number has the top bit set" \
	python3 -c "import sys; sys.exit(0 if int('$ino_dent') >> 63 else 1)"
check "o-0008 reads right too" cmp "$MNT/d/o-0008" <(body 8)

# --- dentries dropped: a name opened from the index ---------------------------
drop_caches
p3=$(fp_lines)
x3=$(mnt_stat lookups_indexed)
check "after drop_caches, o-0011 reads right" cmp "$MNT/d/o-0011" <(body 11)
is "$(($(mnt_stat lookups_indexed) - x3))/$(heads "$p3")" "1/0" \
	"... looked up in the index: no HEAD"
p4=$(fp_lines)
check "a name the index does not hold: ENOENT" bash -c "! stat '$MNT/d/o-9999' 2>/dev/null"
is "$(($(fp_lines) - p4))" 0 "... with no request to S3"
check "o-0007, read before, reads right again" cmp "$MNT/d/o-0007" <(body 7)

# --- a loader opening names of a directory no one listed ----------------------
# The second name new to the cache has the daemon list l/ (listing for
# lookups); on a dir_index mount that listing leaves an index, and the
# names after it are made from it: no HEAD for them.
p5=$(fp_lines)
is "$(python3 - "$MNT/l" <<'PY'
import os, random, sys
names = list(range(40))
random.Random(3).shuffle(names)
bad = [i for i in names
       if open(os.path.join(sys.argv[1], "o-%04d" % i), "rb").read() !=
          (("d object %d\n" % i) * (1 + i % 7)).encode()]
print(" ".join(map(str, bad)))
PY
)" "" "a loader opens l/'s 40 names by name, shuffled: every file reads right"
is "$(fp_count --from "$p5" --method GET --query 'delimiter=.*prefix=l%2F$')" 1 "... one listing of l/"
is "$(fp_count --from "$p5" --method GET --path '/l/o-')/$(fp_count --from "$p5" --method HEAD --path '/l/')" "40/0" \
	"... one GET per file, no HEAD"
is "$(find "$CACHE/l" -maxdepth 1 -type f | wc -l)" 40 "... each has its cache file"

# --- changed in S3 since the listing: the new version, whole --------------------
printf 'a new version\n' >"$WORK/new"
check "o-0020 is replaced in S3" curl -sSf -o /dev/null -X PUT --data-binary @"$WORK/new" "$direct/$BUCKET/d/o-0020"
check "... a read returns the new version, whole" cmp "$MNT/d/o-0020" "$WORK/new"
check "... and its size is the new one" test "$(stat -c %s "$MNT/d/o-0020")" = "$(stat -c %s "$WORK/new")"

# --- deleted in S3 since the listing: an error, no bytes --------------------------
check "o-0030 is deleted in S3" curl -sSf -o /dev/null -X DELETE "$direct/$BUCKET/d/o-0030"
cat "$MNT/d/o-0030" >"$WORK/gone" 2>"$WORK/gone.err"
rc=$?
check "... a read fails ($(cat "$WORK/gone.err"))" test "$rc" -ne 0
is "$(stat -c %s "$WORK/gone")" 0 "... and returns no bytes"

# --- find over the tree ----------------------------------------------------------
is "$(find "$MNT" -type f | sort | tr '\n' ' ' | wc -w)" "$((N + 42))" \
	"find -type f: every file the listings gave"

# --- after meta_ttl: listed again, as S3 has it ----------------------------------
check "object d/new is added in S3" curl -sSf -o /dev/null -X PUT --data-binary @"$WORK/new" "$direct/$BUCKET/d/new"
check "remount with meta_ttl=1" mount -o remount,meta_ttl=1 "$MNT"
sleep 2
ls "$MNT/d" >"$WORK/ls3"
is "$(grep -c '^o-' "$WORK/ls3")/$(grep -cx 'o-0030' "$WORK/ls3")/$(grep -cx new "$WORK/ls3")" \
	"$((N - 1))/0/1" "the next listing: the deleted object gone, the new one there"
check "... the new one reads right" cmp "$MNT/d/new" "$WORK/new"
check "umount" umount_s3 "$MNT"

# --- mounted again: the MOUNT cleared the indexes, the xattrs still say fresh --
check "mount again (dir_index)" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,dir_index"
check "a name opened at once reads right (its index cleared: S3 answers)" \
	cmp "$MNT/d/o-0050" <(body 50)
is "$(ls "$MNT/d" | grep -c '^o-')" "$((N - 1))" "... and a readdir lists the directory again"
check "umount" umount_s3 "$MNT"

# --- meta_ttl=0: nothing is fresh; each readdir reads its own listing's log ----
check "mount (dir_index, meta_ttl=0)" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=0,dir_index"
is "$(ls "$MNT/e" 2>&1)" "one" "a small directory lists"
is "$(ls "$MNT/d" 2>&1 | grep -c '^o-')" "$((N - 1))" "... and a big one"
check "... and a file reads right" cmp "$MNT/d/o-0051" <(body 51)
# The answer overtakes the listing's report (held at list_begin): the
# readdir finds no fresh index, and reads the listing's own kept log.
D0=$(dmesg | wc -l)
echo $((1000 * ${S3CFS_TIMEOUT_SCALE:-1})) >$P/fault_delay_ms
echo list_begin >$P/fault_points
ls "$MNT/e" >"$WORK/e.ls" 2>&1
fault_off
is "$(cat "$WORK/e.ls")" "one" "the answer before the report: the listing's log serves the readdir"
check "... (the answer did overtake: fault point hit)" \
	bash -c "dmesg | tail -n +$((D0 + 1)) | grep -q 'fault point list_begin'"
# No daemon: nothing is fresh, nothing can be listed; the index as it is.
kill_daemon
is "$(timeout 10 ls "$MNT/d" 2>&1 | grep -c '^o-')" "$((N - 1))" \
	"with no daemon a readdir lists from the index, however old"
check_sh "daemon starts again" start_daemon
check "umount" umount_s3 "$MNT"

# --- the same cache without dir_index: listed again, every object there --------
check "mount with nodir_index" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,nodir_index"
is "$(ls "$MNT/d" | grep -c '^o-')" "$((N - 1))" "every object is listed"
is "$(lower_files)" "$N" "... each with its cache file now"
check "umount" umount_s3 "$MNT"

# --- the module's default: read-only mounts index unless nodir_index -----------
has_index() {	# DIR: the lower directory names an index
	python3 -c "import os, sys; os.getxattr(sys.argv[1], 'trusted.s3cachefs.index')" "$1" 2>/dev/null
}
export -f has_index
is "$(cat $P/dir_index)" Y "the module's default is dir_index (Y)"
check "mount, the module's dir_index on, no option" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600"
check "... the mount says dir_index" grep -q "$MNT .*dir_index" /proc/mounts
ls "$MNT/e" >/dev/null
check "... and a listing leaves an index" has_index "$CACHE/e"
check "umount" umount_s3 "$MNT"
check "mount with nodir_index" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,nodir_index"
ls "$MNT/e" >/dev/null
check "... a listing leaves none" bash -c "! has_index '$CACHE/e' && [ -f '$CACHE/e/one' ]"
check "umount" umount_s3 "$MNT"
check "a writable mount with the module's default on mounts (without indexes)" \
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,writable"
check "umount" umount_s3 "$MNT"
echo N >$P/dir_index
check "the module's dir_index off: mount, no option" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600"
check "... the mount does not say dir_index" bash -c "! grep -q '$MNT .*dir_index' /proc/mounts"
check "umount" umount_s3 "$MNT"
echo Y >$P/dir_index

check_fails "dir_index with writable is refused" \
	mount -t s3cachefs -o "cache=$CACHE,writable,dir_index" "$BUCKET" "$MNT"
tap_done
