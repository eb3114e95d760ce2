#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fakes3 - a tiny in-memory S3 for what s3rver cannot do.

    fakes3.py PORT MANIFEST.json [--log FILE]

MANIFEST: {"bucket": "NAME", "objects": {"KEY": "TEXT", ...}} (UTF-8 text
bodies; or {"bytes": N, "seed": S}: N pseudo-random bytes from seed S,
one copy in memory for every key that names the same pair). Serves, path-style, on 127.0.0.1:PORT:

  GET /BUCKET?list-type=2  ListObjectsV2: prefix, delimiter, max-keys,
                           start-after, continuation-token, encoding-type=url
                           (keys and prefixes form-encoded); keys in UTF-8
                           byte order, common prefixes and keys counted
                           together against max-keys, as S3 does
  HEAD/GET /BUCKET/KEY     ETag (MD5), Last-Modified, Content-Length;
                           Range: bytes=A-B, A-, -N (206/416); If-Match and
                           If-None-Match (412/304)
  PUT /BUCKET/KEY          replace or add an object (raw body); If-None-Match: *
                           (412 if the key exists) and If-Match ETag (404
                           without the key, 412 for another ETag); no
                           multipart uploads, no CopyObject
  DELETE /BUCKET/KEY       remove it

Unlike s3rver it keeps keys verbatim, so keys such as "a//b", "./x", "../y"
or "" components reach the client exactly as a real S3 would send them. No
authentication is checked. Used by t_badkeys and t_etag.
"""
import bisect
import email.utils
import hashlib
import http.server
import json
import random
import sys
import threading
import time
import urllib.parse
from xml.sax.saxutils import escape

LOCK = threading.Lock()
BUCKET = ""
OBJECTS = {}  # key -> (bytes, etag, mtime)
LOG = None


SORTED = None  # the keys as UTF-8 bytes, sorted; None: to be rebuilt


def put_object(key, data, etag=None):
    global SORTED
    if key not in OBJECTS:
        SORTED = None
    etag = etag or '"%s"' % hashlib.md5(data).hexdigest()
    OBJECTS[key] = (data, etag, int(time.time()))


SHARED = {}  # (bytes, seed) -> (data, etag): bodies many keys share


def manifest_body(v):
    """A manifest value's body and its ETag (None: to be computed)."""
    if isinstance(v, str):
        return v.encode(), None
    k = (int(v["bytes"]), int(v.get("seed", 0)))
    if k not in SHARED:
        data = random.Random(k[1]).randbytes(k[0])
        SHARED[k] = (data, '"%s"' % hashlib.md5(data).hexdigest())
    return SHARED[k]


def drop_object(key):
    global SORTED
    if OBJECTS.pop(key, None) is not None:
        SORTED = None


def list_page(prefix, delim, max_keys, after):
    """One ListObjectsV2 page, under LOCK: ([(name, kind)], truncated).

    Walks the sorted key index from the first key past both `prefix` and
    `after` (bisect), so a page costs its own entries, not the bucket's
    (the benchmark lists directories of 100 000 keys); a common prefix is
    skipped past in one bisect."""
    global SORTED
    if SORTED is None:
        SORTED = sorted(k.encode() for k in OBJECTS)
    p, a, d = prefix.encode(), after.encode(), delim.encode()
    i = bisect.bisect_right(SORTED, a) if a >= p else bisect.bisect_left(SORTED, p)
    items = []
    while i < len(SORTED) and SORTED[i].startswith(p):
        k = SORTED[i]
        j = k.find(d, len(p)) if d else -1
        if j >= 0:
            cp = k[:j + len(d)]
            if cp > a:
                if len(items) == max_keys:
                    return items, True
                items.append((cp.decode(), "prefix"))
            # past every key under this common prefix
            i = bisect.bisect_left(SORTED, cp + b"\xff" * 4, i)
            continue
        if len(items) == max_keys:
            return items, True
        items.append((k.decode(), "key"))
        i += 1
    return items, False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The head and the body go out in two writes: with Nagle, a small body
    # waits for the ACK of the head, which the client delays (40 ms a
    # request on a kept-alive connection, which no real S3 costs).
    disable_nagle_algorithm = True
    server_version = "fakes3"

    def log_message(self, fmt, *args):
        if LOG:
            LOG.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))
            LOG.flush()

    def reply(self, code, body=b"", headers=None, head=False):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and not head:
            self.wfile.write(body)

    def error(self, code, s3code, head=False):
        body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code>"
                "<Message>%s</Message></Error>" % (s3code, s3code)).encode()
        self.reply(code, body, {"Content-Type": "application/xml"}, head)

    def split(self):
        url = urllib.parse.urlsplit(self.path)
        path = url.path[1:]
        bucket, _, key = path.partition("/")
        key = urllib.parse.unquote(key, errors="strict")
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        return urllib.parse.unquote(bucket), key, {k: v[0] for k, v in query.items()}

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    # --- listing -------------------------------------------------------------
    def list_objects(self, q):
        prefix = q.get("prefix", "")
        delim = q.get("delimiter", "")
        max_keys = int(q.get("max-keys", "1000") or 1000)
        after = q.get("start-after", "")
        token = q.get("continuation-token")
        if token:
            after = max(after, urllib.parse.unquote(token), key=str.encode)
        # encoding-type=url: keys and prefixes form-encoded, as S3 does
        # (XML 1.0 cannot carry most control characters).
        url = q.get("encoding-type") == "url"
        enc = (lambda v: urllib.parse.quote_plus(v, safe="/")) if url else (lambda v: v)
        with LOCK:
            items, truncated = list_page(prefix, delim, max_keys, after)
            out = ['<?xml version="1.0" encoding="UTF-8"?>',
                   '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
                   "<Name>%s</Name><Prefix>%s</Prefix><MaxKeys>%d</MaxKeys>"
                   % (escape(BUCKET), escape(enc(prefix)), max_keys)]
            if url:
                out.append("<EncodingType>url</EncodingType>")
            if delim:
                out.append("<Delimiter>%s</Delimiter>" % escape(enc(delim)))
            out.append("<KeyCount>%d</KeyCount>" % len(items))
            out.append("<IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false"))
            if truncated:
                out.append("<NextContinuationToken>%s</NextContinuationToken>"
                           % escape(urllib.parse.quote(items[-1][0], safe="")))
            for v, kind in items:
                if kind == "key":
                    data, etag, mtime = OBJECTS[v]
                    out.append("<Contents><Key>%s</Key><LastModified>%s</LastModified>"
                               "<ETag>%s</ETag><Size>%d</Size><StorageClass>STANDARD"
                               "</StorageClass></Contents>"
                               % (escape(enc(v)), time.strftime("%Y-%m-%dT%H:%M:%S.000Z",
                                                           time.gmtime(mtime)),
                                  escape(etag), len(data)))
            for v, kind in items:
                if kind == "prefix":
                    out.append("<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>"
                               % escape(enc(v)))
            out.append("</ListBucketResult>")
        self.reply(200, "".join(out).encode(), {"Content-Type": "application/xml"})

    # --- objects ---------------------------------------------------------------
    def get_object(self, key, head):
        with LOCK:
            obj = OBJECTS.get(key)
        if obj is None:
            return self.error(404, "NoSuchKey", head)
        data, etag, mtime = obj
        im = self.headers.get("If-Match")
        if im and im.strip() != etag and im.strip() != "*":
            return self.error(412, "PreconditionFailed", head)
        inm = self.headers.get("If-None-Match")
        if inm and inm.strip() == etag:
            return self.reply(304, b"", {"ETag": etag}, head)
        hdr = {"ETag": etag, "Last-Modified": email.utils.formatdate(mtime, usegmt=True),
               "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
        rng = self.headers.get("Range")
        if not rng:
            return self.reply(200, data, hdr, head)
        try:
            unit, _, spec = rng.partition("=")
            a, _, b = spec.partition("-")
            if unit.strip() != "bytes" or "," in spec:
                raise ValueError
            if a == "":
                n = int(b)
                first, last = max(0, len(data) - n), len(data) - 1
            else:
                first = int(a)
                last = int(b) if b else len(data) - 1
                last = min(last, len(data) - 1)
        except ValueError:
            return self.error(400, "InvalidRange", head)
        if first >= len(data) or first > last:
            return self.error(416, "InvalidRange", head)
        hdr["Content-Range"] = "bytes %d-%d/%d" % (first, last, len(data))
        self.reply(206, data[first:last + 1], hdr, head)

    def do_GET(self, head=False):
        bucket, key, q = self.split()
        if not bucket:
            body = ('<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult>'
                    "<Buckets><Bucket><Name>%s</Name></Bucket></Buckets>"
                    "</ListAllMyBucketsResult>" % escape(BUCKET)).encode()
            return self.reply(200, body, {"Content-Type": "application/xml"}, head)
        if bucket != BUCKET:
            return self.error(404, "NoSuchBucket", head)
        if not key:
            if head:
                return self.reply(200, b"", {}, head)
            return self.list_objects(q)
        self.get_object(key, head)

    def do_HEAD(self):
        self.do_GET(head=True)

    def do_PUT(self):
        bucket, key, _ = self.split()
        data = self.body()
        if bucket != BUCKET or not key:
            return self.error(400, "InvalidRequest")
        inm = (self.headers.get("If-None-Match") or "").strip()
        im = (self.headers.get("If-Match") or "").strip()
        with LOCK:
            old = OBJECTS.get(key)
            # Conditional writes, as S3: If-None-Match: * and If-Match ETag.
            if inm == "*" and old is not None:
                code = 412
            elif im and old is None:
                code = 404
            elif im and im != old[1] and '"%s"' % im != old[1]:
                code = 412
            else:
                code = 200
                put_object(key, data)
                etag = OBJECTS[key][1]
        if code == 412:
            return self.error(412, "PreconditionFailed")
        if code == 404:
            return self.error(404, "NoSuchKey")
        self.reply(200, b"", {"ETag": etag})

    def do_DELETE(self):
        bucket, key, _ = self.split()
        with LOCK:
            drop_object(key)
        self.reply(204)


def main():
    global BUCKET, LOG
    if len(sys.argv) < 3:
        sys.exit("usage: fakes3.py PORT MANIFEST.json [--log FILE]")
    port = int(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        manifest = json.load(f)
    if "--log" in sys.argv:
        LOG = open(sys.argv[sys.argv.index("--log") + 1], "a", encoding="utf-8")
    BUCKET = manifest["bucket"]
    for k, v in manifest["objects"].items():
        put_object(k, *manifest_body(v))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    print("fakes3 listening on 127.0.0.1:%d" % port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
