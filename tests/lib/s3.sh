# SPDX-License-Identifier: GPL-2.0
# S3 helpers for the tests: plain curl with SigV4 against the test server.
#
#   s3_mb BUCKET                   create a bucket
#   s3_put BUCKET KEY FILE         upload FILE as KEY (UNSIGNED-PAYLOAD, no
#                                  aws-chunked framing: s3rver stores it raw)
#   s3_get BUCKET KEY OUT          download KEY into OUT
#   s3_delete BUCKET KEY           delete KEY
#   s3_is KEY FILE                 the test's $BUCKET has KEY with exactly
#                                  FILE's bytes (fetched to $WORK/got)
#   s3_absent KEY                  the test's $BUCKET has no KEY
#   s3_uploads_open                multipart uploads in the test's $BUCKET that
#                                  s3rver has not completed or aborted
#   s3_check_acks LOG              a write-back writer's log ("start" when
#                                  a writer starts, "open NAME SHA256"
#                                  before each open for writing, "ack NAME
#                                  SHA256" after each close that returned
#                                  0) against $BUCKET: one line per name S3
#                                  holds wrongly, none if all is well
#   s3_ack_verdict LOG NAME GOT    the same for one name that S3 holds as
#                                  GOT (a SHA256, or "absent")
#   s3_seed BUCKET KEY FILE        lay KEY out directly in s3rver's data dir
#                                  ($S3_DATA; fast, for big fixtures)
#   s3_seed_many BUCKET PREFIX N   N tiny objects PREFIXobj-00000 .. (one
#                                  python process: 10k objects in seconds)
#   start_fakes3 PORT MANIFEST     the in-memory fake S3 (fakes3.py) for keys
#   stop_fakes3                    s3rver mangles and for If-Match
#
# Environment: S3_ENDPOINT (default http://127.0.0.1:$S3_PORT), S3_PORT
# (default 9000), S3_DATA (s3rver's directory), S3_AK/S3_SK (S3RVER).
# Keys are URL-encoded here (spaces, unicode); "/" is kept.

export S3_PORT=${S3_PORT:-9000}
export S3_ENDPOINT=${S3_ENDPOINT:-http://127.0.0.1:$S3_PORT}
export S3_AK=${S3_AK:-S3RVER}
export S3_SK=${S3_SK:-S3RVER}
export S3_REGION=${S3_REGION:-us-east-1}

# Whatever the caller's environment says about AWS must not leak into a test
# (AWS_CA_BUNDLE in particular breaks some clients); tests set what they need.
s3_clean_env() {
	local v
	for v in $(compgen -e | grep '^AWS_'); do
		unset "$v"
	done
}
s3_clean_env

s3_urlencode() {
	local LC_ALL=C s=$1 out= c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case "$c" in
		[A-Za-z0-9._~/-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	echo "$out"
}

s3_curl() {
	curl -sS --fail-with-body -m "${S3_CURL_TIMEOUT:-120}" \
		--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_AK:$S3_SK" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

s3_mb() {
	s3_curl -o /dev/null -X PUT "$S3_ENDPOINT/$1"
}

s3_put() {
	s3_curl -o /dev/null -T "$3" "$S3_ENDPOINT/$1/$(s3_urlencode "$2")"
}

s3_get() {
	s3_curl -o "$3" "$S3_ENDPOINT/$1/$(s3_urlencode "$2")"
}

s3_is() {
	rm -f "$WORK/got"
	s3_get "$BUCKET" "$1" "$WORK/got" 2>/dev/null && cmp -s "$WORK/got" "$2"
}

s3_absent() {
	! s3_get "$BUCKET" "$1" "$WORK/got" 2>/dev/null
}

s3_uploads_open() {
	ls -A "$S3_DATA/$BUCKET/._S3rver_uploads" 2>/dev/null | wc -l
}

# Open multipart uploads that hold a part (s3rver keeps part N as file N).
s3_uploads_with_parts() {
	local d n=0
	for d in "$S3_DATA/$BUCKET/._S3rver_uploads"/*/; do
		[ -d "$d" ] || continue
		ls "$d" | grep -qxE '[0-9]+' && n=$((n + 1))
	done
	echo $n
}

# For one name: if its last step was an acknowledgment, S3 has exactly
# those bytes; otherwise one of its acknowledged versions, the whole of the
# version whose close was under way (a close cut short may or may not
# have taken effect, as any system call), or nothing. A version whose
# close was under way when its writer died (the log's next writer
# "start"s after it) may have been acknowledged without the log hearing
# of it: it counts as acknowledged from then on.
s3_ack_verdict() {	# LOG NAME GOT
	awk -v n="$2" -v got="$3" '
		$1 == "start" && last == "open" { acked[inflight] = 1 }
		$2 == n && $1 == "open" { last = "open"; inflight = $3 }
		$2 == n && $1 == "ack" { last = $3; acked[$3] = 1 }
		END {
			if (last != "" && last != "open" && last != got)
				printf "%s: acknowledged last as %s, S3 has %s\n", n, substr(last, 1, 12), substr(got, 1, 12)
			else if (last == "open" && got != "absent" && !(got in acked) && got != inflight)
				printf "%s: S3 has bytes nobody acknowledged (%s)\n", n, substr(got, 1, 12)
		}' "$1"
}

s3_check_acks() {	# LOG
	local name got tmp
	tmp=$(mktemp) || return 1
	for name in $(awk '$1 == "open" { print $2 }' "$1" | sort -u); do
		if s3_get "$BUCKET" "$name" "$tmp" 2>/dev/null; then
			got=$(sha256sum <"$tmp" | cut -d' ' -f1)
		else
			got=absent
		fi
		s3_ack_verdict "$1" "$name" "$got"
	done
	rm -f "$tmp"
}

s3_delete() {
	s3_curl -o /dev/null -X DELETE "$S3_ENDPOINT/$1/$(s3_urlencode "$2")"
}

# s3rver's on-disk layout: <data>/<bucket>/<key>._S3rver_object plus
# ._S3rver_object.md5 (the ETag) and ._S3rver_metadata.json. It re-reads
# these on every request, so seeding works while it runs.
s3_seed() {
	local base=${S3_DATA:?S3_DATA is not set}/$1/$2
	mkdir -p "$(dirname "$base")" &&
		cp "$3" "$base._S3rver_object" &&
		md5sum <"$3" | cut -d' ' -f1 | tr -d '\n' >"$base._S3rver_object.md5" &&
		echo '{"content-type":"application/octet-stream"}' >"$base._S3rver_metadata.json"
}

s3_seed_many() {
	python3 - "${S3_DATA:?S3_DATA is not set}/$1" "$2" "$3" <<'EOF'
import hashlib, os, sys
root, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
meta = b'{"content-type":"application/octet-stream"}\n'
for i in range(n):
    base = os.path.join(root, prefix + "obj-%05d" % i)
    os.makedirs(os.path.dirname(base), exist_ok=True)
    data = b"object %d\n" % i
    with open(base + "._S3rver_object", "wb") as f:
        f.write(data)
    with open(base + "._S3rver_object.md5", "w") as f:
        f.write(hashlib.md5(data).hexdigest())
    with open(base + "._S3rver_metadata.json", "wb") as f:
        f.write(meta)
EOF
}

# tests/s3server/fakes3.py: an in-memory S3 that keeps keys verbatim and
# honours If-Match (what s3rver cannot do). FAKES3_PID, FAKES3_ENDPOINT.
start_fakes3() {	# PORT MANIFEST.json
	local i
	python3 "$REPO/tests/s3server/fakes3.py" "$1" "$2" \
		--log "${S3CFS_LOGDIR:-/tmp}/fakes3-$1.log" </dev/null >/dev/null 2>&1 &
	FAKES3_PID=$!
	FAKES3_ENDPOINT=http://127.0.0.1:$1
	[ -n "${S3CFS_PIDFILE:-}" ] && echo "$FAKES3_PID" >>"$S3CFS_PIDFILE"
	for ((i = 0; i < 150; i++)); do
		curl -s -o /dev/null -m 2 "$FAKES3_ENDPOINT/" && return 0
		kill -0 "$FAKES3_PID" 2>/dev/null || break
		sleep 0.2
	done
	echo "start_fakes3: no answer on $FAKES3_ENDPOINT" >&2
	return 1
}

stop_fakes3() {
	[ -n "${FAKES3_PID:-}" ] || return 0
	kill "$FAKES3_PID" 2>/dev/null
	wait "$FAKES3_PID" 2>/dev/null
	FAKES3_PID=
}
