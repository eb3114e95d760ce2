#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_posix: modes, owners, mtimes and symlinks in S3 (posix_meta), in
# s3fs-fuse's convention. Uploads and directory markers carry
# x-amz-meta-mode/-uid/-gid/-mtime (mode decimal, with its type bits); on a
# posix_meta mount a file shows its object's, found by one HEAD at its
# first lookup (a listing carries none); chmod, chown and utimes of a file
# S3 has copy the object onto itself with the new headers, conditional on
# the version this node has (ESTALE when it changed); symlink(2) puts an
# object whose body is the target; all of it survives a new mount with an
# empty cache; and s3fs-fuse, mounted on the same bucket, reads what we
# wrote and we read what it wrote.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init write_posix
plan 59

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600,writable,allow_delete"
POPTS="$OPTS,posix_meta"
printf 'plain object\n' >"$WORK/plain"
s3_put "$BUCKET" plain.txt "$WORK/plain"

s3_head() {	# KEY HEADER: the value of HEADER in a HEAD of KEY ("" if none)
	s3_curl -I "$S3_ENDPOINT/$BUCKET/$(s3_urlencode "$1")" 2>/dev/null |
		tr -d '\r' | awk -v h="$(echo "$2" | tr A-Z a-z)" \
		'{ k = tolower($1); sub(/:$/, "", k) } k == h { print $2 }'
}
s3_body() {	# KEY: the object's bytes on stdout
	s3_get "$BUCKET" "$1" "$WORK/body" 2>/dev/null && cat "$WORK/body"
}
st() {	# FORMAT PATH: stat(1) of PATH, not following a symlink
	stat -c "$1" "$2" 2>&1
}
errname() {	# CODE: the errno name python CODE fails with, or "ok"
	python3 -c "import os, errno, shutil, sys
try:
    exec(sys.argv[1])
    print('ok')
except OSError as e: print(errno.errorcode[e.errno])" "$1"
}
remount_empty() {	# a new mount with an empty cache
	umount_s3 "$MNT" && rm -rf "$CACHE" && mkdir -p "$CACHE" &&
		mount_s3 "$BUCKET" "$MNT" "$POPTS"
}
export -f s3_head s3_body st errname

check "module loads" load_module
check_sh "daemon starts" start_daemon

# Without posix_meta: uploads still carry the mount's mode, no symlinks.
check "writable mount without posix_meta" mount_s3 "$BUCKET" "$MNT" "$OPTS"
check "a file written" bash -c "echo one >'$MNT/nometa.txt'"
is "$(s3_head nometa.txt x-amz-meta-mode)" "$((0100644))" \
	"its object has x-amz-meta-mode of the mount's file_mode (S_IFREG|0644)"
is "$(errname "os.symlink('x', '$MNT/nolink')")" EPERM "symlink without posix_meta: EPERM"
check "umount" umount_s3 "$MNT"

check "posix_meta mount" mount_s3 "$BUCKET" "$MNT" "$POPTS"
check "mount options show posix_meta" grep -q "$MNT s3cachefs .*posix_meta" /proc/mounts
is "$(st %a "$MNT/plain.txt")" 644 "an object without headers has the mount's file_mode"

# Files: the mode asked for, the creator, the mtime.
is "$(errname "
fd = os.open('$MNT/f.bin', os.O_CREAT | os.O_WRONLY, 0o640); os.write(fd, b'data'); os.close(fd)")" ok \
	"create with mode 0640"
is "$(st %a "$MNT/f.bin")" 640 "... shows 0640"
is "$(s3_head f.bin x-amz-meta-mode)" "$((0100640))" "... uploaded with x-amz-meta-mode S_IFREG|0640"
is "$(s3_head f.bin x-amz-meta-uid):$(s3_head f.bin x-amz-meta-gid)" "0:0" "... and the creator's uid and gid"
mt=$(s3_head f.bin x-amz-meta-mtime)
check "... and x-amz-meta-mtime, its mtime" test "${mt%%.*}" = "$(st %Y "$MNT/f.bin")"

# chmod, chown, utimes of a file S3 has: SETMETA.
check "chmod 0600 of the uploaded file" chmod 0600 "$MNT/f.bin"
is "$(s3_head f.bin x-amz-meta-mode)" "$((0100600))" "... changes x-amz-meta-mode in S3"
is "$(s3_body f.bin)" data "... and keeps the bytes"
is "$(st %a "$MNT/f.bin")" 600 "... and the file shows it"
check "chown 1234:5678" chown 1234:5678 "$MNT/f.bin"
is "$(s3_head f.bin x-amz-meta-uid):$(s3_head f.bin x-amz-meta-gid)" "1234:5678" "... in S3"
check "touch -d 2020-01-02 03:04:05 UTC" touch -d "2020-01-02 03:04:05 UTC" "$MNT/f.bin"
is "$(s3_head f.bin x-amz-meta-mtime)" 1577934245 "... x-amz-meta-mtime in S3"
is "$(st %Y "$MNT/f.bin")" 1577934245 "... and the file's mtime"
# A LOCAL file's chmod is recorded on its cache file at once (an inode
# read back shows it), a setuid or setgid bit is refused, and a file
# unlinked while open is no longer its name's object.
is "$(errname "
fd = os.open('$MNT/loc.bin', os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, b'x'); os.fchmod(fd, 0o604)
v = os.getxattr('$CACHE/loc.bin', 'trusted.s3cachefs.posix'); print(oct(int.from_bytes(v[4:8], 'little')), end=' ')
os.close(fd)")" "0o100604 ok" "fchmod of a LOCAL file is recorded on its cache file"
is "$(errname "os.chmod('$MNT/loc.bin', 0o4755)")" EPERM "chmod u+s: EPERM"
exec 8<"$MNT/loc.bin"
rm -f "$MNT/loc.bin"
is "$(errname "os.fchmod(8, 0o600)")" ESTALE "fchmod of a file unlinked while open: ESTALE"
exec 8<&-
is "$(s3_body loc.bin)" "" "... and no object came back"
is "$(errname "shutil.copy2('$MNT/f.bin', '$MNT/copy.bin')")" ok "shutil.copy2 (copy, then mode and times)"
is "$(st %a:%Y "$MNT/copy.bin")" "600:1577934245" "... the copy has the mode and the mtime"
is "$(s3_head copy.bin x-amz-meta-mtime)" 1577934245 "... in S3 too"

# Symlinks.
check "ln -s" ln -s ../target/path "$MNT/link"
is "$(readlink "$MNT/link")" ../target/path "readlink"
is "$(s3_body link)" ../target/path "the object's body is the target"
is "$(s3_head link x-amz-meta-mode)" "$((0120777))" "... and its mode S_IFLNK|0777"
is "$(errname "os.symlink('y', '$MNT/f.bin')")" EEXIST "symlink over an existing name: EEXIST"

# Directories: the marker carries the mode.
check "mkdir -m 0700" mkdir -m 0700 "$MNT/d"
is "$(st %a "$MNT/d")" 700 "... shows 0700"
is "$(s3_head d/ x-amz-meta-mode)" "$((040700))" "the marker has x-amz-meta-mode S_IFDIR|0700"
is "$(s3_head d/ content-type)" application/x-directory "... and s3fs's directory content type"

# Objects written by others: their headers are what shows.
printf 'script\n' >"$WORK/script"
s3_curl -o /dev/null -T "$WORK/script" -H "x-amz-meta-mode: $((0100751))" \
	-H 'x-amz-meta-uid: 42' -H 'x-amz-meta-mtime: 1600000000.5' \
	"$S3_ENDPOINT/$BUCKET/other.sh"
s3_curl -o /dev/null -T "$WORK/script" -H "x-amz-meta-mode: $((0104755))" \
	"$S3_ENDPOINT/$BUCKET/suid.sh"
printf 'f.bin' >"$WORK/ltarget"
s3_curl -o /dev/null -T "$WORK/ltarget" -H "x-amz-meta-mode: $((0120777))" \
	"$S3_ENDPOINT/$BUCKET/otherlink"

is "$(remount_empty 2>&1 && echo ok)" ok "a new mount with an empty cache"
is "$(st %a:%u:%g:%Y "$MNT/f.bin")" "600:1234:5678:1577934245" \
	"mode, owner and mtime come back from S3"
is "$(st %F "$MNT/link"):$(readlink "$MNT/link")" "symbolic link:../target/path" \
	"the symlink comes back from S3"
is "$(st %a:%u:%Y "$MNT/other.sh")" "751:42:1600000000" "another writer's headers"
is "$(st %a "$MNT/suid.sh")" 755 "a setuid mode in S3 is shown without the bit"
is "$(readlink "$MNT/otherlink"):$(cat "$MNT/otherlink")" f.bin:data \
	"another writer's symlink is followed"
is "$(cd "$MNT" && find . -type l | sort | tr '\n' ' ')" "./link ./otherlink " \
	"find -type l lists the symlinks"

# A chmod through a descriptor of a version S3 no longer has is refused
# and S3's stays; by name it is the name's object that changes (the VFS
# looks a name up again after ESTALE).
printf 'newer\n' >"$WORK/newer"
exec 7<"$MNT/f.bin"
s3_put "$BUCKET" f.bin "$WORK/newer"
is "$(errname "os.fchmod(7, 0o644)")" ESTALE "fchmod of a file changed in S3: ESTALE"
exec 7<&-
is "$(s3_body f.bin):$(s3_head f.bin x-amz-meta-mode)" newer: "... and S3's version is untouched"
check "chmod 0640 by name" chmod 0640 "$MNT/f.bin"
is "$(s3_body f.bin):$(s3_head f.bin x-amz-meta-mode)" "newer:$((0100640))" \
	"... changes the name's new version, bytes kept"

# s3fs-fuse on the same bucket.
PASSWD=$WORK/passwd-s3fs
echo "$S3_AK:$S3_SK" >"$PASSWD" && chmod 600 "$PASSWD"
S3FS_MNT=$WORK/s3fs
mkdir -p "$S3FS_MNT"
modprobe fuse 2>/dev/null
if command -v s3fs >/dev/null && s3fs "$BUCKET" "$S3FS_MNT" \
	-o passwd_file="$PASSWD",use_path_request_style,url="$S3_ENDPOINT" \
	-o endpoint="$S3_REGION",stat_cache_expire=1 2>"$WORK/s3fs.err" &&
	wait_until mountpoint -q "$S3FS_MNT"; then
	ok "s3fs mounts the bucket"
	is "$(st %a:%u:%g:%Y "$S3FS_MNT/copy.bin")" "600:0:0:1577934245" \
		"s3fs shows our file's mode, owner and mtime"
	is "$(readlink "$S3FS_MNT/link")" ../target/path "s3fs reads our symlink"
	is "$(st %F:%a "$S3FS_MNT/d")" "directory:700" "s3fs reads our directory's mode"
	echo s3fs >"$S3FS_MNT/by-s3fs.txt" && chmod 0751 "$S3FS_MNT/by-s3fs.txt"
	ln -s by-s3fs.txt "$S3FS_MNT/s3fs-link"
	sync
	is "$(remount_empty 2>&1 && echo ok)" ok "we read s3fs's file (a new mount)"
	is "$(st %a "$MNT/by-s3fs.txt"):$(cat "$MNT/by-s3fs.txt")" 751:s3fs "... with its mode"
	is "$(readlink "$MNT/s3fs-link"):$(cat "$MNT/s3fs-link")" by-s3fs.txt:s3fs \
		"... and s3fs's symlink"
	fusermount -u "$S3FS_MNT" 2>/dev/null || umount -l "$S3FS_MNT"
else
	diag "s3fs: $(cat "$WORK/s3fs.err" 2>/dev/null)"
	skip_n 7 "s3fs-fuse cannot mount here"
fi

check "umount" umount_s3 "$MNT"
tap_done
