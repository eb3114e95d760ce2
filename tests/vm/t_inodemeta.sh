#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_inodemeta: a listed, uncached lower file costs no block on the cache
# disk (ext4, 256-byte inodes): its metadata (size, mtime, ETag) is one
# compact xattr that fits in the inode. Files of an older cache (one xattr
# each for ETag, mtime and size) still read right, and the daemon's next
# LOOKUP rewrites them in the compact form, giving the external xattr block
# back.
# Mounts with nodir_index: the lower files a listing makes per object.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init inodemeta
plan 11

for f in x y z; do
	make_fixture "$WORK/$f" 200K "inodemeta-$f" >/dev/null
	s3_put "$BUCKET" "$f.bin" "$WORK/$f"
done
xnames() {	# FILE -> its trusted.s3cachefs.* names, sorted
	python3 -c 'import os, sys
print(" ".join(sorted(n for n in os.listxattr(sys.argv[1]) if n.startswith("trusted.s3cachefs."))))' "$1"
}
# FILE ETAG MTIME SIZE: the metadata as a cache written before the compact
# form has it.
old_format() {
	python3 -c 'import os, sys
f, etag, mtime, size = sys.argv[1:]
for n in os.listxattr(f):
	if n.startswith("trusted.s3cachefs."):
		os.removexattr(f, n)
os.setxattr(f, "trusted.s3cachefs.etag", etag.encode())
os.setxattr(f, "trusted.s3cachefs.mtime", mtime.encode())
os.setxattr(f, "trusted.s3cachefs.size", size.encode())' "$@"
}

check "module loads" load_module
check_sh "daemon starts" start_daemon
check_sh "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30,meta_ttl=3600,nodir_index"
is "$(timeout 60 ls "$MNT" | tr '\n' ' ')" "x.bin y.bin z.bin " "the root lists"
diag "cache fs: $(df -T "$CACHE" | tail -n 1 | awk '{print $2}'), inode size $(tune2fs -l "$(df "$CACHE" | tail -n 1 | awk '{print $1}')" 2>/dev/null | awk '/^Inode size:/ {print $3}')"
diag "listed, uncached x.bin: st_blocks $(stat -c %b "$CACHE/x.bin"), xattrs: $(xnames "$CACHE/x.bin")"
is "$(stat -c %b "$CACHE/x.bin")" 0 "a listed, uncached lower file has no blocks (metadata in the inode)"
check "x.bin reads right" cmp "$MNT/x.bin" "$WORK/x"
check "umount" umount_s3 "$MNT"

# y and z as an older cache wrote them; y gets a block for its xattrs.
old_format "$CACHE/y.bin" "\"$(md5sum "$WORK/y" | cut -c1-32)\"" 1700000000 $((200 << 10))
old_format "$CACHE/z.bin" "\"$(md5sum "$WORK/z" | cut -c1-32)\"" 1700000000 $((200 << 10))
diag "old format z.bin: st_blocks $(stat -c %b "$CACHE/z.bin"), xattrs: $(xnames "$CACHE/z.bin")"
check_sh "mount again" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30,meta_ttl=0,nodir_index"
check "an old-format file reads right" cmp "$MNT/y.bin" "$WORK/y"
# meta_ttl=0: the stat LOOKUPs z.bin; the daemon keeps it and migrates it.
stat "$MNT/z.bin" >/dev/null
is "$(xnames "$CACHE/z.bin") blocks=$(stat -c %b "$CACHE/z.bin")" \
	"trusted.s3cachefs.meta blocks=0" "its next LOOKUP rewrites an old-format file compactly, in the inode"
check "and it reads right" cmp "$MNT/z.bin" "$WORK/z"
tap_done
