#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_lookuplist: a loader that opens files by name (no readdir), in
# shuffled order, costs S3 about one GET per file. The second name new to
# the cache looked up in a directory has the daemon list that directory;
# the lookup waits for the listing, later names are in the lower
# directory, which the module trusts as listed: no LOOKUP upcall for them,
# and each file costs its FETCH. Counted on both sides: the module's
# lookups and fetches, the requests that reached the server (fault proxy
# log), the bytes compared. A missing name then costs nothing either. A
# posix_meta mount lists nothing this way (a listing has no x-amz-meta-*).
# Mounts with nodir_index: the lookups of a mount without indexes.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init lookuplist
plan 19

N=60
python3 - "$WORK/manifest.json" "$BUCKET" "$N" <<'PY'
import json, sys
n = int(sys.argv[3])
objs = {}
for d in ("ds", "px"):
    for i in range(n):
        objs["%s/o-%04d" % (d, i)] = ("%s object %d\n" % (d, i)) * (200 + i)
json.dump({"bucket": sys.argv[2], "objects": objs}, open(sys.argv[1], "w"))
PY
body() {	# DIR I: the object's bytes
	python3 -c 'import sys; sys.stdout.write(("%s object %d\n" % (sys.argv[1], int(sys.argv[2]))) * (200 + int(sys.argv[2])))' "$1" "$2"
}
check "module loads" load_module
if start_fakes3 9482 "$WORK/manifest.json"; then ok "fake S3 starts"; else not_ok "fake S3 starts"; fi
S3_ENDPOINT=$FAKES3_ENDPOINT
check_sh "fault proxy starts (in front of it)" start_faultproxy 9481
check_sh "daemon starts" start_daemon
check "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,nodir_index"

# 8 readers open and read DIR/o-NNNN in shuffled order; prints the names
# whose bytes differ from the object's (none: nothing).
read_shuffled() {	# DIR
	python3 - "$MNT/$1" "$1" "$N" <<'PY'
import os, random, sys, threading
root, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = list(range(n))
random.Random(7).shuffle(names)
bad, lock = [], threading.Lock()
def worker(mine):
    for i in mine:
        with open(os.path.join(root, "o-%04d" % i), "rb") as f:
            got = f.read()
        if got != (("%s object %d\n" % (d, i)) * (200 + i)).encode():
            with lock:
                bad.append(i)
ts = [threading.Thread(target=worker, args=(names[k::8],)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print(" ".join(map(str, sorted(bad))))
PY
}

# --- a shuffled loader on a cold directory --------------------------------------
p0=$(fp_lines)
l0=$(mnt_stat lookups)
f0=$(mnt_stat fetches)
check "the first name reads right" cmp "$MNT/ds/o-0005" <(body ds 5)
check "the second (it lists ds/) reads right" cmp "$MNT/ds/o-0009" <(body ds 9)
is "$(read_shuffled ds)" "" "8 readers, all $N names in shuffled order: every file's bytes right"
is "$(($(mnt_stat lookups) - l0))" 3 "... 3 LOOKUP upcalls: ds, and the two names before the listing"
is "$(fp_count --from "$p0" --method GET --path '^/[^/]*$' --query 'delimiter=.*prefix=ds%2F$')" 1 "... one listing of ds/"
is "$(fp_count --from "$p0" --method GET --path '^/[^/]*$' --query 'max-keys=1')/$(fp_count --from "$p0" --method HEAD --path '/ds/')" "2/0" \
	"... a LIST of a name's prefix for ds and the first name only, no HEAD"
is "$(fp_count --from "$p0" --method GET --path '/ds/o-')" "$N" "... and one GET per file ($N)"
is "$(($(mnt_stat fetches) - f0))" $((N - 1)) "... the first arrived with its LOOKUP, the others were fetched"

# --- a missing name in the listed directory ----------------------------------
p1=$(fp_lines)
l1=$(mnt_stat lookups)
check "a missing name: ENOENT" bash -c "! stat '$MNT/ds/o-9999' 2>/dev/null"
is "$(($(mnt_stat lookups) - l1))/$(($(fp_lines) - p1))" "0/0" \
	"... with no LOOKUP and no request"
check "umount" umount_s3 "$MNT"

# --- posix_meta: each name looked up with a HEAD, no listing -----------------
rm -rf "$CACHE" && mkdir -p "$CACHE"
check "mount (posix_meta)" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,writable,posix_meta"
p2=$(fp_lines)
for i in 1 2 3 4; do cat "$MNT/px/o-000$i" >/dev/null; done
is "$(fp_count --from "$p2" --method GET --path '^/[^/]*$' --query 'delimiter=.*prefix=px%2F$')" 0 "posix_meta: 4 new names, no listing of px/"
check "umount" umount_s3 "$MNT"
tap_done
