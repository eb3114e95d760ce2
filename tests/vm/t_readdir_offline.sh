#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_readdir_offline: with no daemon registered, a readdir is served from
# the cache at once, as lookups are (it used to wait out fetch_timeout for
# a LIST and fail with EIO); once a daemon is back, listings come from S3
# again.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init readdir_offline
plan 9

make_fixture "$WORK/f.bin" 100K >/dev/null
s3_put "$BUCKET" a.bin "$WORK/f.bin"
s3_put "$BUCKET" d/b.bin "$WORK/f.bin"
# meta_ttl=0: every readdir asks for a LIST; fetch_timeout=30: a readdir
# that waits for a daemon shows as one over the 10 s allowed below.
opts="cache=$CACHE,fetch_timeout=30,meta_ttl=0"

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "mount" mount_s3 "$BUCKET" "$MNT" "$opts"
is "$(timeout 60 ls "$MNT" 2>&1 | tr '\n' ' ')" "a.bin d " "the root lists with a daemon"
is "$(timeout 60 ls "$MNT/d" 2>&1 | tr '\n' ' ')" "b.bin " "d/ lists with a daemon"
kill_daemon

start=$SECONDS
out=$(timeout 10 ls "$MNT" 2>&1 | tr '\n' ' ')
is "$out" "a.bin d " "with no daemon the root lists from the cache (took $((SECONDS - start)) s)"
is "$(timeout 10 ls "$MNT/d" 2>&1 | tr '\n' ' ')" "b.bin " "so does d/"

s3_put "$BUCKET" new.bin "$WORK/f.bin"
check_sh "daemon starts again" start_daemon
is "$(timeout 60 ls "$MNT" 2>&1 | tr '\n' ' ')" "a.bin d new.bin " \
	"with the daemon back the listing comes from S3 again"
tap_done
