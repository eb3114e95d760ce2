#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_multipart: uploads at the edges of a part, through a fault proxy.
# With 5 MiB parts, a file of exactly one part goes up in one PUT, one of
# a part and a byte in two parts, one of three parts and 7 bytes in four;
# each object is then byte for byte the file, and its ETag says how it was
# made. A part the server refuses for good makes close fail with EIO and
# leaves no multipart upload behind (AbortMultipartUpload). A Complete
# whose answer is lost is sent again, finds no upload (the first took
# effect) and is recognised as ours by a HEAD: close succeeds, no false
# conflict. (A daemon killed mid-upload: t_write_new.)
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
. "$REPO/tests/lib/faultproxy.sh"
test_init write_multipart
plan 26

PART=$((5 * 1048576))
OPTS="cache=$CACHE,fetch_timeout=120,meta_ttl=3600,writable"

s3_etag() {	# KEY: its ETag, unquoted
	s3_curl -I "$S3_ENDPOINT/$BUCKET/$1" 2>/dev/null | tr -d '\r"' |
		awk 'tolower($1) == "etag:" { print $2 }'
}
write_close() {	# SRC DST: copy, print the errno name of close (or "ok")
	python3 -c "import errno, os, sys
fd = os.open(sys.argv[2], os.O_CREAT | os.O_WRONLY)
os.write(fd, open(sys.argv[1], 'rb').read())
try: os.close(fd); print('ok')
except OSError as e: print(errno.errorcode[e.errno])" "$1" "$2"
}
part2_failed_first() {	# part 2's last refusal is logged before part 1's end
	awk 'function seq() { match($0, /"seq": [0-9]+/); return substr($0, RSTART + 7, RLENGTH - 7) }
	     /"method": "PUT"/ && /partNumber=1[&"]/ { p1 = seq() }
	     /"method": "PUT"/ && /partNumber=2[&"]/ && /"fault": "500"/ { last2 = NR }
	     /"end": / && p1 != "" && seq() == p1 { end1 = NR }
	     END { exit !(last2 && end1 && last2 < end1) }' "$FP_LOG"
}
proxy_idle() {	# the proxy answers no request within 20 s
	local i

	for ((i = 0; i < 100; i++)); do
		[ "$(fp_stat open)" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}
export -f part2_failed_first proxy_idle

check_sh "fault proxy starts" start_faultproxy 9461
check "module loads" load_module
check_sh "daemon starts (5 MiB parts)" start_daemon --part-size $PART \
	--upload-parallel 2 --retry-attempts 3 --retry-base-ms 50
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"

# The edges: one part exactly, a part and a byte, three parts and 7 bytes.
for spec in "one:$PART:PUT" "onep1:$((PART + 1)):2" "three7:$((3 * PART + 7)):4"; do
	IFS=: read -r name size how <<<"$spec"
	make_fixture "$WORK/$name" "$size" "mp-$name" >/dev/null
	is "$(write_close "$WORK/$name" "$MNT/$name.bin")" ok "$name: $size bytes written and closed"
	check "$name: the object is the file" s3_is "$name.bin" "$WORK/$name"
	if [ "$how" = PUT ]; then
		is "$(s3_etag "$name.bin")" "$(md5sum <"$WORK/$name" | cut -c1-32)" \
			"$name: one PutObject (ETag the bytes' MD5)"
	else
		is "$(s3_etag "$name.bin" | sed 's/.*-//')" "$how" "$name: $how parts (ETag ...-$how)"
	fi
done
is "$(s3_uploads_open)" 0 "no multipart upload is left open"

# A part refused for good: EIO at close, the upload aborted. Part 1 is
# held by the server meanwhile, and lands even if the daemon hangs up on
# it (as S3 stores a part it received whole): the abort must wait for its
# answer, or the part lands after the abort and stays.
fp_rules '[{"method": "PUT", "query": "partNumber=1(&|$)", "fault": "stall", "seconds": 4, "forward_if_gone": true},
	{"method": "PUT", "query": "partNumber=2(&|$)", "fault": "500"}]'
make_fixture "$WORK/bad" $((2 * PART + 3)) mp-bad >/dev/null
is "$(write_close "$WORK/bad" "$MNT/bad.bin")" EIO "a part the server keeps refusing: close fails with EIO"
check "part 2 was tried and refused" test "$(fp_count --method PUT --query 'partNumber=2(&|$)' --fault 500)" -ge 1
check "part 1 was held by the server" test "$(fp_count --method PUT --query 'partNumber=1(&|$)' --fault stall)" = 1
check "the proxy has answered everything" proxy_idle
check "... part 2 was refused for good while part 1 was held" part2_failed_first
is "$(s3_uploads_open)" 0 "... and the upload was aborted (no parts left)"
check "... no object was made" bash -c "! s3_get '$BUCKET' bad.bin '$WORK/got' 2>/dev/null"

# The answer to a Complete lost: sent again, NoSuchUpload, a HEAD: ours.
fp_rules '[{"method": "POST", "query": "uploadId=", "first": 1, "fault": "reset-after-headers"}]'
make_fixture "$WORK/lost" $((PART + 11)) mp-lost >/dev/null
is "$(write_close "$WORK/lost" "$MNT/lost.bin")" ok "a Complete whose answer was lost: close succeeds"
check "... the Complete's answer was cut" test "$(fp_count --method POST --query uploadId= --fault reset-after-headers)" = 1
check "... the object is the file" s3_is lost.bin "$WORK/lost"
check "... recognised as ours by a HEAD" \
	grep -q "UPLOAD s3://$BUCKET/lost.bin: the object is ours (ETag .*): the first Complete took effect" "$DAEMON_LOG"
fp_rules '[]'

check "umount" umount_s3 "$MNT"
stop_faultproxy
tap_done
