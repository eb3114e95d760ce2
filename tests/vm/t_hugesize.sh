#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_hugesize: a file whose size needs more than S3CFS_CHUNKS_MAX (2^27)
# chunks gets no presence bitmap: reading it fails at once with EFBIG and
# a message, instead of allocating a bitmap sized by whatever the cache
# says (the size of a damaged or hand-made cache file is not trusted
# blindly). The mount goes on serving other files.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init hugesize
plan 8

HUGE=$(( (1 << 43) + 1 ))	# 8 TiB + 1: 2^27 + 1 chunks of 64 KiB
make_fixture "$WORK/f.bin" 100K >/dev/null
s3_put "$BUCKET" huge "$WORK/f.bin"
s3_put "$BUCKET" small "$WORK/f.bin"
opts="cache=$CACHE,chunk=64K,fetch_timeout=30,meta_ttl=3600"

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "mount" mount_s3 "$BUCKET" "$MNT" "$opts"
is "$(timeout 60 ls "$MNT" | tr '\n' ' ')" "huge small " "the root lists"
umount_s3 "$MNT"
# The cache file now claims 8 TiB + 1 (its size xattr and its i_size).
truncate -s $HUGE "$CACHE/huge"
python3 "$REPO/tests/lib/cachemeta.py" set "$CACHE/huge" size $HUGE
check "mount again" mount_s3 "$BUCKET" "$MNT" "$opts"
before=$(dmesg | wc -l)
out=$(timeout 60 head -c 4096 "$MNT/huge" 2>&1 >/dev/null)
case "$out" in
*"File too large"*)	ok "reading it fails with EFBIG" ;;
*)			not_ok "reading it fails with EFBIG" "got: $out" ;;
esac
check "the log says why" bash -c "dmesg | tail -n +$((before + 1)) | grep -q 'chunks of 64 KiB, more than the 134217728 a file may have'"
check "other files read right" cmp "$WORK/f.bin" "$MNT/small"
tap_done
