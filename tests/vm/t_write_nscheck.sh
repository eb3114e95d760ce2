#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_nscheck: random namespace operations (tests/vm/helpers/nscheck.py:
# create, overwrite, change in place, append, rename of files across
# directories and over each other, unlink, mkdir, rmdir, rename of
# directories) on a writable,allow_delete mount, each checked against a
# model: the bucket's keys and bytes after every step, the mount's tree and
# bytes every ten. Then the model is checked through a second mount on an
# empty cache, and through the first cache mounted again. The seed is
# printed; tests/run.sh --env NSCHECK_SEED=N replays it (NSCHECK_OPS: how
# many operations).
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init write_nscheck
plan 11

SEED=${NSCHECK_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
OPS=${NSCHECK_OPS:-200}
NSCHECK=$REPO/tests/vm/helpers/nscheck.py
OPTS="fetch_timeout=60,meta_ttl=3600,writable,allow_delete"
diag "seed $SEED (NSCHECK_SEED=$SEED replays it), $OPS operations"

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable,allow_delete mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,$OPTS"
out=$(timeout $((600 * ${S3CFS_TIMEOUT_SCALE:-1})) python3 "$NSCHECK" "$MNT" \
	"$S3_DATA/$BUCKET" "$SEED" "$OPS" "$WORK/model.json" 2>&1)
rc=$?
diag "$(tail -n 3 <<<"$out")"
is "$rc" 0 "nscheck: $OPS random operations, the bucket and the mount as the model says"
check "umount" umount_s3 "$MNT"

mkdir -p "$WORK/cache2"
check "a second mount on an empty cache" mount_s3 "$BUCKET" /mnt/write_nscheck2 \
	"cache=$WORK/cache2,$OPTS"
check "... shows the model" python3 "$NSCHECK" /mnt/write_nscheck2 "$S3_DATA/$BUCKET" \
	"$SEED" 0 --verify-only "$WORK/model.json"
check "umount the second" umount_s3 /mnt/write_nscheck2
drop_caches
check "the first cache mounted again" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,$OPTS"
check "... shows the model" python3 "$NSCHECK" "$MNT" "$S3_DATA/$BUCKET" "$SEED" 0 \
	--verify-only "$WORK/model.json"
check "umount" umount_s3 "$MNT"
tap_done
