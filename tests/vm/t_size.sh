#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_size: the object's size is the lower file's S3CFS_XATTR_SIZE, not its
# i_size. The crash state is made by hand: a lower file extended to the
# next 4 KiB, as the daemon leaves it when it dies between writing the last
# piece (rounded up) and truncating it back. The mount shows the object's
# size and reads exactly its bytes, for a cached file and for one whose
# chunks are fetched afterwards. Files of an older cache (no size xattr)
# still work: one of the right i_size is kept (and gets the xattr), one
# left longer by a crash is renewed by the daemon's next LOOKUP.
# Mounts with nodir_index: the lower files a listing makes per object.
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
test_init size
plan 18

SIZE=100123			# not a multiple of 4 KiB
ROUND=$(( (SIZE + 4095) / 4096 * 4096 ))
for n in 1 2 3 4; do
	make_fixture "$WORK/o$n" $SIZE "size-$n" >/dev/null
	s3_put "$BUCKET" "o$n" "$WORK/o$n"
done
xget() {	# FILE -> the stored size (compact or older form), or "none"
	python3 -c 'import os, struct, sys
try: v = os.getxattr(sys.argv[1], "trusted.s3cachefs.meta")
except OSError: v = None
if v: print(struct.unpack("<Q", v[2:10])[0]); sys.exit()
try: print(os.getxattr(sys.argv[1], "trusted.s3cachefs.size").decode())
except OSError: print("none")' "$1"
}
# FILE: make it a file of an older cache, from before the size was stored:
# one xattr each for ETag and mtime, none for the size.
xdel() {
	python3 -c 'import os, struct, sys
f = sys.argv[1]
v = os.getxattr(f, "trusted.s3cachefs.meta")
mtime = struct.unpack("<q", v[10:18])[0]
e = v[18:]
if v[1] & 1: e = b"\"" + e[:16].hex().encode() + e[16:] + b"\""
os.removexattr(f, "trusted.s3cachefs.meta")
os.setxattr(f, "trusted.s3cachefs.etag", e)
os.setxattr(f, "trusted.s3cachefs.mtime", str(mtime).encode())' "$1"
}
check "module loads" load_module
check_sh "daemon starts" start_daemon
check "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30,meta_ttl=3600,nodir_index"
check "o1 and o4 read right (cached now)" \
	bash -c "cmp '$WORK/o1' '$MNT/o1' && cmp '$WORK/o4' '$MNT/o4'"
is "$(timeout 60 ls "$MNT" | tr '\n' ' ')" "o1 o2 o3 o4 " "the root lists"
is "$(xget "$CACHE/o2")" "$SIZE" "the daemon stores the size on a new lower file"
check "umount" umount_s3 "$MNT"

# The crash state: o1 (cached) and o2 (not cached) left rounded up; o1's
# padding is not even zeros.
truncate -s $ROUND "$CACHE/o1" "$CACHE/o2"
printf 'not the object' | dd of="$CACHE/o1" bs=1 seek=$SIZE conv=notrunc status=none
check "mount again" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30,meta_ttl=3600,nodir_index"
is "$(stat -c %s "$MNT/o1" 2>&1)" "$SIZE" "a cached file left rounded up has the object's size"
check "and reads exactly the object's bytes" cmp "$WORK/o1" "$MNT/o1"
# A mapping shows the whole last page: past the object's end, zeros.
tailbytes() {	# FILE SIZE -> "zeros" or what a mapping shows past SIZE
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
size, page = int(sys.argv[2]), os.sysconf("SC_PAGE_SIZE")
end = (size + page - 1) // page * page
fd = os.open(sys.argv[1], os.O_RDONLY)
addr = libc.mmap(None, end, 1, 1, fd, 0)	# PROT_READ, MAP_SHARED
tail = ctypes.string_at(addr + size, end - size)
print("zeros" if not any(tail) else repr(tail.rstrip(b"\0")))' "$1" "$2"
}
is "$(tailbytes "$MNT/o1" $SIZE)" zeros "a mapping of its last page shows zeros past the object's end"
is "$(stat -c %s "$MNT/o2" 2>&1)" "$SIZE" "an uncached file left rounded up has the object's size"
check "and its fetched chunks read exactly the object's bytes" cmp "$WORK/o2" "$MNT/o2"
check "umount" umount_s3 "$MNT"

# An older cache: no size xattr. o4 has the right i_size (cached), o3 was
# left rounded up by a crash.
xdel "$CACHE/o3"; xdel "$CACHE/o4"
truncate -s $ROUND "$CACHE/o3"
ino4=$(stat -c %i "$CACHE/o4")
# meta_ttl=0: every name is looked up in S3 (LOOKUP) again.
check "mount with meta_ttl=0" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30,meta_ttl=0,nodir_index"
check "an old file left rounded up is renewed: right size and bytes" \
	bash -c "[ \"\$(stat -c %s '$MNT/o3')\" = $SIZE ] && cmp '$WORK/o3' '$MNT/o3'"
check "an old file of the right size reads right" cmp "$WORK/o4" "$MNT/o4"
is "$(stat -c %i "$CACHE/o4") $(xget "$CACHE/o4")" "$ino4 $SIZE" \
	"and is kept (same lower inode), given the size (compact form)"
tap_done
