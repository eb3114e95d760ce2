#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""putlimit.py - the write limits of the bench's checkpoint phase.

    putlimit.py PORT BUCKET mpu PREFIX PART_MB PARALLEL FILE...
        upload every FILE as PREFIX<basename> by a multipart upload of
        PART_MB parts, PARALLEL parts in flight per file, all files at once
        (CreateMultipartUpload, UploadPart, CompleteMultipartUpload);
        prints "seconds bytes"
    putlimit.py PORT BUCKET puts PREFIX SIZE THREADS SECONDS
        PutObject of SIZE-byte objects PREFIX<n>, THREADS at a time, each
        thread on its own keep-alive connection, until SECONDS have passed;
        prints "seconds objects"

Against s3rver on 127.0.0.1:PORT, unsigned (s3rver lets anonymous
requests through; signing is microseconds per request next to the
server's milliseconds). Python http.client with keep-alive connections:
an exec of curl per request costs more than a small PUT under TCG. The
part bodies are read into memory first, as the daemon reads them from the
cache file.
"""
import http.client
import os
import re
import sys
import threading
import time

import timed


def conn(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=600)


def call(c, method, path, body=None, headers=None):
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError("%s %s: HTTP %d %s" % (method, path, r.status, data[:200]))
    return r, data


def upload(port, bucket, key, path, part, parallel, errors):
    try:
        size = os.path.getsize(path)
        c = conn(port)
        _, data = call(c, "POST", "/%s/%s?uploads" % (bucket, key))
        uid = re.search(rb"<UploadId>([^<]+)</UploadId>", data).group(1).decode()
        c.close()
        nparts = max(1, -(-size // part))
        etags = [None] * nparts
        nxt = [0]
        lock = threading.Lock()

        def worker():
            wc = conn(port)
            fd = os.open(path, os.O_RDONLY)
            try:
                while True:
                    with lock:
                        n = nxt[0]
                        nxt[0] += 1
                    if n >= nparts:
                        return
                    body = os.pread(fd, part, n * part)
                    r, _ = call(wc, "PUT", "/%s/%s?partNumber=%d&uploadId=%s"
                                % (bucket, key, n + 1, uid), body,
                                {"Content-Length": str(len(body))})
                    etags[n] = r.getheader("ETag")
            except Exception as e:  # noqa: BLE001 - reported, not raised
                errors.append("%s part: %s" % (key, e))
            finally:
                os.close(fd)
                wc.close()

        timed.together([worker] * parallel)
        if errors:
            return
        xml = "<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % "".join(
            "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>" % (i + 1, e)
            for i, e in enumerate(etags))
        # A new connection: the server closes one idle for its keep-alive
        # timeout (node's 5 s) while the parts go up, and a request on it
        # then fails with a broken pipe.
        c = conn(port)
        call(c, "POST", "/%s/%s?uploadId=%s" % (bucket, key, uid), xml.encode())
        c.close()
    except Exception as e:  # noqa: BLE001
        errors.append("%s: %s" % (key, e))


def mpu(port, bucket, prefix, part_mb, parallel, files):
    errors = []
    t0 = time.monotonic()
    timed.together([lambda f=f: upload(port, bucket, prefix + os.path.basename(f), f,
                                       part_mb << 20, parallel, errors) for f in files])
    secs = time.monotonic() - t0
    if errors:
        print("error: " + errors[0])
        return 1
    print("%.3f %d" % (secs, sum(os.path.getsize(f) for f in files)))
    return 0


def puts(port, bucket, prefix, size, threads, seconds):
    body = os.urandom(size)

    def one(c, k, n):
        call(c, "PUT", "/%s/%s%d-%d" % (bucket, prefix, k, n), body,
             {"Content-Length": str(size)})

    return timed.report(*timed.run(threads, seconds, one, lambda k: conn(port)))


def main():
    port, bucket, what = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    if what == "mpu":
        return mpu(port, bucket, sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7:])
    if what == "puts":
        return puts(port, bucket, sys.argv[4], int(sys.argv[5]), int(sys.argv[6]),
                    float(sys.argv[7]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
