#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_badkeys: keys that cannot be paths ("a//b", "./x", "../y", ".", "..",
# a leading "/", a component over NAME_MAX, a key colliding with the cache's
# own .s3cachefs directory, the daemon's hidden prefix) are skipped, never
# mapped outside the cache root, and do not disturb their valid neighbours.
# Served by tests/s3server/fakes3.py: s3rver cannot store such keys.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init badkeys
plan 16

n255=$(printf 'n%.0s' $(seq 255))
n300=$(printf 'n%.0s' $(seq 300))
python3 - "$WORK/manifest.json" "$BUCKET" "$n255" "$n300" <<'PY'
import json, sys
path, bucket, n255, n300 = sys.argv[1:5]
objs = {
    "good.txt": "good\n",
    "dir/ok.txt": "ok\n",
    "dir with space/ü ñ.txt": "unicode\n",
    "trail/": "",
    "trail/inner.txt": "inner\n",
    "max/" + n255: "name max\n",
    "a//b": "double slash\n",
    "./x": "dot\n",
    "../y": "dotdot\n",
    "dir/./z": "dot inside\n",
    "dir/../w": "dotdot inside\n",
    "/lead": "leading slash\n",
    ".": "dot key\n",
    "..": "dotdot key\n",
    "long/" + n300: "too long\n",
    ".s3cachefs/format": "version=666\nbucket=evil\n",
    ".s3cfs-tmp": "hidden\n",
}
json.dump({"bucket": bucket, "objects": objs}, open(path, "w"))
PY

check "module loads" load_module
if ! start_fakes3 9100 "$WORK/manifest.json"; then
	not_ok "fake S3 starts"
	tap_done
fi
ok "fake S3 starts"
S3_ENDPOINT=$FAKES3_ENDPOINT check_sh "daemon starts (on the fake S3)" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=20"; then
	not_ok "mount"
	tap_done
fi
ok "mount"

root=$(timeout 60 ls -a "$MNT" 2>&1)
diag "root: $(tr '\n' ' ' <<<"$root")"
missing= extra=
for n in good.txt dir "dir with space" trail max; do
	grep -qxF -- "$n" <<<"$root" || missing+=" '$n'"
done
for n in .s3cachefs .s3cfs-tmp; do
	grep -qxF -- "$n" <<<"$root" && extra+=" '$n'"
done
is "$missing" "" "the valid names are listed"
is "$extra" "" "the cache's own directory and hidden names are not"
is "$(timeout 60 ls -a "$MNT/dir" | tr '\n' ' ')" ". .. ok.txt " "dir/ lists only ok.txt (not ./z, ../w)"
is "$(timeout 60 cat "$MNT/good.txt")" good "good.txt reads"
is "$(timeout 60 cat "$MNT/dir with space/ü ñ.txt")" unicode "a unicode name reads"
is "$(timeout 60 cat "$MNT/trail/inner.txt")" inner "a directory-marker object does not hide its directory"
is "$(timeout 60 cat "$MNT/max/$n255" 2>&1)" "name max" "a 255-byte name reads"
check_fails "a//b is not reachable as a/b" cat "$MNT/a/b"
check_fails "the over-long name is not reachable" stat "$MNT/long/${n300:0:255}"
check "nothing escaped the cache root" bash -c "
	cd '$S3CFS_NVME/cache' && [ ! -e y ] && [ ! -e w ] && [ ! -e x ] && [ ! -e lead ] &&
	[ -z \"\$(find '$CACHE' -name y -o -name w -o -name z -o -name lead)\" ]"
check "the cache's format marker is intact" \
	bash -c "grep -q '^bucket=$BUCKET\$' '$CACHE/.s3cachefs/format' && ! grep -q evil '$CACHE/.s3cachefs/format'"
check "umount" umount_s3 "$MNT"
stop_fakes3
tap_done
