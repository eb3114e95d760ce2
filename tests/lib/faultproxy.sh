# SPDX-License-Identifier: GPL-2.0
# tests/s3server/faultproxy.py from the shell (t_faults, t_memory). Source
# it after common.sh.
#
#   start_faultproxy PORT      the proxy on 127.0.0.1:PORT in front of
#                              $S3_ENDPOINT; sets FP_PID, FP_URL, FP_LOG
#                              (its request log) and points S3_ENDPOINT at
#                              it (the daemon started next goes through it)
#   stop_faultproxy
#   fp_rules JSON              replace the fault rules (a JSON list)
#   fp_release [oldest]        wake every request held by a stall (oldest:
#                              only the one held longest)
#   fp_stat NAME               open|stalled|max_open|max_stalled|total|conns
#   fp_count [--method M] [--path RE] [--query RE] [--fault F] [--list]
#            [--from N]        requests in the log matching all filters
#                              (extended regexps; --list: "SEQ FAULT RANGE"
#                              lines instead of the count; --from: only
#                              after the log's first N lines, a count of
#                              them taken earlier: fp_lines)
#   fp_lines                   the log's lines so far (for --from)
#   fp_seed BUCKET DIR         objects of random bytes straight into s3rver's
#                              data dir ($S3_DATA), one "KEY SIZE" per line
#                              on stdin; DIR/KEY gets a copy, DIR/SHA256SUMS
#                              their sums (for sha256sum -c in a directory
#                              of reads named by key)
#
# The counting and the seeding avoid a process per object and a python
# start per check: both are slow under TCG.

FP_PID=
FP_URL=
FP_LOG=
FP_UPSTREAM=

start_faultproxy() {
	local i
	FP_UPSTREAM=${S3_ENDPOINT#http://}
	FP_URL=http://127.0.0.1:$1
	FP_LOG=${S3CFS_LOGDIR:-/tmp}/faultproxy-${TEST_NAME:-test}-$1.log
	: >"$FP_LOG"
	python3 "$REPO/tests/s3server/faultproxy.py" serve "$1" "$FP_UPSTREAM" \
		--log "$FP_LOG" </dev/null >/dev/null 2>"$FP_LOG.stderr" &
	FP_PID=$!
	[ -n "${S3CFS_PIDFILE:-}" ] && echo "$FP_PID" >>"$S3CFS_PIDFILE"
	for ((i = 0; i < 150; i++)); do
		if curl -sf -o /dev/null -m 2 "$FP_URL/__fault/stats"; then
			S3_ENDPOINT=$FP_URL
			export FP_URL FP_LOG	# for checks in a subshell
			return 0
		fi
		kill -0 "$FP_PID" 2>/dev/null || break
		sleep 0.2
	done
	echo "start_faultproxy: no answer on $FP_URL" >&2
	cat "$FP_LOG.stderr" >&2
	return 1
}

stop_faultproxy() {
	[ -n "$FP_PID" ] || return 0
	kill "$FP_PID" 2>/dev/null
	wait "$FP_PID" 2>/dev/null
	FP_PID=
}

fp_rules() {
	curl -sSf -m 10 -o /dev/null -X PUT --data-binary "$1" "$FP_URL/__fault/rules"
}

fp_release() {
	curl -sSf -m 10 -o /dev/null -X POST "$FP_URL/__fault/release${1:+?$1=1}"
}

fp_stat() {
	curl -sSf -m 10 "$FP_URL/__fault/stats" | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"
}

fp_lines() {
	wc -l <"$FP_LOG"
}

fp_count() {
	local m= p= q= f= list= from=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--from) from=$2; shift 2 ;;
		--method) m=$2; shift 2 ;;
		--path) p=$2; shift 2 ;;
		--query) q=$2; shift 2 ;;
		--fault) f=$2; shift 2 ;;
		--list) list=1; shift ;;
		*) echo "fp_count: $1?" >&2; return 1 ;;
		esac
	done
	# The log is json.dumps() output: URL-encoded strings, no escapes.
	awk -v m="$m" -v p="$p" -v q="$q" -v f="$f" -v list="$list" -v from="$from" '
	function field(name,	r) {
		if (!match($0, "\"" name "\": \"[^\"]*\""))
			return ""
		r = substr($0, RSTART + length(name) + 5, RLENGTH - length(name) - 6)
		return r
	}
	NR <= from { next }
	/"method": / {
		if (m != "" && field("method") != m) next
		if (p != "" && field("path") !~ p) next
		if (q != "" && field("query") !~ q) next
		if (f != "" && field("fault") != f) next
		n++
		if (list) {
			match($0, /"seq": [0-9]+/)
			seq = substr($0, RSTART + 7, RLENGTH - 7)
			r = field("range")
			print seq, field("fault"), (r == "" ? "-" : r)
		}
	}
	END { if (!list) print n + 0 }' "$FP_LOG"
}

fp_seed() {
	python3 -c '
import hashlib, os, random, sys
root, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
meta = b"{\"content-type\":\"application/octet-stream\"}\n"
with open(os.path.join(out, "SHA256SUMS"), "w") as sums:
    for line in sys.stdin:
        key, size = line.split()
        data = random.randbytes(int(size))
        base = os.path.join(root, key)
        for p in (base, os.path.join(out, key)):
            os.makedirs(os.path.dirname(p), exist_ok=True)
        for p in (os.path.join(out, key), base + "._S3rver_object"):
            with open(p, "wb") as f:
                f.write(data)
        with open(base + "._S3rver_object.md5", "w") as f:
            f.write(hashlib.md5(data).hexdigest())
        with open(base + "._S3rver_metadata.json", "wb") as f:
            f.write(meta)
        sums.write("%s  %s\n" % (hashlib.sha256(data).hexdigest(), key))
' "${S3_DATA:?S3_DATA is not set}/$1" "$2"
}

export -f start_faultproxy stop_faultproxy fp_rules fp_release fp_stat fp_lines fp_count fp_seed
