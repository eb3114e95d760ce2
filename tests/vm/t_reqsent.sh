#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_reqsent: a request the daemon took with it when it died is sent again
# to the next daemon, whatever the moment of the death (issue 11, item 5).
# The fault point "send" (module parameters fault_points, fault_delay_ms)
# holds the sender for 5 s right after its unicast returned. A fake daemon
# (nlfuzz fake-daemon --stall-fetch) takes the FETCH and is killed inside
# that window: its socket's release marks every pending request unsent. The real
# daemon registers after the window (dmesg shows the order) and must get
# the FETCH again: the reader gets the right bytes before its fetch
# timeout. Before the fix the sender marked the request sent after the
# window, over the daemon's death, and the reader failed with EIO.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init reqsent
plan 8

P=/sys/module/s3cachefs/parameters
nlfuzz=$(helper nlfuzz)
make_fixture "$WORK/f" 300K >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f"

check "module loads" load_module
check_sh "daemon starts" start_daemon
FT=$((40 * ${S3CFS_TIMEOUT_SCALE:-1}))	# slower kernels (debug) get longer
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=$FT,meta_ttl=600"
timeout 60 ls -l "$MNT" >/dev/null
exec 3<"$MNT/f.bin"
stop_daemon

# A fake daemon that never answers a FETCH; it is killed while the sender
# sleeps at the fault point after the FETCH's unicast to it.
"$nlfuzz" fake-daemon --stall-fetch --seconds 120 3<&- >"$WORK/fake.log" 2>&1 &
fake=$!
echo "$fake" >>"${S3CFS_PIDFILE:-/dev/null}"
for ((i = 0; i < 100; i++)); do
	grep -q 'fake daemon ready' "$WORK/fake.log" && break
	sleep 0.1
done
grep -q 'fake daemon ready' "$WORK/fake.log"
is "$?" 0 "a fake daemon that never answers a FETCH registers"

d0=$(dmesg | wc -l)
echo 5000 >"$P/fault_delay_ms"
echo send >"$P/fault_points"
t0=$(date +%s)
timeout -k 5 120 dd bs=64k of="$WORK/out" status=none <&3 2>"$WORK/dd.err" &
reader=$!
# The sender sleeps 5 s after its unicast; the fake daemon dies in it.
for ((i = 0; i < 300; i++)); do
	dmesg | tail -n +$((d0 + 1)) | grep -q 'fault point send: 5000 ms' && break
	sleep 0.1
done
kill -KILL "$fake"
for ((i = 0; i < 300; i++)); do
	dmesg | tail -n +$((d0 + 1)) | grep -q 'fault point send: done' && break
	sleep 0.1
done
echo >"$P/fault_points"
echo 0 >"$P/fault_delay_ms"
wait "$fake" 2>/dev/null
log=$(dmesg | tail -n +$((d0 + 1)))
diag "$(grep -E 'fault point|went away|registered' <<<"$log")"
order=$(grep -noE 'fault point send: 5000 ms|went away|fault point send: done' <<<"$log" |
	head -n 3 | sed 's/^[0-9]*://' | tr '\n' '|')
is "$order" "fault point send: 5000 ms|went away|fault point send: done|" \
	"the daemon died between the unicast and the end of the send (dmesg order)"

# The next daemon comes after the window.
check_sh "real daemon starts after the window" start_daemon
wait "$reader"
rc=$?
t=$(($(date +%s) - t0))
if [ "$rc" = 0 ] && cmp -s "$WORK/out" "$WORK/f"; then
	ok "the reader gets the right bytes from the next daemon ($t s)"
else
	not_ok "the reader gets the right bytes from the next daemon" \
		"dd exit $rc after $t s: $(head -c 200 "$WORK/dd.err")"
fi
if [ "$t" -lt $((FT - 5)) ]; then
	ok "... before its fetch timeout ($FT s): the FETCH was sent again ($t s)"
else
	not_ok "... before its fetch timeout ($FT s): the FETCH was sent again" "$t s"
fi
exec 3<&-
tap_done
