#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_window: ->readahead never waits for S3 (kmod/aops.c, struct
# s3cfs_ra_wait). Chunk 0 of a 4-chunk object is cached; the fault proxy
# then holds every GET of the object. A sequential reader of the first MiB
# grows its readahead window into chunk 1, whose FETCH the proxy holds: the
# reader must still get its MiB (the kernel calls ->readahead for the
# asynchronous window in the reader's context; a ->readahead that waited
# for the window to land held the reader until the GET was let go). Then
# the proxy lets go and the whole object reads right.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init window
plan 10

MIB=$((1 << 20))
echo "window.bin $((4 * MIB))" | fp_seed "$BUCKET" "$WORK"
gets() { fp_count --method GET --path "^/$BUCKET/window.bin\$"; }

check "module loads" load_module
if ! start_faultproxy 9103; then
	not_ok "fault proxy starts"
	tap_done
fi
ok "fault proxy starts"
# The held GET must not be given up on (and retried) while the test runs.
check_sh "daemon starts (through the proxy)" start_daemon --stall-timeout 600
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,readahead=4096"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
timeout 60 ls -l "$MNT" >/dev/null

# Chunk 0 only: no readahead, one 4 KiB read (->read_folio).
mnt_set readahead_kb 0
timeout 60 dd if="$MNT/window.bin" of=/dev/null bs=4k count=1 status=none
is "$(gets) $(mnt_stat fetch_bytes)" "1 $MIB" "chunk 0 cached: one GET, 1 MiB fetched"
mnt_set readahead_kb 4096
drop_caches

fp_rules "[{\"method\": \"GET\", \"path\": \"^/$BUCKET/window.bin\$\", \"fault\": \"stall\"}]"
t0=$(date +%s.%N)
timeout -k 5 60 dd if="$MNT/window.bin" of="$WORK/head.out" bs=64k count=16 \
	status=none 2>"$WORK/head.err"
rc=$? t=$(echo "$(date +%s.%N) - $t0" | bc)
if [ "$rc" = 0 ] && cmp -s "$WORK/head.out" <(head -c $MIB "$WORK/window.bin"); then
	ok "the cached MiB reads right while the window's FETCH is held (${t} s)"
else
	not_ok "the cached MiB reads right while the window's FETCH is held" \
		"dd exit $rc after $t s: $(head -c 200 "$WORK/head.err")"
fi
# Without this the check above proves nothing: the window did reach
# chunk 1, and its GET is held.
for ((i = 0; i < 100; i++)); do
	[ "$(fp_stat stalled)" -ge 1 ] && break
	sleep 0.1
done
n=$(fp_stat stalled)
check "... the window reached chunk 1: the proxy holds its GET ($n held)" test "$n" -ge 1

fp_rules '[]'
fp_release
check "released: the whole object reads right" \
	timeout 120 cmp "$MNT/window.bin" "$WORK/window.bin"
drop_caches
check "... and so it does from the cache" \
	timeout 120 cmp "$MNT/window.bin" "$WORK/window.bin"
is "$(mnt_stat fetch_errors)" 0 "no fetch errors"

umount_s3 "$MNT"
stop_daemon
stop_faultproxy
tap_done
