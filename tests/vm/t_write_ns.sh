#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_write_ns: names on a writable mount. mkdir puts a "dir/" marker object
# (so an empty directory persists; mkdir -p too); rmdir removes an empty
# one (ENOTEMPTY while S3 lists anything in it); unlink deletes the object;
# rename of a file is a copy and a delete in S3 and one rename here: the
# checkpoint pattern save(tmp); rename(tmp, final) leaves final with the
# new bytes and no tmp, and a reader looping over final meanwhile always
# finds it (old or new bytes, never ENOENT); the copy is conditional on
# the version this node has, so a renamed file never shows bytes of
# another version than its name's; a file never uploaded is
# renamed here only and uploaded under its new name; a directory's rename
# is EXDEV, so mv copies it. What deletes an object in S3 needs
# allow_delete (EPERM without it), except a file never uploaded; link is
# EPERM. chmod and chown to what a name already has succeed (shutil.copy),
# to anything else EPERM.
# timeout: 600
. "$(dirname "$0")/../lib/common.sh"
test_init write_ns
plan 54

OPTS="cache=$CACHE,fetch_timeout=60,meta_ttl=3600"
printf 'old checkpoint\n' >"$WORK/old"
s3_put "$BUCKET" ckpt/final.pt "$WORK/old"
s3_put "$BUCKET" keep.txt "$WORK/old"

s3_has() {	# KEY: it exists
	s3_get "$BUCKET" "$1" "$WORK/got" 2>/dev/null
}
errname() {	# CODE: the errno name python CODE fails with, or "ok"
	python3 -c "import os, errno, sys
try:
    exec(sys.argv[1])
    print('ok')
except OSError as e: print(errno.errorcode[e.errno])" "$1"
}
export -f s3_has

check "module loads" load_module
check_sh "daemon starts" start_daemon

# Without allow_delete: nothing that deletes an object in S3.
check "writable mount without allow_delete" mount_s3 "$BUCKET" "$MNT" "$OPTS,writable"
is "$(errname "os.unlink('$MNT/keep.txt')")" EPERM "unlink of an object: EPERM"
is "$(errname "os.rename('$MNT/keep.txt', '$MNT/moved.txt')")" EPERM \
	"rename of an object: EPERM"
check "... and the object is still there" s3_is keep.txt "$WORK/old"
is "$(errname "
fd = os.open('$MNT/scratch', os.O_CREAT | os.O_WRONLY); os.write(fd, b'x')
os.unlink('$MNT/scratch'); os.write(fd, b'y'); os.close(fd)")" ok \
	"a file never uploaded is unlinked while open; its close uploads nothing"
check "... so S3 never has it" bash -c "! s3_has scratch"
check "mkdir works without allow_delete" mkdir "$MNT/made"
check "umount" umount_s3 "$MNT"
check "allow_delete without writable fails the mount" \
	bash -c "! mount -t s3cachefs -o '$OPTS,allow_delete' '$BUCKET' '$MNT' 2>/dev/null"

check "writable,allow_delete mount" mount_s3 "$BUCKET" "$MNT" "$OPTS,writable,allow_delete"
check "mount options show allow_delete" grep -q "$MNT s3cachefs .*writable,allow_delete" /proc/mounts

# Directories.
check "the directory made before persists (its marker)" \
	bash -c "s3_has made/ && [ -d '$MNT/made' ]"
check "mkdir -p a/b/c" mkdir -p "$MNT/a/b/c"
check "... puts a marker for each" bash -c "s3_has a/ && s3_has a/b/ && s3_has a/b/c/"
is "$(ls -A "$MNT/a/b/c" | wc -l)" 0 "a new directory is empty"
is "$(errname "os.mkdir('$MNT/a')")" EEXIST "mkdir of an existing directory: EEXIST"
check "a file in a new directory" bash -c "echo x >'$MNT/a/b/c/f'"
check "... is in S3 under the directory" s3_has a/b/c/f
is "$(errname "os.rmdir('$MNT/a/b/c')")" ENOTEMPTY "rmdir of a directory S3 lists a file in: ENOTEMPTY"
check "rm of the file" rm "$MNT/a/b/c/f"
check "... deletes its object" bash -c "! s3_has a/b/c/f"
check "rmdir of the now empty directory" rmdir "$MNT/a/b/c"
check "... deletes its marker" bash -c "! s3_has a/b/c/"
check "... and the name is gone" bash -c "[ ! -e '$MNT/a/b/c' ] && ! ls '$MNT/a/b' | grep -q ."

# The checkpoint pattern, with a reader looping over the final name.
make_fixture "$WORK/new" 3000000 ns-new >/dev/null
python3 - "$MNT/ckpt/final.pt" "$WORK/reader.out" <<'EOF' &
import os, sys, time
path, out = sys.argv[1], sys.argv[2]
old = new = missing = other = 0
end = time.monotonic() + 600
last = False
while time.monotonic() < end and not last:
    # One more read once told to stop: at least one after the rename.
    last = os.path.exists(out + ".stop")
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data == b"old checkpoint\n":
            old += 1
        elif len(data) == 3000000:
            new += 1
        else:
            other += 1
    except FileNotFoundError:
        missing += 1
open(out, "w").write(f"{old} {new} {missing} {other}\n")
EOF
reader=$!
sleep 1
check "save(tmp): the new checkpoint written and closed" \
	cp "$WORK/new" "$MNT/ckpt/.final.pt.tmp"
check "rename(tmp, final)" mv "$MNT/ckpt/.final.pt.tmp" "$MNT/ckpt/final.pt"
sleep 1
touch "$WORK/reader.out.stop"
wait "$reader"
read -r r_old r_new r_missing r_other <"$WORK/reader.out"
diag "reader: $r_old old, $r_new new, $r_missing missing, $r_other other"
is "$r_missing $r_other" "0 0" "the reader always found final.pt, old or new, never anything else"
check "the reader saw the new checkpoint" test "$r_new" -gt 0
check "S3 has the new bytes under final.pt" s3_is ckpt/final.pt "$WORK/new"
check "... and no tmp" bash -c "! s3_has ckpt/.final.pt.tmp"
check "the mount reads the new bytes" cmp "$MNT/ckpt/final.pt" "$WORK/new"

# A file never uploaded, renamed while open: uploaded under its new name.
is "$(errname "
fd = os.open('$MNT/draft', os.O_CREAT | os.O_WRONLY); os.write(fd, b'draft\n')
os.rename('$MNT/draft', '$MNT/published'); os.close(fd)")" ok \
	"rename of a file being written for the first time"
printf 'draft\n' >"$WORK/draft"
check "S3 has it under the new name only" bash -c \
	"s3_is published '$WORK/draft' && ! s3_has draft"

# A rename of a version S3 no longer has: the copy is refused on its
# source's ETag (so this node's cached bytes of the old version are never
# given the new version's name and ETag), the name is looked up again, and
# the VFS's retry renames S3's version.
check "keep.txt read once (this node caches its version)" cmp "$MNT/keep.txt" "$WORK/old"
# The destination holds the same bytes (the same ETag) as the version this
# node has: a refused copy must not pass for our own earlier rename, whose
# delete of the source would lose the other writer's version.
s3_put "$BUCKET" kept.txt "$WORK/old"
printf 'changed elsewhere\n' >"$WORK/changed"
s3_put "$BUCKET" keep.txt "$WORK/changed"
check "rename of an object changed in S3 since it was read" \
	mv "$MNT/keep.txt" "$MNT/kept.txt"
check "... the first copy was refused on the source's ETag (412)" \
	grep -q "COPY s3://$BUCKET/kept.txt: HTTP 412" "$DAEMON_LOG"
check "... S3 has S3's version under the new name, nothing under the old" \
	bash -c "s3_is kept.txt '$WORK/changed' && ! s3_has keep.txt"
check "... and so does the mount (not the bytes cached here)" \
	cmp "$MNT/kept.txt" "$WORK/changed"

# Directories move by copy; links do not exist.
mkdir -p "$MNT/src" && echo one >"$MNT/src/one"
is "$(errname "os.rename('$MNT/src', '$MNT/dst')")" EXDEV "rename of a directory: EXDEV"
check "mv of a directory copies it" mv "$MNT/src" "$MNT/dst"
check "... S3 has it under the new name, not the old" bash -c \
	"s3_has dst/one && ! s3_has src/one && ! s3_has src/"
is "$(errname "os.link('$MNT/published', '$MNT/hard')")" EPERM "link: EPERM"

# Modes and owners come from the mount: setting the ones a name has is a
# no-op that succeeds (cp -p, shutil.copy), any other is EPERM.
echo data >"$WORK/plain" && chmod 0644 "$WORK/plain"
check "shutil.copy (data, then the same mode) into the mount" \
	python3 -c "import shutil; shutil.copy('$WORK/plain', '$MNT/copied.txt')"
check "... S3 has it" s3_is copied.txt "$WORK/plain"
check "chmod to a file's own mode succeeds" chmod 0644 "$MNT/copied.txt"
check "chown to its own owner succeeds" chown "$(stat -c %u:%g "$MNT/copied.txt")" "$MNT/copied.txt"
is "$(errname "os.chmod('$MNT/copied.txt', 0o755)")" EPERM "chmod to another mode: EPERM"
is "$(errname "os.utime('$MNT/copied.txt', (0, 0))")" EPERM \
	"setting the times of an object in S3: EPERM (S3 keeps its own)"
check "chmod of a directory to its own mode succeeds" chmod 0755 "$MNT/dst"
is "$(errname "os.chmod('$MNT/dst', 0o700)")" EPERM "chmod of a directory to another mode: EPERM"
check "touch of a directory succeeds" touch "$MNT/dst"

check "umount" umount_s3 "$MNT"
tap_done
