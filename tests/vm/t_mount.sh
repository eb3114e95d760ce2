#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_mount: mount-time behaviour -- no daemon, bad options, the sysfs
# directory, ownership/mode options, remount rules, a read-only filesystem
# (EROFS for every kind of write), a cache that belongs to another bucket,
# s3://BUCKET/PREFIX sources (the scheme in any case), a bucket that does
# not exist (ENOENT) and one we may not list (EACCES).
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
test_init mount
plan 43

opts="cache=$CACHE,fetch_timeout=20"
make_fixture "$WORK/f.bin" 70K >/dev/null
s3_put "$BUCKET" f.bin "$WORK/f.bin"
s3_put "$BUCKET" d/g.bin "$WORK/f.bin"

check "module loads" load_module

# --- no daemon --------------------------------------------------------------
before=$(dmesg | wc -l)
check_fails "mount without a daemon fails" mount -t s3cachefs -o "$opts" "$BUCKET" "$MNT"
check "and nothing is mounted" bash -c "! mountpoint -q '$MNT'"
check "and dmesg says s3cachefsd is not running" \
	bash -c "dmesg | tail -n +$((before + 1)) | grep -q 's3cachefsd is not running'"

check_sh "daemon starts" start_daemon

# --- bad options: each fails and leaves nothing mounted ------------------
bad_mount() {	# DESC OPTIONS [SOURCE]
	local out rc
	out=$(timeout -k 5 60 mount -t s3cachefs -o "$2" "${3:-$BUCKET}" "$MNT" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		umount "$MNT"
		not_ok "$1 is refused" "mount succeeded"
	elif [ $rc = 124 ]; then
		not_ok "$1 is refused" "mount hung"
	elif mountpoint -q "$MNT"; then
		not_ok "$1 is refused" "mount failed but something is mounted"
		umount "$MNT"
	else
		ok "$1 is refused"
	fi
}
mkdir -p /tmp/tmpfs-cache
mount -t tmpfs tmpfs /tmp/tmpfs-cache
bad_mount "missing cache=" "fetch_timeout=20"
bad_mount "chunk=3M (not a power of two)" "$opts,chunk=3M"
bad_mount "chunk=32K (below 64K)" "$opts,chunk=32K"
bad_mount "chunk=128M (above 64M)" "$opts,chunk=128M"
bad_mount "an unknown option" "$opts,bogus=1"
bad_mount "a cache on tmpfs" "cache=/tmp/tmpfs-cache"
bad_mount "a cache directory that does not exist" "cache=$CACHE/does/not/exist"
bad_mount "a relative cache path" "cache=relative/dir"
bad_mount "fetch_timeout=0" "$opts,fetch_timeout=0"
bad_mount "file_mode with non-permission bits" "$opts,file_mode=0100644"
bad_mount "a bucket name with a bad character" "$opts" "Bad_Bucket!"
bad_mount "a prefix with a .. component" "$opts" "$BUCKET:a/../b/"
umount /tmp/tmpfs-cache

# --- a good mount -----------------------------------------------------------
if mount_s3 "$BUCKET" "$MNT" "$opts,uid=1234,gid=2345,file_mode=0440,dir_mode=0550"; then
	ok "mount with uid/gid/file_mode/dir_mode"
else
	not_ok "mount with uid/gid/file_mode/dir_mode"
fi
check "findmnt shows a read-only s3cachefs" \
	bash -c "findmnt -n -o FSTYPE,OPTIONS '$MNT' | grep -Eq '^s3cachefs +ro(,|$)'"
id=$(mnt_id "$MNT" 2>/dev/null)
missing=
for f in chunk_hits chunk_misses fetches fetch_bytes fetch_errors fetch_timeouts \
		lookups lists stale read_retries fetch_latency \
		fetch_timeout_ms meta_ttl_ms readahead_kb; do
	[ -r "/sys/fs/s3cachefs/$id/$f" ] || missing+=" $f"
done
is "$missing" "" "/sys/fs/s3cachefs/<MAJ:MIN>/ has every counter and knob"
is "$(mnt_stat fetch_timeout_ms)" 20000 "fetch_timeout_ms reflects fetch_timeout=20"
check "the knobs are writable" bash -c "mnt_set readahead_kb 512 && [ \"\$(mnt_stat readahead_kb)\" = 512 ] &&
	mnt_set meta_ttl_ms 7000 && [ \"\$(mnt_stat meta_ttl_ms)\" = 7000 ]"
is "$(timeout 30 stat -c '%u %g %a' "$MNT/f.bin" 2>&1)" "1234 2345 440" "files carry uid, gid and file_mode"
is "$(timeout 30 stat -c '%u %g %a' "$MNT/d" 2>&1)" "1234 2345 550" "directories carry uid, gid and dir_mode"

# --- read-only: every kind of write gets EROFS -------------------------------
erofs() {	# DESC CMD...
	local out
	mountpoint -q "$MNT" || { not_ok "$1: EROFS" "not mounted"; return; }
	out=$(timeout -k 5 30 "${@:2}" 2>&1)
	if [ $? = 0 ]; then
		not_ok "$1: EROFS" "it succeeded"
	elif grep -q 'Read-only file system' <<<"$out"; then
		ok "$1: EROFS"
	else
		not_ok "$1: EROFS" "$out"
	fi
}
erofs "creating a file" touch "$MNT/new"
erofs "writing an existing file" bash -c "echo x >>'$MNT/f.bin'"
erofs "mkdir" mkdir "$MNT/newdir"
erofs "unlink" rm -f "$MNT/f.bin"
erofs "rename" mv "$MNT/f.bin" "$MNT/g.bin"
erofs "chmod" chmod 600 "$MNT/f.bin"
# mount(8) may apply "rw" to the mount only (the superblock stays read-only):
# either the remount fails or writes still fail with EROFS afterwards.
if mount -o remount,rw "$MNT" 2>/dev/null; then
	check "remount read-write leaves it read-only (EROFS)" \
		bash -c "! touch '$MNT/after-remount' 2>&1 && touch '$MNT/after-remount' 2>&1 | grep -q 'Read-only file system'"
else
	ok "remount read-write is refused"
fi
check "remount with a new fetch_timeout is allowed" \
	bash -c "mount -o remount,fetch_timeout=9 '$MNT' && [ \"\$(mnt_stat fetch_timeout_ms)\" = 9000 ]"
check_fails "remount with another cache= is refused" mount -o "remount,cache=$CACHE-other" "$MNT"

check "umount" umount_s3 "$MNT"
check "its sysfs directory is gone" bash -c "[ ! -e '/sys/fs/s3cachefs/$id' ]"

# --- the cache is tied to its bucket ---------------------------------------
s3_mb "$BUCKET-other" 2>/dev/null
bad_mount "a cache that belongs to another bucket" "$opts" "$BUCKET-other"

# --- s3://BUCKET/PREFIX sources, the scheme in any case --------------------
for scheme in s3 S3; do
	check "a source $scheme://BUCKET/PREFIX mounts the prefix" bash -c "
		rm -rf '$CACHE-$scheme' && mkdir -p '$CACHE-$scheme' &&
		mount -t s3cachefs -o 'cache=$CACHE-$scheme,fetch_timeout=20' \
			'$scheme://$BUCKET/d' '$MNT' || exit 1
		cmp '$MNT/g.bin' '$WORK/f.bin'; rc=\$?; umount '$MNT'; exit \$rc"
done

# --- a bucket that does not exist, one we may not list ---------------------
mount_errno() {	# SOURCE: the errno name mount(2) fails with, or "ok"
	rm -rf "$CACHE-new" && mkdir -p "$CACHE-new" &&
	python3 -c "import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.mount(sys.argv[1].encode(), sys.argv[2].encode(), b's3cachefs', 0,
               sys.argv[3].encode())
print('ok' if r == 0 else errno.errorcode[ctypes.get_errno()])" \
		"$1" "$MNT" "cache=$CACHE-new,fetch_timeout=20"
	mountpoint -q "$MNT" && umount "$MNT"
}
before=$(dmesg | wc -l)
is "$(mount_errno "nosuch-$BUCKET")" ENOENT "a bucket that does not exist: the mount fails with ENOENT"
check "... and the kernel's message names it" bash -c \
	"dmesg | tail -n +$((before + 1)) | grep -q 'bucket nosuch-$BUCKET does not exist'"
stop_daemon
start_stranger() { local S3_AK=NOBODY; start_daemon; }
check_sh "a daemon whose access key the server does not know starts" start_stranger
before=$(dmesg | wc -l)
is "$(mount_errno "$BUCKET")" EACCES "a bucket we may not list: the mount fails with EACCES"
check "... and the kernel's message says so" bash -c \
	"dmesg | tail -n +$((before + 1)) | grep -q 'bucket $BUCKET: access denied'"
stop_daemon
tap_done
