#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_faults: S3 misbehaving under a mount. The daemon talks to s3rver through
# tests/s3server/faultproxy.py, which answers chosen GETs with a 500, a 503
# SlowDown, a TCP reset (before or after the response head), a body cut
# short, flipped bytes, a stall or a trickle. Checked: one fault on a FETCH
# is retried and the read returns the object's bytes; a fault on every
# attempt ends in EIO after a bounded number of attempts and leaves nothing
# marked cached (the next read, with the faults gone, fetches again and gets
# the right bytes); a stall past the daemon's transfer timeout is retried,
# not waited out; a directory listing survives 503s. Every read that
# succeeds is compared with the object.
# Not guaranteed, so a TODO: flipped bytes in a body of the right length
# cannot be detected (S3 sends no checksum for a ranged GET).
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init faults
plan 43

small=$((600 << 10))
big=$((10 << 20))
cut=$((9 << 20))	# past many of the daemon's 128 KiB pieces of a big FETCH
{
	for f in a500 a503 areset aresh atrunc corrupt b503 breset btrunc cstall1 cstall2; do
		echo "$f.bin $small"
	done
	echo "atrickle.bin $((64 << 10))"
	echo "abig.bin $big"
	echo "bbig.bin $big"
	for i in 0 1 2 3 4; do
		echo "d/x$i 100"
	done
} | fp_seed "$BUCKET" "$WORK"

# A rule for GETs of one key: rule KEY FAULT [EXTRA-JSON].
rule() {
	printf '{"method": "GET", "path": "^/%s/%s$", "fault": "%s"%s}' \
		"$BUCKET" "$1" "$2" "${3:+, $3}"
}
# GETs of KEY in the proxy log [with fault F].
gets() {
	fp_count --method GET --path "^/$BUCKET/$1\$" ${2:+--fault "$2"}
}
# Read FILE into OUT with a deadline; print "RC SECONDS ERRNO-TEXT".
timed_read() {
	local t0 t1 out rc
	t0=$(date +%s.%N)
	out=$(timeout -k 5 "$3" cat "$1" 2>&1 >"$2")
	rc=$?
	t1=$(date +%s.%N)
	printf '%s %.1f %s\n' "$rc" "$(echo "$t1 - $t0" | bc)" "${out##*: }"
}

check "module loads" load_module
if ! start_faultproxy 9102; then
	not_ok "fault proxy starts"
	tap_done
fi
ok "fault proxy starts"
# The default retry policy: a FETCH that always fails ends within
# retry_max_time (35 s) of its first attempt, inside timed_read's 60 s.
check_sh "daemon starts (through the proxy)" start_daemon
# 16 MiB chunks: a big FETCH spans pieces the daemon writes one by one.
if ! mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=16M,readahead=0"; then
	not_ok "mount"
	tap_done
fi
ok "mount"
timeout 60 ls -l "$MNT" >/dev/null

# --- (a) one fault, then the retry succeeds --------------------------------
fp_rules "[$(rule a500.bin 500 '"nth": [1]'),
	$(rule a503.bin 503 '"nth": [1]'),
	$(rule areset.bin reset '"nth": [1]'),
	$(rule aresh.bin reset-after-headers '"nth": [1]'),
	$(rule atrunc.bin truncate '"nth": [1]'),
	$(rule abig.bin truncate "\"nth\": [1], \"after_bytes\": $cut"),
	$(rule corrupt.bin corrupt '"nth": [1], "at": 1000, "count": 4'),
	$(rule atrickle.bin trickle '"rate": 16384')]"
for f in a500:500 a503:503 areset:reset aresh:reset-after-headers \
		atrunc:truncate abig:truncate; do
	k=${f%%:*} fault=${f#*:}
	check "$fault once: $k.bin reads right" cmp "$MNT/$k.bin" "$WORK/$k.bin"
	n=$(gets "$k.bin") nf=$(gets "$k.bin" "$fault")
	if [ "$nf" = 1 ] && [ "$n" -ge 2 ]; then
		ok "... the proxy saw the faulted GET and a retry ($n GETs)"
	else
		not_ok "... the proxy saw the faulted GET and a retry" \
			"$nf GETs with $fault, $n in all: $(fp_count --path "/$k.bin" --list)"
	fi
done
# The pieces before the cut were written: the retry resumes there.
ranges=$(fp_count --method GET --path "^/$BUCKET/abig.bin\$" --list)
diag "abig.bin GETs (seq fault range): $(tr '\n' ';' <<<"$ranges")"
start=$(awk '$2 == "pass" { sub(/^bytes=/, "", $3); sub(/-.*/, "", $3); print $3; exit }' <<<"$ranges")
if [ -n "$start" ] && [ "$start" -gt 0 ] && [ "$start" -le "$cut" ]; then
	ok "... the retry resumed at byte $start, after what was written"
else
	not_ok "... the retry resumed after what was written" "retry range start '$start'"
fi

t0=$(date +%s)
check "trickle (16 KiB/s): atrickle.bin reads right" cmp "$MNT/atrickle.bin" "$WORK/atrickle.bin"
t=$(($(date +%s) - t0))
is "$(gets atrickle.bin)" 1 "... in one GET, not retried ($t s)"

# A known gap, reported as TODO (not a failure of this test).
if cmp -s "$MNT/corrupt.bin" "$WORK/corrupt.bin"; then
	ok "flipped body bytes are not served"
else
	TAP_N=$((TAP_N + 1))
	echo "not ok $TAP_N - flipped body bytes are not served # TODO no checksum on a ranged GET"
fi

# --- (b) a fault on every attempt: EIO, nothing cached --------------------
fp_rules "[$(rule b503.bin 503), $(rule breset.bin reset),
	$(rule btrunc.bin truncate), $(rule bbig.bin truncate "\"after_bytes\": $cut")]"
# Each read waits out its retries (~25 s). Those without a 503 run at
# once; b503 runs after them, alone: a 503 throttles the daemon down to
# one request in flight, and the others' GETs would queue behind its
# back-off (a CI run saw btrunc.bin's first GET wait past the 60 s).
pids=
for f in breset btrunc bbig; do
	timed_read "$MNT/$f.bin" /dev/null 60 >"$WORK/$f.read" &
	pids+=" $!"
done
wait $pids	# not the proxy nor the daemon, also children of this shell
timed_read "$MNT/b503.bin" /dev/null 60 >"$WORK/b503.read"
for f in b503:503 breset:reset btrunc:truncate bbig:truncate; do
	k=${f%%:*} fault=${f#*:}
	read -r rc t err <"$WORK/$k.read"
	if [ "$rc" = 1 ] && [ "$err" = "Input/output error" ]; then
		ok "$fault always: reading $k.bin fails with EIO ($t s)"
	else
		not_ok "$fault always: reading $k.bin fails with EIO" "exit $rc after $t s: $err"
	fi
	n=$(gets "$k.bin")
	# Attempts are bounded (retry_attempts, 10, per FETCH; the kernel may
	# send a second FETCH from ->read_folio after ->readahead failed).
	if [ "$n" -ge 2 ] && [ "$n" -le 20 ]; then
		ok "... after a bounded number of attempts ($n GETs)"
	else
		not_ok "... after a bounded number of attempts" "$n GETs"
	fi
done
fp_rules '[]'
for k in b503 breset btrunc bbig; do
	n0=$(gets "$k.bin")
	check "faults gone: $k.bin reads right, whole" cmp "$MNT/$k.bin" "$WORK/$k.bin"
	n1=$(gets "$k.bin")
	if [ "$n1" -gt "$n0" ]; then
		ok "... fetched again: nothing of the failed FETCH was taken as cached"
	else
		not_ok "... fetched again: nothing of the failed FETCH was taken as cached" \
			"no GET after the failure ($n0 before, $n1 after)"
	fi
done

# --- (c) stalls past the transfer timeout, (d) LIST under 503 ---------------
# The daemon gives up on a transfer below min_rate for 20 s (stall_timeout,
# S3D_STALL_DEFAULT) and retries, well within the kernel's fetch_timeout
# (no byte moves, so no progress report restarts it). The proxy holds 45 s.
fp_rules "[$(rule cstall1.bin stall '"nth": [1], "seconds": 45'),
	$(rule cstall2.bin stall '"nth": [1], "seconds": 45, "after_bytes": 102400'),
	{\"method\": \"GET\", \"path\": \"^/$BUCKET/?\$\",
	 \"query\": \"delimiter=.*prefix=d(%2F|/)\", \"first\": 2, \"fault\": \"503\"}]"
timed_read "$MNT/cstall1.bin" "$WORK/cstall1.out" 120 >"$WORK/cstall1.res" &
p1=$!
timed_read "$MNT/cstall2.bin" "$WORK/cstall2.out" 120 >"$WORK/cstall2.res" &
p2=$!

# d was listed ahead at mount, less than meta_ttl ago: once both stalled
# GETs are on their way (their lookups done), every listing is stale.
both_stalled() {
	[ "$(gets cstall1.bin)" -ge 1 ] && [ "$(gets cstall2.bin)" -ge 1 ]
}
wait_until both_stalled
mount -o remount,meta_ttl=0 "$MNT"
is "$(timeout 60 ls "$MNT/d" | tr '\n' ' ')" "x0 x1 x2 x3 x4 " "two 503s on LIST: the directory lists in full"
mount -o remount,meta_ttl=60 "$MNT"
n=$(fp_count --method GET --query 'delimiter=.*prefix=d(%2F|/)')
nf=$(fp_count --method GET --query 'delimiter=.*prefix=d(%2F|/)' --fault 503)
if [ "$nf" = 2 ] && [ "$n" -ge 3 ]; then
	ok "... the listing was retried ($n requests, 2 of them 503)"
else
	not_ok "... the listing was retried" "$n listing requests, $nf answered 503"
fi

wait $p1 $p2
for k in cstall1 cstall2; do
	read -r rc t err <"$WORK/$k.res"
	if [ "$rc" = 0 ] && cmp -s "$WORK/$k.out" "$WORK/$k.bin" &&
			(( $(echo "$t < 75" | bc) )); then
		ok "stall 45 s ($k): the read returns the right bytes in $t s"
	else
		not_ok "stall 45 s ($k): the read returns the right bytes in < 75 s" \
			"exit $rc after $t s: $err; $(cmp "$WORK/$k.out" "$WORK/$k.bin" 2>&1)"
	fi
	n=$(gets "$k.bin")
	if [ "$n" -ge 2 ]; then
		ok "... after a retry ($n GETs)"
	else
		not_ok "... after a retry" "$n GETs"
	fi
done

if daemon_alive; then ok "the daemon is still running"; else not_ok "the daemon is still running"; fi
diag "daemon: $(grep -c 'retrying in' "$DAEMON_LOG") retries logged; proxy: $(fp_count) requests"
umount_s3 "$MNT"
stop_daemon
stop_faultproxy
tap_done
