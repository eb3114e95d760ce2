#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_consistency: the bucket is the truth -- an object overwritten in S3 is
# read with its new size and content (never a mix) once meta_ttl has passed,
# also when the old version was cached; a deleted object disappears and a
# new one appears after the TTL.
# (s3rver ignores If-Match, so this exercises the TTL revalidation path; the
# 412 path needs a strict server.)
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init consistency
plan 12

TTL=2
v1=$(make_fixture "$WORK/v1" 2621440 v1)		# 2.5 MiB
v2=$(make_fixture "$WORK/v2" 1572899 v2)		# 1.5 MiB + 35
v3=$(make_fixture "$WORK/v3" 3145728 v3)		# 3 MiB
s3_put "$BUCKET" obj.bin "$WORK/v1"
s3_put "$BUCKET" gone.bin "$WORK/v1"

# Poll (up to TTL + 30 s) until CMD's output is WANT; print the last output.
eventually() {	# WANT CMD...
	local want=$1 got i
	shift
	for ((i = 0; i < (TTL + 30) * 2; i++)); do
		got=$("$@" 2>&1)
		[ "$got" = "$want" ] && break
		sleep 0.5
	done
	echo "$got"
}
sha_of() { timeout 120 cat "$1" | sha256sum | cut -d' ' -f1; }
size_of() { timeout 60 stat -c %s "$1"; }

check "module loads" load_module
check_sh "daemon starts" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30,meta_ttl=$TTL"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
is "$(sha_of "$MNT/obj.bin")" "$v1" "version 1 is read"
is "$(ls "$MNT" | tr '\n' ' ')" "gone.bin obj.bin " "listing before the changes"

# Overwrite with a smaller object while v1 is fully cached (NVMe and pages).
s3_put "$BUCKET" obj.bin "$WORK/v2"
sleep $((TTL + 1))
is "$(eventually 1572899 size_of "$MNT/obj.bin")" 1572899 "after meta_ttl: the new size"
is "$(sha_of "$MNT/obj.bin")" "$v2" "... and exactly the new content"
drop_caches
is "$(sha_of "$MNT/obj.bin")" "$v2" "... also from the NVMe cache"

# Overwrite with a larger one while the file is open: a new open sees it.
exec 7<"$MNT/obj.bin"
s3_put "$BUCKET" obj.bin "$WORK/v3"
sleep $((TTL + 1))
is "$(eventually 3145728 size_of "$MNT/obj.bin")" 3145728 "a larger version: the new size"
is "$(sha_of "$MNT/obj.bin")" "$v3" "... and exactly the new content"
exec 7<&-

s3_delete "$BUCKET" gone.bin
s3_put "$BUCKET" new.bin "$WORK/v2"
sleep $((TTL + 1))
is "$(eventually "new.bin obj.bin " bash -c "ls '$MNT' | tr '\n' ' '")" "new.bin obj.bin " \
	"after meta_ttl: the deleted object is gone, the new one listed"
check_fails "the deleted object: ENOENT" stat "$MNT/gone.bin"
tap_done
