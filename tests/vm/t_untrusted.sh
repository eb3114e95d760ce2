#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_untrusted: what a bucket's writers, hostile keys and other local users
# cannot do through a mount (issue 33, the kernel side).
#  1. Set-user-ID and set-group-ID: file_mode= or dir_mode= with them is
#     refused at mount, with a message; a sticky dir_mode= is kept. On a
#     posix_meta mount an x-amz-meta-mode of 04755 shows 0755, one of a
#     character device a regular file; creat(04755) and mkdir -m 2775
#     store no such bit in S3 (was: x-amz-meta-mode 35309 and 17917);
#     chmod u+s and mknod are refused.
#  2. readdir positions: on a dir_index mount (positions are offsets in
#     the directory's index) an lseek into the middle of a record is
#     refused with EINVAL (was: accepted, then names made of pieces of
#     other records, or EIO); every position readdir gave still works.
#  3. ioctls: S3CFS_IOC_SYNC needs the file's owner (or CAP_SYS_ADMIN),
#     S3CFS_IOC_EVICT CAP_SYS_ADMIN (was: SYNC by anyone).
#  4. Conflicts (on tests/s3server/fakes3.py, which honours If-None-Match
#     on PUT and keeps long keys): a file of a 250-byte name keeps its
#     bytes under .s3cachefs/conflicts/ as a name that fits NAME_MAX (was:
#     ENAMETOOLONG, the copy stayed at its name and every close met the
#     conflict again); a name with a newline and an escape sequence does
#     not forge a kernel log line nor put an ESC byte in the log (was: a
#     line of its own in syslog(2) and on the console).
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init untrusted
plan 42
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all
	--bounding-set=-all)
cleanup_more() {
	test_cleanup
	stop_fakes3
}
trap cleanup_more EXIT

s3_head() {	# KEY HEADER: the value of HEADER in a HEAD of KEY ("" if none)
	s3_curl -I "$S3_ENDPOINT/$BUCKET/$(s3_urlencode "$1")" 2>/dev/null |
		tr -d '\r' | awk -v h="$(echo "$2" | tr A-Z a-z)" \
		'{ k = tolower($1); sub(/:$/, "", k) } k == h { print $2 }'
}
errname() {	# CODE: the errno name python CODE fails with, or "ok"
	"${@:2}" python3 -c "import os, errno, fcntl, sys
try:
    exec(sys.argv[1])
    print('ok')
except OSError as e: print(errno.errorcode[e.errno])" "$1"
}
bad_mount() {	# DESC OPTIONS
	local out rc
	out=$(timeout -k 5 60 mount -t s3cachefs -o "$2" "$BUCKET" "$MNT" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		umount "$MNT"
		not_ok "$1 is refused" "mount succeeded"
	elif [ $rc = 124 ]; then
		not_ok "$1 is refused" "mount hung"
	else
		ok "$1 is refused"
	fi
}

printf '#!/bin/sh\necho hi\n' >"$WORK/script"
s3_put "$BUCKET" plain.txt "$WORK/script"
s3_curl -o /dev/null -T "$WORK/script" -H "x-amz-meta-mode: $((0104755))" \
	"$S3_ENDPOINT/$BUCKET/suid.sh"
s3_curl -o /dev/null -T "$WORK/script" -H "x-amz-meta-mode: $((0106777))" \
	"$S3_ENDPOINT/$BUCKET/suidgid.sh"
s3_curl -o /dev/null -T "$WORK/script" -H "x-amz-meta-mode: $((0020644))" \
	"$S3_ENDPOINT/$BUCKET/chardev"
for i in $(seq 0 15); do
	printf 'object %d\n' "$i" >"$WORK/o"
	s3_put "$BUCKET" "d/o-$i-$(printf 'x%.0s' $(seq 0 $((i * 3))))" "$WORK/o"
done

mkdir -p "$CACHE-p" "$CACHE-ix" "$CACHE-own" "$CACHE-w"
check "module loads" load_module
check_sh "daemon starts" start_daemon

# --- 1. set-user-ID and set-group-ID ------------------------------------------
opts="cache=$CACHE,fetch_timeout=30"
dmesg -c >/dev/null
bad_mount "file_mode=4755" "$opts,file_mode=4755"
bad_mount "file_mode=2755" "$opts,file_mode=2755"
bad_mount "dir_mode=6755" "$opts,dir_mode=6755"
bad_mount "writable with file_mode=4777" "$opts,writable,file_mode=4777"
check "dmesg says why" bash -c "dmesg | grep -q 'file_mode=4755: set-user-ID and set-group-ID are not allowed'"
if mount_s3 "$BUCKET" "$MNT" "$opts,dir_mode=1777,file_mode=0640"; then
	is "$(stat -c %a "$MNT/d" "$MNT/plain.txt" | tr '\n' ' ')" "1777 640 " \
		"a sticky dir_mode= is kept (1777), file_mode=0640 shown"
	umount_s3 "$MNT"
else
	not_ok "a sticky dir_mode= is kept (1777), file_mode=0640 shown" "mount failed"
fi

if mount_s3 "$BUCKET" "$MNT" "cache=$CACHE-p,fetch_timeout=60,meta_ttl=3600,writable,posix_meta"; then
	ok "posix_meta mount"
	is "$(stat -c %a "$MNT/suid.sh")" 755 "x-amz-meta-mode 04755 in S3 shows 755"
	is "$(stat -c %a "$MNT/suidgid.sh")" 777 "x-amz-meta-mode 06777 in S3 shows 777"
	is "$(stat -c '%F %a' "$MNT/chardev")" "regular file 644" \
		"x-amz-meta-mode of a character device shows a regular file"
	is "$(errname "os.umask(0); os.close(os.open('$MNT/made.sh', os.O_CREAT | os.O_WRONLY, 0o4755))")" ok \
		"creat(04755) succeeds"
	is "$(stat -c %a "$MNT/made.sh")" 755 "... and shows 755"
	is "$(s3_head made.sh x-amz-meta-mode)" $((0100755)) \
		"... and S3 has x-amz-meta-mode $((0100755)) (0100755), no set-user-ID bit"
	is "$(errname "os.umask(0); os.mkdir('$MNT/sgdir', 0o2775)")" ok "mkdir -m 2775 succeeds"
	is "$(s3_head sgdir/ x-amz-meta-mode)" $((040775)) \
		"... and its marker has x-amz-meta-mode $((040775)) (040775), no set-group-ID bit"
	is "$(errname "os.chmod('$MNT/made.sh', 0o4755)")" EPERM "chmod u+s: EPERM"
	is "$(errname "os.mknod('$MNT/dev', 0o20644, os.makedev(1, 3))")" EPERM "mknod: EPERM"
	umount_s3 "$MNT"
else
	not_ok "posix_meta mount"
	skip_n 10 "posix_meta" "mount failed"
fi

# --- 2. readdir positions ------------------------------------------------------
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE-ix,fetch_timeout=60,meta_ttl=3600,dir_index"
out=$(timeout 300 python3 - "$MNT/d" <<'EOF' 2>&1
import ctypes, errno, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_getdents64 = 217

def getdents(fd):
    buf = ctypes.create_string_buffer(32768)
    n = libc.syscall(SYS_getdents64, fd, buf, len(buf))
    if n < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    out, i, raw = [], 0, buf.raw
    while i < n:
        ino, off, reclen, typ = struct.unpack_from("<QqHB", raw, i)
        out.append((raw[i + 19:i + reclen].split(b"\0", 1)[0], off))
        i += reclen
    return out

def read_all(fd):
    ents = []
    while True:
        e = getdents(fd)
        if not e:
            return ents
        ents += e

d = sys.argv[1]
want = set(x.encode() for x in os.listdir(d)) | {b".", b".."}
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
ents = read_all(fd)
print("entries:", len(ents), "of", len(want))
good = 0
for k in range(len(ents) - 1):
    os.lseek(fd, ents[k][1], os.SEEK_SET)
    e = getdents(fd)
    good += bool(e) and e[0][0] == ents[k + 1][0]
print("good seeks: %d/%d" % (good, len(ents) - 1))
refused = accepted = errors = 0
phantoms = set()
offs = [o for _, o in ents]
for a, b in zip(offs, offs[1:]):
    if a < 2:
        continue
    for p in range(a + 8, b, 8):
        try:
            os.lseek(fd, p, os.SEEK_SET)
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
            refused += 1
            continue
        accepted += 1
        try:
            phantoms |= {n for n, _ in read_all(fd) if n not in want}
        except OSError:
            errors += 1
print("inside records: refused %d accepted %d (read errors %d)" % (refused, accepted, errors))
print("phantom names: %d %r" % (len(phantoms), sorted(phantoms)[:5]))
EOF
)
diag "$out"
check "readdir of a dir_index directory lists every object" grep -q "entries: 18 of 18" <<<"$out"
check "every position readdir gave is one lseek takes (seekdir works)" grep -q "good seeks: 17/17" <<<"$out"
check "every lseek into the middle of a record is refused (EINVAL)" \
	grep -Eq "inside records: refused [1-9][0-9]* accepted 0 " <<<"$out"
check "no name read is one S3 does not have" grep -q "phantom names: 0 " <<<"$out"

# --- 3. ioctls -----------------------------------------------------------------
f=$(ls "$MNT/d" | head -n 1)
cat "$MNT/d/$f" >/dev/null
sync_py="import fcntl; fd = os.open('$MNT/d/$f', os.O_RDONLY); fcntl.ioctl(fd, 0xb301)"
is "$(errname "$sync_py" "${NOBODY[@]}")" EPERM \
	"S3CFS_IOC_SYNC by a user who does not own the file: EPERM"
is "$(errname "$sync_py")" ok "S3CFS_IOC_SYNC by root: done"
ev_py="import struct, fcntl
arg = bytearray(struct.pack('QQ4096s', 0, 1 << 30, b'd/$f'))
fcntl.ioctl(os.open('$MNT', os.O_RDONLY), (1 << 30) | (len(arg) << 16) | 0xb303, arg, True)"
is "$(errname "$ev_py" "${NOBODY[@]}")" EPERM \
	"S3CFS_IOC_EVICT by an unprivileged user: EPERM"
is "$(stat -c %b "$CACHE-ix/d/$f")" 8 "... and the file stays cached"
is "$(errname "$ev_py")" ok "S3CFS_IOC_EVICT by root: done"
is "$(stat -c %b "$CACHE-ix/d/$f")" 0 "... and the file is evicted"
umount_s3 "$MNT"
if mount_s3 "$BUCKET" "$MNT" "cache=$CACHE-own,fetch_timeout=60,uid=65534"; then
	is "$("${NOBODY[@]}" python3 -c "import os, fcntl
fd = os.open('$MNT/plain.txt', os.O_RDONLY); fcntl.ioctl(fd, 0xb301); print('ok')" 2>&1)" ok \
		"S3CFS_IOC_SYNC by the file's owner: done"
	umount_s3 "$MNT"
else
	not_ok "S3CFS_IOC_SYNC by the file's owner: done" "mount failed"
fi

# --- 4. conflicts: long names, names with control characters (fakes3) ----------
stop_daemon
python3 -c 'import json, sys; json.dump({"bucket": sys.argv[1], "objects": {}}, open(sys.argv[2], "w"))' \
	"$BUCKET" "$WORK/manifest.json"
if start_fakes3 9133 "$WORK/manifest.json"; then ok "fake S3 starts"; else not_ok "fake S3 starts"; fi
S3_ENDPOINT=$FAKES3_ENDPOINT check_sh "daemon starts (on the fake S3)" start_daemon
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE-w,fetch_timeout=60,meta_ttl=3600,writable"
conflict_py() {	# NAME (python bytes literal): create it, write, put theirs, close
	python3 - "$MNT" "$FAKES3_ENDPOINT/$BUCKET" "$1" <<'EOF'
import errno, os, sys, urllib.parse, urllib.request
mnt, url, name = sys.argv[1], sys.argv[2], eval(sys.argv[3])
fd = os.open(os.path.join(mnt.encode(), name), os.O_CREAT | os.O_WRONLY)
os.write(fd, b"ours\n")
req = urllib.request.Request(url + "/" + urllib.parse.quote(name), data=b"theirs\n",
                             method="PUT")
urllib.request.urlopen(req).read()
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print(errno.errorcode[e.errno])
print("now:", open(os.path.join(mnt.encode(), name), "rb").read())
EOF
}
dmesg -c >/dev/null
out=$(conflict_py "b'L' * 250" 2>&1)
diag "$out"
check "a 250-byte name whose key S3 got meanwhile: close fails with ESTALE" grep -q '^ESTALE' <<<"$out"
check "... and the name shows S3's object" grep -q "now: b'theirs\\\\n'" <<<"$out"
kept=$(ls "$CACHE-w/.s3cachefs/conflicts/" 2>/dev/null | grep LLLL | head -n 1)
check "ours is kept under .s3cachefs/conflicts, its name cut to NAME_MAX (${#kept} bytes)" \
	bash -c "[ -n '$kept' ] && [ ${#kept} -le 255 ] && grep -qx ours '$CACHE-w/.s3cachefs/conflicts/$kept'"
check "... naming the whole path in its xattr" python3 -c "import os, sys
sys.exit(os.getxattr('$CACHE-w/.s3cachefs/conflicts/$kept', 'trusted.s3cachefs.conflict') != b'L' * 250)"
out=$(conflict_py "b'esc\\nFORGED-LINE \\x1b[31mred'" 2>&1)
diag "$out"
check "a name with a newline and ESC: the conflict is reported (ESTALE)" grep -q '^ESTALE' <<<"$out"
log=$(dmesg -S)
check "the kernel log names it escaped (esc\\\\nFORGED-LINE \\\\e[31m)" \
	grep -qF 'esc\nFORGED-LINE \e[31mred' <<<"$log"
check_fails "no log line of its own starts with the rest of the name" \
	grep -Eq '^(\[[ 0-9.]+\] )?FORGED-LINE' <<<"$log"
check_fails "no ESC byte reaches the kernel log" grep -q $'\x1b' <<<"$log"
tap_done
