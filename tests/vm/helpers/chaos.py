#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""chaos.py - random verified reads of a mount while its objects change.

    chaos.py MNT BUCKET_URL STATE_DIR SECONDS     (S3CFS_CHAOS_INIT=1: only
                                                  PUT version 0 of each key)

The objects are KEYS keys; version v of key k is a deterministic byte
stream (chunks of SHA-256 of "k:v:block"), so any range of any version can
be computed. A writer thread PUTs a new version of a random key every few
seconds (to BUCKET_URL, a fake S3 without authentication); READERS threads
open keys and read them by pread, sequential read or mmap, checking each
read against every version the key has had:

  wrong   a read whose bytes are no version's bytes at that range, or
          that returned fewer bytes than asked without an error next (a
          short read counts as the error it stopped at)
  mixed   an open whose reads are of two versions
  hung    a read still running WATCHDOG seconds after it started
  newer   reads shown to be of a version PUT during the run
  errors  a failed read other than ESTALE (or SIGBUS through a mapping:
          a mapped read runs in a child process, which SIGBUS may end)

Prints "name: value" lines at the end; exit 0 when it ran to the end.
"""
import errno
import hashlib
import mmap
import os
import random
import signal
import struct
import sys
import threading
import time
import urllib.request

KEYS = 4
SIZE = 3 << 20
BLOCK = 4096
READERS = 4
WATCHDOG = 150
CACHED = {}


def block(key, ver, b):
    k = (key, ver, b)
    v = CACHED.get(k)
    if v is None:
        h = hashlib.sha256(("%s:%d:%d" % (key, ver, b)).encode()).digest()
        v = (h * (BLOCK // len(h) + 1))[:BLOCK]
        if len(CACHED) < 50000:
            CACHED[k] = v
    return v


def expect(key, ver, off, n):
    out = bytearray()
    b = off // BLOCK
    skip = off - b * BLOCK
    while len(out) < n + skip:
        out += block(key, ver, b)
        b += 1
    return bytes(out[skip:skip + n])


def body(key, ver):
    return b"".join(block(key, ver, b) for b in range(SIZE // BLOCK))


def put(url, key, ver):
    req = urllib.request.Request("%s/%s" % (url, key), data=body(key, ver),
                                 method="PUT")
    urllib.request.urlopen(req, timeout=60).read()


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = dict(reads=0, bytes=0, opens=0, wrong=0, mixed=0, hung=0,
                      errors=0, estale=0, sigbus=0, overwrites=0, newer=0)
        self.notes = []

    def add(self, name, n=1, note=None):
        with self.lock:
            self.c[name] += n
            if note and len(self.notes) < 20:
                self.notes.append(note)


def mapped_reads(fd, ranges):
    """Read ranges through a mapping in a child process (SIGBUS ends it).

    Return: the data read, and whether the child died of SIGBUS.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            mp = mmap.mmap(fd, SIZE, prot=mmap.PROT_READ)
            for off, n in ranges:
                data = mp[off:off + n]
                os.write(w, struct.pack("<Q", len(data)))
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view):]
        finally:
            os._exit(0)
    os.close(w)
    buf = bytearray()
    while True:
        got = os.read(r, 1 << 20)
        if not got:
            break
        buf += got
    os.close(r)
    _, status = os.waitpid(pid, 0)
    out, i = [], 0
    while i + 8 <= len(buf):
        (n,) = struct.unpack_from("<Q", buf, i)
        if i + 8 + n > len(buf):
            break
        out.append(bytes(buf[i + 8:i + 8 + n]))
        i += 8 + n
    bus = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGBUS
    return out, bus


def main():
    mnt, url, state = sys.argv[1], sys.argv[2], sys.argv[3]
    seconds = float(sys.argv[4])
    keys = ["k%d.bin" % i for i in range(KEYS)]
    if os.environ.get("S3CFS_CHAOS_INIT"):
        for k in keys:
            put(url, k, 0)
        print("created %d objects" % len(keys))
        return 0
    versions = {k: [0] for k in keys}   # every version a key has had
    vlock = threading.Lock()
    st = Stats()
    stop = time.monotonic() + seconds
    busy = {}                           # thread -> (start, what)

    def candidates(key):
        with vlock:
            return list(versions[key])

    def check(key, vers, off, data):
        """The versions among vers whose bytes at off are data."""
        return [v for v in vers if expect(key, v, off, len(data)) == data]

    def short_error(fd, off):
        """The error a short read stopped at: the next read reports it."""
        try:
            os.pread(fd, 4096, off)
        except OSError as e:
            return e
        return None

    def reader(tid):
        rnd = random.Random(tid)
        me = threading.current_thread().name
        while time.monotonic() < stop:
            key = rnd.choice(keys)
            path = os.path.join(mnt, key)
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError as e:
                if e.errno != errno.ESTALE:
                    st.add("errors", note="open %s: %s" % (key, e))
                continue
            st.add("opens")
            vers = None                 # versions this open may show
            mode = rnd.choice(["pread", "seq", "mmap"])
            try:
                pos = rnd.randrange(0, SIZE, BLOCK)
                ranges = []
                for _ in range(rnd.randint(1, 8)):
                    if mode == "seq":
                        off, n = pos, rnd.choice([4096, 65536, 1 << 20])
                    else:
                        off = rnd.randrange(0, SIZE - 1)
                        n = rnd.choice([1, 4096, 100000, 1 << 20])
                    n = min(n, SIZE - off)
                    pos = off + n
                    ranges.append((off, n))
                busy[me] = (time.monotonic(), "%s %s %s" % (key, mode, ranges))
                try:
                    if mode == "mmap":
                        datas, bus = mapped_reads(fd, ranges)
                    else:
                        datas, bus = [], False
                        for off, n in ranges:
                            datas.append(os.pread(fd, n, off))
                except OSError as e:
                    datas, bus = [], False
                    err = e
                else:
                    err = None
                finally:
                    busy.pop(me, None)
                if bus:
                    st.add("sigbus")
                for (off, n), data in zip(ranges, datas):
                    st.add("reads")
                    st.add("bytes", len(data))
                    ok = check(key, candidates(key), off, data)
                    if not ok:
                        st.add("wrong", note="%s %s: %d bytes at %d are no version's" % (key, mode, n, off))
                        break
                    both = ok if vers is None else [v for v in ok if v in vers]
                    if not both:
                        st.add("mixed", note="%s %s: versions %s then %s" % (key, mode, vers, ok))
                        break
                    vers = both
                    if 0 not in vers:
                        st.add("newer")
                    if len(data) != n:
                        # Short where it met an error (counted as that
                        # error); a short read without one is wrong.
                        err = err or short_error(fd, off + len(data))
                        if err is None:
                            st.add("wrong", note="%s %s: short read %d of %d at %d" % (
                                key, mode, len(data), n, off))
                        break
                if err is not None:
                    raise err
            except OSError as e:
                if e.errno == errno.ESTALE:
                    st.add("estale")
                else:
                    st.add("errors", note="%s %s: %s" % (key, mode, e))
            finally:
                os.close(fd)

    def writer():
        rnd = random.Random(99)
        while time.monotonic() < stop - 5:
            time.sleep(rnd.uniform(2, 5))
            key = rnd.choice(keys)
            with vlock:
                ver = versions[key][-1] + 1
                # Readable as soon as the PUT may have landed.
                versions[key].append(ver)
            put(url, key, ver)
            st.add("overwrites")

    threads = [threading.Thread(target=reader, args=(i,), name="r%d" % i,
                                daemon=True) for i in range(READERS)]
    threads.append(threading.Thread(target=writer, name="w", daemon=True))
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(1)
        now = time.monotonic()
        for name, (t0, what) in list(busy.items()):
            if now - t0 > WATCHDOG:
                st.add("hung", note="%s: %s running for %d s" % (name, what, now - t0))
                busy.pop(name, None)
        if now > stop + WATCHDOG + 30:
            break
    for n in st.notes:
        print("note:", n)
    for k, v in st.c.items():
        print("%s: %d" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
