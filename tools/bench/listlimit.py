#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""listlimit.py - the listing limits of the bench's big-directory phase.

    listlimit.py PORT BUCKET dir PREFIX    list PREFIX, paginated, over one
                                           keep-alive connection; prints
                                           "first_page_s total_s keys"
    listlimit.py PORT BUCKET tree PREFIX   list PREFIX's directories, then
                                           each of them, over one connection
                                           in turn and over 8 at once; prints
                                           "best_s seq_s par_s keys dirs"

ListObjectsV2 with delimiter "/" against the server on 127.0.0.1:PORT
(fakes3: no authentication). Python http.client, not curl: an exec of curl
per page costs more than a fakes3 page under TCG.
"""
import html
import http.client
import re
import sys
import threading
import time
import urllib.parse

PARALLEL = 8


def conn(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def listing(c, bucket, prefix, what, first=None):
    """Every match of the regexp WHAT in the pages of PREFIX; FIRST, if
    given, is called once the first page is in."""
    out, token = [], None
    while True:
        q = {"list-type": "2", "prefix": prefix, "delimiter": "/"}
        if token:
            q["continuation-token"] = token
        c.request("GET", "/%s?%s" % (bucket, urllib.parse.urlencode(q)))
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit("HTTP %d" % r.status)
        out += [html.unescape(k.decode()) for k in re.findall(what, body)]
        if first:
            first()
            first = None
        m = re.search(rb"<NextContinuationToken>(.*?)</NextContinuationToken>", body)
        if b"<IsTruncated>true</IsTruncated>" not in body or not m:
            return out
        token = html.unescape(m.group(1).decode())


KEY = rb"<Key>(.*?)</Key>"
PREFIX = rb"<CommonPrefixes><Prefix>(.*?)</Prefix>"


def one_dir(port, bucket, prefix):
    t0 = time.perf_counter()
    at = []
    keys = listing(conn(port), bucket, prefix, KEY,
                   lambda: at.append(time.perf_counter() - t0))
    print("%.6f %.3f %d" % (at[0], time.perf_counter() - t0, len(keys)))


def walk(port, bucket, prefix, threads):
    t0 = time.perf_counter()
    dirs = listing(conn(port), bucket, prefix, PREFIX)
    todo, keys, lock = list(dirs), [0], threading.Lock()

    def worker():
        c = conn(port)
        while True:
            with lock:
                if not todo:
                    return
                d = todo.pop()
            n = len(listing(c, bucket, d, KEY))
            with lock:
                keys[0] += n
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, keys[0], len(dirs)


def tree(port, bucket, prefix):
    seq, n, d = walk(port, bucket, prefix, 1)
    par, n2, _ = walk(port, bucket, prefix, PARALLEL)
    if n2 != n:
        sys.exit("the two walks found %d and %d keys" % (n, n2))
    print("%.3f %.3f %.3f %d %d" % (min(seq, par), seq, par, n, d))


def main():
    if len(sys.argv) != 5 or sys.argv[3] not in ("dir", "tree"):
        sys.exit(__doc__)
    port, bucket, mode, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    (one_dir if mode == "dir" else tree)(port, bucket, prefix)


if __name__ == "__main__":
    main()
