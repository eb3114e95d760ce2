#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_netlink: the upcall channel against hostile or broken peers
# (tests/vm/helpers/nlfuzz.c) -- an unprivileged user gets EPERM for
# REGISTER and every reply; as root, malformed messages (unknown ids, missing,
# mistyped, oversized, unknown attributes, unknown commands, truncated
# attributes) are refused; a fake daemon that answers every request with
# mismatched replies first sees them refused and its valid error replies
# delivered (ENOENT/EIO to the reader, at once); a daemon that stalls makes
# readers fail after the fetch timeout; a request whose send is held
# (fault point send_port) while the daemon exits does not reach the socket
# another user binds to the daemon's port id next; the real daemon works
# afterwards. Then, with the real daemon registered, everyone else -- an
# unprivileged user, root of a user namespace, a second root socket --
# gets EPERM for EVICT and for an answer or progress report of every
# command (UPLOAD, MKDIR, DELETE, RENAME, SETMETA, FETCH, LOOKUP, LIST,
# MOUNT), and nothing changes: the file stays cached and reads right.
# The kernel log scan (tools/vm/run-vm.sh) catches any splat on the way.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init netlink
plan 23
P=/sys/module/s3cachefs/parameters
SCALE=${S3CFS_TIMEOUT_SCALE:-1}	# the debug kernel runs everything slower
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all
	--bounding-set=-all)

nlfuzz=$(helper nlfuzz)
make_fixture "$WORK/f" 200K >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f"

# Run nlfuzz (in the background for the fake daemons), its output as diag.
fuzz() {
	local out rc
	out=$(timeout -k 5 $((120 * SCALE)) "$@" 2>&1)
	rc=$?
	diag "$out"
	return $rc
}

check "module loads" load_module
if fuzz "${NOBODY[@]}" "$nlfuzz" unpriv; then
	ok "unprivileged: REGISTER and replies get EPERM"
else
	not_ok "unprivileged: REGISTER and replies get EPERM"
fi
if fuzz "$nlfuzz" malformed; then
	ok "root: malformed messages are refused"
else
	not_ok "root: malformed messages are refused"
fi

# --- a fake daemon: mismatched replies refused, valid ones delivered -----------
"$nlfuzz" fake-daemon --seconds 200 >"$WORK/fake.log" 2>&1 &
fake=$!
echo "$fake" >>"${S3CFS_PIDFILE:-/dev/null}"
for ((i = 0; i < 50; i++)); do
	grep -q 'fake daemon ready' "$WORK/fake.log" && break
	sleep 0.1
done
mkdir -p "$CACHE-fake"
if timeout 60 mount -t s3cachefs -o "cache=$CACHE-fake,fetch_timeout=$((20 * SCALE))" "$BUCKET" "$MNT" 2>"$WORK/mount.err"; then
	ok "fake daemon: mount answered"
	t0=$(date +%s)
	out=$(timeout $((60 * SCALE)) stat "$MNT/anything" 2>&1)
	rc=$?
	t1=$(date +%s)
	if [ $rc = 1 ] && grep -q 'No such file' <<<"$out" && [ $((t1 - t0)) -lt $((15 * SCALE)) ]; then
		ok "fake daemon: LOOKUP answered -ENOENT reaches the reader at once ($((t1 - t0)) s)"
	else
		not_ok "fake daemon: LOOKUP answered -ENOENT reaches the reader at once" "exit $rc after $((t1 - t0)) s: $out"
	fi
	out=$(timeout 60 ls "$MNT" 2>&1)
	rc=$?
	if [ $rc != 0 ] && [ $rc != 124 ]; then
		ok "fake daemon: LIST answered -EIO fails the readdir"
	else
		not_ok "fake daemon: LIST answered -EIO fails the readdir" "exit $rc: $out"
	fi
	check "fake daemon: umount" umount_s3 "$MNT"
else
	not_ok "fake daemon: mount answered" "$(cat "$WORK/mount.err")"
	skip_n 3 "fake daemon" "mount failed"
fi
kill -TERM "$fake" 2>/dev/null
wait "$fake"
rc=$?
diag "$(cat "$WORK/fake.log")"
if [ $rc = 0 ] && ! grep -q '^FAIL' "$WORK/fake.log"; then
	ok "fake daemon: every mismatched reply was refused, every valid one taken"
else
	not_ok "fake daemon: every mismatched reply was refused, every valid one taken" "exit $rc"
fi

# --- a stalling daemon: readers time out, umount still works --------------------
mkdir -p "$CACHE-stall"
"$nlfuzz" fake-daemon --stall --seconds 200 >"$WORK/stall.log" 2>&1 &
stall=$!
echo "$stall" >>"${S3CFS_PIDFILE:-/dev/null}"
sleep 0.5
if timeout 60 mount -t s3cachefs -o "cache=$CACHE-stall,fetch_timeout=3" "$BUCKET" "$MNT" 2>"$WORK/mount.err"; then
	ok "stalling daemon: mount answered"
	t0=$(date +%s)
	timeout 60 stat "$MNT/f.bin" >/dev/null 2>&1
	rc=$?
	t1=$(date +%s)
	if [ $rc != 0 ] && [ $rc != 124 ] && [ $((t1 - t0)) -lt 30 ]; then
		ok "stalling daemon: a lookup fails after the timeout ($((t1 - t0)) s), no hang"
	else
		not_ok "stalling daemon: a lookup fails after the timeout" "exit $rc after $((t1 - t0)) s"
	fi
	check "stalling daemon: umount" umount_s3 "$MNT"
else
	not_ok "stalling daemon: mount answered" "$(cat "$WORK/mount.err")"
	skip_n 2 "stalling daemon" "mount failed"
fi
kill -TERM "$stall" 2>/dev/null
wait "$stall"

# --- the daemon's port id, bound by another user after the daemon exits ---------
# A send that looked the daemon's port id up is held (fault point
# send_port); meanwhile the daemon exits and an unprivileged user binds
# the same port id (binding one needs no privilege). The request must not
# reach that socket: it waits for the next daemon instead.
mkdir -p "$CACHE-rebind"
"$nlfuzz" fake-daemon --stall --seconds 200 >"$WORK/rebind.log" 2>&1 &
rebind=$!
echo "$rebind" >>"${S3CFS_PIDFILE:-/dev/null}"
wait_until grep -q 'fake daemon ready' "$WORK/rebind.log"
port=$(sed -n 's/.*fake daemon ready.*port \([0-9]*\).*/\1/p' "$WORK/rebind.log")
if [ -n "$port" ] &&
   timeout 60 mount -t s3cachefs -o "cache=$CACHE-rebind,fetch_timeout=10" "$BUCKET" "$MNT" 2>"$WORK/mount.err"; then
	ok "rebound port: mount answered (daemon port $port)"
	dmesg -c >/dev/null
	echo $((8000 * SCALE)) >$P/fault_delay_ms
	echo send_port >$P/fault_points
	timeout 60 stat "$MNT/rebind-secret-name" >/dev/null 2>&1 &
	st=$!
	wait_until bash -c "dmesg | grep -q 'fault point send_port'"
	kill -KILL "$rebind"
	wait "$rebind" 2>/dev/null
	"${NOBODY[@]}" "$nlfuzz" listen-port "$port" $((25 * SCALE)) >"$WORK/listen.out" 2>&1 &
	listener=$!
	echo "$listener" >>"${S3CFS_PIDFILE:-/dev/null}"
	wait_until grep -q 'bound to port' "$WORK/listen.out"
	if grep -q 'bound to port' "$WORK/listen.out" &&
	   ! dmesg | grep -q 'fault point send_port: done'; then
		ok "rebound port: another user holds the port id while the send is held"
	else
		not_ok "rebound port: another user holds the port id while the send is held" \
			"$(cat "$WORK/listen.out"; dmesg | grep 'fault point')"
	fi
	wait "$listener"
	rc=$?
	diag "$(cat "$WORK/listen.out")"
	is "$rc" 0 "rebound port: the request meant for the exited daemon does not reach that socket"
	echo >$P/fault_points
	echo 0 >$P/fault_delay_ms
	wait "$st"
	check "rebound port: umount" umount_s3 "$MNT"
else
	not_ok "rebound port: mount answered" "$(cat "$WORK/rebind.log" "$WORK/mount.err")"
	skip_n 3 "rebound port" "mount failed"
	kill -KILL "$rebind" 2>/dev/null
	wait "$rebind" 2>/dev/null
fi

# --- and the real daemon still works ---------------------------------------------
check_sh "real daemon starts" start_daemon
if mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30"; then
	check "real daemon: data reads correctly" cmp "$MNT/f.bin" "$WORK/f"
else
	not_ok "real daemon: data reads correctly" "mount failed"
fi

# --- everyone but the registered daemon: refused, nothing changes ----------------
# EVICT of the cached f.bin and an answer (and a progress report) of every
# command to request ids pending or not, from three other senders. Each
# must get EPERM: the sender is checked first (ENOENT or ENODEV would
# mean it got past that check). Then f.bin is as cached as before.
mid=$(mnt_stat mount_id 2>/dev/null || echo 1)
blocks=$(stat -c %b "$CACHE/f.bin" 2>&1)
ids="1,2,3,7,64,4096,4294967296"
if fuzz "${NOBODY[@]}" "$nlfuzz" hostile "$mid" f.bin 1 "$ids"; then
	ok "unprivileged user: EVICT and every answer are refused (EPERM)"
else
	not_ok "unprivileged user: EVICT and every answer are refused (EPERM)"
fi
if ! unshare -Ur true 2>/dev/null; then
	skip_n 2 "root of a user namespace" "this kernel has no user namespaces"
else
	if fuzz unshare -Ur "$nlfuzz" hostile "$mid" f.bin 1 "$ids"; then
		ok "root of a user namespace: EVICT and every answer are refused (EPERM)"
	else
		not_ok "root of a user namespace: EVICT and every answer are refused (EPERM)"
	fi
	out=$(timeout 60 unshare -Urn "$nlfuzz" hostile "$mid" f.bin 1 "$ids" 2>&1)
	rc=$?
	diag "$out"
	if [ $rc = 100 ] && grep -q 'not found' <<<"$out"; then
		ok "a new network namespace does not see the family"
	else
		not_ok "a new network namespace does not see the family" "exit $rc"
	fi
fi
if fuzz "$nlfuzz" hostile "$mid" f.bin 16 "$ids"; then
	ok "a second root socket: REGISTER is EBUSY, EVICT and every answer EPERM"
else
	not_ok "a second root socket: REGISTER is EBUSY, EVICT and every answer EPERM"
fi
is "$(stat -c %b "$CACHE/f.bin" 2>&1)" "$blocks" "nothing was evicted: f.bin keeps its $blocks cached blocks"
check "the real daemon's mount still reads right" cmp "$MNT/f.bin" "$WORK/f"
tap_done
