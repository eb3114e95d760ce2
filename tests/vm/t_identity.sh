#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_identity: an upper inode is one object version, for its whole life.
#  1. An object changed in S3 (a 412 on a fetch) gets a new inode from the
#     next lookup; an open of the new version stays right after its file
#     is evicted and its pages dropped (was: zeros, the old inode still
#     said "present" for chunks EVICT punched from the new file).
#  2. EVICT of a file with no upper inode yet, racing its first open: the
#     punch and the open's extent scan exclude each other (was: the scan
#     saw the data, the punch removed it, reads gave zeros). The module's
#     "evict" delay point holds EVICT between its decision and its punch.
#  3. One open, one version: an open that returned bytes of version 1 gets
#     ESTALE (read and sendfile, never version 2's bytes); an open that
#     returned nothing reads version 2; a mapping never shows version 2.
# Served by tests/s3server/fakes3.py (s3rver ignores If-Match).
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
test_init identity
plan 19

size=$((8 << 20))
make_fixture "$WORK/a1" $size id-a1 >/dev/null
make_fixture "$WORK/a2" $size id-a2 >/dev/null
make_fixture "$WORK/b1" $((4 << 20)) id-b1 >/dev/null
make_fixture "$WORK/c1" $size id-c1 >/dev/null
make_fixture "$WORK/c2" $size id-c2 >/dev/null
python3 -c 'import json,sys; json.dump({"bucket": sys.argv[1], "objects": {}}, open(sys.argv[2], "w"))' \
	"$BUCKET" "$WORK/manifest.json"
PARAMS=/sys/module/s3cachefs/parameters
nlfuzz=$(helper nlfuzz)

check "module loads" load_module
if ! start_fakes3 9102 "$WORK/manifest.json"; then
	not_ok "fake S3 starts"
	tap_done
fi
ok "fake S3 starts"
put() { curl -sS -X PUT --data-binary "@$2" "$FAKES3_ENDPOINT/$BUCKET/$1" -o /dev/null; }
put a.bin "$WORK/a1"
put b.bin "$WORK/b1"
put c.bin "$WORK/c1"
S3_ENDPOINT=$FAKES3_ENDPOINT check_sh "daemon starts (on the fake S3)" start_daemon
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=1M,fetch_timeout=20,meta_ttl=600,readahead=0"

# --- 1. a changed object, evicted under an open of its new version -------
check "a.bin: the first 4 KiB of version 1 read" \
	bash -c "cmp -n 4096 <(timeout 60 dd if='$MNT/a.bin' bs=4k count=1 status=none) '$WORK/a1'"
put a.bin "$WORK/a2"
timeout 120 cat "$MNT/a.bin" >/dev/null 2>&1
check "a.bin: a read of an uncached range noticed the change (stale $(mnt_stat stale))" \
	test "$(mnt_stat stale)" -ge 1
out=$(timeout 180 python3 - "$MNT/a.bin" "$WORK/a2" "$REPO/tools/s3cachectl/s3cachectl" <<'EOF' 2>&1
import os, subprocess, sys
path, want_path, ctl = sys.argv[1:4]
want = open(want_path, "rb").read()
fd = os.open(path, os.O_RDONLY)
first = os.pread(fd, len(want), 0)
print("new open reads version 2:", first == want)
r = subprocess.run([ctl, "evict", path], capture_output=True, text=True)
print("evict:", r.returncode, r.stdout.strip(), r.stderr.strip())
with open("/proc/sys/vm/drop_caches", "w") as f:
    f.write("1")
again = os.pread(fd, len(want), 0)
zeros = sum(1 for i in range(0, len(again), 4096) if not any(again[i:i + 4096]))
print("after evict and drop_caches, the open reads version 2:", again == want,
      "(%d zero pages)" % zeros)
EOF
)
diag "$out"
check "a.bin: a new open reads version 2" grep -q "new open reads version 2: True" <<<"$out"
check "a.bin: evicted" grep -q "evict: 0 evicted" <<<"$out"
check "a.bin: the same open reads version 2 after eviction and drop_caches (not zeros)" \
	grep -q "the open reads version 2: True" <<<"$out"

# --- 2. EVICT with no upper inode, racing the first open -----------------
check "b.bin: read whole" cmp "$MNT/b.bin" "$WORK/b1"
# A fresh listing: the open below looks b.bin up in the cache, at once.
python3 -c 'import os, sys; os.listdir(sys.argv[1])' "$MNT"
drop_caches	# no upper inode left for b.bin
echo 6000 >"$PARAMS/fault_delay_ms"
echo evict >"$PARAMS/fault_points"
dmesg -c >/dev/null
# EVICT by cache path, as the daemon sends it (no lookup through the mount:
# S3CFS_IOC_EVICT on the mount's root; netlink EVICT is the daemon's only);
# the first open is made once the module says EVICT is held.
out=$(timeout 120 python3 - "$MNT/b.bin" "$WORK/b1" "$nlfuzz" "$MNT" \
	"$WORK/evict.out" <<'EOF' 2>&1
import os, subprocess, sys, time
path, want_path, nlfuzz, mnt, log = sys.argv[1:6]
want = open(want_path, "rb").read()
ev = subprocess.Popen([nlfuzz, "evict-ioctl", mnt, "b.bin", "0", str(4 << 20)],
                      stdout=open(log, "w"), stderr=subprocess.STDOUT)
t0 = time.monotonic()
while "fault point evict" not in subprocess.run(["dmesg"], capture_output=True,
                                                 text=True).stdout:
    if time.monotonic() - t0 > 60 or ev.poll() is not None:
        break
    time.sleep(0.05)
print("EVICT in progress at the first open:", ev.poll() is None)
fd = os.open(path, os.O_RDONLY)
head = os.pread(fd, 4096, 0)
print("first read:", head == want[:4096])
ev.wait()
open("/sys/module/s3cachefs/parameters/fault_points", "w").write("\n")
with open("/proc/sys/vm/drop_caches", "w") as f:
    f.write("1")
got = os.pread(fd, len(want), 0)
zeros = sum(1 for i in range(0, len(got), 4096) if not any(got[i:i + 4096]))
print("after the punch, the open reads right:", got == want, "(%d zero pages)" % zeros)
EOF
)
echo >"$PARAMS/fault_points"
diag "$out"
diag "$(cat "$WORK/evict.out")"
check "b.bin: EVICT was held at the delay point while the file was first opened" \
	grep -q 'EVICT in progress at the first open: True' <<<"$out"
check "b.bin: EVICT done" grep -q "evict b.bin: done" "$WORK/evict.out"
check "b.bin: the open that raced EVICT reads right afterwards (not zeros)" \
	grep -q "the open reads right: True" <<<"$out"

# --- 3. one open, one version ---------------------------------------------
out=$(timeout 240 python3 - "$MNT/c.bin" "$WORK/c1" "$WORK/c2" "$FAKES3_ENDPOINT/$BUCKET/c.bin" <<'EOF' 2>&1
import errno, mmap, os, signal, subprocess, sys, tempfile
path, p1, p2, url = sys.argv[1:5]
v1, v2 = open(p1, "rb").read(), open(p2, "rb").read()
MB = 1 << 20
a = os.open(path, os.O_RDONLY)          # returns version 1 bytes first
print("A first read is version 1:", os.pread(a, 4096, 0) == v1[:4096])
b = os.open(path, os.O_RDONLY)          # returns nothing before the change
m = os.open(path, os.O_RDONLY)          # mapped before the change
mp = mmap.mmap(m, len(v1), prot=mmap.PROT_READ)
print("mapping shows version 1:", mp[:4096] == v1[:4096])
subprocess.run(["curl", "-sS", "-X", "PUT", "--data-binary", "@" + p2, url, "-o", "/dev/null"], check=True)

def read_rest(fd, how):
    """Read [1 MiB, end) by `how`; bytes returned and the error, if any."""
    got, off, err = b"", MB, None
    with tempfile.TemporaryFile() as out:
        while off < len(v1):
            try:
                if how == "read":
                    chunk = os.pread(fd, MB, off)
                else:
                    before = out.tell()
                    n = os.sendfile(out.fileno(), fd, off, MB)
                    out.seek(before)
                    chunk = out.read(n)
            except OSError as e:
                err = errno.errorcode.get(e.errno, str(e.errno))
                break
            if not chunk:
                break
            got += chunk
            off += len(chunk)
    return got, err

for how in ("read", "sendfile"):
    got, err = read_rest(a, how)
    print("A %s: %d bytes, error %s, version-2 bytes: %s, all version 1: %s" %
          (how, len(got), err, got != v1[MB:MB + len(got)] and got == v2[MB:MB + len(got)],
           got == v1[MB:MB + len(got)]))
allb = os.pread(b, len(v1), 0)
print("B reads all of version 2:", allb == v2)
pid = os.fork()
if pid == 0:
    os._exit(0 if mp[5 * MB:5 * MB + 4096] == v1[5 * MB:5 * MB + 4096] else 3)
_, st = os.waitpid(pid, 0)
sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0
print("mapping, uncached chunk: %s" % ("SIGBUS" if sig == signal.SIGBUS else
      "version 1" if st == 0 else "WRONG (status %d)" % st))
print("a new open reads all of version 2:", open(path, "rb").read() == v2)
EOF
)
diag "$out"
check "c.bin: A read version 1 first" grep -q "A first read is version 1: True" <<<"$out"
check "c.bin: A's read() after the change: ESTALE, nothing of version 2" \
	grep -Eq "A read: [0-9]+ bytes, error ESTALE, version-2 bytes: False, all version 1: True" <<<"$out"
check "c.bin: A's sendfile() after the change: ESTALE, nothing of version 2" \
	grep -Eq "A sendfile: [0-9]+ bytes, error ESTALE, version-2 bytes: False, all version 1: True" <<<"$out"
check "c.bin: B (nothing returned before the change) reads version 2" \
	grep -q "B reads all of version 2: True" <<<"$out"
check "c.bin: the mapping shows version 1 or SIGBUS, never version 2" \
	grep -Eq "mapping, uncached chunk: (SIGBUS|version 1)" <<<"$out"
check "c.bin: a new open reads version 2" grep -q "a new open reads all of version 2: True" <<<"$out"
umount_s3 "$MNT"
stop_fakes3
tap_done
