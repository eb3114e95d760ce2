#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_renew: two FETCHes of an object's old version are in flight when the
# object changes in S3. The first one's 412 renews the cache file (a new,
# empty lower file for the new ETag) and the module makes a new inode for
# it; an open of that inode reads part of it. Only then does the second
# old FETCH get its 412. It must keep the file renewed already: a second
# renewal (it once replaced the file again) makes the daemon fill a file
# the new inode never reads, so the open's next read of a missing chunk
# failed with EIO ("fetched but it is not in the cache"; found by t_chaos).
# The fault proxy holds the two old GETs and lets them go one at a time.
# Then the module's side: an inode whose lower file was replaced by one of
# the same ETag (the object deleted and put back) gets ESTALE, not EIO.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init renew
CTL=$REPO/tools/s3cachectl/s3cachectl
plan 18

MIB=$((1 << 20))
size=$((8 * MIB))
make_fixture "$WORK/v1" $size renew-v1 >/dev/null
make_fixture "$WORK/v2" $size renew-v2 >/dev/null
python3 -c 'import json,sys; json.dump({"bucket": sys.argv[1], "objects": {}}, open(sys.argv[2], "w"))' \
	"$BUCKET" "$WORK/manifest.json"

check "module loads" load_module
if ! start_fakes3 9104 "$WORK/manifest.json"; then
	not_ok "fake S3 starts"
	tap_done
fi
curl -sS -X PUT --data-binary "@$WORK/v1" "$FAKES3_ENDPOINT/$BUCKET/obj.bin" -o /dev/null
# The proxy in front of the fake S3 (which honours If-Match).
S3_ENDPOINT=$FAKES3_ENDPOINT
if ! start_faultproxy 9105; then
	not_ok "fault proxy starts (in front of the fake S3)"
	tap_done
fi
ok "fault proxy starts (in front of the fake S3)"
check_sh "daemon starts (through the proxy)" start_daemon --stall-timeout 600
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=120,meta_ttl=600,readahead=0"
# The LOOKUP (its GET of the head) before the rules.
is "$(timeout 60 stat -c %s "$MNT/obj.bin")" "$size" "the object is looked up"

# chunk N of version V, 4 KiB at its start
part() { dd if="$WORK/$1" bs=1M skip="$2" count=1 status=none | head -c 4096; }
readat() { timeout 200 dd if="$MNT/obj.bin" bs=4k skip=$(($1 * 256)) count=1 status=none; }
renewals() { grep -c 'cache file renewed' "$DAEMON_LOG"; }
held() { fp_stat stalled || echo 0; }
held_ge() { [ "$(held)" -ge "$1" ]; }
wait_for() {	# CMD... : up to 60 s
	local i
	for ((i = 0; i < 600; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# GETs 1 (reader 1, chunk 2) and 2 (reader 2, chunk 4) are held; every
# later GET passes.
fp_rules "[{\"method\": \"GET\", \"path\": \"^/$BUCKET/obj.bin\$\", \"first\": 2, \"fault\": \"stall\"}]"
readat 2 >"$WORK/r1.out" 2>"$WORK/r1.err" &
r1=$!
wait_for held_ge 1
readat 4 >"$WORK/r2.out" 2>"$WORK/r2.err" &
r2=$!
wait_for held_ge 2
check "both old GETs are held ($(held))" test "$(held)" -eq 2
curl -sS -X PUT --data-binary "@$WORK/v2" "$FAKES3_ENDPOINT/$BUCKET/obj.bin" -o /dev/null

# GET 1 goes: 412, the file renewed, reader 1 reads version 2.
fp_release oldest
wait "$r1"
check "reader 1 reads version 2 after the first renewal" \
	cmp -s "$WORK/r1.out" <(part v2 2)
# An open of the new inode that has read from it.
python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
out = open(sys.argv[2], "wb")
out.write(os.pread(fd, 4096, 5 << 20)); out.flush()
open(sys.argv[3] + ".ready", "w").close()
while not os.path.exists(sys.argv[3] + ".go"):
    time.sleep(0.05)
try:
    out.write(os.pread(fd, 4096, 7 << 20))
except OSError as e:
    sys.stderr.write("read at 7 MiB: %s\n" % e)
' "$MNT/obj.bin" "$WORK/r3.out" "$WORK/r3" 2>"$WORK/r3.err" &
r3=$!
wait_for test -e "$WORK/r3.ready"
is "$(renewals)" 1 "one renewal so far, and reader 3 has read from its file"

# GET 2 goes now: its 412 finds the file renewed already.
fp_release
wait "$r2"
check "reader 2 reads version 2 after the second 412" \
	cmp -s "$WORK/r2.out" <(part v2 4)
check "... whose renewal kept the file renewed by the first" \
	grep -q 'cache file renewed already' "$DAEMON_LOG"
touch "$WORK/r3.go"
wait "$r3"
diag "reader 3: $(head -c 300 "$WORK/r3.err")"
check "reader 3's open reads on from its file: chunk 7 of version 2" \
	cmp -s "$WORK/r3.out" <(part v2 5; part v2 7)
check "the whole object reads as version 2" \
	bash -c "timeout 120 cat '$MNT/obj.bin' | cmp -s - '$WORK/v2'"

# The object deleted and put back with the same bytes (the same ETag)
# while an open has read from its cache file: the listing that misses it
# removes the file, the next one makes a new file of the same ETag, and
# the daemon fills that one. The open's inode can never be filled again:
# its next read of a missing chunk fails with ESTALE (it said EIO, which
# a fresh open got too until meta_ttl passed), a fresh open reads on.
fp_rules '[]'
mnt_set meta_ttl_ms 1000
check "the cached file is evicted" timeout 60 "$CTL" evict "$MNT/obj.bin"
drop_caches
exec 7<"$MNT/obj.bin"
check "an open reads chunk 0 of version 2" \
	cmp -s <(dd bs=4k count=1 status=none <&7) <(part v2 0)
curl -sS -X DELETE "$FAKES3_ENDPOINT/$BUCKET/obj.bin" -o /dev/null
sleep 1.5
timeout 60 ls "$MNT" >"$WORK/ls1" 2>&1
check "a listing without it removes it" \
	bash -c "! grep -q obj.bin '$WORK/ls1' && ! test -e '$CACHE/obj.bin'"
curl -sS -X PUT --data-binary "@$WORK/v2" "$FAKES3_ENDPOINT/$BUCKET/obj.bin" -o /dev/null
sleep 1.5
timeout 60 ls "$MNT" >"$WORK/ls2" 2>&1
check "the next one makes a new cache file of the same ETag" grep -q obj.bin "$WORK/ls2"
err=$(python3 -c '
import errno, os, sys
try:
    os.pread(7, 4096, 6 << 20)
    print("read")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' 2>&1)
is "$err" ESTALE "the open's read of a missing chunk fails with ESTALE"
exec 7<&-
check "a fresh open reads version 2" \
	bash -c "timeout 120 cat '$MNT/obj.bin' | cmp -s - '$WORK/v2'"

umount_s3 "$MNT"
stop_daemon
stop_faultproxy
stop_fakes3
tap_done
