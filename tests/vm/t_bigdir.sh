#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_bigdir: a directory of 10,000 objects (paginated listings) -- a lookup
# in a directory never listed asks for one name instead of listing it all;
# readdir returns every name exactly once; a second readdir within the TTL
# does not list again; stat and read of entries picked at random.
# Served by tests/s3server/fakes3.py: s3rver takes minutes under TCG to page
# through 10,000 keys (it re-walks its directory and re-reads every object's
# metadata for each page); the pagination seen by the daemon is the same.
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init bigdir
plan 12

N=10000
python3 - "$WORK/manifest.json" "$BUCKET" $N "$(cat /etc/hostname)" <<'PY'
import json, sys
path, bucket, n, sibling = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
objs = {"many/obj-%05d" % i: "object %d\n" % i for i in range(n)}
objs["many-sibling.txt"] = sibling + "\n"
json.dump({"bucket": bucket, "objects": objs}, open(path, "w"))
PY
opts="cache=$CACHE,fetch_timeout=60,meta_ttl=600"

check "module loads" load_module
if start_fakes3 9102 "$WORK/manifest.json"; then ok "fake S3 starts"; else not_ok "fake S3 starts"; fi
S3_ENDPOINT=$FAKES3_ENDPOINT check_sh "daemon starts (on the fake S3)" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "$opts"; then
	not_ok "mount"
	tap_done
fi
ok "mount"

# A lookup before any readdir of many/: no listing of 10,000 names.
is "$(timeout 120 cat "$MNT/many/obj-09999" 2>&1)" "object 9999" "lookup of one name in an unlisted directory"
is "$(mnt_stat lists)" 0 "... did not list the directory"

t0=$(date +%s)
names=$(timeout 600 ls -f "$MNT/many" 2>&1 | grep -v '^\.\.\?$' | LC_ALL=C sort)
t1=$(date +%s)
is "$(wc -l <<<"$names")" "$N" "readdir returns $N entries ($((t1 - t0)) s)"
is "$(uniq <<<"$names" | wc -l)" "$N" "... each name once"
is "$(sha256sum <<<"$names")" "$(for ((i = 0; i < N; i++)); do printf 'obj-%05d\n' $i; done | sha256sum)" \
	"... exactly the object names"
lists=$(mnt_stat lists)
timeout 300 ls -f "$MNT/many" >/dev/null
is "$(mnt_stat lists)" "$lists" "a second readdir within meta_ttl does not list again"

bad=
for i in $(shuf -i 0-$((N - 1)) -n 25); do
	name=$(printf 'obj-%05d' "$i")
	want="object $i"
	[ "$(timeout 60 stat -c %s "$MNT/many/$name")" = $((${#want} + 1)) ] || bad+=" size:$name"
	[ "$(timeout 60 cat "$MNT/many/$name")" = "$want" ] || bad+=" data:$name"
done
is "$bad" "" "25 random entries have the right size and content"
is "$(timeout 60 cat "$MNT/many-sibling.txt")" "$(cat /etc/hostname)" "a sibling of the big directory"
umount_s3 "$MNT"
stop_fakes3
tap_done
