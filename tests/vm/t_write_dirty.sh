#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_dirty: a writable mount's dirty pages are bounded (dirty_ratio=,
# the percent of the system's dirty threshold its bdi may take, strictly).
# A writer of 64 MiB on a mount with dirty_ratio=1 never has more than a
# few MiB dirty at once (it waits while writeback drains them to the cache
# device), where with dirty_ratio=100 the same write leaves most of it
# dirty; the file is uploaded whole either way. The limit shows as the
# bdi's max_ratio, changes on remount, and a bad value fails the mount.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init write_dirty
plan 14

OPTS="cache=$CACHE,fetch_timeout=120,meta_ttl=3600,writable"
SIZE_MB=64
export SIZE_MB

# WRITE NAME: write SIZE_MB MiB of zeros to NAME, sampling the bdi's dirty
# pages meanwhile; prints the most seen at once, in KiB.
write_sampled() {
	local stats=/sys/kernel/debug/bdi/$(mnt_stat bdi)/stats
	python3 - "$stats" "$MNT/$1" "$SIZE_MB" <<'PY'
import os, subprocess, sys, time
stats, path, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
def dirty():
    for line in open(stats):
        if line.startswith("BdiReclaimable:"):
            return int(line.split()[1])
    raise SystemExit("no BdiReclaimable in " + stats)
w = subprocess.Popen(["dd", "if=/dev/zero", "of=" + path, "bs=1M",
                      "count=%d" % mb, "status=none"])
most = 0
while w.poll() is None:
    most = max(most, dirty())
    time.sleep(0.02)
if w.returncode:
    raise SystemExit("dd failed: %d" % w.returncode)
print(most)
PY
}
s3_zeros() {	# KEY: the object is SIZE_MB MiB of zeros
	s3_get "$BUCKET" "$1" "$WORK/got" 2>/dev/null &&
		[ "$(stat -c %s "$WORK/got")" = $((SIZE_MB * 1048576)) ] &&
		cmp -s -n $((SIZE_MB * 1048576)) "$WORK/got" /dev/zero
}
export -f s3_zeros

check "module loads" load_module
check_sh "daemon starts" start_daemon
mkdir -p "$MNT"
check_fails "dirty_ratio=0 fails the mount" mount -t s3cachefs -o "$OPTS,dirty_ratio=0" "$BUCKET" "$MNT"
check "writable mount with dirty_ratio=1" mount_s3 "$BUCKET" "$MNT" "$OPTS,dirty_ratio=1"
check "mount options show it" grep -q "$MNT s3cachefs .*writable,dirty_ratio=1" /proc/mounts
is "$(cat "/sys/class/bdi/$(mnt_stat bdi)/max_ratio")" 1 "the bdi's max_ratio is 1"
check "debugfs has the bdi's counters" test -r "/sys/kernel/debug/bdi/$(mnt_stat bdi)/stats"

sync
low=$(write_sampled low.bin)
diag "dirty_ratio=1: at most $low KiB dirty while writing $SIZE_MB MiB"
check "... at most 24 MiB dirty at once" test "${low:-999999}" -le $((24 * 1024))
check "... and the file is in S3" s3_zeros low.bin

check "remount with dirty_ratio=100" mount -o remount,dirty_ratio=100 "$MNT"
is "$(cat "/sys/class/bdi/$(mnt_stat bdi)/max_ratio")" 100 "the bdi's max_ratio is 100"
sync
high=$(write_sampled high.bin)
diag "dirty_ratio=100: at most $high KiB dirty while writing $SIZE_MB MiB"
check "... the same write leaves more than twice as much dirty (the limit was what held it)" \
	test "${high:-0}" -gt $((2 * ${low:-999999}))
check "... and the file is in S3" s3_zeros high.bin

check "umount" umount_s3 "$MNT"
tap_done
