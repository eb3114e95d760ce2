#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fsx: random data operations on files of a writable s3cachefs mount,
every read compared with a shadow copy, and the object in S3 compared with
it after every upload (fsync, close).

    fsx.py MNT S3DIR SEED OPS [--remount SRC OPTS]

Files f0..f3 (created, or objects already in S3 opened for writing).
Operations: pwrite (random offset and length, holes too), pread and
compare, ftruncate up and down, read through a read-only mapping, writes
through a shared mapping of the open descriptor, fallocate (grow, keep
size, punch a hole, zero a range), stores through a shared mapping into
the page that holds EOF past EOF (xfstests fsx -e: those bytes are not
the file's) followed at once, half of the time, by growth through a write
past EOF, a truncate up or a fallocate (the range read back: zeros, and
S3's object after an fsync), operations that must fail with EFBIG and
change nothing (a truncate, write or fallocate past S3's 5 TiB), fsync
(then S3's object must equal the shadow), close and reopen (O_RDWR: the
object copied up, after an EVICT of its chunks half of the time with
FSX_CTL=s3cachectl; sometimes O_TRUNC), posix_fadvise(DONTNEED) and
drop_caches (reads come from the cache file), and with --remount an
unmount and mount (the files closed first). S3's copy is read from
s3rver's data directory S3DIR. Prints the seed; on the first difference
prints the step, the operation log tail and the first differing offset,
and exits 1.
"""
import ctypes
import errno
import mmap
import os
import random
import subprocess
import sys

MAX = 2 << 20
NFILES = 4
PAGE = mmap.PAGESIZE
OBJECT_MAX = 5 << 40            # S3's largest object: a writable mount's s_maxbytes
SUFFIX = "._S3rver_object"
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 1, 2, 16
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
LIBC.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_RW, MAP_SHARED, MS_SYNC = mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 4


def fallocate(fd, mode, off, n):
    if LIBC.fallocate(fd, mode, ctypes.c_longlong(off), ctypes.c_longlong(n)):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Fsx:
    def __init__(self, mnt, s3dir, seed, remount):
        self.mnt, self.s3dir, self.remount_args = mnt, s3dir, remount
        self.rnd = random.Random(seed)
        self.shadow = [bytearray() for _ in range(NFILES)]
        self.fds = [None] * NFILES
        self.log = []
        self.step = 0
        self.counts = {}

    def path(self, i):
        return os.path.join(self.mnt, "f%d" % i)

    def note(self, what):
        self.log.append("%d: %s" % (self.step, what))
        del self.log[:-20]

    def fail(self, what):
        print("not ok: step %d: %s" % (self.step, what))
        print("\n".join("#   " + x for x in self.log))
        sys.exit(1)

    def compare(self, where, got, want, base=0):
        if got != want:
            n = min(len(got), len(want))
            first = next((k for k in range(n) if got[k] != want[k]), n)
            self.fail("%s: %d bytes, want %d; first difference at offset %d"
                      % (where, len(got), len(want), base + first))

    def fd(self, i):
        if self.fds[i] is None:
            self.fds[i] = os.open(self.path(i), os.O_RDWR | os.O_CREAT)
        return self.fds[i]

    def check_s3(self, i, why):
        with open(os.path.join(self.s3dir, "f%d" % i + SUFFIX), "rb") as f:
            self.compare("S3's f%d after %s" % (i, why), f.read(),
                         bytes(self.shadow[i]))

    def op_write(self, i):
        sh = self.shadow[i]
        off = self.rnd.randrange(0, min(len(sh) + (64 << 10), MAX))
        n = min(self.rnd.choice([1, 7, 512, 4096, 5000, 65536, 200000]),
                MAX - off)
        if n <= 0:
            return
        data = bytes([self.rnd.getrandbits(8)]) * n
        self.note("write f%d %d+%d" % (i, off, n))
        if os.pwrite(self.fd(i), data, off) != n:
            self.fail("short write")
        if off > len(sh):
            sh.extend(bytes(off - len(sh)))
        sh[off:off + n] = data

    def op_read(self, i):
        sh = self.shadow[i]
        off = self.rnd.randrange(0, len(sh) + 4096)
        n = self.rnd.choice([1, 100, 4096, 70000, 300000])
        self.note("read f%d %d+%d" % (i, off, n))
        got = os.pread(self.fd(i), n, off)
        self.compare("read f%d at %d" % (i, off), got, bytes(sh[off:off + n]),
                     off)

    def op_truncate(self, i):
        sh = self.shadow[i]
        size = self.rnd.randrange(0, min(len(sh) * 2 + 8192, MAX))
        self.note("truncate f%d %d" % (i, size))
        os.ftruncate(self.fd(i), size)
        if size < len(sh):
            del sh[size:]
        else:
            sh.extend(bytes(size - len(sh)))

    def op_mapread(self, i):
        sh = self.shadow[i]
        if not sh:
            return
        self.note("mapped read f%d" % i)
        with open(self.path(i), "rb") as f:
            m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
            try:
                got = m[:]
            finally:
                m.close()
        self.compare("mapped read f%d" % i, got, bytes(sh))

    def op_mapwrite(self, i):
        sh = self.shadow[i]
        if not sh:
            return
        m = mmap.mmap(self.fd(i), len(sh))
        try:
            for _ in range(self.rnd.randrange(1, 4)):
                off = self.rnd.randrange(len(sh))
                n = min(self.rnd.choice([1, 100, 4096, 9000]), len(sh) - off)
                data = bytes([self.rnd.getrandbits(8)]) * n
                self.note("mapped write f%d %d+%d" % (i, off, n))
                m[off:off + n] = data
                sh[off:off + n] = data
        finally:
            m.close()

    def op_falloc(self, i):
        sh = self.shadow[i]
        mode = self.rnd.choice([0, FALLOC_FL_KEEP_SIZE,
                                FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                FALLOC_FL_ZERO_RANGE,
                                FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE])
        off = self.rnd.randrange(0, min(len(sh) + (64 << 10), MAX))
        n = min(self.rnd.choice([1, 4096, 5000, 65536, 300000]), MAX - off)
        if n <= 0:
            return
        self.note("fallocate f%d mode %d %d+%d" % (i, mode, off, n))
        fallocate(self.fd(i), mode, off, n)
        end = off + n
        if mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE):
            z = min(end, len(sh))
            if off < z:
                sh[off:z] = bytes(z - off)
        if not mode & FALLOC_FL_KEEP_SIZE and end > len(sh):
            sh.extend(bytes(end - len(sh)))

    def op_eofpollute(self, i):
        # Stores past EOF in the mapped page that holds EOF (fsx -e 1).
        sh = self.shadow[i]
        size = len(sh)
        if size % PAGE == 0:
            return
        maplen = size + PAGE - size % PAGE
        fd = self.fd(i)
        addr = LIBC.mmap(None, maplen, PROT_RW, MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            e = ctypes.get_errno()
            raise OSError(e, "mmap: " + os.strerror(e))
        junk = bytes(self.rnd.getrandbits(8) | 1 for _ in range(16))
        junk = (junk * (PAGE // 16 + 1))[:maplen - size]
        self.note("pollute f%d past EOF %d..%d" % (i, size, maplen))
        ctypes.memmove(addr + size, junk, len(junk))
        msynced = self.rnd.random() < 0.3
        if msynced:
            # Written back with the junk in the page: the folio is clean.
            self.note("msync f%d" % i)
            if LIBC.msync(addr, maplen, MS_SYNC):
                e = ctypes.get_errno()
                raise OSError(e, "msync: " + os.strerror(e))
        LIBC.munmap(addr, maplen)
        if msynced:
            self.check_s3(i, "msync")      # an fsync: the upload
        if self.rnd.random() < 0.5:
            return      # later operations grow it, or not
        how = self.rnd.choice(["write", "truncate", "falloc", "zero"])
        new = size + self.rnd.choice([1, 7, 100, PAGE // 2, PAGE, 3 * PAGE,
                                      70000])
        if how == "write":
            off = self.rnd.randrange(size + 1, new + 1)
            data = bytes([self.rnd.getrandbits(8)]) * self.rnd.choice([1, 10, 5000])
            self.note("write f%d %d+%d past the polluted EOF" % (i, off, len(data)))
            if os.pwrite(fd, data, off) != len(data):
                self.fail("short write")
            sh.extend(bytes(off - size))
            sh[off:off + len(data)] = data
        elif how == "truncate":
            self.note("truncate f%d %d past the polluted EOF" % (i, new))
            os.ftruncate(fd, new)
            sh.extend(bytes(new - size))
        else:
            mode = 0 if how == "falloc" else FALLOC_FL_ZERO_RANGE
            off = self.rnd.randrange(max(0, size - 100), size + 1)
            self.note("fallocate f%d mode %d %d+%d past the polluted EOF"
                      % (i, mode, off, new - off))
            fallocate(fd, mode, off, new - off)
            if mode:
                sh[off:size] = bytes(size - off)
            sh.extend(bytes(new - size))
        got = os.pread(fd, maplen - size + PAGE, size)
        self.compare("f%d read past the old EOF after %s" % (i, how), got,
                     bytes(sh[size:maplen + PAGE]), size)
        if self.rnd.random() < 0.3:
            self.op_fsync(i)

    def op_fail(self, i):
        # Past S3's largest object: EFBIG, and nothing changed.
        sh = self.shadow[i]
        fd = self.fd(i)
        big = self.rnd.choice([OBJECT_MAX + 1, 6 << 40, 999999999999999])
        what, fn = self.rnd.choice([
            ("ftruncate %d" % big, lambda: os.ftruncate(fd, big)),
            ("pwrite at %d" % big, lambda: os.pwrite(fd, b"x", big)),
            ("pwrite at %d" % OBJECT_MAX, lambda: os.pwrite(fd, b"x", OBJECT_MAX)),
            ("fallocate %d+4096" % big, lambda: fallocate(fd, 0, big, 4096)),
            ("fallocate keep size %d+4096" % big,
             lambda: fallocate(fd, FALLOC_FL_KEEP_SIZE, big, 4096))])
        self.note("f%d: %s (must fail)" % (i, what))
        try:
            fn()
            self.fail("f%d: %s succeeded past S3's 5 TiB" % (i, what))
        except OSError as e:
            if e.errno != errno.EFBIG:
                self.fail("f%d: %s: %s, want EFBIG" % (i, what, e))
        st = os.fstat(fd)
        if st.st_size != len(sh):
            self.fail("f%d: size %d after a failed %s, want %d"
                      % (i, st.st_size, what, len(sh)))

    def op_fsync(self, i):
        self.note("fsync f%d" % i)
        os.fsync(self.fd(i))
        self.check_s3(i, "fsync")

    def op_reopen(self, i):
        self.note("close f%d" % i)
        os.close(self.fd(i))
        self.fds[i] = None
        self.check_s3(i, "close")
        ctl = os.environ.get("FSX_CTL")
        if ctl and self.rnd.random() < 0.5:
            # Its cached chunks go: the next open copies it up from S3.
            self.note("evict f%d" % i)
            subprocess.run([ctl, "evict", self.path(i)], check=True,
                           stdout=subprocess.DEVNULL)
        if self.rnd.random() < 0.2:
            self.note("open f%d O_TRUNC" % i)
            self.fds[i] = os.open(self.path(i), os.O_RDWR | os.O_TRUNC)
            del self.shadow[i][:]
        else:
            self.note("open f%d" % i)
            self.fd(i)

    def op_drop(self, i):
        if self.rnd.random() < 0.3:
            self.note("drop_caches")
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3")
        else:
            self.note("fadvise DONTNEED f%d" % i)
            os.posix_fadvise(self.fd(i), 0, 0, os.POSIX_FADV_DONTNEED)

    def close_all(self):
        for i in range(NFILES):
            if self.fds[i] is not None:
                os.close(self.fds[i])
                self.fds[i] = None
                self.check_s3(i, "close")

    def op_remount(self, _):
        src, opts = self.remount_args
        self.note("remount")
        self.close_all()
        subprocess.run(["umount", self.mnt], check=True)
        subprocess.run(["mount", "-t", "s3cachefs", "-o", opts, src,
                        self.mnt], check=True)
        for i in range(NFILES):
            with open(self.path(i), "rb") as f:
                self.compare("f%d after the remount" % i, f.read(),
                             bytes(self.shadow[i]))

    def run(self, ops):
        table = [(self.op_write, 40), (self.op_read, 35),
                 (self.op_truncate, 6), (self.op_mapread, 2),
                 (self.op_mapwrite, 3), (self.op_falloc, 2),
                 (self.op_fsync, 1), (self.op_reopen, 1), (self.op_drop, 1),
                 (self.op_eofpollute, 3), (self.op_fail, 0.3)]
        if self.remount_args:
            table.append((self.op_remount, 0.03))
        fns, weights = zip(*table)
        for i in range(NFILES):
            # An object in S3 already (its content), or a new file.
            if os.path.exists(self.path(i)):
                with open(self.path(i), "rb") as f:
                    self.shadow[i] = bytearray(f.read())
        for self.step in range(1, ops + 1):
            fn = self.rnd.choices(fns, weights)[0]
            i = self.rnd.randrange(NFILES)
            try:
                fn(i)
            except OSError as e:
                self.fail("%s: %s" % (fn.__name__, e))
            self.counts[fn.__name__] = self.counts.get(fn.__name__, 0) + 1
        self.close_all()


def main():
    mnt, s3dir, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    remount = None
    if "--remount" in sys.argv:
        k = sys.argv.index("--remount")
        remount = (sys.argv[k + 1], sys.argv[k + 2])
    print("seed %d, %d operations" % (seed, ops))
    f = Fsx(mnt, s3dir, seed, remount)
    f.run(ops)
    print("ok: %d operations; %s; sizes %s" % (
        ops, ", ".join("%s %d" % (k[3:], v) for k, v in sorted(f.counts.items())),
        " ".join(str(len(s)) for s in f.shadow)))


if __name__ == "__main__":
    main()
