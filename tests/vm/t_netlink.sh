#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_netlink: the upcall channel against hostile or broken peers
# (tests/vm/helpers/nlfuzz.c) -- an unprivileged user gets EPERM for
# REGISTER and every reply; as root, malformed messages (unknown ids, missing,
# mistyped, oversized, unknown attributes, unknown commands, truncated
# attributes) are refused; a fake daemon that answers every request with
# mismatched replies first sees them refused and its valid error replies
# delivered (ENOENT/EIO to the reader, at once); a daemon that stalls makes
# readers fail after the fetch timeout; the real daemon works afterwards.
# The kernel log scan (tools/vm/run-vm.sh) catches any splat on the way.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init netlink
plan 13

nlfuzz=$(helper nlfuzz)
make_fixture "$WORK/f" 200K >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f"

# Run nlfuzz (in the background for the fake daemons), its output as diag.
fuzz() {
	local out rc
	out=$(timeout -k 5 120 "$@" 2>&1)
	rc=$?
	diag "$out"
	return $rc
}

check "module loads" load_module
if fuzz setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all "$nlfuzz" unpriv; then
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
if timeout 60 mount -t s3cachefs -o "cache=$CACHE-fake,fetch_timeout=20" "$BUCKET" "$MNT" 2>"$WORK/mount.err"; then
	ok "fake daemon: mount answered"
	t0=$(date +%s)
	out=$(timeout 60 stat "$MNT/anything" 2>&1)
	rc=$?
	t1=$(date +%s)
	if [ $rc = 1 ] && grep -q 'No such file' <<<"$out" && [ $((t1 - t0)) -lt 15 ]; then
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

# --- and the real daemon still works ---------------------------------------------
check_sh "real daemon starts" start_daemon
if mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30"; then
	check "real daemon: data reads correctly" cmp "$MNT/f.bin" "$WORK/f"
else
	not_ok "real daemon: data reads correctly" "mount failed"
fi
tap_done
