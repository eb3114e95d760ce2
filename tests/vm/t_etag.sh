#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_etag: an object replaced in S3 while part of it is cached, within the
# metadata TTL. The daemon's ranged GETs carry If-Match: <cached ETag>; the
# 412 makes the module drop the file's chunks and pages, so a read across
# the change fails or returns the new object -- never a mix of versions --
# and the next read returns exactly the new object.
# Served by tests/s3server/fakes3.py (s3rver ignores If-Match).
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init etag
plan 9

size=$((8 << 20))
v1=$(make_fixture "$WORK/v1" $size etag-v1)
v2=$(make_fixture "$WORK/v2" $size etag-v2)
python3 -c 'import json,sys; json.dump({"bucket": sys.argv[1], "objects": {}}, open(sys.argv[2], "w"))' \
	"$BUCKET" "$WORK/manifest.json"

check "module loads" load_module
if ! start_fakes3 9101 "$WORK/manifest.json"; then
	not_ok "fake S3 starts"
	tap_done
fi
ok "fake S3 starts"
curl -sS -X PUT --data-binary "@$WORK/v1" "$FAKES3_ENDPOINT/$BUCKET/obj.bin" -o /dev/null
S3_ENDPOINT=$FAKES3_ENDPOINT check_sh "daemon starts (on the fake S3)" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=20,meta_ttl=600,readahead=0"; then
	not_ok "mount"
	tap_done
fi
ok "mount"

# Cache the first chunk of version 1 only.
check "the first 4 KiB of version 1 read" \
	bash -c "cmp -n 4096 <(timeout 60 dd if='$MNT/obj.bin' bs=4k count=1 status=none) '$WORK/v1'"
f0=$(mnt_stat fetch_bytes)
check "... fetched less than the whole object ($f0 bytes)" test "${f0:-0}" -lt "$size"

curl -sS -X PUT --data-binary "@$WORK/v2" "$FAKES3_ENDPOINT/$BUCKET/obj.bin" -o /dev/null
# The exit status of cat itself (PIPESTATUS does not leave a $(...)).
sum=$( (timeout 120 cat "$MNT/obj.bin" 2>"$WORK/cat.err"; echo $? >"$WORK/cat.rc") |
	sha256sum | cut -d' ' -f1)
rc=$(cat "$WORK/cat.rc")
diag "cat: exit $rc, $(head -c 200 "$WORK/cat.err")"
if [ "$sum" = "$v2" ]; then
	ok "a read across the change returns version 2 entirely"
elif [ "$rc" != 0 ]; then
	ok "a read across the change fails (exit $rc) rather than mixing versions"
else
	not_ok "a read across the change is never a mix" "exit 0, sha256 $sum (v1 $v1, v2 $v2)"
fi
is "$(timeout 120 cat "$MNT/obj.bin" | sha256sum | cut -d' ' -f1)" "$v2" "the next read is exactly version 2"
is "$(timeout 60 stat -c %s "$MNT/obj.bin")" "$size" "size unchanged"
[ -r "/sys/fs/s3cachefs/$(mnt_id)/stale" ] && diag "stale: $(mnt_stat stale)"
umount_s3 "$MNT"
stop_fakes3
tap_done
