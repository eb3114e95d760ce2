#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""TAP: the Grafana dashboard (tools/grafana/s3cachefs.json) uses only
metrics the daemon exports, so that it cannot rot: every s3cachefsd_* name
in its queries must be a family of the daemon's own exposition (from
`s3cachefsd --selftest cache ... metrics`, no module or server needed), or
the _bucket/_sum/_count series of one of its histograms. It also checks
that the panels the operators asked for are there, and (a control) that
a made-up metric name is caught."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DASH = os.path.join(ROOT, "tools", "grafana", "s3cachefs.json")
DAEMON = os.path.join(ROOT, "daemon", "s3cachefsd")
NAME = re.compile(r"\bs3cachefsd_[a-z0-9_]+")
# What the dashboard is for (issue 35): hit ratio, GET latency histogram,
# throughput from S3, cache usage against its limit, evictions, the
# write-back queue and its oldest age, upload errors and conflicts; the
# fleet tier's hits, bytes, puts, errors, breaker and leases (issue 34).
REQUIRED = [
    "s3cachefsd_chunk_hits_total", "s3cachefsd_chunk_misses_total",
    "s3cachefsd_s3_request_duration_seconds_bucket",
    "s3cachefsd_s3_received_bytes_total",
    "s3cachefsd_cache_used_bytes", "s3cachefsd_cache_limit_bytes",
    "s3cachefsd_evictions_total",
    "s3cachefsd_writeback_queued_files", "s3cachefsd_writeback_oldest_seconds",
    "s3cachefsd_writeback_upload_errors_total", "s3cachefsd_conflicts_total",
    "s3cachefsd_tier_hits_total", "s3cachefsd_tier_misses_total",
    "s3cachefsd_tier_hit_bytes_total", "s3cachefsd_tier_puts_total",
    "s3cachefsd_tier_errors_total", "s3cachefsd_tier_breaker_state",
    "s3cachefsd_tier_leases_total",
]

n = 0
failed = 0


def ok(cond, desc, diag=""):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, desc))
    if not cond:
        failed += 1
        for line in diag.splitlines():
            print("#   " + line)


def queries(node):
    """Every PromQL string of the dashboard: targets and variables."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("expr", "definition") and isinstance(v, str):
                yield v
            elif k == "query" and isinstance(v, str):
                yield v
            else:
                yield from queries(v)
    elif isinstance(node, list):
        for v in node:
            yield from queries(v)


def exported():
    """The daemon's metric families: {name: type}."""
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run(
            [DAEMON, "--endpoint", "http://127.0.0.1:1", "--allow-http",
             "--anonymous", "--selftest", "cache", "b", "", cache, "metrics"],
            capture_output=True, text=True, timeout=60).stdout
    fams = {}
    for line in out.splitlines():
        m = re.match(r"METRIC # TYPE (\S+) (\S+)$", line)
        if m:
            fams[m.group(1)] = m.group(2)
    return fams


def unknown(names, fams):
    bad = []
    for name in sorted(names):
        if name in fams:
            continue
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if base != name and fams.get(base) in ("histogram", "summary"):
            continue
        bad.append(name)
    return bad


def main():
    try:
        with open(DASH) as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        ok(False, "the dashboard is JSON", str(e))
        return
    ok(True, "the dashboard is JSON")

    panels = [p for p in dash.get("panels", []) if p.get("type") != "row"]
    empty = [p.get("title") for p in panels
             if not p.get("targets") or not all(t.get("expr") for t in p["targets"])]
    ok(panels and not empty, "every panel has queries (%d panels)" % len(panels),
       "without: %s" % empty)
    ids = [p.get("id") for p in dash.get("panels", [])]
    ok(len(ids) == len(set(ids)), "panel ids are unique")
    dsvar = [p.get("title") for p in panels
             if p.get("datasource", {}).get("uid") != "${datasource}"]
    ok(not dsvar, "every panel uses the $datasource variable", "not: %s" % dsvar)

    names = set()
    for q in queries(dash):
        names.update(NAME.findall(q))
    ok(len(names) >= len(REQUIRED), "the dashboard uses %d metric names" % len(names))
    missing = [m for m in REQUIRED if m not in names]
    ok(not missing, "the panels asked for are there (hit ratio, latency, "
       "throughput, usage, evictions, write-back, errors, conflicts, tier)",
       "unused: %s" % missing)

    if not os.access(DAEMON, os.X_OK):
        ok(False, "daemon/s3cachefsd is built (make daemon)")
        return
    fams = exported()
    ok(len(fams) > 20, "the daemon exports its families (%d)" % len(fams))
    bad = unknown(names, fams)
    ok(not bad, "every metric the dashboard uses is exported by the daemon",
       "not exported: %s" % bad)
    # Control: the check catches a name the daemon does not export, and a
    # _bucket of something that is not a histogram.
    ok(unknown({"s3cachefsd_cache_hits_total", "s3cachefsd_uptime_seconds_bucket"}, fams) ==
       ["s3cachefsd_cache_hits_total", "s3cachefsd_uptime_seconds_bucket"],
       "control: names the daemon does not export are caught")


main()
print("1..%d" % n)
sys.exit(1 if failed else 0)
