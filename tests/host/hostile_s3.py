#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# hostile_s3.py - an S3 "server" that attacks its client, for hostile.sh.
# One bucket, any name; what each listing prefix or key does is below.
# Every request is logged (one JSON line) so the test can count them.
#
# Listings (ListObjectsV2, by prefix):
#   nest/     a page of ~7.5 MiB: <a> nested 2.5 million deep
#   big/      a well-formed page of ~9 MiB (3000 entries with a 3 KiB
#             DisplayName each): more than 1000 entries can need
#   ctl/      good.bin, and entries whose ETags hold CR LF or a tab
#   cycle/    IsTruncated forever, tokens A, B, A, B, ... (a cycle)
#   same/     IsTruncated forever, the same token every time
#   endless/  IsTruncated forever, a new token each time, the same keys
#   empty/    IsTruncated forever, a new token each time, no entry
#   grow/     IsTruncated forever, a new token and new keys each time
#   shrink/   a.bin (4 MiB, "v1") and same.bin (4 MiB, "s1")
#   hdr/      get.bin (1 MiB, "v1"), ok.bin (1 MiB, "v1"), listed well
# Objects (HEAD, GET):
#   hdr/crlf.bin   200, ETag "x\rX-Evil: 1" (a CR inside the header line)
#   hdr/esc.bin    200, ETag with an escape sequence (ESC [ 2 J)
#   hdr/get.bin    listed as "v1"; HEAD and GET now say "v2<ESC>[31m"
#   shrink/a.bin   now 1 MiB, "v2": a range past it answers 416 (If-Match
#                  ignored, as s3rver does)
#   shrink/same.bin  now 1 MiB, still "s1" (a server that keeps the
#                  ETag): 416 past it
#   hdr/ok.bin     an object like any other
#   slow.bin       answers after SLOW_S seconds (a daemon that waits)
#
#   hostile_s3.py PORT LOGFILE      (PORT 0: any free port; prints "ready PORT")
import http.server
import json
import re
import sys
import threading
import time
import urllib.parse

MIB = 1 << 20
LOG = None
lock = threading.Lock()
COUNT = {}


def body_of(key, size):
    seed = key.encode()
    out = bytearray()
    i = 0
    while len(out) < size:
        out += b"%s:%08d|" % (seed, i)
        i += 1
    return bytes(out[:size])


# key -> (size, etag as sent in headers)
OBJECTS = {
    "hdr/crlf.bin": (100, '"x\rX-Evil: 1"'),
    "hdr/esc.bin": (100, '"x\x1b[2J"'),
    "hdr/get.bin": (MIB, '"v2\x1b[31m"'),
    "shrink/a.bin": (MIB, '"v2"'),
    "shrink/same.bin": (MIB, '"s1"'),
    "slow.bin": (100, '"v1"'),
    "hdr/ok.bin": (MIB, '"v1"'),
}
SLOW_S = 6


def contents(key, etag, size):
    return ("<Contents><Key>%s</Key><ETag>%s</ETag><Size>%d</Size>"
            "<LastModified>2009-10-12T17:50:30.000Z</LastModified></Contents>"
            % (key, etag, size))


def page(entries, truncated=False, token=None):
    out = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>',
           "<IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false")]
    if token is not None:
        out.append("<NextContinuationToken>%s</NextContinuationToken>" % token)
    out += entries
    out.append("</ListBucketResult>")
    return "".join(out).encode()


def listing(prefix, token):
    n = int(token[1:]) if token and token[1:].isdigit() else 0
    if prefix == "nest/":
        return (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
                + b"<a>" * (2500 * 1000))
    if prefix == "big/":
        owner = "<Owner><ID>1</ID><DisplayName>%s</DisplayName></Owner>" % ("o" * 3072)
        return page([contents("big/k%05d" % i, '"e"', 1)[:-len("</Contents>")]
                     + owner + "</Contents>" for i in range(3000)])
    if prefix == "ctl/":
        return page([contents("ctl/crlf.bin", '"x&#13;&#10;X-Evil: 1"', 10),
                     contents("ctl/good.bin", '"g1"', 10),
                     contents("ctl/tab.bin", '"x&#9;y"', 10)])
    if prefix == "cycle/":
        # Keys that move on (a request counter), tokens that do not.
        with lock:
            COUNT[prefix] = COUNT.get(prefix, 0) + 1
            c = COUNT[prefix]
        return page([contents("cycle/k%06d" % c, '"e"', 1)], True,
                    "B" if token == "A" else "A")
    if prefix == "same/":
        return page([contents("same/k", '"e"', 1)], True, "T")
    if prefix == "endless/":
        return page([contents("endless/k", '"e"', 1)], True, "E%d" % (n + 1))
    if prefix == "empty/":
        return page([], True, "M%d" % (n + 1))
    if prefix == "grow/":
        return page([contents("grow/k%06d" % n, '"e"', 1)], True, "G%d" % (n + 1))
    if prefix == "shrink/":
        return page([contents("shrink/a.bin", '"v1"', 4 * MIB),
                     contents("shrink/same.bin", '"s1"', 4 * MIB)])
    if prefix == "hdr/":
        return page([contents("hdr/get.bin", '"v1"', MIB),
                     contents("hdr/ok.bin", '"v1"', MIB)])
    return page([])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def record(self, status):
        entry = {"method": self.command, "path": self.path, "status": status,
                 "headers": {k.lower(): v for k, v in self.headers.items()}}
        with lock, open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def raw(self, status, headers, body=b""):
        """Headers written as given, bytes and all (no checks)."""
        self.record(status)
        reason = {200: "OK", 206: "Partial Content", 404: "Not Found",
                  416: "Requested Range Not Satisfiable"}.get(status, "X")
        out = b"HTTP/1.1 %d %s\r\n" % (status, reason.encode())
        for k, v in headers:
            out += k.encode() + b": " + v.encode("latin-1") + b"\r\n"
        out += b"Content-Length: %d\r\n\r\n" % len(body)
        self.wfile.write(out)
        if self.command != "HEAD":
            self.wfile.write(body)

    def key(self):
        u = urllib.parse.urlsplit(self.path)
        parts = urllib.parse.unquote(u.path).split("/", 2)
        return ((parts[2] if len(parts) > 2 else ""),
                urllib.parse.parse_qs(u.query, keep_blank_values=True))

    def do_HEAD(self):
        key, _ = self.key()
        if key not in OBJECTS:
            return self.raw(404, [])
        size, etag = OBJECTS[key]
        self.record(200)
        self.wfile.write(b"HTTP/1.1 200 OK\r\nETag: " + etag.encode("latin-1")
                         + b"\r\nContent-Length: %d\r\n\r\n" % size)

    def do_GET(self):
        key, q = self.key()
        if key == "":
            body = listing(q.get("prefix", [""])[0],
                           q.get("continuation-token", [None])[0])
            return self.raw(200, [("Content-Type", "application/xml")], body)
        if key not in OBJECTS:
            return self.raw(404, [])
        size, etag = OBJECTS[key]
        if key == "slow.bin":
            self.record("waiting")	# logged now: the test acts meanwhile
            time.sleep(SLOW_S)
        data = body_of(key, size)
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range") or "")
        if not m:
            return self.raw(200, [("ETag", etag)], data)
        a, b = int(m.group(1)), min(int(m.group(2)), size - 1)
        if a >= size:
            # If-Match ignored (s3rver): the object is shorter now.
            return self.raw(416, [("Content-Range", "bytes */%d" % size)],
                            b"<Error><Code>InvalidRange</Code>"
                            b"<Message>The requested range is not satisfiable</Message></Error>")
        return self.raw(206, [("ETag", etag),
                              ("Content-Range", "bytes %d-%d/%d" % (a, b, size))],
                        data[a:b + 1])


if __name__ == "__main__":
    LOG = sys.argv[2]
    http.server.ThreadingHTTPServer.request_queue_size = 64
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    srv.daemon_threads = True
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()
