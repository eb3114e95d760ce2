#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_again: an upload that takes effect in S3 after the kernel gave it
# up is no conflict for the file's next upload. A writer's close waits for
# its PUT, which the fault proxy holds and forwards when the hold ends
# even though the client left ("forward_if_gone", as S3 acts on a request
# it received whole); the writer is killed meanwhile, so the kernel gives
# the UPLOAD up and the file stays written, based on the old version. The
# PUT lands. The next close of the file, with other bytes, fails its
# If-Match on that object: the daemon finds its own writer token on it
# (x-amz-meta-s3cfs-writer: this cache file, this base version) and puts
# over it. Was: the close failed with ESTALE and the bytes went to
# .s3cachefs/conflicts/ though nobody else had written. Another writer's
# object is still a conflict.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init write_again
plan 15

# write_close FILE TEXT: TEXT and a newline over FILE; fails if close does.
write_close() {
	python3 -c "import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, sys.argv[2].encode() + b'\\n')
os.close(fd)" "$1" "$2" 2>/dev/null
}
export -f write_close
printf 'version 1\n' >"$WORK/v1"
s3_put "$BUCKET" w.txt "$WORK/v1"
s3_put "$BUCKET" x.txt "$WORK/v1"
check "module loads" load_module
check_sh "fault proxy starts" start_faultproxy 9491
check_sh "daemon starts" start_daemon
check "writable mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=60,meta_ttl=3600,writable"
check "the object is read" grep -qx 'version 1' "$MNT/w.txt"

# A writer whose close waits for a PUT held 6 s, killed after 2.
fp_rules '[{"method": "PUT", "path": "/w\\.txt$", "fault": "stall", "seconds": 6, "forward_if_gone": true}]'
python3 -c "import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b'version 2, given up\n')
os.close(fd)" "$MNT/w.txt" &
writer=$!
is "$(wait_until bash -c "[ \"\$(fp_stat stalled)\" -ge 1 ]" && echo held)" held "the close's PUT is held"
sleep 2
kill -9 $writer
wait $writer 2>/dev/null
printf 'version 2, given up\n' >"$WORK/v2"
is "$(wait_until s3_is w.txt "$WORK/v2" && echo yes)" yes \
	"the writer killed (the kernel gives the UPLOAD up): the held PUT lands all the same"
fp_rules '[]'

# The next close, of other bytes: put over our own object.
check "the next writer's close succeeds" write_close "$MNT/w.txt" "version 3"
printf 'version 3\n' >"$WORK/v3"
check "... S3 has its bytes" s3_is w.txt "$WORK/v3"
check "... nothing was kept as a conflict" \
	bash -c "! ls '$CACHE/.s3cachefs/conflicts/' 2>/dev/null | grep -q w.txt"
check "... the daemon recognised its own object" \
	grep -q 'w.txt: the object (ETag .*) is an earlier upload of this file' "$DAEMON_LOG"

# Another writer's object: still a conflict.
check "x.txt is read" grep -qx 'version 1' "$MNT/x.txt"
printf 'theirs\n' >"$WORK/theirs"
s3_put "$BUCKET" x.txt "$WORK/theirs"
check "a close over another writer's object fails (a conflict)" \
	bash -c "! write_close '$MNT/x.txt' ours"
check "... theirs stays in S3" s3_is x.txt "$WORK/theirs"
check "umount" umount_s3 "$MNT"
tap_done
