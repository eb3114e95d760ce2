#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_bigdir: a directory of 10,000 objects (paginated listings) -- a lookup
# in a directory never listed asks for one name instead of listing it all;
# readdir returns every name exactly once; a second readdir within the TTL
# does not list again; stat and read of entries picked at random.
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init bigdir
plan 11

N=10000
s3_seed_many "$BUCKET" many/ $N || echo "seeding failed" >&2
s3_put "$BUCKET" many-sibling.txt /etc/hostname
opts="cache=$CACHE,fetch_timeout=60,meta_ttl=600"

check "module loads" load_module
check_sh "daemon starts" start_daemon
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
tap_done
