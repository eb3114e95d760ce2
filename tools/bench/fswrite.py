#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fswrite.py - the writers of the bench's checkpoint phase, on a mount.

    fswrite.py ckpt DIR PORT BUCKET KEYPREFIX FILE...
        write every FILE into DIR at once (one thread each: create, 4 MiB
        writes, fsync, close), as ranks save a sharded checkpoint; then
        wait until S3 (s3rver on 127.0.0.1:PORT, unsigned HEADs) has every
        one as KEYPREFIX<basename> with its size (PORT 0: a local
        filesystem, durable at fsync); prints
        "durable_seconds closed_seconds bytes" (closed: when the last
        close returned; durable: when S3 had the last object, which for a
        system that uploads after close is later). With CKPT_SYNC set (a
        command, e.g. "s3cachectl sync"), it runs on DIR once every writer
        closed, as a job runs it before it exits, and counts in durable.
    fswrite.py creates DIR SIZE THREADS SECONDS
        THREADS threads create SIZE-byte files in DIR (create, write,
        close) until SECONDS have passed; prints "seconds files"
"""
import http.client
import os
import shlex
import subprocess
import sys
import time

import timed

PIECE = 4 << 20


def write_one(src, dst, errors):
    try:
        fi = os.open(src, os.O_RDONLY)
        fo = os.open(dst, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
        off = 0
        while True:
            b = os.pread(fi, PIECE, off)
            if not b:
                break
            os.write(fo, b)
            off += len(b)
        os.fsync(fo)
        os.close(fo)
        os.close(fi)
    except OSError as e:
        errors.append("%s: %s" % (dst, e))


def in_s3(c, bucket, key, size):
    c.request("HEAD", "/%s/%s" % (bucket, key))
    r = c.getresponse()
    r.read()
    return r.status == 200 and r.getheader("Content-Length") == str(size)


def ckpt(d, port, bucket, keyprefix, files):
    errors = []
    t0 = time.monotonic()
    timed.together([lambda f=f: write_one(f, os.path.join(d, os.path.basename(f)), errors)
                    for f in files])
    closed = time.monotonic() - t0
    if errors:
        print("error: " + errors[0])
        return 1
    if os.environ.get("CKPT_SYNC"):
        r = subprocess.run(shlex.split(os.environ["CKPT_SYNC"]) + [d])
        if r.returncode:
            print("error: %s %s exited %d" % (os.environ["CKPT_SYNC"], d, r.returncode))
            return 1
    if not port:	# a local filesystem: durable once fsync'd
        print("%.3f %.3f %d" % (closed, closed, sum(os.path.getsize(f) for f in files)))
        return 0
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    left = list(files)
    deadline = time.monotonic() + 600
    while left and time.monotonic() < deadline:
        left = [f for f in left if not in_s3(c, bucket, keyprefix + os.path.basename(f),
                                              os.path.getsize(f))]
        if left:
            time.sleep(0.05)
    if left:
        print("error: not in S3 after 600 s: " + ", ".join(left))
        return 1
    durable = time.monotonic() - t0
    print("%.3f %.3f %d" % (durable, closed, sum(os.path.getsize(f) for f in files)))
    return 0


def creates(d, size, threads, seconds):
    body = os.urandom(size)

    def one(_, k, n):
        fd = os.open(os.path.join(d, "%d-%d" % (k, n)), os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, body)
        os.close(fd)

    return timed.report(*timed.run(threads, seconds, one))


def main():
    if sys.argv[1] == "ckpt":
        return ckpt(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6:])
    if sys.argv[1] == "creates":
        return creates(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
