#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_metrics: the daemon's Prometheus endpoint (--metrics) with the module:
# a scrape after real reads shows the kernel requests answered, the S3
# GETs with their status, latency and bytes, and the mount's cache usage
# labelled with its bucket, the module's chunk misses of those cold reads
# (the dashboard's hit ratio); other paths and methods are refused. The
# scrape is kept in the logs ($S3CFS_LOGDIR/metrics-scrape.txt).
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init metrics
plan 13

ADDR=127.0.0.1:9464
make_fixture "$WORK/a" 3M a >/dev/null
make_fixture "$WORK/b" 1M b >/dev/null
s3_put "$BUCKET" "a.bin" "$WORK/a"
s3_put "$BUCKET" "d/b.bin" "$WORK/b"

# The value of the first sample line matching the extended regex $1.
sample() {
	grep -E "^$1 " "$SCRAPE" | head -n 1 | awk '{ print $NF }'
}

check "module loads" load_module
check_sh "daemon starts with --metrics $ADDR" start_daemon --metrics $ADDR
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
check "a.bin reads" cmp "$MNT/a.bin" "$WORK/a"
check "d/b.bin reads" cmp "$MNT/d/b.bin" "$WORK/b"
stat "$MNT/no-such-file" >/dev/null 2>&1

SCRAPE=$S3CFS_LOGDIR/metrics-scrape.txt
code=$(curl -s -m 10 -o "$SCRAPE" -w '%{http_code} %{content_type}' "http://$ADDR/metrics")
is "$code" "200 text/plain; version=0.0.4; charset=utf-8" "GET /metrics: 200, exposition content type"

fetch_ok=$(sample 's3cachefsd_kernel_requests_total\{cmd="FETCH",result="ok"\}')
check "kernel FETCHes answered ok: ${fetch_ok:-none}" test "${fetch_ok:-0}" -ge 1
gets=$(grep -E '^s3cachefsd_s3_requests_total\{op="GET",code="20[06]"\} ' "$SCRAPE" |
	awk '{ s += $NF } END { print s + 0 }')
lat=$(sample 's3cachefsd_s3_request_duration_seconds_count\{op="GET"\}')
check "S3 GETs counted ($gets), each in the latency histogram (${lat:-none})" \
	test "$gets" -ge 2 -a "${lat:-0}" -ge "$gets"
bytes=$(sample 's3cachefsd_s3_received_bytes_total\{op="GET"\}')
check "GET body bytes at least the data read (${bytes:-none})" \
	test "${bytes:-0}" -ge $((4 << 20))
used=$(sample "s3cachefsd_cache_used_bytes\\{mount=\"[0-9]+\",bucket=\"$BUCKET\"\\}")
check "cache used for the mount, labelled with its bucket (${used:-none})" \
	test "${used:-0}" -ge $((4 << 20))
misses=$(sample "s3cachefsd_chunk_misses_total\\{mount=\"[0-9]+\",bucket=\"$BUCKET\"\\}")
hits=$(sample "s3cachefsd_chunk_hits_total\\{mount=\"[0-9]+\",bucket=\"$BUCKET\"\\}")
check "the module's chunk misses of the cold reads (${misses:-none}), hits (${hits:-none})" \
	test "${misses:-0}" -ge 1 -a -n "$hits"

check "POST: 405" test "$(curl -s -m 10 -o /dev/null -w '%{http_code}' -X POST "http://$ADDR/metrics")" = 405
check "other path: 404" test "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://$ADDR/")" = 404

umount_s3 "$MNT"
stop_daemon
tap_done
