#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_read: the read path on small and edge-sized objects -- nested prefixes,
# 0 and 1 bytes, chunk-1/chunk/chunk+1, several chunks, names with spaces
# and unicode; sizes and mtimes as S3 has them; every byte compared through
# read, pread, mmap, sendfile and splice; the fetch counters (a second read
# and a remount fetch nothing); negative lookups.
# timeout: 900
. "$(dirname "$0")/../lib/common.sh"
test_init read

CHUNK=1048576
declare -A SIZE=(
	["empty"]=0
	["one"]=1
	["chunk-1.bin"]=$((CHUNK - 1))
	["chunk.bin"]=$CHUNK
	["chunk+1.bin"]=$((CHUNK + 1))
	["multi.bin"]=$((3 * CHUNK + 12345))
	["nested/a/b/c/deep.bin"]=102400
	["nested/a/side.txt"]=3000
	["dir with spaces/file name.txt"]=777
	["ünïcödé/日本語.bin"]=4097
	["top level.txt"]=12
)
KEYS=("${!SIZE[@]}")
MODES=(read pread mmap sendfile splice)
plan $((20 + ${#KEYS[@]} * 3 + ${#MODES[@]} * 2))

exp=$WORK/exp
for k in "${KEYS[@]}"; do
	make_fixture "$exp/$k" "${SIZE[$k]}" "$k" >/dev/null
	s3_put "$BUCKET" "$k" "$exp/$k" || echo "s3_put $k failed" >&2
done
vr=$(helper verify-read)
opts="cache=$CACHE,chunk=1M,fetch_timeout=30"

check "module loads" load_module
check_sh "daemon starts" start_daemon
if ! mount_s3 "$BUCKET" "$MNT" "$opts"; then
	not_ok "mount"
	tap_done
fi
ok "mount"

# --- names, sizes, times ------------------------------------------------------
got=$(cd "$MNT" && timeout 120 find . -type f | sed 's|^\./||' | LC_ALL=C sort)
want=$(printf '%s\n' "${KEYS[@]}" | LC_ALL=C sort)
is "$got" "$want" "find lists exactly the objects"
is "$(timeout 60 ls "$MNT" | LC_ALL=C sort | tr '\n' '|')" \
	"chunk+1.bin|chunk-1.bin|chunk.bin|dir with spaces|empty|multi.bin|nested|one|top level.txt|ünïcödé|" \
	"ls of the root shows files and common prefixes"
check "prefixes are directories" bash -c "[ -d '$MNT/nested/a/b/c' ] && [ -d '$MNT/ünïcödé' ]"
for k in "${KEYS[@]}"; do
	is "$(timeout 60 stat -c %s "$MNT/$k" 2>&1)" "${SIZE[$k]}" "size of '$k' (ls -l)"
done
for k in "${KEYS[@]}"; do
	lm=$(s3_curl -I "$S3_ENDPOINT/$BUCKET/$(s3_urlencode "$k")" | tr -d '\r' |
		sed -n 's/^[Ll]ast-[Mm]odified: //p')
	is "$(timeout 60 stat -c %Y "$MNT/$k" 2>&1)" "$(date -d "$lm" +%s 2>&1)" "mtime of '$k' is S3's Last-Modified"
done

# --- every byte -------------------------------------------------------------
for k in "${KEYS[@]}"; do
	is "$(timeout 120 cat "$MNT/$k" | sha256sum | cut -d' ' -f1)" "$(sha256 "$exp/$k")" \
		"cat '$k' | sha256sum"
done
# Through each read path, cold: a fresh cache each time, page cache dropped.
for m in "${MODES[@]}"; do
	umount_s3 "$MNT"
	rm -rf "$CACHE-$m" && mkdir -p "$CACHE-$m"
	drop_caches
	if mount_s3 "$BUCKET" "$MNT" "cache=$CACHE-$m,chunk=1M,fetch_timeout=30"; then
		check "$m: multi.bin matches (cold)" "$vr" "$MNT/multi.bin" "$exp/multi.bin" --mode "$m" --seed 1
		check "$m: chunk+1.bin matches (page cache dropped, NVMe warm)" \
			bash -c "drop_caches && '$vr' '$MNT/chunk+1.bin' '$exp/chunk+1.bin' --mode $m --seed 2"
	else
		not_ok "$m: multi.bin matches (cold)" "mount failed"
		not_ok "$m: chunk+1.bin matches" "mount failed"
	fi
done
umount_s3 "$MNT"
mount_s3 "$BUCKET" "$MNT" "$opts" || echo "remount on $CACHE failed" >&2

# --- counters: data is fetched once ------------------------------------------
readall() {
	local k
	for k in "${KEYS[@]}"; do
		timeout 120 cat "$MNT/$k" >/dev/null || return 1
	done
}
f1=$(mnt_stat fetches)
readall
f2=$(mnt_stat fetches)
is "$f2" "$f1" "a second read of everything fetches nothing (page cache)"
h1=$(mnt_stat chunk_hits)
drop_caches
readall
is "$(mnt_stat fetches)" "$f1" "with the page cache dropped: still no fetch"
h2=$(mnt_stat chunk_hits)
check "... and the chunks come from the NVMe cache (chunk_hits $h1 -> $h2)" test "$h2" -gt "$h1"
umount_s3 "$MNT"
drop_caches
if mount_s3 "$BUCKET" "$MNT" "$opts"; then
	check "after a remount, every file still matches" bash -c '
		for k in "$@"; do
			[ "$(sha256 "$MNT/$k")" = "$(sha256 "'"$exp"'/$k")" ] || { echo "differs: $k"; exit 1; }
		done' _ "${KEYS[@]}"
	is "$(mnt_stat fetches)" 0 "... with no fetch at all"
	is "$(mnt_stat fetch_errors)" 0 "no fetch errors"
else
	skip_n 3 "remount" "mount failed"
fi

# --- a lower read that would block under our locks ---------------------------
# ->readahead and ->read_folio run under our mapping's invalidate_lock and
# try the lower read with IOCB_NOWAIT (kmod/aops.c); the lower filesystem
# refuses one (-EAGAIN) while the range has dirty page cache. Rewrite the
# lower file of multi.bin with its own bytes, buffered (its mtime kept),
# drop our pages of it, and read it: through read() (->readahead) and
# through an MADV_RANDOM mapping (->read_folio). Such a read must be made
# again from the workqueue (read_retries) and return the right bytes.
dirty_read() {	# KEY read|mmap: SHA-256 of KEY read after dirtying its lower file
	python3 - "$CACHE/$1" "$MNT/$1" "$2" <<'EOF'
import hashlib, mmap, os, sys
low, up, mode = sys.argv[1:4]
st = os.stat(low)
fd = os.open(low, os.O_RDWR)
os.pwrite(fd, os.pread(fd, st.st_size, 0), 0)
os.close(fd)
os.utime(low, ns=(st.st_atime_ns, st.st_mtime_ns))
fd = os.open(up, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
if mode == "read":
    data = b"".join(iter(lambda: os.read(fd, 1 << 16), b""))
else:
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    m.madvise(mmap.MADV_RANDOM)
    data = b"".join(m[i:i + 4096] for i in range(0, len(m), 4096))
print(hashlib.sha256(data).hexdigest())
EOF
}
for m in read mmap; do
	r0=$(mnt_stat read_retries)
	is "$(dirty_read multi.bin $m 2>&1)" \
		"$(sha256 "$exp/multi.bin")" "$m with the lower range dirty: the right bytes"
	r1=$(mnt_stat read_retries)
	check "... the lower read was made again from the workqueue (read_retries $r0 -> $r1)" \
		test "$r1" -gt "$r0"
done
sync

# --- negative lookups --------------------------------------------------------
check_fails "a missing name: ENOENT" stat "$MNT/no-such-object"
l1=$(mnt_stat lookups)
check_fails "again: ENOENT" stat "$MNT/no-such-object"
is "$(mnt_stat lookups)" "$l1" "the second negative lookup is answered from the cache"
check_fails "a missing name in a subdirectory: ENOENT" stat "$MNT/nested/a/nope"
tap_done
