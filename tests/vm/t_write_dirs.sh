#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_dirs: what POSIX tools expect of directories and of the calls
# that move bytes in the kernel, on writable mounts. A directory's mtime
# and ctime change when a name in it is made or removed (create, mkdir,
# symlink, unlink, rmdir, rename: both directories), and truncate(2) of a
# file being written sets its mtime and ctime as ftruncate(2) does;
# truncate(2) of a file nobody has open sends it to S3 (in write-back mode
# records it) before it returns, as an open, ftruncate and close would. A
# directory's link count is two and one per subdirectory. fsync(2) of a
# directory succeeds and makes its entries durable: a file created in it
# and still open exists in S3 when the fsync returns (in write-back mode it
# is recorded on the cache device); another user's fsync sends none of
# the owner's files. splice(2), sendfile(2) and
# copy_file_range(2) into a file of the mount work, and S3 gets the bytes.
# On posix_meta mounts a symlink's mtime and owner can be set (touch -h,
# chown -h, cp -a), kept in S3 and shown by a new mount, and a
# directory's mode and owner are kept on its marker (chmod, chown, cp -a).
# What S3 cannot
# express fails with the error the README's table gives, leaving nothing.
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
test_init write_dirs
plan 62

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600,writable,allow_delete"
POPTS="$OPTS,posix_meta"
WBOPTS="$OPTS,writeback,upload_delay=3600"

times() {	# PATH: its mtime and ctime, ns
	python3 -c "import os, sys
s = os.lstat(sys.argv[1]); print(s.st_mtime_ns, s.st_ctime_ns)" "$1"
}
# changes DIR... -- CMD...: do both times of every DIR move forward?
changes() {
	local dirs=() d before=() i=0 after
	while [ "$1" != -- ]; do dirs+=("$1"); shift; done
	shift
	for d in "${dirs[@]}"; do before+=("$(times "$d")"); done
	sleep 0.05
	"$@" || { echo "the command failed: $*"; return 1; }
	for d in "${dirs[@]}"; do
		after=$(times "$d")
		python3 -c "import sys
b, a = [list(map(int, x.split())) for x in sys.argv[1:3]]
sys.exit(0 if a[0] > b[0] and a[1] > b[1] else 1)" "${before[$i]}" "$after" ||
			{ echo "$d: $before -> $after"; return 1; }
		i=$((i + 1))
	done
}
nlink() { stat -c %h "$1"; }
s3_head() {	# KEY HEADER: the value of HEADER in a HEAD of KEY ("" if none)
	s3_curl -I "$S3_ENDPOINT/$BUCKET/$(s3_urlencode "$1")" 2>/dev/null |
		tr -d '\r' | awk -v h="$(echo "$2" | tr A-Z a-z)" \
		'{ k = tolower($1); sub(/:$/, "", k) } k == h { print $2 }'
}
# held.py FILE DIR: creates FILE, writes "first", fsyncs DIR (prints "ok"
# or the errno name), waits for WORK/go, writes "second", closes.
cat >"$WORK/held.py" <<'PY'
import errno, os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
os.write(fd, b"first\n")
d = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
try:
    os.fsync(d)
    os.fdatasync(d)
    print("ok", flush=True)
except OSError as e:
    print(errno.errorcode[e.errno], flush=True)
os.close(d)
while not os.path.exists(os.environ["GO"]):
    time.sleep(0.05)
os.write(fd, b"second\n")
os.close(fd)
PY
export -f times changes

check "module loads" load_module
check_sh "daemon starts" start_daemon
# A directory S3 has no marker of (made by another client's upload).
s3_put "$BUCKET" nomark/x <(echo x)
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$POPTS"

# --- directory times ------------------------------------------------------
mkdir -p "$MNT/d" "$MNT/e"
check "create: the parent's mtime and ctime change" changes "$MNT/d" -- touch "$MNT/d/f"
check "mkdir: the parent's times change" changes "$MNT/d" -- mkdir "$MNT/d/sub"
check "symlink: the parent's times change" changes "$MNT/d" -- ln -s f "$MNT/d/lnk"
check "rename in one directory: its times change" changes "$MNT/d" -- mv "$MNT/d/f" "$MNT/d/g"
check "rename across directories: both change" changes "$MNT/d" "$MNT/e" -- mv "$MNT/d/g" "$MNT/e/g"
check "unlink: the parent's times change" changes "$MNT/e" -- rm "$MNT/e/g"
check "rmdir: the parent's times change" changes "$MNT/d" -- rmdir "$MNT/d/sub"
check "truncate(2) of a file being written sets its mtime and ctime" python3 -c "
import os, sys, time
p = sys.argv[1]
fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'x' * 5000)
b = os.stat(p)
time.sleep(0.05)
os.truncate(p, 100)
a = os.stat(p)
os.close(fd)
sys.exit(0 if a.st_size == 100 and a.st_mtime_ns > b.st_mtime_ns and
         a.st_ctime_ns > b.st_ctime_ns else 1)" "$MNT/trunc"

# --- link counts ----------------------------------------------------------
mkdir "$MNT/n"
is "$(nlink "$MNT/n")" 2 "a new directory has two links"
mkdir "$MNT/n/a" "$MNT/n/b"
is "$(nlink "$MNT/n")" 4 "... and one more per subdirectory"
rmdir "$MNT/n/a"
is "$(nlink "$MNT/n")" 3 "... one less after an rmdir"
# (A directory counts once this cache holds it: one looked up.)
ls "$MNT/nomark" >/dev/null
is "$(nlink "$MNT")" "$((2 + $(find "$MNT" -mindepth 1 -maxdepth 1 -type d | wc -l)))" \
	"the root: two and its subdirectories (not the cache's own)"

# --- splice, sendfile, copy_file_range into the mount ---------------------
head -c 300000 /dev/urandom >"$WORK/src"
cp "$WORK/src" "$MNT/src"
check "copy_file_range(2) from a file of the mount into another: the copy is in S3" \
	bash -c "python3 -c \"import os, sys
i = os.open(sys.argv[1], os.O_RDONLY)
o = os.open(sys.argv[2], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
n = 0
while n < 300000:
    k = os.copy_file_range(i, o, 300000 - n)
    assert k > 0
    n += k
os.close(o)\" '$MNT/src' '$MNT/cfr' && s3_is cfr '$WORK/src'"
check "sendfile(2) into a file of the mount: in S3" \
	bash -c "python3 -c \"import os, sys
i = os.open(sys.argv[1], os.O_RDONLY)
o = os.open(sys.argv[2], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
n = 0
while n < 300000:
    k = os.sendfile(o, i, n, 300000 - n)
    assert k > 0
    n += k
os.close(o)\" '$WORK/src' '$MNT/sf' && s3_is sf '$WORK/src'"
check "splice(2) from a pipe into a file of the mount: in S3" \
	bash -c "python3 -c \"import os, sys, threading
r, w = os.pipe()
data = open(sys.argv[1], 'rb').read()
def feed():
    os.write(w, data)
    os.close(w)
t = threading.Thread(target=feed)
t.start()
o = os.open(sys.argv[2], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
while os.splice(r, o, 65536):
    pass
t.join()
os.close(o)\" '$WORK/src' '$MNT/sp' && s3_is sp '$WORK/src'"

# --- truncate(2) of a file nobody has open ---------------------------------
# An open for writing, the truncate and the close in one call: S3 has the
# new size when it returns.
head -c 300000 /dev/urandom >"$WORK/tr"
cp "$WORK/tr" "$MNT/tr.bin" && cp "$WORK/tr" "$MNT/tr0.bin"
check "truncate(2) of an object nobody has open shrinks it" \
	python3 -c "import os, sys; os.truncate(sys.argv[1], 1000)" "$MNT/tr.bin"
head -c 1000 "$WORK/tr" >"$WORK/tr.exp"
check "... S3 has it when the call returns" s3_is tr.bin "$WORK/tr.exp"
check "truncate(2) that grows it: zeros, in S3" bash -c "
	python3 -c 'import os, sys; os.truncate(sys.argv[1], 5000)' '$MNT/tr.bin' &&
	cp '$WORK/tr.exp' '$WORK/tr.exp2' && truncate -s 5000 '$WORK/tr.exp2' &&
	s3_is tr.bin '$WORK/tr.exp2' && cmp '$MNT/tr.bin' '$WORK/tr.exp2'"
check "truncate(2) to 0: an empty object" bash -c "
	python3 -c 'import os, sys; os.truncate(sys.argv[1], 0)' '$MNT/tr0.bin' &&
	s3_is tr0.bin /dev/null && [ \$(stat -c %s '$MNT/tr0.bin') = 0 ]"

# --- what S3 cannot express: the errors of the README's table -------------
echo x >"$MNT/lim"
python3 - "$MNT" >"$WORK/limits" <<'PY'
import ctypes, errno, os, socket, stat, sys
m = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def exchange():
    if libc.renameat2(-100, (m + '/lim').encode(), -100, (m + '/src').encode(), 2):
        raise OSError(ctypes.get_errno(), 'renameat2')
def bind():
    socket.socket(socket.AF_UNIX).bind(m + '/sock')
cases = [
    ('a hard link', 'EPERM', lambda: os.link(m + '/lim', m + '/lim2')),
    ('mkfifo', 'EPERM', lambda: os.mkfifo(m + '/fifo')),
    ('mknod', 'EPERM', lambda: os.mknod(m + '/node', 0o600 | stat.S_IFCHR,
                                        os.makedev(1, 3))),
    ("a socket's bind", 'EPERM', bind),
    ('a user xattr', 'EOPNOTSUPP', lambda: os.setxattr(m + '/lim', 'user.k', b'v')),
    ('rename of a directory', 'EXDEV', lambda: os.rename(m + '/e', m + '/e2')),
    ('RENAME_EXCHANGE', 'EINVAL', exchange),
]
for what, want, f in cases:
    try:
        f()
        got = 'ok'
    except OSError as e:
        got = 'EOPNOTSUPP' if e.errno == errno.EOPNOTSUPP else errno.errorcode[e.errno]
    print('%s\t%s\t%s' % (what, want, got))
PY
while IFS=$'\t' read -r what want got; do
	is "$got" "$want" "$what: $want"
done <"$WORK/limits"
check "... and none of them left a name" bash -c \
	"! ls '$MNT' | grep -Eqx 'lim2|fifo|node|sock|e2' && [ -d '$MNT/e' ] && s3_is lim <(echo x)"

# --- fsync of a directory -------------------------------------------------
GO=$WORK/go-1 python3 "$WORK/held.py" "$MNT/d/held" "$MNT/d" >"$WORK/held-1" &
pid=$!
wait_until bash -c "[ -s '$WORK/held-1' ]"
is "$(cat "$WORK/held-1")" ok "fsync and fdatasync of a directory succeed"
printf 'first\n' >"$WORK/first"
check "... and the file created in it, still open, is in S3" s3_is d/held "$WORK/first"
touch "$WORK/go-1"
wait $pid
printf 'first\nsecond\n' >"$WORK/both"
check "its close uploads the rest" s3_is d/held "$WORK/both"
# Another user's fsync of the directory (its descriptor opened as root,
# then the caller's ids dropped to 65534's) succeeds and sends nothing of
# ours: our file is ours to send, half written or not.
GO=$WORK/go-3 python3 "$WORK/held.py" "$MNT/d/mine" "$MNT/e" >"$WORK/held-3" &
pid=$!
wait_until bash -c "[ -s '$WORK/held-3' ]"
is "$(python3 -c "import os, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)
os.fsync(d)
print(os.getuid(), 'ok')" "$MNT/d" 2>&1) $(s3_absent d/mine && echo absent)" "65534 ok absent" \
	"another user's fsync of the directory succeeds, and our open file is not sent"
check "... the owner's fsync of it sends the file" bash -c "python3 -c \"import os, sys
os.fsync(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY))\" '$MNT/d' && s3_is d/mine '$WORK/first'"
touch "$WORK/go-3"
wait $pid
check "... and its close the rest" s3_is d/mine "$WORK/both"
check "fsync of a directory on a read-only mount succeeds" bash -c "
	mkdir -p '$WORK/ro-cache' '$WORK/ro' &&
	mount -t s3cachefs -o cache=$WORK/ro-cache '$BUCKET' '$WORK/ro' &&
	python3 -c \"import os, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.fsync(d)\" '$WORK/ro'; rc=\$?; umount '$WORK/ro'; exit \$rc"

# --- directories' modes and owners (posix_meta): on their markers ---------
mkdir "$MNT/dm"
check "chmod of a directory" chmod 0750 "$MNT/dm"
check "chown of a directory" chown 1234:2345 "$MNT/dm"
is "$(stat -c '%a %u:%g' "$MNT/dm")" "750 1234:2345" "... shown"
is "$(s3_head dm/ x-amz-meta-mode) $(s3_head dm/ x-amz-meta-uid):$(s3_head dm/ x-amz-meta-gid)" \
	"$((8#40750)) 1234:2345" "... and kept on its marker in S3, as s3fs keeps them"
check "chmod of a directory S3 has no marker of makes one" bash -c \
	"ls '$MNT/nomark' >/dev/null && chmod 0700 '$MNT/nomark' &&
	[ \"\$(stat -c %a '$MNT/nomark')\" = 700 ]"
is "$(s3_head nomark/ x-amz-meta-mode) $(s3_head nomark/ content-type)" \
	"$((8#40700)) application/x-directory" "... with the mode"
check "chmod of the mount's root: EPERM" bash -c "! chmod 0700 '$MNT' 2>/dev/null"
mkdir -p "$WORK/dtree/sub"
echo t >"$WORK/dtree/sub/f"
chmod 0700 "$WORK/dtree/sub"
check "cp -a of a tree with a private directory exits 0" cp -a "$WORK/dtree" "$MNT/dtree"
is "$(stat -c %a "$MNT/dtree/sub")" 700 "... and keeps its mode"

# --- symlinks' times and owners (posix_meta) ------------------------------
ln -s plain-target "$MNT/sl"
check "touch -h sets a symlink's mtime" touch -h -d '2001-02-03 04:05:06 UTC' "$MNT/sl"
is "$(stat -c %Y "$MNT/sl")" 981173106 "... shown"
is "$(s3_head sl x-amz-meta-mtime)" 981173106 "... and kept in S3"
check "chown -h gives a symlink another owner" chown -h 1234:2345 "$MNT/sl"
is "$(stat -c %u:%g "$MNT/sl") $(s3_head sl x-amz-meta-uid):$(s3_head sl x-amz-meta-gid)" \
	"1234:2345 1234:2345" "... shown and kept in S3"
mkdir -p "$WORK/tree"
ln -sfn somewhere "$WORK/tree/link"
touch -h -d '2002-03-04 05:06:07 UTC' "$WORK/tree/link"
check "cp -a of a symlink into the mount exits 0" cp -a "$WORK/tree/link" "$MNT/copied"
is "$(readlink "$MNT/copied") $(stat -c %Y "$MNT/copied")" "somewhere 1015218367" \
	"... with its target and mtime"
umount_s3 "$MNT"
rm -rf "$CACHE" && mkdir -p "$CACHE"
check "a new mount with an empty cache" mount_s3 "$BUCKET" "$MNT" "$POPTS"
is "$(stat -c '%Y %u:%g' "$MNT/sl") $(readlink "$MNT/sl")" \
	"981173106 1234:2345 plain-target" "it shows the symlink's mtime, owner and target"
ls "$MNT/n" >/dev/null
is "$(nlink "$MNT/n")" 3 "a directory's link count from S3 after a listing"

# --- write-back: fsync of a directory records the file --------------------
umount_s3 "$MNT"
check "write-back mount" mount_s3 "$BUCKET" "$MNT" "$WBOPTS"
npend() { find "$CACHE/.s3cachefs/pending" -mindepth 1 2>/dev/null | wc -l; }
p0=$(npend)
GO=$WORK/go-2 python3 "$WORK/held.py" "$MNT/wbheld" "$MNT" >"$WORK/held-2" &
pid=$!
wait_until bash -c "[ -s '$WORK/held-2' ]"
is "$(cat "$WORK/held-2") $(($(npend) - p0))" "ok 1" \
	"write-back: fsync of the directory records the file created in it"
touch "$WORK/go-2"
wait $pid
check "s3cachectl sync: S3 has the file" bash -c \
	"'$REPO/tools/s3cachectl/s3cachectl' sync '$MNT' && s3_is wbheld '$WORK/both'"
p0=$(npend)
check "write-back: truncate(2) of a file nobody has open records it" bash -c "
	python3 -c 'import os, sys; os.truncate(sys.argv[1], 2)' '$MNT/wbheld' &&
	[ \$(find '$CACHE/.s3cachefs/pending' -mindepth 1 | wc -l) = \$(($p0 + 1)) ]"
check "... and s3cachectl sync sends it" bash -c \
	"'$REPO/tools/s3cachectl/s3cachectl' sync '$MNT' && s3_is wbheld <(printf fi)"
check "umount" umount_s3 "$MNT"
