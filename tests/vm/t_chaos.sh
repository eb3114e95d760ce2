#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_chaos: never wrong, never hung, under everything at once. Reader threads
# open objects and read them at random (pread, sequential read, mmap) and
# check every byte against the versions the object has had, while: objects
# are overwritten in S3 (fakes3, which honours If-Match), the daemon is
# killed (-9) and restarted, it evicts under a --cache-limit far below the
# working set, caches are dropped, and meta_ttl is short. Each read must
# return bytes of exactly one version; all the reads of one open the same
# version; failures may only be ESTALE (the open's version is gone);
# nothing may hang.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init chaos
plan 13

# Twice as long on a slow (debug) kernel, where a daemon restart takes
# long enough that 90 s held only two.
SECONDS_RUN=${CHAOS_SECONDS:-$(( ${S3CFS_TIMEOUT_SCALE:-1} > 1 ? 120 : 60 ))}
python3 -c 'import json,sys; json.dump({"bucket": sys.argv[1], "objects": {}}, open(sys.argv[2], "w"))' \
	"$BUCKET" "$WORK/manifest.json"
check "module loads" load_module
if ! start_fakes3 9103 "$WORK/manifest.json"; then
	not_ok "fake S3 starts"
	tap_done
fi
ok "fake S3 starts"
DAEMON_ARGS=(--cache-limit 3M)
S3_ENDPOINT=$FAKES3_ENDPOINT check_sh "daemon starts (fake S3, --cache-limit 3M)" \
	start_daemon "${DAEMON_ARGS[@]}"
# Version 0 of every object before the mount (the checker PUTs them).
S3CFS_CHAOS_INIT=1 python3 "$(dirname "$0")/helpers/chaos.py" "$MNT" \
	"$FAKES3_ENDPOINT/$BUCKET" "$WORK/chaos" 0 >"$WORK/init.out" 2>&1
check "objects created" grep -q "created" "$WORK/init.out"
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=256K,fetch_timeout=60,meta_ttl=2,readahead=1024"

# The daemon: killed and restarted every 12 s; caches dropped every 5 s.
restarts=$WORK/restarts
: >"$restarts"
(
	end=$((SECONDS + SECONDS_RUN))
	while [ $SECONDS -lt $end ]; do
		sleep 12
		[ $SECONDS -lt $end ] || break
		kill_daemon
		S3_ENDPOINT=$FAKES3_ENDPOINT start_daemon "${DAEMON_ARGS[@]}" && echo "$DAEMON_PID" >>"$restarts"
	done
	echo "$DAEMON_PID" >"$WORK/last_daemon"
) &
chaos_pid=$!
(
	end=$((SECONDS + SECONDS_RUN))
	while [ $SECONDS -lt $end ]; do sleep 5; echo 3 >/proc/sys/vm/drop_caches; done
) &
drop_pid=$!

timeout $((SECONDS_RUN + 240)) python3 "$(dirname "$0")/helpers/chaos.py" "$MNT" \
	"$FAKES3_ENDPOINT/$BUCKET" "$WORK/chaos" "$SECONDS_RUN" >"$WORK/chaos.out" 2>&1
rc=$?
wait "$chaos_pid" "$drop_pid"
DAEMON_PID=$(cat "$WORK/last_daemon" 2>/dev/null)
diag "$(tail -n 20 "$WORK/chaos.out")"
val() { sed -n "s/^$1: //p" "$WORK/chaos.out" | tail -n 1; }
is "$rc" 0 "the checker finished in time (exit $rc)"
check "reads were made ($(val reads) reads, $(val bytes) bytes checked)" test "$(val reads)" -ge 30
is "$(val wrong)" 0 "no read returned bytes of no version (zeros, a mix)"
is "$(val mixed)" 0 "no open returned bytes of two versions"
is "$(val hung)" 0 "no read hung"
is "$(val errors)" 0 "no failure but ESTALE ($(val estale) ESTALE)"
check "objects changed meanwhile and were read ($(val overwrites) overwrites, $(val newer) reads of new versions, stale $(mnt_stat stale))" \
	test "$(val overwrites)" -ge 5 -a "$(val newer)" -ge 1
n=$(wc -l <"$restarts")
check "the daemon was killed and restarted ($n times) and evicted" \
	bash -c "[ $n -ge 3 ] && grep -qs 'evicted' $S3CFS_LOGDIR/s3cachefsd-chaos-*.log"
umount_s3 "$MNT"
stop_fakes3
tap_done
