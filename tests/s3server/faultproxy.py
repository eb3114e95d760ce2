#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""faultproxy - an HTTP/1.1 reverse proxy that breaks S3 responses on purpose.

    faultproxy.py serve PORT UPSTREAM_HOST:PORT --log FILE [--rules FILE]
    faultproxy.py count LOG [--method M] [--path RE] [--query RE] [--fault F]
                      [--list]

It listens on 127.0.0.1:PORT in front of an S3 server (s3rver in the test
VM) and forwards every request as it came (same head, same body, so SigV4
signatures stay as the client made them) over keep-alive connections, one
upstream connection per client connection. Response bodies are streamed,
never buffered whole, so a held response holds no more than a socket
buffer's worth of data here.

Faults come from RULES, a JSON list tried in order; the first rule that
applies to a request decides what happens to it:

  {"method": "GET",            only this method (default: any)
   "path": "REGEX",            re.search on the raw path, e.g. "^/bkt/a\\.bin$"
   "query": "REGEX",           re.search on the raw query, e.g. "list-type=2"
   "nth": [1, 3],              apply to these matches of this rule (1-based)
   "first": 2,                 or to its first N matches (neither: all)
   "fault": NAME, ...params}

Every rule counts the requests it matches (method, path, query) whether or
not it applies to them; PUT /__fault/rules resets the counts. Faults:

  pass                  forward untouched (a rule that shields requests)
  500                   HTTP 500 InternalError, S3 XML error body, keep-alive
  503                   HTTP 503 SlowDown, S3 XML error body, keep-alive
  status                "status": N, "code": "S3Code": any error response
  reset                 read the request, answer nothing, close with a TCP RST
  reset-after-headers   forward, send the response head, then RST
  truncate              forward, send the head (its Content-Length) and only
                        "after_bytes" body bytes (default: half), then close:
                        the client sees a body shorter than promised
  corrupt               forward, flip "count" bytes (default 1) from body
                        offset "at" (default: the middle); same length
  stall                 hold the response "seconds" (default: until POST
                        /__fault/release) at "phase": "before-headers"
                        (default; upstream not contacted yet),
                        "after-headers", or after "after_bytes" body bytes;
                        then go on. "drip": S (after the head only): send
                        "drip_bytes" (64) body bytes every S seconds while
                        held, so that the client's low-speed timeout (curl:
                        CURLOPT_LOW_SPEED_*) does not fire.
                        "forward_if_gone": true (before-headers only):
                        a client that hangs up while held does not end
                        the request; it is forwarded when the hold ends
                        and its answer dropped, as S3 acts on a request
                        it received whole (a part dropped by its client
                        lands later)
  trickle               forward the body at "rate" bytes/s (default 4096)

A held response (stall after the head) is read whole from the server
first, at most 16 at a time, then served from memory. Body offsets are of
the bytes on the wire: for a chunked response they
include the chunk framing (S3 object GETs carry a Content-Length).

Control, on the same port (no S3 bucket name starts with "_"):

  PUT  /__fault/rules      body: the JSON list; replaces the rules
  POST /__fault/release    wake every request held by a stall now
                           (?oldest=1: only the one held longest)
  GET  /__fault/stats      {"open": requests being answered now,
                            "stalled": held by a stall now,
                            "max_open", "max_stalled", "total", "conns"}

The log (--log) gets one JSON line per request when it arrives:
{"seq", "conn", "method", "path", "query", "range", "fault"} (fault: the
name, or "pass"), and one {"seq", "end", "status", "sent"} line when it is
finished ("end": "ok", "fault", "client-gone", "upstream-error"). "count"
prints how many request lines match its filters, for the tests (--list:
one "SEQ FAULT RANGE" line for each instead).
"""
import argparse
import asyncio
import json
import os
import re
import signal
import socket
import struct
import sys
import time

CTRL = "/__fault/"
PIECE = 64 << 10        # streaming granularity
HEAD_MAX = 64 << 10     # longest request/response head accepted

RULES = []              # [Rule]
STATS = {"open": 0, "stalled": 0, "max_open": 0, "max_stalled": 0,
         "total": 0, "conns": 0}
HELD = []               # an asyncio.Event per request held by a stall,
                        # oldest first: set to let it go
HELD_UPSTREAM = None    # asyncio.Semaphore: held responses being read
LOG = None
SEQ = 0

S3_ERRORS = {
    500: ("InternalError", "We encountered an internal error. Please try again."),
    503: ("SlowDown", "Please reduce your request rate."),
}
REASONS = {500: "Internal Server Error", 503: "Slow Down", 400: "Bad Request",
           404: "Not Found", 200: "OK", 204: "No Content", 429: "Too Many Requests"}
FAULTS = {"pass", "500", "503", "status", "reset", "reset-after-headers",
          "truncate", "corrupt", "stall", "trickle"}


class Rule:
    def __init__(self, d):
        if not isinstance(d, dict):
            raise ValueError("a rule is a JSON object")
        self.d = d
        self.fault = str(d.get("fault", "pass"))
        if self.fault not in FAULTS:
            raise ValueError("unknown fault %r" % self.fault)
        self.method = d.get("method")
        self.path = re.compile(d["path"]) if "path" in d else None
        self.query = re.compile(d["query"]) if "query" in d else None
        self.nth = set(int(n) for n in d.get("nth", []))
        self.first = d.get("first")
        self.seen = 0

    def matches(self, method, path, query):
        if self.method and self.method != method:
            return False
        if self.path and not self.path.search(path):
            return False
        if self.query and not self.query.search(query):
            return False
        return True

    def applies(self):
        """Called on a match: counts it, says whether this one is hit."""
        self.seen += 1
        if self.nth:
            return self.seen in self.nth
        if self.first is not None:
            return self.seen <= int(self.first)
        return True


def choose(method, path, query):
    hit = None
    for r in RULES:
        if r.matches(method, path, query) and r.applies() and hit is None:
            hit = r
    return hit


def log(entry):
    if LOG:
        LOG.write(json.dumps(entry) + "\n")
        LOG.flush()


class Msg:
    """A request or response head: first line and headers, raw and parsed."""

    def __init__(self, raw):
        self.raw = raw
        lines = raw.decode("latin-1").split("\r\n")
        self.first = lines[0]
        self.headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                self.headers[k.strip().lower()] = v.strip()

    def header(self, name, default=""):
        return self.headers.get(name, default)


async def read_head(reader):
    """One head up to and including the blank line, or None at a clean EOF."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return None
        raise ConnectionError("connection closed inside a head")
    except asyncio.LimitOverrunError:
        raise ConnectionError("head too long")
    return Msg(raw)


async def body_pieces(reader, msg, no_body):
    """Yield the raw body bytes of @msg as they arrive (framing included)."""
    if no_body:
        return
    te = msg.header("transfer-encoding").lower()
    if "chunked" in te:
        while True:
            line = await reader.readuntil(b"\r\n")
            yield line
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                # Trailers, then the blank line.
                while True:
                    t = await reader.readuntil(b"\r\n")
                    yield t
                    if t == b"\r\n":
                        return
            left = size + 2             # data and its CRLF
            while left:
                b = await reader.read(min(left, PIECE))
                if not b:
                    raise ConnectionError("upstream closed inside a chunk")
                left -= len(b)
                yield b
        return
    cl = msg.header("content-length")
    if cl:
        left = int(cl)
        while left:
            b = await reader.read(min(left, PIECE))
            if not b:
                raise ConnectionError("closed inside a body")
            left -= len(b)
            yield b
        return
    # No framing: the body runs to EOF (then the connection cannot be reused).
    while True:
        b = await reader.read(PIECE)
        if not b:
            return
        yield b


async def memory_pieces(parts):
    for b in parts:
        for i in range(0, len(b), PIECE):
            yield b[i:i + PIECE]


def error_response(status, code, message, method, seq):
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
            '<Message>%s</Message><RequestId>FP%08d</RequestId></Error>'
            % (code, message, seq)).encode()
    head = ("HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\n"
            "Content-Length: %d\r\nx-amz-request-id: FP%08d\r\n"
            "Date: %s\r\n\r\n" % (status, REASONS.get(status, "Error"),
                                  len(body), seq,
                                  time.strftime("%a, %d %b %Y %H:%M:%S GMT",
                                                time.gmtime()))).encode()
    return head + (b"" if method == "HEAD" else body)


def rst(writer):
    """Close with a TCP RST (SO_LINGER 0), not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


async def stall(rule, client, drip, forward_if_gone=False):
    """Hold for the rule's "seconds" or until released; every "drip" seconds
    call drip() (sends one body byte). A client that hangs up meanwhile ends
    the request at once (it is no longer counted as held), unless
    @forward_if_gone: then the hold runs its course. Clients do not
    pipeline requests, so bytes from one while it is held end it too."""
    secs = rule.d.get("seconds")
    every = float(rule.d["drip"]) if drip and "drip" in rule.d else None
    loop = asyncio.get_running_loop()
    until = None if secs is None else loop.time() + float(secs)
    ev = asyncio.Event()
    HELD.append(ev)
    released = asyncio.ensure_future(ev.wait())
    gone = asyncio.ensure_future(client.read(1))
    STATS["stalled"] += 1
    STATS["max_stalled"] = max(STATS["max_stalled"], STATS["stalled"])
    try:
        while True:
            t = every
            if until is not None:
                left = until - loop.time()
                if left <= 0:
                    return
                t = left if t is None else min(t, left)
            done, _ = await asyncio.wait({released, gone}, timeout=t,
                                         return_when=asyncio.FIRST_COMPLETED)
            if gone in done and forward_if_gone:
                gone = asyncio.ensure_future(asyncio.Event().wait())
            elif gone in done:
                raise ConnectionError("the client left while held")
            if released in done:
                return
            if every is not None:
                await drip()
    finally:
        STATS["stalled"] -= 1
        if ev in HELD:
            HELD.remove(ev)
        released.cancel()
        gone.cancel()
        # The reader is free for the next request only once this is over.
        await asyncio.gather(released, gone, return_exceptions=True)


class Upstream:
    """The upstream connection of one client connection, reopened as needed."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.r = self.w = None

    async def send(self, raw):
        """Send a request, return the response head. A kept-alive connection
        the server has dropped meanwhile is replaced once."""
        if self.w is not None:
            try:
                return await self.exchange(raw)
            except (ConnectionError, OSError):
                self.close()
        self.r, self.w = await asyncio.open_connection(self.host, self.port,
                                                       limit=HEAD_MAX)
        return await self.exchange(raw)

    async def exchange(self, raw):
        self.w.write(raw)
        await self.w.drain()
        head = await read_head(self.r)
        if head is None:
            raise ConnectionError("upstream closed the connection")
        return head

    def close(self):
        if self.w is not None:
            self.w.transport.abort()
        self.r = self.w = None


async def control(head, body, writer):
    method, target = head.first.split(" ")[:2]
    what = target[len(CTRL):].split("?")[0]
    status, out = 200, b""
    global RULES
    if what == "rules" and method in ("PUT", "POST"):
        try:
            rules = json.loads(body or b"[]")
            if not isinstance(rules, list):
                raise ValueError("rules must be a JSON list")
            RULES = [Rule(d) for d in rules]
            out = b'{"rules": %d}\n' % len(RULES)
        except (ValueError, KeyError, re.error) as e:
            status, out = 400, (json.dumps({"error": str(e)}) + "\n").encode()
    elif what == "release" and method == "POST":
        go = HELD[:1] if "oldest=1" in target else list(HELD)
        for ev in go:
            HELD.remove(ev)
            ev.set()
        out = b'{"released": %d}\n' % len(go)
    elif what == "stats" and method == "GET":
        out = (json.dumps(STATS) + "\n").encode()
    else:
        status, out = 404, b'{"error": "no such control"}\n'
    writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" %
                 (status, REASONS.get(status, "Error").encode(), len(out)) + out)
    await writer.drain()


async def proxy_one(head, body, reader, writer, up, rule, seq):
    """Answer one request. Return (keep the client connection?, end entry)."""
    method = head.first.split(" ")[0]
    fault = rule.fault if rule else "pass"
    d = rule.d if rule else {}
    end = {"seq": seq, "end": "ok", "status": 0, "sent": 0}

    if fault in ("500", "503", "status"):
        st = int(fault) if fault != "status" else int(d.get("status", 500))
        code, msg = S3_ERRORS.get(st, ("InternalError", "Injected error"))
        code = d.get("code", code)
        writer.write(error_response(st, code, msg, method, seq))
        await writer.drain()
        end.update(end="fault", status=st)
        return True, end
    if fault == "reset":
        rst(writer)
        end.update(end="fault")
        return False, end
    if fault == "stall" and d.get("phase", "before-headers") == "before-headers" \
            and "after_bytes" not in d:
        await stall(rule, reader, None, bool(d.get("forward_if_gone")))
        fault = "pass"

    # A held response is read whole first, a few at a time: a slow server
    # (s3rver under TCG) given hundreds of requests at once may not send a
    # head for longer than the client waits for a first byte.
    held = fault == "stall"
    whole = None
    try:
        if held:
            async with HELD_UPSTREAM:
                if reader.at_eof():     # gave up while queued here
                    raise ConnectionResetError("the client left")
                resp = await up.send(head.raw + body)
                whole = [b"".join([b async for b in body_pieces(
                    up.r, resp, method == "HEAD")])]
        else:
            resp = await up.send(head.raw + body)
    except (ConnectionError, OSError) as e:
        up.close()
        writer.write(error_response(502, "BadGateway", str(e), method, seq))
        end.update(end="upstream-error", status=502)
        return False, end
    status = int(resp.first.split(" ")[1])
    end["status"] = status
    no_body = method == "HEAD" or status in (204, 304) or status < 200
    length = resp.header("content-length")
    length = int(length) if length.isdigit() else None
    up_reusable = no_body or length is not None or \
        "chunked" in resp.header("transfer-encoding").lower()

    writer.write(resp.raw)
    await writer.drain()
    if fault == "reset-after-headers":
        await asyncio.sleep(0.05)       # let the head reach the peer first
        rst(writer)
        up.close()
        end["end"] = "fault"
        return False, end
    # Body: where the fault strikes, as an offset into the wire bytes.
    cut = hold = None
    if fault == "truncate":
        cut = int(d.get("after_bytes", (length or 2) // 2))
        if length is not None:
            cut = min(cut, max(length - 1, 0))
    if fault == "stall":
        hold = int(d.get("after_bytes", 0))     # after-headers: 0
    flip_at = flip_n = 0
    if fault == "corrupt":
        flip_at = int(d.get("at", (length or 0) // 2))
        flip_n = int(d.get("count", 1))
    rate = float(d.get("rate", 4096)) if fault == "trickle" else None
    step = max(int(rate / 10), 1) if rate else PIECE

    pieces = body_pieces(up.r, resp, no_body) if whole is None else \
        memory_pieces(whole)
    pending = bytearray()               # read from upstream, not sent yet
    sent = 0
    eof = False

    async def fill():
        nonlocal eof
        if not pending and not eof:
            try:
                pending.extend(await pieces.__anext__())
            except StopAsyncIteration:
                eof = True
        return bool(pending)

    async def drip():
        """A few bytes while held, so the client sees a live transfer."""
        nonlocal sent
        if await fill():
            n = min(int(d.get("drip_bytes", 64)), len(pending))
            writer.write(bytes(pending[:n]))
            del pending[:n]
            await writer.drain()
            sent += n

    while True:
        if hold is not None and sent >= hold:
            await stall(rule, reader, drip if "drip" in d else None)
            hold = None
        if not await fill():
            break
        n = min(len(pending), step)
        if cut is not None:
            n = min(n, cut - sent)
        if hold is not None:
            n = min(n, hold - sent)
        b = bytearray(pending[:n])
        del pending[:n]
        for i in range(max(flip_at - sent, 0), min(flip_at + flip_n - sent, n)):
            b[i] ^= 0xFF
        writer.write(b)
        await writer.drain()
        sent += n
        if cut is not None and sent >= cut:
            writer.close()              # a FIN, with the body cut short
            up.close()
            end.update(end="fault", sent=sent)
            return False, end
        if rate:
            await asyncio.sleep(n / rate)
    if hold is not None:                # the body was shorter: hold at its end
        await stall(rule, reader, None)
    end["sent"] = sent
    if fault != "pass":
        end["end"] = "fault"
    if not up_reusable:
        up.close()
        return False, end
    return True, end


async def client(reader, writer, upstream):
    global SEQ
    STATS["conns"] += 1
    conn = STATS["conns"]
    up = Upstream(*upstream)
    try:
        while True:
            head = await read_head(reader)
            if head is None:
                break
            if head.header("expect").lower() == "100-continue":
                # Answered here, as a server would, and not forwarded: the
                # body is read whole before upstream sees the request, so
                # upstream's own 100 would be taken for the response.
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                await writer.drain()
                head = Msg(re.sub(rb"(?im)^expect:[^\r\n]*\r\n", b"",
                                  head.raw))
            n = head.header("content-length")
            body = await reader.readexactly(int(n)) if n.isdigit() else b""
            parts = head.first.split(" ")
            if len(parts) != 3:
                raise ConnectionError("bad request line")
            method, target = parts[0], parts[1]
            if target.startswith(CTRL):
                await control(head, body, writer)
                continue
            path, _, query = target.partition("?")
            SEQ += 1
            seq = SEQ
            rule = choose(method, path, query)
            log({"seq": seq, "conn": conn, "method": method, "path": path,
                 "query": query, "range": head.header("range"),
                 "fault": rule.fault if rule else "pass"})
            STATS["total"] += 1
            STATS["open"] += 1
            STATS["max_open"] = max(STATS["max_open"], STATS["open"])
            end = {"seq": seq, "end": "client-gone", "status": 0, "sent": 0}
            try:
                keep, end = await proxy_one(head, body, reader, writer, up, rule,
                                            seq)
            finally:
                STATS["open"] -= 1
                log(end)
            if not keep:
                break
    except (ConnectionError, OSError, asyncio.IncompleteReadError,
            asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        up.close()
        writer.transport.abort()


def count(args):
    n = 0
    path = re.compile(args.path) if args.path else None
    query = re.compile(args.query) if args.query else None
    with open(args.log) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if "method" not in e:
                continue
            if args.method and e["method"] != args.method:
                continue
            if path and not path.search(e["path"]):
                continue
            if query and not query.search(e["query"]):
                continue
            if args.fault and e["fault"] != args.fault:
                continue
            n += 1
            if args.list:
                print(e["seq"], e["fault"], e["range"] or "-")
    if not args.list:
        print(n)


async def serve(args):
    global LOG, RULES, HELD_UPSTREAM
    HELD_UPSTREAM = asyncio.Semaphore(16)
    LOG = open(args.log, "a") if args.log else None
    if args.rules:
        with open(args.rules) as f:
            RULES = [Rule(d) for d in json.load(f)]
    host, _, port = args.upstream.rpartition(":")
    up = (host or "127.0.0.1", int(port))
    srv = await asyncio.start_server(lambda r, w: client(r, w, up),
                                     "127.0.0.1", args.port, limit=HEAD_MAX,
                                     backlog=1024)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set)
    async with srv:
        await stop.wait()
    if LOG:
        LOG.close()
    os._exit(0)         # held requests are not worth a clean cancellation


def main():
    p = argparse.ArgumentParser(description="fault-injecting S3 proxy")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("port", type=int)
    s.add_argument("upstream", help="HOST:PORT of the S3 server")
    s.add_argument("--log")
    s.add_argument("--rules", help="JSON file with the initial rules")
    c = sub.add_parser("count")
    c.add_argument("log")
    c.add_argument("--method")
    c.add_argument("--path")
    c.add_argument("--query")
    c.add_argument("--fault")
    c.add_argument("--list", action="store_true")
    args = p.parse_args()
    if args.cmd == "count":
        count(args)
    else:
        asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
