#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_direct: O_DIRECT reads, as loaders that bypass the page cache make them
# (GPUDirect Storage / cuFile, DALI's O_DIRECT reader). open(O_DIRECT)
# works (it failed with EINVAL); aligned reads return the object's bytes
# from the cache chunks straight into the buffer, fetching what is missing,
# and leave nothing in our page cache; a read past the end is short, as on
# ext4; an unaligned position, buffer or length fails with EINVAL and
# fetches nothing; a stream of
# small O_DIRECT reads is read ahead (a few FETCHes, not one per read);
# sendfile from an O_DIRECT open works; an O_DIRECT open keeps to one
# version (ESTALE once the object changed and its chunks are gone).
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
test_init direct
plan 27

ODD=1000000			# not a multiple of 512
make_fixture "$WORK/big" 8M big >/dev/null
make_fixture "$WORK/odd" $ODD odd >/dev/null
make_fixture "$WORK/stream" 8M stream >/dev/null
make_fixture "$WORK/v1" 4M v1 >/dev/null
make_fixture "$WORK/v2" 4M v2 >/dev/null
for f in big odd stream; do
	s3_put "$BUCKET" "$f.bin" "$WORK/$f"
done
s3_put "$BUCKET" "ver.bin" "$WORK/v1"

# dio FILE OFF LEN [BUFSHIFT] -> the bytes of one O_DIRECT pread
# on stdout, or "errno NAME" (BUFSHIFT: offset of the buffer in a
# page-aligned mapping).
dio() {
	python3 -c 'import errno, mmap, os, sys
path, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shift = int(sys.argv[4]) if len(sys.argv) > 4 else 0
m = mmap.mmap(-1, n + 4096)
try:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    got = os.preadv(fd, [memoryview(m)[shift:shift + n]], off)
    sys.stdout.buffer.write(m[shift:shift + got])
except OSError as e:
    print("errno", errno.errorcode[e.errno])' "$@"
}
# dio_all FILE BS -> the whole file read with O_DIRECT in BS pieces
dio_all() {
	timeout 120 dd if="$1" iflag=direct bs="$2" status=none
}
resident() {	# FILE -> pages of it in the page cache
	fincore -n -o PAGES -b "$1" 2>/dev/null | tr -d ' '
}

check "module loads" load_module
check_sh "daemon starts" start_daemon
mount_s3_or_end "$BUCKET" "$MNT" "cache=$CACHE,chunk=64K,fetch_timeout=30,meta_ttl=3600"
timeout 60 ls "$MNT" >/dev/null

# --- open, cold and warm reads -------------------------------------------
out=$(python3 -c 'import os, sys
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)); print("ok")
except OSError as e:
    print(e)' "$MNT/big.bin")
is "$out" ok "open(O_RDONLY|O_DIRECT) succeeds"
f0=$(mnt_stat fetch_bytes)
check "a cold O_DIRECT read (1 MiB pieces) returns the object's bytes" \
	cmp <(dio_all "$MNT/big.bin" 1M) "$WORK/big"
f1=$(mnt_stat fetch_bytes)
[ "$f1" -gt "$f0" ]
is "$?" 0 "... fetched from S3 ($((f1 - f0)) bytes)"
is "$(mnt_stat direct_bytes)" $((8 << 20)) "... through the direct path (direct_bytes)"
is "$(resident "$MNT/big.bin")" 0 "... and left nothing in the page cache"
check "a warm O_DIRECT read (4 KiB pieces) returns the same bytes" \
	cmp <(dio_all "$MNT/big.bin" 4k) "$WORK/big"
is "$(mnt_stat fetch_bytes)" "$f1" "... without fetching"

# --- the object's end -------------------------------------------------------
dio "$MNT/odd.bin" 0 $((1 << 20)) >"$WORK/odd.out"
check "a 1 MiB O_DIRECT read of a $ODD-byte object returns exactly it" \
	cmp "$WORK/odd.out" "$WORK/odd"
is "$(dio "$MNT/odd.bin" $((1 << 20)) 4096 | wc -c)" 0 "a read past the end returns 0 bytes"
is "$(dio "$MNT/odd.bin" 999424 4096 | cmp - <(tail -c +999425 "$WORK/odd") && echo same)" \
	same "a read of the last block returns its $((ODD - 999424)) bytes"

# --- alignment: EINVAL, as on ext4, and nothing fetched ---------------------
n0=$(mnt_stat fetches)
is "$(dio "$MNT/stream.bin" 1 4096)" "errno EINVAL" "an unaligned position fails with EINVAL"
is "$(dio "$MNT/stream.bin" 0 4096 1)" "errno EINVAL" "an unaligned buffer fails with EINVAL"
is "$(dio "$MNT/stream.bin" 0 1000)" "errno EINVAL" "an unaligned length fails with EINVAL"
is "$(mnt_stat fetches)" "$n0" "... and nothing was fetched for them"

# --- a stream of small reads is read ahead ----------------------------------
n0=$(mnt_stat fetches)
check "a cold stream of 64 KiB O_DIRECT reads returns the object's bytes" \
	cmp <(dio_all "$MNT/stream.bin" 64k) "$WORK/stream"
n=$(( $(mnt_stat fetches) - n0 ))
# 128 reads of one 64 KiB chunk each: one FETCH per read without readahead.
[ "$n" -le 8 ]
is "$?" 0 "... with $n FETCHes for 128 reads (read ahead)"

# --- the caller's buffer -------------------------------------------------------
# dio_buf MODE FILE -> what a 2 MiB O_DIRECT pread of FILE did: "bytes N
# SHA256" or "errno NAME". ourmap: the buffer is a private writable
# mapping of our own big.bin (faulted in before the chunks are held);
# half: its second MiB is PROT_NONE.
dio_buf() {
	python3 -c 'import ctypes, errno, hashlib, mmap, os, sys
mode, path, ours = sys.argv[1:4]
MB = 1 << 20
if mode == "ourmap":
    mfd = os.open(ours, os.O_RDONLY)
    m = mmap.mmap(mfd, 2 * MB, flags=mmap.MAP_PRIVATE,
                  prot=mmap.PROT_READ | mmap.PROT_WRITE)
else:
    m = mmap.mmap(-1, 2 * MB)
    libc = ctypes.CDLL(None, use_errno=True)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert libc.mprotect(ctypes.c_void_p(addr + MB), MB, 0) == 0
try:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    n = os.preadv(fd, [m], 0)
    print("bytes", n, hashlib.sha256(m[:n]).hexdigest())
except OSError as e:
    print("errno", errno.errorcode[e.errno])' "$@"
}
is "$(dio_buf ourmap "$MNT/stream.bin" "$MNT/big.bin")" \
	"bytes $((2 << 20)) $(head -c $((2 << 20)) "$WORK/stream" | sha256sum | cut -d' ' -f1)" \
	"an O_DIRECT read into a mapping of another file of ours returns the object's bytes"
is "$(dio_buf half "$MNT/stream.bin" "$MNT/big.bin" | cut -d' ' -f1,2)" \
	"$(dio_buf half "$WORK/stream" "$MNT/big.bin" | cut -d' ' -f1,2)" \
	"one into a buffer whose second MiB is PROT_NONE does what it does on ext4"

check "sendfile from an O_DIRECT open returns the object's bytes" \
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
off = 0
while True:
    n = os.sendfile(out, fd, off, 1 << 20)
    if not n:
        break
    off += n
os.close(out)
sys.exit(0 if open(sys.argv[2], "rb").read() == open(sys.argv[3], "rb").read() else 1)' \
	"$MNT/big.bin" "$WORK/sendfile.out" "$WORK/big"

# --- one open, one version ------------------------------------------------------
out=$(timeout 180 python3 - "$MNT/ver.bin" "$WORK/v1" "$WORK/v2" \
	"$REPO/tools/s3cachectl/s3cachectl" "$BUCKET" <<'EOF' 2>&1
import errno, mmap, os, subprocess, sys
path, v1, v2, ctl, bucket = sys.argv[1:6]
v1, v2 = open(v1, "rb").read(), open(v2, "rb").read()
MB = 1 << 20
m = mmap.mmap(-1, MB)
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
n = os.preadv(fd, [m], 0)
print("first MiB is version 1:", n == MB and m[:] == v1[:MB])
subprocess.run(["bash", "-c", 's3_put "$1" ver.bin "$2"',
                "-", bucket, sys.argv[3]], check=True)
r = subprocess.run([ctl, "evict", path], capture_output=True, text=True)
print("evict:", r.returncode, r.stdout.strip(), r.stderr.strip())
try:
    n = os.preadv(fd, [m], MB)
    print("second MiB:", "version 1" if m[:n] == v1[MB:MB + n] else
          "version 2" if m[:n] == v2[MB:MB + n] else "neither")
except OSError as e:
    print("second MiB:", errno.errorcode[e.errno])
fd2 = os.open(path, os.O_RDONLY | os.O_DIRECT)
got = b""
while True:
    n = os.preadv(fd2, [m], len(got))
    if not n:
        break
    got += m[:n]
print("a new open reads version 2:", got == v2)
EOF
)
diag "$out"
check "ver.bin: the O_DIRECT open read version 1" grep -q "version 1: True" <<<"$out"
check "ver.bin: after a change in S3 and eviction it gets ESTALE, not other bytes" \
	grep -q "second MiB: ESTALE" <<<"$out"
check "ver.bin: a new O_DIRECT open reads version 2" grep -q "version 2: True" <<<"$out"
check "umount" umount_s3 "$MNT"
check "module unloads" unload_module
tap_done
