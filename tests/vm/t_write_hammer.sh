#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_hammer: objects opened for writing while everything that touches
# cache files runs at once. Four writers modify their own objects (copy-up
# and a 4 KiB write, or O_TRUNC and new bytes) and now and then overwrite
# a shared object that another client keeps changing in S3; meanwhile a
# loop lists the directory and reads every file with meta_ttl=0 (a LIST
# and LOOKUPs each time, which renew the changed objects' cache files) and
# EVICTs every file. The module's local_pin delay point widens the window
# between an open's check of its cache file and its tag. What must hold:
# every close of a writer's own object succeeds and S3 ends with exactly
# the writer's model of it; a close of a shared object succeeds or fails
# with ESTALE (S3 changed meanwhile), and then its bytes are in the
# conflicts area; the shared objects read back as S3 has them.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init write_hammer
plan 12

PARAMS=/sys/module/s3cachefs/parameters
CTL=$REPO/tools/s3cachectl/s3cachectl
SECS=$((20 * ${S3CFS_TIMEOUT_SCALE:-1}))
for i in 0 1 2 3; do
	make_fixture "$WORK/w$i" $((3 * 1048576 + 1000 * i)) "hammer-w$i" >/dev/null
	s3_put "$BUCKET" "w$i.bin" "$WORK/w$i"
	make_fixture "$WORK/x$i" 100000 "hammer-x$i" >/dev/null
	s3_put "$BUCKET" "x$i.bin" "$WORK/x$i"
done

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable mount, meta_ttl=0" mount_s3 "$BUCKET" "$MNT" \
	"cache=$CACHE,fetch_timeout=60,meta_ttl=0,writable"
dmesg -c >/dev/null
echo 20 >"$PARAMS/fault_delay_ms"
echo local_pin >"$PARAMS/fault_points"

# The lister/reader/evicter, and the other client changing x*.bin.
(
	end=$((SECONDS + SECS))
	while [ $SECONDS -lt $end ]; do
		ls -l "$MNT" >/dev/null 2>&1
		cat "$MNT"/*.bin >/dev/null 2>&1
		for f in "$MNT"/*.bin; do "$CTL" evict "$f" >/dev/null 2>&1; done
	done
) &
lister=$!
(
	end=$((SECONDS + SECS))
	n=0
	while [ $SECONDS -lt $end ]; do
		i=$((n % 4))
		head -c 50000 /dev/urandom >"$WORK/remote.$i"
		s3_put "$BUCKET" "x$i.bin" "$WORK/remote.$i" 2>/dev/null
		n=$((n + 1))
		sleep 0.2
	done
	echo "$n" >"$WORK/remote.n"
) &
changer=$!

writer() {	# I: modify w$I.bin for SECS seconds; now and then x$(I).bin
	python3 - "$MNT" "$WORK" "$1" "$SECS" <<'EOF'
import errno, os, random, sys, time
mnt, work, i, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(1000 + i)
model = bytearray(open(f"{work}/w{i}", "rb").read())
own = {"ok": 0, "bad": []}
shared = {"ok": 0, "ESTALE": 0, "bad": []}
end = time.monotonic() + secs
n = 0
while time.monotonic() < end:
    n += 1
    path = f"{mnt}/w{i}.bin"
    try:
        if rnd.random() < 0.7:
            fd = os.open(path, os.O_RDWR)
            off = rnd.randrange(0, len(model))
            data = (b"w%d-%d " % (i, n)) * 700
            data = data[:4096]
            os.pwrite(fd, data, off)
            end_ = off + len(data)
            if end_ > len(model):
                model.extend(bytes(end_ - len(model)))
            model[off:end_] = data
        else:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            data = (b"t%d-%d " % (i, n)) * rnd.randrange(1000, 50000)
            os.write(fd, data)
            model = bytearray(data)
        os.close(fd)
        own["ok"] += 1
    except OSError as e:
        own["bad"].append(errno.errorcode.get(e.errno, str(e.errno)))
    if n % 3 == 0:
        mark = b"shared-w%d-%d\n" % (i, n)
        try:
            fd = os.open(f"{mnt}/x{i}.bin", os.O_WRONLY | os.O_TRUNC)
            os.write(fd, mark)
            os.close(fd)
            shared["ok"] += 1
        except OSError as e:
            if e.errno == errno.ESTALE:
                shared["ESTALE"] += 1
                shared.setdefault("marks", []).append(mark.decode().strip())
            else:
                shared["bad"].append(errno.errorcode.get(e.errno, str(e.errno)))
open(f"{work}/w{i}.model", "wb").write(model)
print(f"w{i}: {n} opens, own {own}, shared {shared}")
EOF
}
export -f writer
for i in 0 1 2 3; do
	writer $i >"$WORK/writer.$i" 2>&1 &
	eval "wpid$i=\$!"
done
for i in 0 1 2 3; do
	eval "wait \$wpid$i"
done
wait "$lister" "$changer"
echo >"$PARAMS/fault_points"
for i in 0 1 2 3; do diag "$(cat "$WORK/writer.$i")"; done
diag "remote changes: $(cat "$WORK/remote.n"); local_pin reached $(dmesg | grep -c 'fault point local_pin: 20 ms') times"
diag "daemon kept files it found held or LOCAL: $(grep -c 'kept: written here' "$DAEMON_LOG")"

check "the delay point was reached" bash -c "dmesg | grep -q 'fault point local_pin: 20 ms'"
is "$(cat "$WORK"/writer.* | grep -c "bad': \[\]}, shared")" 4 \
	"every close of a writer's own object succeeded"
is "$(cat "$WORK"/writer.* | grep -c "'bad': \[\]}$\|'bad': \[\], 'marks'")" 4 \
	"every close of a shared object succeeded or reported a conflict (ESTALE)"
mnt_set meta_ttl_ms 3600000
for i in 0 1 2 3; do
	s3_get "$BUCKET" "w$i.bin" "$WORK/got.$i" 2>/dev/null
done
check "S3 holds each writer's model of its object" bash -c \
	"for i in 0 1 2 3; do cmp '$WORK/got.'\$i '$WORK/w'\$i.model || exit 1; done"
check "... and so does the mount" bash -c \
	"for i in 0 1 2 3; do cmp '$MNT/w'\$i.bin '$WORK/w'\$i.model || exit 1; done"
check "every conflict's bytes are in the conflicts area" python3 - "$WORK" "$CACHE" <<'EOF'
import ast, glob, sys
work, cache = sys.argv[1], sys.argv[2]
kept = set()
for f in glob.glob(cache + "/.s3cachefs/conflicts/*"):
    kept.add(open(f, "rb").read().decode(errors="replace").strip())
missing = []
for i in range(4):
    line = open(f"{work}/writer.{i}").read().strip()
    shared = ast.literal_eval(line.split("shared ", 1)[1])
    missing += [m for m in shared.get("marks", []) if m not in kept]
print("missing:", missing)
sys.exit(1 if missing else 0)
EOF
mnt_set meta_ttl_ms 0
ls "$MNT" >/dev/null
for i in 0 1 2 3; do
	s3_get "$BUCKET" "x$i.bin" "$WORK/gotx.$i" 2>/dev/null
done
check "the shared objects read back as S3 has them" bash -c \
	"for i in 0 1 2 3; do cmp '$MNT/x'\$i.bin '$WORK/gotx.'\$i || exit 1; done"
is "$(python3 -c "
import os
print(' '.join(n for n in sorted(os.listdir('$CACHE'))
               if os.path.isfile(os.path.join('$CACHE', n)) and
               os.getxattr(os.path.join('$CACHE', n), 'trusted.s3cachefs.meta')[0] != 1))")" "" \
	"every cache file is a copy of its object again (meta version 1)"
check "umount" umount_s3 "$MNT"
tap_done
