#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""eofgrow: store through a shared mapping past EOF, then grow the file.

    eofgrow.py FILE HOW [--msync]

FILE (open for writing, its size not a multiple of the page size) is
mapped whole; bytes are stored past EOF in the page that holds EOF (they
are not the file's: POSIX); with --msync the mapping is synced first (the
folio written back, clean, the bytes still in it). Then the file grows by
HOW: "write" (pwrite of 100 bytes a page past EOF), "direct" (an O_DIRECT
pwrite of 4096 bytes at the next multiple of 4096 past EOF), "truncate"
(ftruncate to two pages past EOF) or "falloc" (fallocate mode 0 from EOF,
two pages). Every byte from the old EOF to the write (or the new EOF) must
read as zero: prints "zeros" and exits 0, or the first offset holding
another byte and exits 1. The file is closed (the upload) at the end; a
failed close exits 2.
"""
import ctypes
import mmap
import os
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
LIBC.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
LIBC.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                           ctypes.c_longlong]
PAGE = mmap.PAGESIZE
MS_SYNC = 4


def oserr(what):
    e = ctypes.get_errno()
    return OSError(e, "%s: %s" % (what, os.strerror(e)))


def main():
    path, how = sys.argv[1], sys.argv[2]
    fd = os.open(path, os.O_RDWR)
    size = os.fstat(fd).st_size
    if size % PAGE == 0:
        sys.exit("size %d is a multiple of the page size" % size)
    maplen = size + PAGE - size % PAGE
    addr = LIBC.mmap(None, maplen, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_SHARED, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise oserr("mmap")
    ctypes.memmove(addr + size, b"J" * (maplen - size), maplen - size)
    if "--msync" in sys.argv and LIBC.msync(addr, maplen, MS_SYNC):
        raise oserr("msync")
    LIBC.munmap(addr, maplen)
    if how == "write":
        end = maplen + PAGE
        os.pwrite(fd, b"w" * 100, end)
    elif how == "direct":
        end = (size + 4095) // 4096 * 4096
        buf = mmap.mmap(-1, 4096)
        buf.write(b"d" * 4096)
        dfd = os.open(path, os.O_RDWR | os.O_DIRECT)
        try:
            if os.pwritev(dfd, [buf], end) != 4096:
                sys.exit("short O_DIRECT write")
        finally:
            os.close(dfd)
    elif how == "truncate":
        end = maplen + PAGE
        os.ftruncate(fd, end)
    elif how == "falloc":
        end = maplen + PAGE
        if LIBC.fallocate(fd, 0, size, end - size):
            raise oserr("fallocate")
    else:
        sys.exit("HOW: write, direct, truncate or falloc")
    got = os.pread(fd, end - size, size)
    bad = next((k for k in range(len(got)) if got[k]), None)
    if len(got) != end - size:
        print("short read: %d bytes of %d" % (len(got), end - size))
        bad = -1
    elif bad is not None:
        print("byte %r at %d (EOF was %d)" % (got[bad:bad + 1], size + bad,
                                               size))
    else:
        print("zeros")
    try:
        os.close(fd)
    except OSError as e:
        print("close: %s" % e)
        sys.exit(2)
    sys.exit(0 if bad is None else 1)


if __name__ == "__main__":
    main()
