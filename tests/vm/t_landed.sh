#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_landed: chunks count as cached as the daemon writes them (protocol 2:
# DONE in a FETCH's progress reports), not when the whole FETCH is answered.
# A sequential reader starts one 8-chunk FETCH (an 8 MiB readahead window)
# whose GET the fault proxy holds after 2.5 chunks of body. While it is
# held, a second reader of the first chunk must get the right bytes, and
# the third chunk (half written) must not be taken as cached. Then the proxy
# lets go and both readers get the whole object right.
# timeout: 240
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init landed
plan 11

size=$((8 << 20))
hold=$(((5 << 20) / 2))		# 2.5 MiB: chunks 0 and 1 written, 2 half
echo "landed.bin $size" | fp_seed "$BUCKET" "$WORK"

check "module loads" load_module
if ! start_faultproxy 9103; then
	not_ok "fault proxy starts"
	tap_done
fi
ok "fault proxy starts"
# The GET is held for as long as the test needs (a debug kernel is slow):
# the daemon must not drop it as stalled meanwhile, nor the kernel give
# the FETCH up (fetch_timeout, 60 s by default: on the debug kernel the
# hold took longer, and reader A got the 2 MiB that had landed).
check_sh "daemon starts (through the proxy)" start_daemon --stall-timeout 300
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,readahead=8192,fetch_timeout=300"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
timeout 60 ls -l "$MNT" >/dev/null

fp_rules "[{\"method\": \"GET\", \"path\": \"^/$BUCKET/landed.bin\$\", \"nth\": [1],
	    \"fault\": \"stall\", \"after_bytes\": $hold}]"
# Reader A: one 8 MiB read, one readahead window, one FETCH of 8 chunks.
timeout -k 5 120 dd if="$MNT/landed.bin" of="$WORK/a.out" bs=8M count=1 \
	status=none 2>"$WORK/a.err" &
pa=$!
for ((i = 0; i < 300; i++)); do
	[ "$(fp_stat stalled)" = 1 ] && break
	sleep 0.1
done
is "$(fp_stat stalled)" 1 "the proxy holds the GET after 2.5 MiB of body"

# Reader B, its own file and readahead state: the first 64 KiB.
t0=$(date +%s.%N)
timeout -k 5 20 dd if="$MNT/landed.bin" of="$WORK/b.out" bs=64k count=1 \
	status=none 2>"$WORK/b.err"
rc=$? t=$(echo "$(date +%s.%N) - $t0" | bc)
if [ "$rc" = 0 ] && cmp -s "$WORK/b.out" <(head -c 65536 "$WORK/landed.bin"); then
	ok "the first chunk reads right while its FETCH is held (${t} s)"
else
	not_ok "the first chunk reads right while its FETCH is held" \
		"dd exit $rc after $t s: $(head -c 200 "$WORK/b.err")"
fi
is "$(fp_stat stalled)" 1 "... and the GET is still held then"
# Chunk 2 is half written: a reader of it must still be waiting.
timeout -k 1 3 dd if="$MNT/landed.bin" of=/dev/null bs=4k count=1 \
	skip=$(((2 << 20) / 4096)) status=none 2>/dev/null
is "$?" 124 "a reader of the half-written third chunk waits (timeout 3 s)"

fp_release
wait "$pa"
rc=$?
if [ "$rc" = 0 ] && cmp -s "$WORK/a.out" "$WORK/landed.bin"; then
	ok "released: the 8 MiB read returns the whole object"
else
	not_ok "released: the 8 MiB read returns the whole object" \
		"dd exit $rc: $(head -c 200 "$WORK/a.err"); $(cmp "$WORK/a.out" "$WORK/landed.bin" 2>&1)"
fi
drop_caches
check "... and so does a read from the cache" cmp "$MNT/landed.bin" "$WORK/landed.bin"
# One GET from byte 0; a slow guest (KASAN) may see the daemon give up on
# the held GET (30 s without a byte) and resume after what it wrote.
n0=$(fp_count --method GET --path "^/$BUCKET/landed.bin\$" --list |
	awk '$3 ~ /^bytes=0-/' | wc -l)
is "$n0" 1 "... with one GET from byte 0 (what landed was not fetched again)"

umount_s3 "$MNT"
stop_daemon
stop_faultproxy
tap_done
