#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_smallobj: a cold open and read of a small object costs one GET. The
# LOOKUP of a name the cache does not have GETs the object's first
# lookup_get_max bytes (256 KiB) instead of a HEAD; an object that fits
# arrives whole and is written into its lower file before the file gets
# its name, so the open finds its chunk present and the read sends no
# FETCH. Counted on both sides: the module's fetches, the daemon's GETs
# and HEADs (its debug log), the bytes compared. A zero-byte object (s3rver
# answers its range oddly), a larger object (its metadata from the GET, its
# data fetched), an evicted small file (fetched again; the punch keeps the
# lower mtime), and --lookup-get-max 0 (a HEAD, then a FETCH).
# A name the cache has is trusted for meta_ttl from when the daemon last
# found it in S3 (its lower mtime): no request then, even after its dentry
# was dropped (a warm loader re-opening files after memory pressure paid a
# HEAD per file before), and its dentry is no longer trusted past that
# (the dentry's age counts from the check, not from the lookup); an older
# one is checked with a HEAD, no body.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init smallobj
plan 24

make_fixture "$WORK/small" $((100 * 1024 + 3)) small-1 >/dev/null
make_fixture "$WORK/big" $((2 * 1048576 + 5)) small-big >/dev/null
make_fixture "$WORK/other" 70000 small-other >/dev/null
: >"$WORK/empty"
s3_put "$BUCKET" d/small.bin "$WORK/small"
s3_put "$BUCKET" d/big.bin "$WORK/big"
s3_put "$BUCKET" d/empty "$WORK/empty"
s3_put "$BUCKET" e/other.bin "$WORK/other"
CTL=$REPO/tools/s3cachectl/s3cachectl

# Requests the daemon sent for KEY (its -v log): "GETS HEADS".
sent() {
	local k="/$BUCKET/$1 (attempt"
	echo "$(grep -cF "GET $S3_ENDPOINT$k" "$DAEMON_LOG") $(grep -cF "HEAD $S3_ENDPOINT$k" "$DAEMON_LOG")"
}
hole() {	# FILE -> the first hole (its size when it is all data)
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); print(os.lseek(fd, 0, os.SEEK_HOLE))' "$1"
}

check "module loads" load_module
check_sh "daemon starts" start_daemon
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60,meta_ttl=3600"

# Cold: no listing first, as a loader that opens paths from an index.
f0=$(mnt_stat fetches)
check "a cold small object reads right" cmp "$MNT/d/small.bin" "$WORK/small"
is "$(( $(mnt_stat fetches) - f0 )) $(sent d/small.bin)" "0 1 0" \
	"... with one GET and no HEAD, no FETCH"
is "$(hole "$CACHE/d/small.bin")" $((100 * 1024 + 3)) "... its lower file is all data"
check "a cold zero-byte object reads (empty)" cmp "$MNT/d/empty" "$WORK/empty"
is "$(stat -c %s "$MNT/d/empty")" 0 "... its size is 0"
f0=$(mnt_stat fetches)
check "a cold larger object reads right" cmp "$MNT/d/big.bin" "$WORK/big"
check "... its data fetched ($(( $(mnt_stat fetches) - f0 )) FETCHes), no HEAD ($(sent d/big.bin))" \
	test "$(( $(mnt_stat fetches) - f0 ))" -ge 1 -a "$(sent d/big.bin | cut -d' ' -f2)" = 0

# Evicted: an ordinary cached file, fetched again when read.
drop_caches
m0=$(stat -c %y "$CACHE/d/small.bin")
check "the small file evicts" timeout 60 "$CTL" evict "$MNT/d/small.bin"
is "$(stat -c %y "$CACHE/d/small.bin")" "$m0" "... its lower mtime (the last check) kept"
f0=$(mnt_stat fetches)
check "... and reads right again" cmp "$MNT/d/small.bin" "$WORK/small"
is "$(( $(mnt_stat fetches) - f0 ))" 1 "... with one FETCH"

# A name the cache has. SINCE: the requests for d/small.bin since the
# last call (in this shell: it keeps its count).
last=$(sent d/small.bin)
since() {
	local now
	now=$(sent d/small.bin)
	SINCE="$(( ${now% *} - ${last% *} )) $(( ${now#* } - ${last#* } ))"
	last=$now
}
ms() { echo $(( $(date +%s%N) / 1000000 )); }
umount_s3 "$MNT"
check "remount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60,meta_ttl=3600"
stat "$MNT/d/small.bin" >/dev/null
since
is "$SINCE" "0 0" "a name found in S3 less than meta_ttl ago (fetched): no request"
umount_s3 "$MNT"
check "remount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60,meta_ttl=10"
sleep 11
t0=$(ms)
stat "$MNT/d/small.bin" >/dev/null
since
is "$SINCE" "0 1" "an older one: a HEAD, no GET"
# Its dentry dropped 3 s later: the check is remembered (the lower mtime).
sleep 3
drop_caches
stat "$MNT/d/small.bin" >/dev/null
t1=$(ms)
since
is "$SINCE" "0 0" "... dropped from memory $(( t1 - t0 )) ms after the check: no request"
# 12 s after the check, its new dentry (looked up 3 s or more after it)
# is past meta_ttl: revalidated. Trusted for meta_ttl from its lookup
# instead, it would be until 13 s or more after the check.
left=$(( 12000 - ($(ms) - t0) ))
[ "$left" -gt 0 ] && sleep "$(( left / 1000 )).$(printf %03d $(( left % 1000 )))"
t2=$(ms)
stat "$MNT/d/small.bin" >/dev/null
since
is "$SINCE" "0 1" "... $(( t2 - t0 )) ms after the check, its dentry is revalidated (a HEAD)"

# --lookup-get-max 0: HEAD, then the FETCH.
umount_s3 "$MNT"
stop_daemon
check_sh "daemon starts with --lookup-get-max 0" start_daemon --lookup-get-max 0
check "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=60,meta_ttl=3600"
f0=$(mnt_stat fetches)
check "--lookup-get-max 0: a cold small object reads right" cmp "$MNT/e/other.bin" "$WORK/other"
is "$(( $(mnt_stat fetches) - f0 )) $(sent e/other.bin)" "1 1 1" \
	"... with a HEAD, then a FETCH's GET"
tap_done
