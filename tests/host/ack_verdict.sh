#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ack_verdict.sh - the crash tests' judge (s3_ack_verdict, tests/lib/s3.sh)
# on writer logs made up here: it must accept every state a crash may
# leave in S3 and refuse a lost acknowledgment or bytes nobody wrote whole.
# Host only. Prints TAP; exit 1 if anything failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tests/lib/tap.sh"
. "$repo/tests/lib/s3.sh"
log=$(mktemp "${TMPDIR:-/tmp}/ack-verdict.XXXXXX")
trap 'rm -f "$log"' EXIT

# verdict DESC WANT(ok|bad) GOT LINE...: the log is LINE..., S3 holds GOT.
verdict() {
	local desc=$1 want=$2 got=$3 out
	shift 3
	printf '%s\n' "$@" >"$log"
	out=$(s3_ack_verdict "$log" n0.bin "$got")
	if [ "$want" = ok ]; then
		is "$out" "" "$desc"
	elif [ -n "$out" ]; then
		ok "$desc ($out)"
	else
		not_ok "$desc" "accepted"
	fi
}

plan 12
verdict "the last acknowledged version" ok A "start 1" "open n0.bin A" "ack n0.bin A"
verdict "an earlier version after the last acknowledgment: lost" bad B \
	"start 1" "open n0.bin B" "ack n0.bin B" "open n0.bin A" "ack n0.bin A"
verdict "nothing after an acknowledgment: lost" bad absent "start 1" "open n0.bin A" "ack n0.bin A"
verdict "the version whose close was under way" ok X "start 1" "open n0.bin A" "ack n0.bin A" "open n0.bin X"
verdict "the last acknowledged one, a close under way" ok A "start 1" "open n0.bin A" "ack n0.bin A" "open n0.bin X"
verdict "an older acknowledged one, a close under way (the rewrite dropped the record)" ok A \
	"start 1" "open n0.bin A" "ack n0.bin A" "open n0.bin B" "ack n0.bin B" "open n0.bin X"
verdict "nothing, a close under way" ok absent "start 1" "open n0.bin X"
verdict "bytes nobody wrote whole" bad P "start 1" "open n0.bin A" "ack n0.bin A" "open n0.bin X"
# A close cut short by the writer's death may have returned: its version
# may be in S3 from the next boot on, whatever the next writer does.
verdict "a version cut short by a crash, then a new one under way" ok W \
	"start 1" "open n0.bin A" "ack n0.bin A" "open n0.bin W" "start 2" "open n0.bin X"
verdict "a version cut short without a crash (same writer) is not acknowledged" bad W \
	"start 1" "open n0.bin W" "error n0.bin EIO" "open n0.bin X"
verdict "a version cut short by a crash, then acknowledged over" bad W \
	"start 1" "open n0.bin W" "start 2" "open n0.bin A" "ack n0.bin A"
verdict "another name's close cut short counts for that name only" bad W \
	"start 1" "open n0.bin A" "ack n0.bin A" "open n1.bin W" "start 2" "open n0.bin X"
tap_done
