#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# fake_s3.py - a tiny S3 stand-in that misbehaves on purpose, for
# fault_smoke.sh. One bucket; objects are generated; what each key does is
# in OBJECTS below. Every request is logged (one JSON line per request) so
# the test can check what the daemon sent: Range, If-Match, signing
# headers, and which TCP connection (keep-alive) carried it.
#
# Writes (write_smoke.sh): PUT stores an object in memory (ETag: the MD5
# of its bytes, quoted), with If-None-Match: * and If-Match honoured as
# S3 does (412 PreconditionFailed; If-Match on a missing key: 404);
# DELETE; the multipart upload (POST ?uploads, PUT ?partNumber&uploadId,
# POST ?uploadId with S3's checks and its "MD5 of the parts' MD5s-N" ETag,
# DELETE ?uploadId; faults: /_ctl below). Written objects are served by GET and HEAD, before
# the generated ones, and listed with them. A request with a body logs its length and MD5.
# Metadata (posix_smoke.sh): a PUT or CreateMultipartUpload keeps the
# object's x-amz-meta-* and system headers (Content-Type...), which GET and
# HEAD return; CopyObject (PUT with x-amz-copy-source) honours
# x-amz-copy-source-if-match and x-amz-metadata-directive COPY/REPLACE, and
# refuses a copy onto itself without REPLACE, as S3 does.
# Conditional PUTs are atomic (the check and the store under one lock, as
# two nodes racing for a fleet tier lease need). With FAKE_LAST_MODIFIED=1
# in the environment a written object's GET and HEAD carry its
# Last-Modified (the time of its write, to the second, as S3 gives it)
# beside the Date of every answer (tier_smoke.sh: leases' age).
#
#   fake_s3.py PORT LOGFILE       (PORT 0: any free port, printed as
#                                  "ready PORT")
import email.utils
import hashlib
import http.server
import json
import re
import sys
import os
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

MIB = 1 << 20


def body_of(key, size):
    """Deterministic bytes for a key (the test regenerates them)."""
    seed = key.encode()
    out = bytearray()
    i = 0
    while len(out) < size:
        out += (b"%s:%08d|" % (seed, i))
        i += 1
    return bytes(out[:size])


# key -> (size, etag, behaviour)
OBJECTS = {
    "ok.bin": (3 * MIB + 5, '"v1-ok"', "normal"),
    "flaky.bin": (MIB, '"v1-flaky"', "503 twice"),
    "short.bin": (MIB, '"v1-short"', "short body"),
    "short2.bin": (MIB, '"v1-short2"', "short 206"),
    "norange.bin": (2 * MIB + 7, '"v1-norange"', "ignores Range"),
    "changed.bin": (MIB, '"v2-changed"', "412 unless If-Match is v2"),
    "lying.bin": (MIB, '"v2-lying"', "ignores If-Match (s3rver)"),
    "denied.bin": (MIB, '"v1-denied"', "403"),
    "gone.bin": (MIB, '"v1-gone"', "404 on GET"),
    "big.bin": (20 * MIB + 3, '"v1-big"', "normal"),
    # resilience.sh
    "et/quoted.bin": (MIB + 9, '"v1-etq"', "listed unquoted"),
    "et/weak.bin": (MIB + 9, '"v1-etw"', "listed weak"),
    "bad/good1.bin": (100, '"v1-g1"', "normal"),
    "bad/good2.bin": (200, '"v1-g2"', "normal"),
    "slow/s0.bin": (2 * MIB, '"v1-s0"', "normal"),
    "slow/s1.bin": (2 * MIB, '"v1-s1"', "normal"),
    "always500.bin": (40 * MIB, '"v1-a500"', "500 always"),
    "trickle.bin": (MIB, '"v1-trickle"', "trickle"),
    "whole.bin": (4 * MIB + 7, '"v1-whole"', "ignores Range"),
    "crstart.bin": (2 * MIB, '"v1-crs"', "Content-Range start wrong"),
    "crend.bin": (2 * MIB, '"v1-cre"', "Content-Range end wrong"),
    "crtotal.bin": (2 * MIB, '"v1-crt"', "Content-Range total wrong"),
    "wholelen.bin": (2 * MIB, '"v1-wl"', "200 of the wrong length"),
    # fault_smoke.sh: LOOKUPs that GET the first bytes of a new name
    "lk/small.bin": (100 * 1024 + 3, '"v1-lks"', "normal"),
    "lk/empty.bin": (0, '"v1-lke"', "normal"),
    "lk/norange.bin": (100 * 1024, '"v1-lkn"', "ignores Range"),
    "lk/crwrong.bin": (100 * 1024, '"v1-lkc"', "Content-Range total wrong"),
    "lk/big.bin": (MIB + 1, '"v1-lkb"', "normal"),
    "lk/bignorange.bin": (2 * MIB + 7, '"v1-lkbn"', "ignores Range"),
    "lk/flaky.bin": (100 * 1024, '"v1-lkf"', "503 twice"),
    "lk/denied.bin": (100 * 1024, '"v1-lkd"', "403"),
}
# Listing entries that are not objects: (raw url-encoded Key, Size, ETag).
# What a broken server or a corrupt index could send.
BAD_KEYS = [
    ("bad/pct%zz.bin", "10", '"x1"'),          # bad %-encoding
    ("bad/nul%00.bin", "10", '"x2"'),          # a NUL byte
    ("bad/size.bin", "12ab", '"x3"'),           # bad Size
    ("bad/longetag.bin", "10", '"' + "e" * 300 + '"'),  # ETag too long
    ("bad/ctl%1B%5B31m.bin", "nope", '"x5"'),  # control bytes and a bad size
]
# /_ctl?slowdown=S[&retry_after=N]: every request for a key under slow/
# is answered 503 SlowDown for S seconds from now (with Retry-After: N if
# given).
SLOWDOWN = {"until": 0.0, "retry_after": None}
# /_ctl?fail=N[&status=S]: the next N requests (after their body is read)
# are answered S (default 503 SlowDown).
# /_ctl?complete_error=CODE[&n=N]: the next N (default 1)
# CompleteMultipartUploads answer 200 with an <Error> of CODE inside,
# after some spaces, as S3 does when it fails while assembling the object.
# /_ctl?part_fail=N[&status=S]: every UploadPart of part N is answered S
# (default 403 AccessDenied) until part_fail=0.
# /_ctl?part_delay=S: every UploadPart is answered S seconds late.
# /_ctl?complete_slow=S: the next CompleteMultipartUpload answers 200 at
# once, then a space a second for S seconds, then its result (as S3 keeps
# the connection alive while it assembles a large object).
# /_ctl?complete_garbage=N: the next N CompleteMultipartUploads take
# effect, then answer 200 with a body that is no XML.
# /_ctl?put_lost=N: the next N PutObjects take effect, then answer 500.
# /_ctl?put_etag=0: PutObjects take effect and answer 200 without an ETag
# (put_etag=1: with it again).
# /_ctl?conditions=0: If-Match and If-None-Match on writes are ignored, as
# by a server without conditional writes (conditions=1: honoured again).
# /_ctl?parts_max: the body is the most UploadParts seen in progress at
# once since the last such call.
# /_ctl?complete_lost=N: the next N CompleteMultipartUploads take effect,
# then answer 500 InternalError, as when the answer is lost on the way.
# /_ctl?open_uploads: the body is the number of uploads not completed or
# aborted (ListMultipartUploads, for the tests).
FAULTS = {"fail": 0, "fail_status": 503, "complete_error": None,
          "complete_n": 0, "part_fail": 0, "part_status": 403,
          "complete_lost": 0, "part_delay": 0.0, "put_lost": 0,
          "parts_now": 0, "parts_max": 0, "conditions": True,
          "complete_garbage": 0, "complete_slow": 0, "put_etag": True}
# Written objects: key -> (bytes, etag); uploads: id -> (key, {n: (bytes, etag)}).
STORE = {}
UPLOADS = {}
# Their metadata: key (or upload id) -> {header name, lower case: value}.
META = {}
# When each was written (time.time()).
MTIME = {}
UPLOAD_META = {}
# The headers S3 keeps with an object besides x-amz-meta-*.
SYSTEM_META = ("content-type", "content-encoding", "content-disposition",
               "content-language", "cache-control", "expires",
               "x-amz-storage-class", "x-amz-website-redirect-location")
MIN_PART = 5 * MIB
TRICKLE_S = float(os.environ.get("FAKE_TRICKLE_S", "20"))
WITH_LAST_MODIFIED = os.environ.get("FAKE_LAST_MODIFIED") == "1"
lock = threading.Lock()
counts = {}


def error_xml(code, msg, rid):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
            '<Message>%s</Message><RequestId>%s</RequestId></Error>'
            % (code, msg, rid)).encode()


def last_modified(key):
    """The Last-Modified header of a written object ({} if unknown)."""
    t = MTIME.get(key) if WITH_LAST_MODIFIED else None
    return {"Last-Modified": email.utils.formatdate(t, usegmt=True)} if t else {}


def stored_meta(headers):
    """The metadata a write's headers give the object."""
    return {k.lower(): v for k, v in headers.items()
            if k.lower().startswith("x-amz-meta-") or k.lower() in SYSTEM_META}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"	# keep-alive
    # The head and the body are two writes: with Nagle a small body waits
    # for the client's delayed ACK of the head (40 ms a request).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def record(self, status):
        entry = {
            "method": self.command, "path": self.path, "status": status,
            "conn": "%s:%d" % self.client_address,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        body = getattr(self, "body", None)
        if body is not None:
            entry["body_len"] = len(body)
            entry["body_md5"] = hashlib.md5(body).hexdigest()
        with lock, open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, status, body=b"", headers=None, length=None):
        self.record(status)
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("x-amz-request-id", "FAKE%04d" % (hash(self.path) % 10000))
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def key(self):
        u = urllib.parse.urlsplit(self.path)
        parts = urllib.parse.unquote(u.path).split("/", 2)
        return ((parts[2] if len(parts) > 2 else ""),
                urllib.parse.parse_qs(u.query, keep_blank_values=True))

    def slowdown(self):
        """503 SlowDown while a slowdown is on; True if answered."""
        if "/slow/" not in self.path:
            return False
        with lock:
            on = time.monotonic() < SLOWDOWN["until"]
            ra = SLOWDOWN["retry_after"]
        if not on:
            return False
        hdrs = {"Retry-After": str(ra)} if ra is not None else {}
        self.send(503, error_xml("SlowDown", "Please reduce your request rate.",
                                 "RIDSLOW"), hdrs)
        return True

    def listing(self, q):
        prefix = q.get("prefix", [""])[0]
        url = q.get("encoding-type", [""])[0] == "url"
        enc = (lambda k: urllib.parse.quote(k, safe="/")) if url else escape
        out = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>',
               "<IsTruncated>false</IsTruncated>"]
        if url:
            out.append("<EncodingType>url</EncodingType>")
        with lock:
            stored = {k: (len(v[0]), v[1], "normal") for k, v in STORE.items()}
        objs = dict(OBJECTS)
        objs.update({k: v for k, v in stored.items() if k not in OBJECTS})
        for k in sorted(objs):
            if not k.startswith(prefix) or "/" in k[len(prefix):]:
                continue
            size, etag, how = objs[k]
            if how == "listed unquoted":
                etag = etag.strip('"')
            elif how == "listed weak":
                etag = "W/" + etag
            out.append("<Contents><Key>%s</Key><ETag>%s</ETag><Size>%d</Size>"
                       "<LastModified>2009-10-12T17:50:30.000Z</LastModified>"
                       "</Contents>" % (enc(k), escape(etag), size))
        if prefix == "bad/":
            for k, size, etag in BAD_KEYS:
                out.append("<Contents><Key>%s</Key><ETag>%s</ETag><Size>%s</Size>"
                           "</Contents>" % (k if url else escape(k), escape(etag), size))
        out.append("</ListBucketResult>")
        return self.send(200, "".join(out).encode(), {"Content-Type": "application/xml"})

    def do_HEAD(self):
        self.body = None	# a keep-alive connection's last PUT's
        if self.slowdown():
            return
        key, _ = self.key()
        with lock:
            stored = STORE.get(key)
        if stored:
            hdrs = dict(META.get(key, {}))
            hdrs["ETag"] = stored[1]
            hdrs.update(last_modified(key))
            return self.send(200, b"", hdrs, length=len(stored[0]))
        if key not in OBJECTS:
            return self.send(404)
        size, etag, _ = OBJECTS[key]
        self.send(200, b"", {"ETag": etag,
                             "Last-Modified": "Wed, 12 Oct 2009 17:50:00 GMT"},
                  length=size)

    def do_GET(self):
        self.body = None
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_ctl":
            q = urllib.parse.parse_qs(u.query)
            with lock:
                if "slowdown" in q:
                    SLOWDOWN["until"] = time.monotonic() + float(q["slowdown"][0])
                    SLOWDOWN["retry_after"] = q.get("retry_after", [None])[0]
                if "fail" in q:
                    FAULTS["fail"] = int(q["fail"][0])
                    FAULTS["fail_status"] = int(q.get("status", ["503"])[0])
                if "complete_error" in q:
                    FAULTS["complete_error"] = q["complete_error"][0]
                    FAULTS["complete_n"] = int(q.get("n", ["1"])[0])
                if "part_fail" in q:
                    FAULTS["part_fail"] = int(q["part_fail"][0])
                    FAULTS["part_status"] = int(q.get("status", ["403"])[0])
                if "complete_lost" in q:
                    FAULTS["complete_lost"] = int(q["complete_lost"][0])
                if "part_delay" in q:
                    FAULTS["part_delay"] = float(q["part_delay"][0])
                if "complete_slow" in q:
                    FAULTS["complete_slow"] = int(q["complete_slow"][0])
                if "complete_garbage" in q:
                    FAULTS["complete_garbage"] = int(q["complete_garbage"][0])
                if "conditions" in q:
                    FAULTS["conditions"] = q["conditions"][0] != "0"
                if "put_lost" in q:
                    FAULTS["put_lost"] = int(q["put_lost"][0])
                if "put_etag" in q:
                    FAULTS["put_etag"] = q["put_etag"][0] != "0"
                body = (b"%d\n" % len(UPLOADS)) if "open_uploads" in u.query else b""
                if "parts_max" in u.query:
                    body = b"%d\n" % FAULTS["parts_max"]
                    FAULTS["parts_max"] = 0
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.slowdown():
            return
        key, q = self.key()
        if key == "":
            # ListObjectsV2: the objects directly under the prefix (no
            # common prefixes), and for "bad/" some broken entries.
            return self.listing(q)
        if self.failed():
            return
        with lock:
            stored = STORE.get(key)
        if stored:
            meta = dict(META.get(key, {}))
            meta.update(last_modified(key))
            return self.send_stored(*stored, meta)
        if key not in OBJECTS:
            return self.send(404, error_xml("NoSuchKey", "nope", "RID404"))
        size, etag, how = OBJECTS[key]
        with lock:
            counts[key] = counts.get(key, 0) + 1
            n = counts[key]
        if how == "500 always":
            return self.send(500, error_xml("InternalError", "We encountered an internal error.", "RID500-%d" % n))
        data = body_of(key, size)
        if how == "403":
            return self.send(403, error_xml("AccessDenied", "Access Denied", "RID403"))
        if how == "404 on GET":
            return self.send(404, error_xml("NoSuchKey", "The specified key does not exist.", "RIDGONE"))
        if how == "503 twice" and n <= 2:
            return self.send(503, error_xml("SlowDown", "Please reduce your request rate.", "RID503-%d" % n))
        if how.startswith("412") and self.headers.get("If-Match") != etag:
            return self.send(412, error_xml("PreconditionFailed", "At least one of the pre-conditions you specified did not hold", "RID412"))
        rng = self.headers.get("Range")
        if how == "ignores Range" or not rng:
            return self.send(200, data, {"ETag": etag})
        if how == "200 of the wrong length":
            return self.send(200, data[:-4096], {"ETag": etag})
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng)
        if m and int(m.group(1)) >= size:
            # As S3: no byte there (a zero-byte object has none at all).
            return self.send(416, error_xml("InvalidRange", "The requested range is not satisfiable", "RID416"),
                             {"Content-Range": "bytes */%d" % size})
        if not m:
            return self.send(400, error_xml("InvalidRange", rng, "RIDRANGE"))
        a, b = int(m.group(1)), min(int(m.group(2)), size - 1)
        part = data[a:b + 1]
        hdrs = {"ETag": etag, "Content-Range": "bytes %d-%d/%d" % (a, b, size)}
        if how == "Content-Range start wrong":
            # The bytes asked for, labelled as if they began a page later.
            hdrs["Content-Range"] = "bytes %d-%d/%d" % (a + 4096, b + 4096, size)
        elif how == "Content-Range end wrong":
            hdrs["Content-Range"] = "bytes %d-%d/%d" % (a, b - 4096, size)
        elif how == "Content-Range total wrong":
            hdrs["Content-Range"] = "bytes %d-%d/%d" % (a, b, size + 4096)
        if how == "trickle":
            # Headers, then one byte every TRICKLE_S seconds.
            self.record(206)
            self.send_response(206)
            for k, v in hdrs.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            try:
                for i in range(len(part)):
                    self.wfile.write(part[i:i + 1])
                    self.wfile.flush()
                    time.sleep(TRICKLE_S)
            except OSError:
                pass
            self.close_connection = True
            return
        if how == "short body":
            # Promise the whole range, send half, hang up.
            self.record(206)
            self.send_response(206)
            for k, v in hdrs.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            self.wfile.write(part[:len(part) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if how == "short 206":
            # Claims the whole range, but Content-Length agrees with the
            # half it sends: only the daemon's own length check notices.
            return self.send(206, part[:len(part) // 2], hdrs)
        return self.send(206, part, hdrs)


    # ---- writes ----

    def read_body(self):
        """The request's body (Content-Length only, as the client sends);
        False if it was cut short (the connection is then dropped)."""
        n = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(n) if n else b""
        if len(self.body) != n:
            self.close_connection = True
            return False
        return True

    def failed(self):
        """Answer the request with the armed failure; True if it was."""
        with lock:
            if FAULTS["fail"] <= 0:
                return False
            FAULTS["fail"] -= 1
            st = FAULTS["fail_status"]
        code = "SlowDown" if st == 503 else "InternalError"
        self.send(st, error_xml(code, "injected", "RIDFAIL"))
        return True

    def send_stored(self, data, etag, meta):
        rng = self.headers.get("Range")
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
        hdrs = dict(meta)
        hdrs["ETag"] = etag
        if not m:
            return self.send(200, data, hdrs)
        a = int(m.group(1))
        b = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        if a >= len(data):
            return self.send(416, error_xml("InvalidRange", rng, "RID416"))
        hdrs["Content-Range"] = "bytes %d-%d/%d" % (a, b, len(data))
        return self.send(206, data[a:b + 1], hdrs)

    def precondition(self, key):
        """S3's conditional write: an answer (status, code) or None."""
        with lock:
            return self.precondition_locked(key)

    def precondition_locked(self, key):
        """precondition(), the lock held (check and store in one go)."""
        cur = STORE.get(key)
        if not FAULTS["conditions"]:
            return None
        cur_etag = cur[1] if cur else (OBJECTS[key][1] if key in OBJECTS else None)
        inm = self.headers.get("If-None-Match")
        im = self.headers.get("If-Match")
        if inm is not None and inm.strip() == "*" and cur_etag is not None:
            return 412, "PreconditionFailed"
        if im is not None:
            if cur_etag is None:
                return 404, "NoSuchKey"
            if im.strip() != cur_etag:
                return 412, "PreconditionFailed"
        return None

    def do_PUT(self):
        if not self.read_body() or self.failed():
            return
        key, q = self.key()
        data = self.body
        etag = '"%s"' % hashlib.md5(data).hexdigest()
        if "uploadId" in q or "partNumber" in q:
            uid = q.get("uploadId", [""])[0]
            n = int(q.get("partNumber", ["0"])[0])
            with lock:
                up = UPLOADS.get(uid)
                if up and up[0] == key and 1 <= n <= 10000:
                    up[1][n] = (data, etag)
            if not up or up[0] != key:
                return self.send(404, error_xml("NoSuchUpload", "no such upload", "RIDNSU"))
            if not 1 <= n <= 10000:
                return self.send(400, error_xml("InvalidArgument", "partNumber", "RIDPN"))
            with lock:
                pf, pst = FAULTS["part_fail"], FAULTS["part_status"]
                delay = FAULTS["part_delay"]
                FAULTS["parts_now"] += 1
                FAULTS["parts_max"] = max(FAULTS["parts_max"], FAULTS["parts_now"])
            time.sleep(delay)
            with lock:
                FAULTS["parts_now"] -= 1
            if pf == n:
                with lock:
                    up[1].pop(n, None)
                code = "AccessDenied" if pst == 403 else "InternalError"
                return self.send(pst, error_xml(code, "injected", "RIDPART"))
            return self.send(200, b"", {"ETag": etag})
        if "x-amz-copy-source" in self.headers:
            return self.copy(key)
        with lock:
            bad = self.precondition_locked(key)
            if not bad:
                STORE[key] = (data, etag)
                META[key] = stored_meta(self.headers)
                MTIME[key] = time.time()
                lost = FAULTS["put_lost"] > 0
                if lost:
                    FAULTS["put_lost"] -= 1
        if bad:
            return self.send(bad[0], error_xml(bad[1], "condition", "RIDCOND"))
        if lost:
            return self.send(500, error_xml("InternalError", "answer lost", "RIDLOST"))
        return self.send(200, b"", {"ETag": etag} if FAULTS["put_etag"] else {})

    def copy(self, key):
        """CopyObject: the source's bytes, its metadata or the request's."""
        src = urllib.parse.unquote(self.headers["x-amz-copy-source"])
        src = src[1:] if src.startswith("/") else src
        bucket, _, skey = src.partition("/")
        with lock:
            have = STORE.get(skey)
            meta = dict(META.get(skey, {}))
            check = FAULTS["conditions"]
        if have is None and skey in OBJECTS:
            size, setag, _ = OBJECTS[skey]
            have = (body_of(skey, size), setag)
        if bucket != "fake" or have is None:
            return self.send(404, error_xml("NoSuchKey", "no source", "RIDCPY404"))
        im = self.headers.get("x-amz-copy-source-if-match")
        if check and im is not None and im.strip().strip('"') != have[1].strip('"'):
            return self.send(412, error_xml("PreconditionFailed", "copy source", "RIDCPY412"))
        replace = self.headers.get("x-amz-metadata-directive", "COPY") == "REPLACE"
        if skey == key and not replace:
            return self.send(400, error_xml("InvalidRequest", "copy onto itself", "RIDCPY400"))
        etag = '"%s"' % hashlib.md5(have[0]).hexdigest()
        with lock:
            STORE[key] = (have[0], etag)
            META[key] = stored_meta(self.headers) if replace else meta
            MTIME[key] = time.time()
        return self.send(200, (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            "<CopyObjectResult><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
            "<ETag>%s</ETag></CopyObjectResult>" % escape(etag, {'"': "&quot;"})).encode())

    def do_DELETE(self):
        if not self.read_body() or self.failed():
            return
        key, q = self.key()
        if "uploadId" in q:
            with lock:
                up = UPLOADS.pop(q["uploadId"][0], None)
            if not up:
                return self.send(404, error_xml("NoSuchUpload", "no such upload", "RIDNSU"))
            return self.send(204)
        with lock:
            STORE.pop(key, None)
            META.pop(key, None)
            MTIME.pop(key, None)
        return self.send(204)

    def do_POST(self):
        if not self.read_body() or self.failed():
            return
        key, q = self.key()
        if "uploads" in q:
            with lock:
                uid = "up.%d_%s~+/=" % (len(UPLOADS) + 1, key.replace("/", "-"))
                UPLOADS[uid] = (key, {})
                UPLOAD_META[uid] = stored_meta(self.headers)
            return self.send(200, (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                "<Bucket>fake</Bucket><Key>%s</Key><UploadId>%s</UploadId>"
                "</InitiateMultipartUploadResult>" % (escape(key), escape(uid))).encode())
        if "uploadId" not in q:
            return self.send(400, error_xml("InvalidRequest", "POST", "RIDPOST"))
        return self.complete(key, q["uploadId"][0])

    def complete(self, key, uid):
        with lock:
            up = UPLOADS.get(uid)
        if not up or up[0] != key:
            return self.send(404, error_xml("NoSuchUpload", "no such upload", "RIDNSU"))
        try:
            root = ET.fromstring(self.body)
        except ET.ParseError:
            return self.send(400, error_xml("MalformedXML", "bad XML", "RIDXML"))
        ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
        parts = [(int(p.findtext(ns + "PartNumber")), p.findtext(ns + "ETag"))
                 for p in root.findall(ns + "Part")]
        if not parts:
            return self.send(400, error_xml("MalformedXML", "no part", "RIDXML"))
        if [n for n, _ in parts] != sorted(set(n for n, _ in parts)):
            return self.send(400, error_xml("InvalidPartOrder", "order", "RIDIPO"))
        for i, (n, etag) in enumerate(parts):
            have = up[1].get(n)
            if not have or have[1] != etag:
                return self.send(400, error_xml("InvalidPart", "part %d" % n, "RIDIP"))
            if i < len(parts) - 1 and len(have[0]) < MIN_PART:
                return self.send(400, error_xml("EntityTooSmall", "part %d" % n, "RIDETS"))
        bad = self.precondition(key)
        if bad:
            return self.send(bad[0], error_xml(bad[1], "condition", "RIDCOND"))
        with lock:
            code = FAULTS["complete_error"] if FAULTS["complete_n"] > 0 else None
            if code:
                FAULTS["complete_n"] -= 1
        if code:
            return self.send(200, b"  \n  \n" + error_xml(code, "injected", "RIDCE"))
        data = b"".join(up[1][n][0] for n, _ in parts)
        md5s = b"".join(hashlib.md5(up[1][n][0]).digest() for n, _ in parts)
        etag = '"%s-%d"' % (hashlib.md5(md5s).hexdigest(), len(parts))
        with lock:
            STORE[key] = (data, etag)
            META[key] = UPLOAD_META.pop(uid, {})
            MTIME[key] = time.time()
            UPLOADS.pop(uid, None)
            lost = FAULTS["complete_lost"] > 0
            if lost:
                FAULTS["complete_lost"] -= 1
            garbage = FAULTS["complete_garbage"] > 0
            if garbage:
                FAULTS["complete_garbage"] -= 1
        if lost:
            return self.send(500, error_xml("InternalError", "answer lost", "RIDLOST"))
        if garbage:
            return self.send(200, b"<html>proxy says hello</html>")
        with lock:
            slow, FAULTS["complete_slow"] = FAULTS["complete_slow"], 0
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            "<Location>http://fake/%s</Location><Bucket>fake</Bucket><Key>%s</Key>"
            "<ETag>%s</ETag></CompleteMultipartUploadResult>"
            % (escape(key), escape(key), escape(etag, {'"': "&quot;"}))).encode()
        if not slow:
            return self.send(200, body)
        self.record(200)
        self.send_response(200)
        self.send_header("Content-Length", str(slow + len(body)))
        self.end_headers()
        try:
            for _ in range(slow):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(1)
            self.wfile.write(body)
        except OSError:
            pass

if __name__ == "__main__":
    LOG = sys.argv[2]
    # A listen backlog for 64 connections at once (the default, 5, makes
    # a burst of requests wait for connect timeouts).
    http.server.ThreadingHTTPServer.request_queue_size = 128
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    srv.daemon_threads = True
    print("ready %d" % srv.server_address[1], flush=True)
    srv.serve_forever()
