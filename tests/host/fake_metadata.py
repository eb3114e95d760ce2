#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Loopback fakes of the AWS credential endpoints, for tests/host/test_creds.c.

  POST / (or GET /?...)   STS AssumeRoleWithWebIdentity (form or query)
  GET /container/creds    container credentials; Authorization checked
  PUT /latest/api/token   IMDSv2 session token (TTL header required)
  GET /latest/meta-data/iam/security-credentials/[ROLE]
                          IMDSv2 only: 401 without a valid token

Control (the test drives it with plain GETs):
  GET /_ctl?lifetime=S    credentials expire S seconds after issue
  GET /_ctl?fail=EP:N     the next N requests to EP (sts, container,
                          imds_token, imds_list, imds_role) get a 500
  GET /_ctl?bad=EP:MODE   replies of EP are broken: truncated, nosecret,
                          badexpiry (until reset)
  GET /_ctl?hang=EP       requests to EP are accepted (and counted) but
                          never answered, until reset
  GET /_ctl?reset=1       back to defaults; counters zeroed
  GET /_stats             JSON: requests per endpoint, and unauthorized

Prints its port on stdout, then serves until killed or its parent dies.
Key ids are ASIA<EP><serial>, so a test sees which provider answered and
whether a refresh brought new credentials.
"""
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROLE = "s3cachefs-node"
ROLE_ARN = "arn:aws:iam::123456789012:role/s3cachefs"
WEB_TOKEN = "web-identity-token"
CONTAINER_AUTH = "container-secret"

lock = threading.Lock()
state = {}


def reset():
    state.clear()
    state.update(lifetime=3600, fail={}, bad={}, count={}, serial={}, hang=set(),
                 unauthorized=0, tokens=set(), last_session=None)


reset()


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def issue(ep):
    """Count a request to @ep; return (serial, fail?, bad mode)."""
    with lock:
        state["count"][ep] = state["count"].get(ep, 0) + 1
    # A hung endpoint: the connection stays open, nothing comes back.
    while True:
        with lock:
            if ep not in state["hang"]:
                break
        time.sleep(0.1)
    with lock:
        fail = state["fail"].get(ep, 0)
        if fail:
            state["fail"][ep] = fail - 1
            return 0, True, None
        n = state["serial"][ep] = state["serial"].get(ep, 0) + 1
        return n, False, state["bad"].get(ep)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def handle(self):
        # A client gone while its request hung (hang=EP): nothing to say.
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def reply(self, code, body, ctype="text/plain"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def creds(self, ep, n, bad):
        exp = int(time.time()) + state["lifetime"]
        c = {"Code": "Success", "Type": "AWS-HMAC",
             "LastUpdated": iso(time.time()),
             "AccessKeyId": "ASIA%s%04d" % (ep.split("_")[0].upper(), n),
             "SecretAccessKey": "secret-%s-%d" % (ep, n),
             "Token": "token-%s-%d" % (ep, n),
             "Expiration": iso(exp)}
        if bad == "nosecret":
            del c["SecretAccessKey"]
        if bad == "badexpiry":
            c["Expiration"] = "tomorrow"
        return c

    def send_json(self, ep, n, bad):
        body = json.dumps(self.creds(ep, n, bad))
        if bad == "truncated":
            body = body[:len(body) // 2]
        self.reply(200, body, "application/json")

    # ---- STS ----
    def sts(self, params):
        n, fail, bad = issue("sts")
        if fail:
            return self.reply(500, "<ErrorResponse><Error><Code>InternalFailure</Code></Error></ErrorResponse>", "text/xml")
        get = lambda k: params.get(k, [None])[0]
        if get("Action") != "AssumeRoleWithWebIdentity" or get("Version") != "2011-06-15":
            return self.reply(400, "<ErrorResponse><Error><Code>InvalidAction</Code></Error></ErrorResponse>", "text/xml")
        if get("WebIdentityToken") != WEB_TOKEN or get("RoleArn") != ROLE_ARN or not get("RoleSessionName"):
            with lock:
                state["unauthorized"] += 1
            return self.reply(400, """<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>bad token or role</Message></Error>
  <RequestId>fake-req-1</RequestId>
</ErrorResponse>""", "text/xml")
        with lock:
            state["last_session"] = get("RoleSessionName")
        c = self.creds("sts", n, bad)
        secret = "" if bad == "nosecret" else "<SecretAccessKey>%s</SecretAccessKey>" % c["SecretAccessKey"]
        body = """<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:ns:sa</SubjectFromWebIdentityToken>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      %s
      <SessionToken>%s</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <AssumedRoleUser><Arn>%s/x</Arn><AssumedRoleId>AROA:x</AssumedRoleId></AssumedRoleUser>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>fake-req-2</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>
""" % (c["AccessKeyId"], secret, c["Token"], c["Expiration"], ROLE_ARN)
        if bad == "truncated":
            body = body[:len(body) // 2]
        self.reply(200, body, "text/xml")

    # ---- IMDSv2 ----
    def imds_authorized(self):
        with lock:
            if self.headers.get("X-aws-ec2-metadata-token") in state["tokens"]:
                return True
            state["unauthorized"] += 1
        self.reply(401, "")
        return False

    def do_PUT(self):
        path = urllib.parse.urlsplit(self.path).path
        if path != "/latest/api/token":
            return self.reply(404, "")
        n, fail, _ = issue("imds_token")
        if fail:
            return self.reply(500, "")
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        if not ttl or not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            return self.reply(400, "")
        tok = "imds-token-%d" % n
        with lock:
            state["tokens"].add(tok)
        self.reply(200, tok)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode()
        if urllib.parse.urlsplit(self.path).path != "/":
            return self.reply(404, "")
        self.sts(urllib.parse.parse_qs(body))

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        base = "/latest/meta-data/iam/security-credentials/"
        if u.path == "/_ctl":
            with lock:
                if "reset" in q:
                    reset()
                if "lifetime" in q:
                    state["lifetime"] = int(q["lifetime"][0])
                for v in q.get("fail", []):
                    ep, n = v.split(":")
                    state["fail"][ep] = int(n)
                for v in q.get("hang", []):
                    state["hang"].add(v)
                for v in q.get("bad", []):
                    ep, mode = v.split(":")
                    state["bad"][ep] = mode
            return self.reply(200, "ok")
        if u.path == "/_stats":
            with lock:
                s = dict(state["count"], unauthorized=state["unauthorized"],
                         last_session=state["last_session"])
            return self.reply(200, json.dumps(s), "application/json")
        if u.path == "/":
            return self.sts(q)
        if u.path == "/container/creds":
            n, fail, bad = issue("container")
            if fail:
                return self.reply(500, "oops")
            if self.headers.get("Authorization") != CONTAINER_AUTH:
                with lock:
                    state["unauthorized"] += 1
                return self.reply(401, '{"message":"bad authorization"}', "application/json")
            return self.send_json("container", n, bad)
        if u.path == base:
            if not self.imds_authorized():
                return
            n, fail, _ = issue("imds_list")
            if fail:
                return self.reply(500, "")
            return self.reply(200, ROLE + "\n")
        if u.path.startswith(base):
            if not self.imds_authorized():
                return
            if u.path[len(base):] != ROLE:
                return self.reply(404, "")
            n, fail, bad = issue("imds_role")
            if fail:
                return self.reply(500, "")
            return self.send_json("imds_role", n, bad)
        if u.path == "/latest/api/token":
            return self.reply(405, "")
        self.reply(404, "")


def watch_parent(ppid):
    while os.getppid() == ppid:
        time.sleep(0.5)
    os._exit(0)


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=watch_parent, args=(os.getppid(),),
                     daemon=True).start()
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
