#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_limits: what a writable mount refuses, and bytes that are not
# the file's. Stores through a shared mapping past EOF (in the page that
# holds EOF) never become the file's when it grows, by a write past EOF, an
# O_DIRECT write, a truncate up or a fallocate, whether the folio was
# written back since (msync) or not, on a default and a write-back mount:
# they read as zeros and S3 gets zeros. A truncate, write or fallocate past
# S3's 5 TiB object limit (s_maxbytes) is EFBIG and changes nothing: the
# size stays, the close uploads. A name whose key would exceed S3's 1024
# bytes (the mount's prefix, the path, the name, a directory marker's '/')
# is ENAMETOOLONG at create, mkdir, rename and symlink, and is never
# listed. A file created by an open that cannot write (O_CREAT|O_RDONLY,
# flock(1)'s lock file) is uploaded, empty, at its close.
# timeout: 400
. "$(dirname "$0")/../lib/common.sh"
test_init write_limits
plan 33

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600,writable,allow_delete"
WBOPTS="$OPTS,writeback,upload_delay=3600"
CTL=$REPO/tools/s3cachectl/s3cachectl
EG=$REPO/tests/vm/helpers/eofgrow.py
export CTL EG

base() {	# FILE: 5000 bytes of 'a', written and closed
	head -c 5000 /dev/zero | tr '\0' a >"$1"
}
want() {	# HOW OUT: what eofgrow.py HOW leaves in a file of base()
	python3 -c "import sys
how, out = sys.argv[1], sys.argv[2]
b = b'a' * 5000
if how == 'write': b += bytes(12288 - 5000) + b'w' * 100
elif how == 'direct': b += bytes(8192 - 5000) + b'd' * 4096
else: b += bytes(12288 - 5000)
open(out, 'wb').write(b)" "$1" "$2"
}
grows() {	# NAME HOW [--msync]: base, pollute and grow, zeros read and in S3
	base "$MNT/$1" && python3 "$EG" "$MNT/$1" "$2" $3 &&
		want "$2" "$WORK/want-$1" && s3_is "$1" "$WORK/want-$1"
}
errname() {	# PYTHON: the errno name it fails with, or "ok"
	python3 -c "import os, errno, sys, ctypes
try:
    exec(sys.argv[1])
    print('ok')
except OSError as e: print(errno.errorcode[e.errno])" "$1"
}
export -f base want grows errname

check "module loads" load_module
check_sh "daemon starts" start_daemon
check "writable mount" mount_s3 "$BUCKET" "$MNT" "$OPTS"

# 1. Bytes stored past EOF through a mapping.
for how in write direct truncate falloc; do
	check "mapped store past EOF, then growth by $how: zeros read, zeros in S3" \
		grows "eof-$how" "$how"
done
check "... by truncate after an msync wrote the folio back" \
	grows eof-msync-truncate truncate --msync
check "... by a write after an msync" grows eof-msync-write write --msync

# 2. Past S3's 5 TiB: EFBIG before anything changes.
base "$WORK/small"
limits() {	# PYTHON-OP: it fails with EFBIG, the size stays, the close uploads
	cp "$WORK/small" "$MNT/big.bin" && python3 -c "import os, sys, errno, ctypes
fd = os.open(sys.argv[1], os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
def falloc(mode, off, n):
    if libc.fallocate(fd, mode, ctypes.c_longlong(off), ctypes.c_longlong(n)):
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
try:
    exec(sys.argv[2])
    sys.exit('succeeded')
except OSError as e:
    if e.errno != errno.EFBIG: sys.exit('%s, want EFBIG' % e)
if os.fstat(fd).st_size != 5000: sys.exit('size %d after it' % os.fstat(fd).st_size)
os.close(fd)" "$MNT/big.bin" "$1" && [ "$(stat -c %s "$MNT/big.bin")" = 5000 ] &&
		s3_is big.bin "$WORK/small"
}
export -f limits
check "ftruncate to 999999999999999: EFBIG, the size stays, the close uploads" \
	limits "os.ftruncate(fd, 999999999999999)"
check "ftruncate to 5 TiB + 1: EFBIG (5 TiB is S3's largest object)" \
	limits "os.ftruncate(fd, (5 << 40) + 1)"
is "$(errname "fd = os.open('$MNT/big.bin', os.O_RDWR); os.ftruncate(fd, 5 << 40); os.ftruncate(fd, 5000); os.close(fd)")" \
	ok "... to 5 TiB exactly is allowed (and back)"
check "pwrite at 5 TiB: EFBIG, nothing changes" limits "os.pwrite(fd, b'x', 5 << 40)"
check "fallocate past 5 TiB: EFBIG, nothing changes" limits "falloc(0, 5 << 40, 4096)"

# 4. Keys over S3's 1024 bytes. D/D/D/D is 1003 bytes.
D=$(printf 'd%.0s' {1..250})
P=$D/$D/$D/$D
n() {	# N [C]: a name of N bytes (of C, default n)
	printf "${2:-n}%.0s" $(seq "$1")
}
export D P
export -f n
check "a directory 1003 bytes deep" mkdir -p "$MNT/$P"
is "$(errname "os.mkdir('$MNT/$P/$(n 20 m)')"):$(errname "os.mkdir('$MNT/$P/$(n 19 m)')")" \
	ENAMETOOLONG:ok "mkdir whose marker key would be 1025 bytes: ENAMETOOLONG; 1024: made"
check "... its 1024-byte marker is in S3" s3_is "$P/$(n 19 m)/" /dev/null
ups=$(mnt_stat uploads)
is "$(errname "os.open('$MNT/$P/$(n 21)', os.O_CREAT | os.O_WRONLY)")" \
	ENAMETOOLONG "creating a file whose key would be 1025 bytes: ENAMETOOLONG at the open"
is "$(ls "$MNT/$P" | grep -c "^$(n 21)$") $(mnt_stat uploads)" "0 $ups" \
	"... the name is not listed, and nothing was uploaded"
check "a file whose key is 1024 bytes is created and uploaded" \
	bash -c "printf x >'$MNT/$P/$(n 20)' && printf x >'$WORK/x' && s3_is '$P/$(n 20)' '$WORK/x'"
is "$(errname "os.rename('$MNT/$P/$(n 20)', '$MNT/$P/$(n 21)')")" ENAMETOOLONG \
	"rename to a key of 1025 bytes: ENAMETOOLONG"
check "... the source stays, here and in S3" \
	bash -c "test -e '$MNT/$P/$(n 20)' && s3_is '$P/$(n 20)' '$WORK/x'"

# 6. A file created by an open that cannot write.
check "open(O_CREAT|O_RDONLY) and close: S3 has the empty object" \
	bash -c "python3 -c \"import os; os.close(os.open('$MNT/ro-new', os.O_CREAT | os.O_RDONLY, 0o644))\" &&
		s3_is ro-new /dev/null"
check "flock(1)'s lock file: S3 has it" \
	bash -c "flock '$MNT/lockfile' true && s3_is lockfile /dev/null"
check "umount" umount_s3 "$MNT"

# The same on a write-back mount, and a mount prefix counts in a key.
check "write-back mount" mount_s3 "$BUCKET" "$MNT" "$WBOPTS"
wbgrows() {	# NAME: base, pollute and truncate up, close, sync: zeros in S3
	base "$MNT/$1" && python3 "$EG" "$MNT/$1" truncate && "$CTL" sync "$MNT" &&
		want truncate "$WORK/want-$1" && s3_is "$1" "$WORK/want-$1"
}
export -f wbgrows
check "write-back: mapped store past EOF, truncate up, sync: zeros in S3" wbgrows eof-wb
check "write-back: O_CREAT|O_RDONLY, close, sync: S3 has the empty object" \
	bash -c "python3 -c \"import os; os.close(os.open('$MNT/ro-wb', os.O_CREAT | os.O_RDONLY))\" &&
		'$CTL' sync '$MNT' && s3_is ro-wb /dev/null"
check "umount" umount_s3 "$MNT"
mkdir -p "$CACHE-prefix"
check "posix_meta mount of the prefix pfx/" mount_s3 "$BUCKET:pfx/" "$MNT" \
	"cache=$CACHE-prefix,fetch_timeout=60,meta_ttl=3600,writable,posix_meta"
check "a directory 1003 bytes deep under it" mkdir -p "$MNT/$P"
ups=$(mnt_stat uploads)
is "$(errname "os.symlink('target', '$MNT/$P/$(n 17)')") $(mnt_stat uploads)" "ENAMETOOLONG $ups" \
	"symlink whose key would be 1025 bytes with the prefix: ENAMETOOLONG, nothing uploaded"
is "$(errname "os.open('$MNT/$P/$(n 17)', os.O_CREAT | os.O_WRONLY)"):$(errname "os.close(os.open('$MNT/$P/$(n 16)', os.O_CREAT | os.O_WRONLY))")" \
	ENAMETOOLONG:ok "with the prefix, a 1021-byte path is ENAMETOOLONG at the open, 1020 bytes is made"
tap_done
