#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_fsx: random data operations on four files of a writable mount
# (tests/vm/helpers/fsx.py): writes anywhere (holes too), reads, truncates
# up and down, reads and writes through mappings, fallocate (grow, keep
# size, punch, zero), stores through a mapping past EOF followed by growth
# (a write, truncate or fallocate: zeros read back), truncates, writes and
# fallocates past S3's 5 TiB (EFBIG, nothing changed), fsync, close and
# reopen (copy-up
# after an EVICT of the chunks, or O_TRUNC), dropped caches, remounts;
# every read compared with a shadow copy, S3's object compared with it
# after every upload. Two of the files are objects in S3 at the start. The
# seed is printed; tests/run.sh --env FSX_SEED=N replays it (FSX_OPS: how
# many operations).
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init write_fsx
plan 5

SEED=${FSX_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
OPS=${FSX_OPS:-8000}
OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600,writable"
make_fixture "$WORK/f0" 1500000 fsx-f0 >/dev/null
make_fixture "$WORK/f1" 300000 fsx-f1 >/dev/null
s3_put "$BUCKET" f0 "$WORK/f0"
s3_put "$BUCKET" f1 "$WORK/f1"
diag "seed $SEED (tests/run.sh --env FSX_SEED=$SEED replays it), $OPS operations"

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"
start=$SECONDS
out=$(FSX_CTL=$REPO/tools/s3cachectl/s3cachectl timeout $((800 * ${S3CFS_TIMEOUT_SCALE:-1})) \
	python3 "$REPO/tests/vm/helpers/fsx.py" "$MNT" "$S3_DATA/$BUCKET" \
	"$SEED" "$OPS" --remount "$BUCKET" "$OPTS" 2>&1)
rc=$?
diag "$(tail -n 25 <<<"$out")"
diag "$((SECONDS - start)) s"
is "$rc" 0 "fsx: $OPS random operations, every read and every upload as the shadow says"
check "umount" umount_s3 "$MNT"
tap_done
