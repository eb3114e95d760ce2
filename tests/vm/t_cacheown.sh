#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_cacheown: the cache directory belongs to s3cachefs alone.
# Claiming: a directory that holds files and is not a cache (no
# .s3cachefs/format) is refused with a message and left as it was, also
# when cache= reaches it through a symlink; one holding only lost+found is
# taken. Private: the mount makes the root 0700 and root's (a fresh
# directory of another owner and mode too); files are 0600 and directories
# 0700, those a writable, write-back or posix_meta mount makes included.
# uid 65534, kept out by the mount's own permissions, cannot read an
# object's bytes from the cache directory, nor get a descriptor of a cache
# file (directly or through the daemon's /proc/PID/fd), nor so flock one to
# hold up root's read of it; its flock on the mount's file holds up nobody;
# s3cachectl status works for it (the module counts). Tied: a symlink, then
# a directory, swapped in for cache= after the mount by the owner of the
# directory above it is not used by a restarted daemon: nothing there is
# pruned or filled, the mount's requests fail and both logs say why; with
# the real directory back, a restarted daemon serves the mount again.
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init cacheown
plan 53

CTL=$REPO/tools/s3cachectl/s3cachectl
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
VICTIM=$WORK/victim
U=$WORK/u
OPTS="fetch_timeout=20,meta_ttl=3600"
export CTL NOBODY VICTIM U

make_fixture "$WORK/f.bin" 300K cacheown-f >/dev/null
make_fixture "$WORK/g.bin" 200K cacheown-g >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f.bin"
s3_put "$BUCKET" g.bin "$WORK/g.bin"
s3_put "$BUCKET" dir/h.bin "$WORK/g.bin"

# Someone's directory, given as cache= by mistake.
mkdir -p "$VICTIM/projects/x"
echo "my thesis" >"$VICTIM/thesis.txt"
echo "int main(void) { return 0; }" >"$VICTIM/projects/x/main.c"
victim_sum() {
	(cd "$VICTIM" && find . -printf '%p %s %m %u\n' | sort &&
	 cat thesis.txt projects/x/main.c) | sha256sum
}
SUM=$(victim_sum)
# A directory of uid 65534 above the cache.
mkdir -p "$U"
chown 65534:65534 "$U"

try_mount() {	# OPTIONS: mount(8) once, no retries
	timeout -k 5 60 mount -t s3cachefs -o "$1" "$BUCKET" "$MNT"
}
# Refused, or (a mount that claims it) listed, which prunes it.
refused() {	# DESC CACHE
	local before
	before=$(dmesg | wc -l)
	if try_mount "cache=$2,$OPTS" 2>/dev/null; then
		not_ok "$1 is refused" "the mount succeeded"
		timeout 60 ls "$MNT" >/dev/null 2>&1
		umount_s3 "$MNT"
	else
		ok "$1 is refused"
	fi
	check "$1: the log says it is not empty and not a cache" \
		bash -c "dmesg | tail -n +$((before + 1)) | grep -q 'is not empty (it holds .*) and is not an s3cachefs cache'"
	is "$(victim_sum)" "$SUM" "$1: its files are intact"
}
nobody_opens_daemon_fd() {	# PID: can uid 65534 open any of its descriptors?
	$NOBODY /usr/bin/python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
try:
    names = os.listdir('/proc/%s/fd' % pid)
except OSError:
    names = [str(i) for i in range(64)]
for n in names:
    try:
        fd = os.open('/proc/%s/fd/%s' % (pid, n), os.O_RDONLY)
    except OSError:
        continue
    print('opened', n, os.readlink('/proc/self/fd/%d' % fd))
    sys.exit(0)
sys.exit(1)
PY
}
# uid 65534 holds flock(LOCK_SH) on a file for 120 s: one process (setpriv
# execs python), so that kill ends it and its descriptor.
HOLD='import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(120)'
# Root takes FILE's handle (name_to_handle_at); can uid 65534 open it by
# the handle (open_by_handle_at, relative to MOUNT)?
nobody_opens_by_handle() {	# FILE MOUNT
	local handle
	handle=$(python3 - "$1" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int),
                ("h", ctypes.c_ubyte * 128)]
fh, mid = FH(), ctypes.c_int()
fh.bytes = 128
if libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(fh),
                          ctypes.byref(mid), 0):
    sys.exit(2)
print(fh.type, bytes(fh.h[:fh.bytes]).hex())
PY
) || { echo "name_to_handle_at failed"; return 0; }
	$NOBODY /usr/bin/python3 - "$2" $handle <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int),
                ("h", ctypes.c_ubyte * 128)]
raw = bytes.fromhex(sys.argv[3])
fh = FH()
fh.bytes, fh.type = len(raw), int(sys.argv[2])
ctypes.memmove(fh.h, raw, len(raw))
mfd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fd = libc.open_by_handle_at(mfd, ctypes.byref(fh), os.O_RDONLY)
print("open_by_handle_at:", fd, os.strerror(ctypes.get_errno()))
sys.exit(0 if fd >= 0 else 1)
PY
}
export -f try_mount nobody_opens_daemon_fd nobody_opens_by_handle

check "module loads" load_module
check_sh "daemon starts" start_daemon

# --- Claiming ---
refused "a directory holding files" "$VICTIM"
check_fails "nothing was made in it" test -e "$VICTIM/.s3cachefs"
$NOBODY ln -s "$VICTIM" "$U/c"
refused "a directory holding files, reached through a symlink" "$U/c"
$NOBODY rm -f "$U/c"
mkdir -p "$WORK/lf/lost+found"
check "a directory holding only lost+found is taken" try_mount "cache=$WORK/lf,$OPTS"
umount_s3 "$MNT"

# --- Private ---
chown 65534:65534 "$CACHE"
chmod 0777 "$CACHE"
check "mount for root only (uid=0,gid=0,file_mode=0400,dir_mode=0500)" \
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,$OPTS,uid=0,gid=0,file_mode=0400,dir_mode=0500"
check "root reads through it" \
	bash -c "cmp '$WORK/f.bin' '$MNT/f.bin' && cmp '$WORK/g.bin' '$MNT/dir/h.bin'"
is "$(stat -c '%a %u %g' "$CACHE")" "700 0 0" \
	"the cache root (a fresh one of uid 65534, mode 0777) is made 0700, root's"
is "$(find "$CACHE" -mindepth 1 -type d ! -perm 0700 | head -3)" "" "directories in it are 0700"
is "$(find "$CACHE" -type f ! -perm 0600 | head -3)" "" "files in it are 0600"
is "$(find "$CACHE" ! -uid 0 | head -3)" "" "all of them root's"
check_fails "uid 65534 cannot read the file through the mount (its permissions)" \
	$NOBODY cat "$MNT/f.bin"
check_fails "uid 65534 cannot read the object's bytes from the cache directory" \
	$NOBODY cat "$CACHE/f.bin"
check_fails "uid 65534 cannot list the cache directory" $NOBODY ls "$CACHE"
check_fails "uid 65534 cannot flock a cache file" $NOBODY flock -n -s "$CACHE/f.bin" true
check_fails "uid 65534 cannot open a descriptor of the daemon's (/proc/PID/fd)" \
	nobody_opens_daemon_fd "$DAEMON_PID"
check_fails "nor one by its file handle (open_by_handle_at)" \
	nobody_opens_by_handle "$CACHE/f.bin" "$S3CFS_NVME"
check "umount" umount_s3 "$MNT"

# A lock another user can take holds up no read.
check "mount readable by all (file_mode=0444,dir_mode=0555)" \
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,$OPTS,file_mode=0444,dir_mode=0555"
is "$($NOBODY "$CTL" status "$MNT/f.bin" 2>&1 | awk 'NR == 2 { print $3 }')" "100.0%" \
	"s3cachectl status works for uid 65534 (the module counts the cached bytes)"
$NOBODY /usr/bin/python3 -c "$HOLD" "$MNT/f.bin" >"$WORK/held-mnt" &
holder_mnt=$!
$NOBODY /usr/bin/python3 -c "$HOLD" "$CACHE/f.bin" >"$WORK/held-cache" 2>"$WORK/held-cache.err" &
holder_cache=$!
check_sh "uid 65534 holds a flock on the mount's file" \
	wait_until grep -q held "$WORK/held-mnt"
wait_until grep -q 'held\|Error' "$WORK/held-cache" "$WORK/held-cache.err"
is "$(cat "$WORK/held-cache")" "" "but none on the cache file (it cannot open it)"
check "root evicts the file" "$CTL" evict "$MNT/f.bin"
drop_caches
check "root's read of it returns the object meanwhile" \
	bash -c "cmp '$WORK/f.bin' '$MNT/f.bin'"
kill $holder_mnt $holder_cache 2>/dev/null
wait $holder_mnt $holder_cache 2>/dev/null
check "umount" umount_s3 "$MNT"

# Files a writable, write-back, posix_meta mount makes.
check "writable, writeback, posix_meta mount" \
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,$OPTS,writable,writeback,upload_delay=30,posix_meta"
check "root writes a file of mode 0600 and a directory" \
	bash -c "echo secret >'$MNT/new.txt' && chmod 0600 '$MNT/new.txt' &&
		 mkdir '$MNT/newdir' && echo more >'$MNT/newdir/w.txt'"
check "the write-back record is there" \
	bash -c "[ -n \"\$(ls -A '$CACHE/.s3cachefs/pending')\" ]"
is "$(find "$CACHE" -mindepth 1 -type d ! -perm 0700 | head -3)" "" "directories in it are 0700"
is "$(find "$CACHE" -type f ! -perm 0600 | head -3)" "" "files in it are 0600 (written ones, records)"
check_fails "uid 65534 cannot read a written file from the cache directory" \
	$NOBODY cat "$CACHE/new.txt"
check "umount (uploads the queue)" umount_s3 "$MNT"

# --- Tied ---
mkdir "$U/c"
check "mount with cache= in a directory of uid 65534" \
	mount_s3 "$BUCKET" "$MNT" "cache=$U/c,$OPTS"
check "it lists and reads" bash -c "ls '$MNT' >/dev/null && cmp '$WORK/f.bin' '$MNT/f.bin'"
# uid 65534 swaps a symlink to the victim in; the daemon restarts.
check "uid 65534 swaps a symlink in for the cache directory" \
	$NOBODY bash -c "mv '$U/c' '$U/c.old' && ln -s '$VICTIM' '$U/c'"
before=$(dmesg | wc -l)
stop_daemon
check_sh "daemon restarts" start_daemon
check_fails "a read that needs the daemon fails" cat "$MNT/g.bin"
check_fails "another one fails too" cat "$MNT/dir/h.bin"
is "$(victim_sum)" "$SUM" "the victim is neither pruned nor filled"
check "the daemon's log says why" \
	grep -q 'cache directory .* was refused: a symlink' "$DAEMON_LOG"
check "the kernel's log says so" \
	bash -c "dmesg | tail -n +$((before + 1)) | grep -q 'daemon refused mount .*its cache directory is not the one mounted'"
# Then a directory of its own.
check "uid 65534 swaps a directory of its own in" \
	$NOBODY bash -c "rm '$U/c' && mkdir '$U/c' && echo mine >'$U/c/mine.txt'"
stop_daemon
check_sh "daemon restarts" start_daemon
check_fails "a read that needs the daemon fails" cat "$MNT/g.bin"
is "$(ls -A "$U/c" | tr '\n' ' ')$(cat "$U/c/mine.txt")" "mine.txt mine" \
	"that directory is neither pruned nor filled"
check "the daemon's log says why" \
	grep -q 'cache directory .* was refused: it is not the directory the kernel mounted' "$DAEMON_LOG"
# The real one back: served again.
rm -rf "$U/c"
mv "$U/c.old" "$U/c"
stop_daemon
check_sh "daemon restarts" start_daemon
check "with the real directory back, reads work again" cmp "$WORK/g.bin" "$MNT/g.bin"
umount_s3 "$MNT"
tap_done
