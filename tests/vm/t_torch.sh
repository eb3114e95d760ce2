#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_torch: a real client. torch.save of a model's state dict to a writable
# mount as the training loop does it, save(tmp) then rename(tmp, final),
# several times while another process torch.loads the final name in a
# loop (every load succeeds and is one whole checkpoint); then torch.load
# from a new mount with an empty cache gives tensors equal to the last
# save. Needs Debian's python3-torch (tools/setup.sh installs it).
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init torch
plan 8

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=60,writable,allow_delete"
CK=$REPO/tests/vm/helpers/torchckpt.py

if ! python3 -c 'import torch' 2>"$WORK/import.err"; then
	diag "$(tail -n 2 "$WORK/import.err")"
	skip_n 8 "python3-torch is not installed"
	tap_done
fi

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"
check "mkdir ckpt" mkdir "$MNT/ckpt"

rm -f "$WORK/saved"
python3 "$CK" read "$MNT/ckpt" 120 "$WORK/saved" >"$WORK/reader.out" 2>&1 &
reader=$!
# A 1-CPU guest shares its CPU with the reader: more than the default bound.
TAP_TIMEOUT=$((4 * TAP_TIMEOUT)) check "8 checkpoints saved as tmp + rename" python3 "$CK" save "$MNT/ckpt" 8 "$WORK/ref.pt"
touch "$WORK/saved"
wait "$reader"
rc=$?
diag "reader: $(cat "$WORK/reader.out")"
is "$rc" 0 "a reader loading meanwhile always gets one whole checkpoint"

check "a new mount with an empty cache" bash -c "umount_s3 '$MNT' &&
	rm -rf '$CACHE' && mkdir -p '$CACHE' && mount_s3 '$BUCKET' '$MNT' '$OPTS'"
check "torch.load there equals the last save" python3 "$CK" same "$MNT/ckpt" "$WORK/ref.pt"
umount_s3 "$MNT"
tap_done
