#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_ctl: s3cachectl round trip -- status of a cold file is 0%, after a read
# 100%; evict (EVICT over netlink) brings it back to 0% and the next read
# still returns the right bytes; stats prints the mount's counters; bad
# input gets a clear error and a non-zero exit.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init ctl
plan 13

CTL=$REPO/tools/s3cachectl/s3cachectl
CHUNK=1048576
exp=$WORK/exp
make_fixture "$exp/big.bin" $((3 * CHUNK + 100)) ctl-big >/dev/null
s3_put "$BUCKET" dir/big.bin "$exp/big.bin" || echo "s3_put failed" >&2
opts="cache=$CACHE,chunk=1M,fetch_timeout=60"

pct() { "$CTL" status "$1" | awk 'NR == 2 { print $3 }'; }

check "module loads" load_module
check_sh "daemon starts" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "$opts"; then
	not_ok "mount"
	tap_done
fi
ok "mount"

f=$MNT/dir/big.bin
is "$(timeout 60 stat -c %s "$f")" $((3 * CHUNK + 100)) "size"
is "$(pct "$f")" "0.0%" "status: cold file is 0% cached"
is "$(timeout 120 sha256sum <"$f" | cut -d' ' -f1)" "$(sha256 "$exp/big.bin")" "read: right bytes"
is "$(pct "$f")" "100.0%" "status: after a read, 100% cached"
check "evict: the kernel punches the file" "$CTL" evict "$f"
is "$(pct "$f")" "0.0%" "status: after evict, 0% cached"
drop_caches
is "$(timeout 120 sha256sum <"$f" | cut -d' ' -f1)" "$(sha256 "$exp/big.bin")" "read after evict: right bytes (fetched again)"
check "stats: shows the mount's fetch counter" bash -c "'$CTL' stats '$MNT' | grep -q 'fetches'"
check_fails "bad input: a file outside any mount is refused" "$CTL" status /etc/hostname
check "... with a clear error" bash -c "'$CTL' status /etc/hostname 2>&1 | grep -q 'not on an s3cachefs mount'"
tap_done
