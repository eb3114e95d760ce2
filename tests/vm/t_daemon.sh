#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_daemon: the daemon going away -- a read with no daemon fails with EIO
# after the fetch timeout (never a hang), the fetch_timeout_ms knob takes
# effect at once, cached data stays readable, a restarted daemon serves the
# mount again, and unmount works with no daemon.
# Mounts with nodir_index: a read's wait is its FETCH (fetch_timeouts).
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init daemon
plan 14

for f in a b c d; do
	make_fixture "$WORK/$f" 3M "$f" >/dev/null
	s3_put "$BUCKET" "$f.bin" "$WORK/$f"
done

# Read FILE with a deadline; print "RC SECONDS ERRNO-TEXT".
timed_read() {
	local t0 t1 out rc
	t0=$(date +%s.%N)
	out=$(timeout -k 5 "$2" cat "$1" 2>&1 >/dev/null)
	rc=$?
	t1=$(date +%s.%N)
	printf '%s %.1f %s\n' "$rc" "$(echo "$t1 - $t0" | bc)" "${out##*: }"
}

check "module loads" load_module
check_sh "daemon starts" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=6,nodir_index"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
# Metadata for all, data for a.bin only.
timeout 60 ls -l "$MNT" >/dev/null
check "a.bin reads with the daemon up" cmp "$MNT/a.bin" "$WORK/a"
to0=$(mnt_stat fetch_timeouts)

stop_daemon
read -r rc t err <<<"$(timed_read "$MNT/b.bin" 60)"
t6=$t
if [ "$rc" = 1 ] && [ "$err" = "Input/output error" ]; then
	ok "no daemon: the read fails with EIO (after $t s)"
else
	not_ok "no daemon: the read fails with EIO" "exit $rc after $t s: $err"
fi
check "... not before the 6 s fetch timeout, not much after ($t s)" \
	bash -c "(( \$(echo '$t >= 5.5 && $t < 40' | bc) ))"
check "fetch_timeouts counted it" test "$(mnt_stat fetch_timeouts)" -gt "$to0"
check "cached data is still readable" cmp "$MNT/a.bin" "$WORK/a"

# Compared with the 6 s read above, not with the clock: both pay the same
# start-up costs, which on the KASAN kernel under TCG are seconds.
mnt_set fetch_timeout_ms 1500
read -r rc t err <<<"$(timed_read "$MNT/c.bin" 60)"
if [ "$rc" = 1 ] && [ "$err" = "Input/output error" ] &&
		(( $(echo "$t < $t6 - 2.5" | bc) )); then
	ok "fetch_timeout_ms=1500 takes effect at once (EIO after $t s, $t6 s with 6 s)"
else
	not_ok "fetch_timeout_ms=1500 takes effect at once" \
		"exit $rc after $t s (the 6 s timeout took $t6 s): $err"
fi
mnt_set fetch_timeout_ms 30000

check_sh "daemon restarts" start_daemon
check "b.bin reads again" cmp "$MNT/b.bin" "$WORK/b"
check "c.bin reads again" cmp "$MNT/c.bin" "$WORK/c"

kill_daemon
check "umount with no daemon does not hang" umount_s3 "$MNT"
check "nothing is left mounted" bash -c "! mountpoint -q '$MNT'"
tap_done
