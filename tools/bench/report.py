#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py - turn one benchmark run into results.md and results.png.

    python3 tools/bench/report.py RUN_DIR OUT_DIR [README]

RUN_DIR is what tools/bench/guest.sh wrote ($VM_OUT/bench: results.tsv,
phases.tsv, env.txt, logs/) plus host.txt and host-load.txt from bench.sh.
OUT_DIR gets results.md and results.png (gnuplot). The analysis of missed
targets comes from docs/bench/analysis.md (hand-written, kept next to the
results) plus what the run itself recorded (s3cachefs counters, fetch
latency histogram, perf profiles). With README (bench.sh passes the
project's README.md for the one run that publishes), the block between
"<!-- bench:begin -->" and "<!-- bench:end -->" there is replaced with this
run's header and target table, so that the README and results.md always
show the same run. README is refused (and so is OUT_DIR docs/bench) unless
host.txt says publish=1: partial runs never reach the published page.
All files are written at once, after everything was computed.

Rows measured in rounds (results.tsv's 11th column) are shown as the median
of their rounds; a ratio of two such rows as the median of the ratios of
rows of the same round, with their spread (min-max).
"""
import collections
import os
import re
import statistics
import subprocess
import sys

RUN, OUT = sys.argv[1], sys.argv[2]
README = sys.argv[3] if len(sys.argv) > 3 else None
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

COLS = ["system", "mode", "workload", "status", "mibs", "iops", "p50", "p99", "secs", "note", "round"]
WORKLOADS = collections.OrderedDict([
    ("seq1", "Sequential read, 1 MiB blocks, 1 job"),
    ("seq4", "Sequential read, 1 MiB blocks, 4 jobs"),
    ("rand4k", "Random read, 4 KiB, 4 jobs"),
    ("rand128k", "Random read, 128 KiB, 4 jobs"),
    ("mmap4k", "mmap random read, 4 KiB pages, 4 jobs"),
    ("dseq1", "O_DIRECT sequential read, 1 MiB blocks, 1 job"),
    ("drand4k", "O_DIRECT random read, 4 KiB, 4 jobs"),
])
# What each state is compared with: the limit measured in the same run.
LIMIT = {"warm": ("ext4", "nvme"), "hot": ("ext4", "pagecache"), "cold": ("curl", "cold")}
# The cold rows' second limit: curl writing what it reads into a file on the
# same NVMe, as s3cachefs writes every byte it fetches into its cache.
LIMIT2 = {"cold": ("curl-file", "cold")}
LIMITS = ("ext4", "curl", "curl-file")
STATE_LABEL = {
    ("ext4", "nvme"): "ext4 limit, NVMe (page cache dropped)",
    ("ext4", "pagecache"): "ext4 limit, page cache",
    ("curl", "cold"): "curl limit (raw ranged GETs to s3rver)",
    ("curl-file", "cold"): "curl into a file on the NVMe (limit)",
}
PEERS = ["s3fs", "rclone"]


def read_kv(path):
    kv = {}
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    kv[k] = v
    except OSError:
        pass
    return kv


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


class Ratio(float):
    """A ratio, with lo/hi (the spread of its per-round ratios) and n, the
    rounds it is the median of (1: a ratio of two single or median rows)."""

    def __new__(cls, v, lo=None, hi=None, n=1):
        o = float.__new__(cls, v)
        o.lo, o.hi, o.n = lo, hi, n
        return o

    def text(self, nd=2):
        t = ("%." + str(nd) + "f") % self
        if self.n > 1:
            t += (" (%." + str(nd) + "f–%." + str(nd) + "f)") % (self.lo, self.hi)
        return t


def paired(a, b, m):
    """KEY a's figure M over KEY b's: the median of the ratios of their rows
    of the same round, with min and max, where at least two rounds of both
    went well; else the ratio of their (median) rows. None if either is
    missing."""
    ra = {r["round"]: num(r[m]) for r in RR.get(a, []) if r["status"] == "ok"}
    rb = {r["round"]: num(r[m]) for r in RR.get(b, []) if r["status"] == "ok"}
    rs = [ra[k] / rb[k] for k in sorted(ra) if k in rb and ra[k] is not None and rb[k]]
    if len(rs) >= 2:
        return Ratio(statistics.median(rs), min(rs), max(rs), len(rs))
    va, vb = metric(a, m), metric(b, m)
    if va is None or not vb:
        return None
    return Ratio(va / vb)


def rtext(v, nd=2):
    """A ratio cell: "0.93 (0.90–0.97)" for a median of rounds."""
    if v is None:
        return "–"
    return v.text(nd) if isinstance(v, Ratio) else ("%." + str(nd) + "f") % v


rows = []
with open(os.path.join(RUN, "results.tsv")) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        parts += [""] * (len(COLS) - len(parts))
        r = dict(zip(COLS, parts[:len(COLS)]))
        r["round"] = int(r["round"]) if r["round"].isdigit() else 1
        rows.append(r)
ALLROWS = list(rows)	# (rows is reused by the small-objects table)
RR = collections.OrderedDict()	# key -> its rows, one per round
for r in rows:
    RR.setdefault((r["system"], r["mode"], r["workload"]), []).append(r)


def merged(rs):
    """One row for the rows of a key: the median of each figure over the
    rounds that went well (a round that did not is named in the note); the
    last row if none did."""
    if len(rs) == 1:
        return rs[0]
    oks = [r for r in rs if r["status"] == "ok"]
    if not oks:
        return rs[-1]
    m = dict(oks[0])
    for c in ("mibs", "iops", "p50", "p99", "secs"):
        vals = [num(r[c]) for r in oks if num(r[c]) is not None]
        m[c] = ("%.6g" % statistics.median(vals)) if vals else ""
    notes = ["median of %d rounds" % len(oks)]
    notes += ["round %d: %s (%s)" % (r["round"], r["status"], r["note"]) for r in rs if r["status"] != "ok"]
    m["note"] = "; ".join([m["note"]] + notes if m["note"] else notes)
    return m


R = {k: merged(v) for k, v in RR.items()}
env = read_kv(os.path.join(RUN, "env.txt"))
host = read_kv(os.path.join(RUN, "host.txt"))
phases = []
try:
    with open(os.path.join(RUN, "phases.tsv")) as f:
        phases = [l.rstrip("\n").split("\t") for l in f if "\t" in l]
except OSError:
    pass
loads = []
try:
    with open(os.path.join(RUN, "host-load.txt")) as f:
        for l in f:
            p = l.split()
            if len(p) >= 3:
                loads.append((float(p[1]), int(p[2]) if p[2].isdigit() else 0))
except OSError:
    pass


def ok(key):
    r = R.get(key)
    return r if r and r["status"] == "ok" else None


def metric(key, m):
    r = ok(key)
    return num(r[m]) if r else None


def main_metric(wl):
    return "iops" if wl in ("rand4k", "mmap4k", "drand4k") else "mibs"


def limit_of(sysname, mode, second=False):
    """The limit a row is compared with (SECOND: its second limit); a limit
    row is its own, except that the limits of the same state are compared
    with each other (curl into a file against curl, and back)."""
    if (sysname, mode) == LIMIT2.get(mode):
        return (sysname, mode) if second else LIMIT[mode]
    if (sysname, mode) == LIMIT.get(mode) and second:
        return LIMIT2.get(mode)
    if sysname in LIMITS:
        return (sysname, mode) if not second else None
    return (LIMIT2 if second else LIMIT).get(mode)


def ratio(key, second=False):
    """Throughput of KEY over its limit's (with SECOND, its second limit's),
    same workload, same run: a Ratio, the median of the rounds' ratios."""
    sysname, mode, wl = key
    lim = limit_of(sysname, mode, second)
    if not lim:
        return None
    if lim == (sysname, mode):
        return Ratio(1.0) if ok(key) else None	# the limit itself
    return paired(key, lim + (wl,), "mibs")


def fmt(v, nd=1):
    if v is None:
        return "–"
    if v >= 100:
        return "%.0f" % v
    return ("%." + str(nd) + "f") % v


def fmt_us(v):
    if v is None or v == 0:
        return "–"
    if v >= 1e6:
        return "%.2f s" % (v / 1e6)
    if v >= 1e3:
        return "%.1f ms" % (v / 1e3)
    return "%.0f µs" % v


def cell_status(r):
    if r is None:
        return "not run"
    if r["status"] == "ok":
        return None
    return "**%s**: %s" % (r["status"], r["note"])


# --- targets -------------------------------------------------------------------
def best_peer(mode, wl, m):
    vals = [(metric((p, mode, wl), m), p) for p in PEERS]
    vals = [v for v in vals if v[0] is not None]
    return max(vals) if vals else (None, None)


targets = []


def target(tid, text, got, want, detail, missing=None):
    """A target row; GOT a ratio (a Ratio of rounds shows its spread)."""
    if got is None and "–" in detail.split(" vs ")[0] and detail.split(" vs ")[1].startswith("–"):
        return	# neither side was measured in this run (quick runs skip rows)
    if got is None:
        verdict = "n/a"
    else:
        verdict = "PASS" if got >= want else "FAIL"
    targets.append({"id": tid, "text": text, "got": got, "want": want,
                    "verdict": verdict, "detail": detail, "missing": missing})


def vs(a, b, what):
    return a / b if a is not None and b else None


# Rows measured in rounds: the figures are medians, the ratio the median of
# the rounds' ratios (paired), shown with its spread.
def versus(ka, kb, m):
    return metric(ka, m), metric(kb, m), paired(ka, kb, m)


for wl in ("seq1", "seq4"):
    a, b, r = versus(("s3cachefs", "warm", wl), ("ext4", "nvme", wl), "mibs")
    target("warm-seq-%s" % wl, "warm sequential (%s) ≥ 0.95 × ext4 NVMe" % wl, r, 0.95,
           "%s vs %s MiB/s" % (fmt(a), fmt(b)))
for wl in ("seq1", "seq4"):
    a, b, r = versus(("s3cachefs", "hot", wl), ("ext4", "pagecache", wl), "mibs")
    target("hot-seq-%s" % wl, "hot sequential (%s) ≥ 0.95 × ext4 page cache" % wl, r, 0.95,
           "%s vs %s MiB/s" % (fmt(a), fmt(b)))
a, b, r = versus(("s3cachefs", "warm", "rand4k"), ("ext4", "nvme", "rand4k"), "iops")
target("warm-rand4k", "warm 4 KiB random IOPS ≥ 0.80 × ext4 NVMe", r, 0.80,
       "%s vs %s IOPS" % (fmt(a), fmt(b)))
for p in PEERS:
    for wl in ("seq1", "seq4"):
        a, b, r = versus(("s3cachefs", "warm", wl), (p, "warm", wl), "mibs")
        target("warm-seq-%s-%s" % (wl, p), "warm sequential (%s) ≥ 2.5 × %s" % (wl, p), r, 2.5,
               "%s vs %s MiB/s" % (fmt(a), fmt(b)))
    a, b, r = versus(("s3cachefs", "warm", "rand4k"), (p, "warm", "rand4k"), "iops")
    target("warm-rand4k-%s" % p, "warm 4 KiB random ≥ 2 × %s" % p, r, 2.0,
           "%s vs %s IOPS" % (fmt(a), fmt(b)))
for wl in WORKLOADS:
    m = main_metric(wl)
    a = metric(("s3cachefs", "hot", wl), m)
    b, who = best_peer("hot", wl, m)
    if a is None and b is None:
        continue
    unit = "IOPS" if m == "iops" else "MiB/s"
    target("hot-%s-peers" % wl, "hot %s ≥ best peer" % wl,
           paired(("s3cachefs", "hot", wl), (who, "hot", wl), m) if who else None, 1.0,
           "%s vs %s %s (%s)" % (fmt(a), fmt(b), unit, who or "–"))
for wl in ("seq1", "seq4"):
    a, b, r = versus(("s3cachefs", "cold", wl), ("curl", "cold", wl), "mibs")
    # The ranged-GET reference row (guest.sh curl_ranged): not the target's
    # limit, but it tells the server's per-request cost from ours.
    rg = metric(("curl", "cold", wl + "r"), "mibs")
    extra = "; %.2f × curl as 8 MiB ranged GETs (%s MiB/s)" % (a / rg, fmt(rg)) if a and rg else ""
    target("cold-seq-%s" % wl, "cold sequential (%s) ≥ 0.80 × raw curl" % wl, r, 0.80,
           "%s vs %s MiB/s%s" % (fmt(a), fmt(b), extra))
    # The second limit: curl also writing every byte into a file on the
    # NVMe, as s3cachefs does into its cache.
    a, b, r = versus(("s3cachefs", "cold", wl), ("curl-file", "cold", wl), "mibs")
    target("cold-seq-%s-file" % wl, "cold sequential (%s) ≥ 0.80 × curl into a file on the NVMe" % wl,
           r, 0.80, "%s vs %s MiB/s" % (fmt(a), fmt(b)))

for wl in ("dseq1", "drand4k"):
    m = main_metric(wl)
    unit = "IOPS" if m == "iops" else "MiB/s"
    a, b, r = versus(("s3cachefs", "warm", wl), ("ext4", "nvme", wl), m)
    target("warm-direct-%s" % wl, "warm O_DIRECT %s ≥ 0.90 × ext4 O_DIRECT" % wl, r, 0.90,
           "%s vs %s %s" % (fmt(a), fmt(b), unit))
b, a, r = versus(("curl", "cold", "ttfb"), ("s3cachefs", "cold", "ttfb"), "p50")
target("cold-ttfb", "cold time to first byte ≤ 1.5 × curl's", r, 1 / 1.5,
       "%s vs %s" % (fmt_us(a), fmt_us(b)))
a, b = metric(("s3cachefs", "cold", "small"), "iops"), metric(("curl", "cold", "small"), "iops")
target("cold-small", "cold 100 KiB objects, 8 readers ≥ 0.80 × curl (files/s)", vs(a, b, ""), 0.80,
       "%s vs %s files/s" % (fmt(a), fmt(b)))
a, b = metric(("s3cachefs", "cold", "smallf"), "iops"), metric(("curl", "cold", "smallf"), "iops")
target("cold-small-fakes3", "cold 100 KiB objects on fakes3 (a LIST costs what a GET does), 8 readers ≥ 0.80 × curl (files/s)",
       vs(a, b, ""), 0.80, "%s vs %s files/s" % (fmt(a), fmt(b)))
# Warm: the fakes3 run's files where it ran (it reads all of them; the
# s3rver run reads the few its cold run got to, a run of some 50 ms).
wl = "smallf" if None not in (metric(("s3cachefs", "warm", "smallf"), "iops"),
                               metric(("ext4", "nvme", "smallf"), "iops")) else "small"
a, b = metric(("s3cachefs", "warm", wl), "iops"), metric(("ext4", "nvme", wl), "iops")
target("warm-small", "warm 100 KiB objects%s, 8 readers ≥ 0.90 × ext4 (files/s)" %
       (" (the fakes3 run's)" if wl == "smallf" else ""), vs(a, b, ""), 0.90,
       "%s vs %s files/s" % (fmt(a), fmt(b)))

# Writes: a checkpoint's time to durable in S3 (as MiB/s over that time).
a, b = metric(("s3cachefs", "write", "ckpt"), "mibs"), metric(("curl", "write", "ckpt"), "mibs")
target("ckpt-curl", "checkpoint write, time to durable in S3 ≤ 1.2 × parallel multipart (curl)",
       vs(a, b, ""), 1 / 1.2, "%s vs %s MiB/s" % (fmt(a), fmt(b)))
for p in PEERS:
    b = metric((p, "write", "ckpt"), "mibs")
    target("ckpt-%s" % p, "checkpoint write, time to durable in S3 < %s's" % p, vs(a, b, ""), 1.0,
           "%s vs %s MiB/s" % (fmt(a), fmt(b)))
    c, d = metric(("s3cachefs", "write", "creates"), "iops"), metric((p, "write", "creates"), "iops")
    target("creates-%s" % p, "4 KiB file creates, 8 writers ≥ %s (files/s)" % p, vs(c, d, ""), 1.0,
           "%s vs %s files/s" % (fmt(c), fmt(d)))


# Write-back: the writers wait for the cache device, the upload runs behind.
a, b = metric(("s3cachefs-wb", "ack", "ckpt"), "mibs"), metric(("ext4", "nvme", "ckpt"), "mibs")
target("ckpt-wb-ext4", "write-back checkpoint, time to the last close ≤ ext4 with fsync / 0.9",
       vs(a, b, ""), 0.9, "%s vs %s MiB/s" % (fmt(a), fmt(b)))
a, b = metric(("s3cachefs-wb", "write", "ckpt"), "mibs"), metric(("curl", "write", "ckpt"), "mibs")
target("ckpt-wb-curl", "write-back checkpoint, time to durable in S3 ≤ 1.2 × parallel multipart (curl)",
       vs(a, b, ""), 1 / 1.2, "%s vs %s MiB/s" % (fmt(a), fmt(b)))
for p in PEERS:
    c, d = metric(("s3cachefs-wb", "write", "creates"), "iops"), metric((p, "write", "creates"), "iops")
    target("creates-wb-%s" % p, "write-back 4 KiB file creates, 8 writers ≥ %s (files/s)" % p,
           vs(c, d, ""), 1.0, "%s vs %s files/s" % (fmt(c), fmt(d)))


def walk_secs(key):
    """Seconds of a walk; one that ran out of time counts its deadline
    (a lower bound: the ratio it gives is an upper bound, still a FAIL)."""
    r = R.get(key)
    if not r or r["status"] not in ("ok", "timeout"):
        return None, "–"
    v = num(r["secs"])
    if v is None:
        return None, "–"
    return v, ("%.1f s" % v) if r["status"] == "ok" else ("> %.0f s (cut)" % v)


a, at = walk_secs(("s3cachefs", "cold", "bigls"))
b, bt = walk_secs(("curl", "cold", "bigls"))
target("cold-bigls", "`ls -l` of a %s-object directory, cold ≤ 1.25 × the paginated listing's time" %
       env.get("bigls_n", "?"), vs(b, a, ""), 0.80, "%s vs %s" % (at, bt))
a, b = metric(("s3cachefs", "cold", "bigls-first"), "p50"), metric(("curl", "cold", "bigls-first"), "p50")
target("cold-bigls-first", "its first entry, cold ≤ 2 × one listing page", vs(b, a, ""), 0.50,
       "%s vs %s" % (fmt_us(a), fmt_us(b)))
a, at = walk_secs(("s3cachefs", "warm", "bigls"))
b, bt = walk_secs(("ext4", "warm", "bigls"))
target("warm-bigls", "`ls -l` of it, warm ≤ 1.5 × `ls -l` of as many files on the cache ext4",
       vs(b, a, ""), 1 / 1.5, "%s vs %s" % (at, bt))
a, at = walk_secs(("s3cachefs", "cold", "bigfind"))
b, bt = walk_secs(("curl", "cold", "bigfind"))
target("cold-bigfind", "`find` over %s objects in %s directories, cold ≤ 1.25 × the best listing of them"
       % (env.get("bigfind_n", "?"), env.get("bigfind_dirs", "?")), vs(b, a, ""), 0.80, "%s vs %s" % (at, bt))

# --- analysis (hand-written, per target id) -------------------------------------
analysis = collections.OrderedDict()
apath = os.path.join(REPO, "docs", "bench", "analysis.md")
try:
    with open(apath) as f:
        cur = None
        for line in f:
            m = re.match(r"^## +(\S+)", line)
            if m:
                cur = m.group(1)
                analysis[cur] = []
            elif cur:
                analysis[cur].append(line.rstrip("\n"))
except OSError:
    pass


def analysis_for(tid):
    """Sections whose id is a prefix of the target id (most specific last)."""
    out = []
    for k, lines in analysis.items():
        if tid == k or tid.startswith(k + "-") or (k.endswith("*") and tid.startswith(k[:-1])):
            text = "\n".join(lines).strip()
            if text:
                out.append(text)
    return out


# --- chart ------------------------------------------------------------------------
def chart(png):
    """Bars of throughput over the limit, per workload, for the three states."""
    data = os.path.join(RUN, "chart.dat")
    groups = [
        ("warm", "", False),
        ("hot", "", False),
        ("cold", "", False),
        ("cold", " → file", True),	# against the second limit
    ]
    series = ["s3cachefs", "s3fs", "rclone"]
    lines = []
    labels = []
    for mode, tag, second in groups:
        lim = (LIMIT2 if second else LIMIT)[mode]
        wls = [w for w in WORKLOADS if metric(lim + (w,), "mibs")]
        for wl in wls:
            vals = []
            for s in series:
                r = ratio((s, mode, wl), second)
                vals.append("%.3f" % r if r is not None else "0")
            labels.append("%s\\n%s" % (mode, wl))
            lines.append('"%s %s%s" %s' % (mode, wl, tag, " ".join(vals)))
        if wls:
            lines.append('"" 0 0 0')
    if lines:
        lines.pop()
    with open(data, "w") as f:
        f.write("# label " + " ".join(series) + "\n")
        f.write("\n".join(lines) + "\n")
    title = ("s3cachefs vs peers, %s run of %s, %s: throughput / limit, medians of rounds\\n"
             "warm: ext4 NVMe, hot: ext4 page cache, cold: raw curl, cold → file: curl into a file on the NVMe") % (
        host.get("mode", env.get("mode", "")), host.get("commit", "?"), host.get("date", ""))
    gp = """
set terminal pngcairo size 1400,560 font "sans,10"
set output '%s'
set title "%s" font "sans,11"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "ratio to the limit measured in the same run (1.0 = limit)"
set yrange [0:*]
set grid ytics
set key top right
set xtics rotate by -35 font "sans,9"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#444444"
plot '%s' using 2:xtic(1) title "s3cachefs" lc rgb "#1f77b4", \\
     '' using 3 title "s3fs-fuse" lc rgb "#ff7f0e", \\
     '' using 4 title "rclone mount" lc rgb "#2ca02c"
""" % (png, title.replace('"', "'"), data)
    gpf = os.path.join(RUN, "chart.gp")
    with open(gpf, "w") as f:
        f.write(gp)
    subprocess.run(["gnuplot", gpf], check=True)


# --- the run's header: results.md and the README say the same --------------------
mode = host.get("mode", "")
others = max(n for _, n in loads) - 1 if loads else 0


def load_text():
    """The host's load during the run (bench.sh's host-load.txt)."""
    if not loads:
        return "not sampled"
    avg = sum(l for l, _ in loads) / len(loads)
    return "load average %.2f mean, %.2f max on %s CPUs%s" % (
        avg, max(l for l, _ in loads), host.get("host_cpus", "?"),
        "; **up to %d other QEMU guest(s) shared the host's CPUs** (figures are noisier, "
        "the ratios less so)" % others if others > 0 else "; no other guest ran meanwhile")


def rounds_text():
    n = env.get("rounds", "1")
    if n in ("", "1"):
        return "one round of every row"
    return ("%s rounds of the cold, warm and hot rows of %s, interleaved (limit, s3cachefs, "
            "limit, ...); figures are medians, ratios the median of the rounds' ratios "
            "(min–max in brackets); the peers and the other rows: one round" % (
                n, ", ".join(env.get("round_systems", "").split()) or "?"))


def left_out():
    """What this run did not measure that the full run does: systems,
    phases, workloads (from env.txt), systems that failed or hung, and the
    knobs that made it a partial run (host.txt)."""
    out = []

    def missing(now, full, what):
        a, b = env.get(now), env.get(full)
        if a is None or b is None:
            return
        gone = [x for x in b.split() if x not in a.split()]
        if gone:
            out.append("%s %s" % (what, ", ".join(gone)))
    missing("systems", "systems_all", "systems")
    missing("phases", "phases_all", "phases")
    missing("cold_wl", "cold_wl_full", "cold workloads")
    missing("warm_wl", "warm_wl_full", "warm workloads")
    missing("hot_wl", "hot_wl_full", "hot workloads")
    if env.get("profile") == "0":
        out.append("profiles")
    if env.get("hugels_n") == "0":
        out.append("the huge directory")
    down = collections.OrderedDict()
    for r in ALLROWS:
        if r["status"] in ("skip", "fail") and r["system"] not in LIMITS:
            down.setdefault(r["system"], r["note"])
    for sname, why in down.items():
        if "mount" in why or why.startswith("skipped"):
            out.append("%s (%s)" % (sname, why))
    if host.get("vm_status", "0") not in ("0", ""):
        out.append("the rest of the run: the guest did not finish (status %s)" % host["vm_status"])
    if mode == "quick":
        out.append("the full run's dataset, run times and rows (a --quick run)")
    if host.get("left_knobs"):
        out.append("knobs set: %s" % host["left_knobs"])
    return out


def stamp():
    """Who made these figures: commit, date, host load, what was left out."""
    lo = left_out()
    return [
        "Run of commit `%s`%s, %s, `tools/bench/bench.sh%s`, %s s wall (%s)." % (
            host.get("commit", "?"),
            " with uncommitted changes under kmod/ daemon/ uapi/" if host.get("dirty", "0") not in ("0", "") else "",
            host.get("date", "?"), " --quick" if mode == "quick" else "", host.get("wall_s", "?"),
            "published: results.md, results.png and the README's block come from this one run"
            if host.get("publish") == "1" else "not published: a partial or private run"),
        "",
        "- Host load: %s." % load_text(),
        "- Left out: %s." % ("; ".join(lo) if lo else "nothing (every system, phase and workload of the full run)"),
        "- Rounds: %s." % rounds_text(),
    ]


# --- results.md -------------------------------------------------------------------
md = []
w = md.append
w("# s3cachefs benchmark results (%s run)" % mode)
w("")
w("> **Read this first.** Everything below ran inside one QEMU guest under **TCG**")
w("> (software CPU emulation; KVM is not usable on these build hosts). Under TCG every")
w("> system is **CPU-bound**: the emulated NVMe, the page cache, s3rver and the FUSE")
w("> daemons all compete for the same two emulated CPUs, so absolute MiB/s and IOPS say")
w("> nothing about real hardware. **Only ratios between rows of this one run mean")
w("> anything**; absolute figures need a run on real hardware (same script, a real NVMe")
w("> and a real S3 endpoint).")
w("")
for line in stamp():
    w(line)
w("")
w("| | |")
w("|---|---|")
w("| guest | Linux %s, %s vCPU, %s MiB, QEMU %s TCG on a %s-CPU host |" % (
    env.get("kernel", "?"), env.get("cpus", "?"), env.get("mem_mib", "?"),
    host.get("qemu", "?"), host.get("host_cpus", "?")))
w("| dataset | %s shards of %s MiB (real random bytes, served by s3rver from the NVMe ext4); "
  "a %s MiB object for the first byte; `ls -l` of %s objects in one directory; `find` over %s objects in %s |" % (
      env.get("shards", "?"), env.get("shard_mb", "?"), env.get("big_mb", "?"), env.get("meta_ls", "?"),
      env.get("meta_find", "?"), "a tree of directories"))
w("| fio | %s, psync (mmap for the mmap rows), runs of %s s (cold 1-stream runs: %s s); warm and cold "
  "sequential runs end at the end of the data at the latest (no block read twice); hot runs loop over "
  "the first %s%% of each shard, loaded into the page cache beforehand |" % (
    host.get("fio", "?"), env.get("runtime", "?"), env.get("cold_runtime", "?"), env.get("hot_pct", "?")))
w("| S3 server | s3rver %s on node %s, in the guest |" % (host.get("s3rver", "?"), host.get("node", "?")))
w("| peers | s3fs-fuse %s (`use_cache` on the NVMe), rclone %s (`--vfs-cache-mode full`, cache on the NVMe), curl %s |" % (
    host.get("s3fs", "?"), host.get("rclone", "?"), host.get("curl", "?")))
w("| measured | module md5 `%s`, daemon md5 `%s` |" % (env.get("module", "?"), env.get("daemon", "?")))
w("| wall time | %s s for the whole run, VM boot included |" % host.get("wall_s", "?"))
if loads:
    w("| host load | %s |" % load_text())
w("| rounds | %s |" % rounds_text())
w("")

# What the person who ran it recorded about the run (RUN/notes.md), if anything.
try:
    with open(os.path.join(RUN, "notes.md")) as f:
        for line in f.read().strip().splitlines():
            w("> " + line if line else ">")
    w("")
except OSError:
    pass

# Targets.
w("## Targets")
w("")
w("Ratios against the limits measured in this run (printed, not asserted). Warm = cache")
w("full, page cache dropped; hot = in the page cache; cold = empty cache. Where both rows")
w("were measured in rounds, the ratio is the median of the rounds' ratios, min–max in")
w("brackets, and the figures are the rows' medians.")
w("")
w("| target | measured | ratio | needed | result |")
w("|---|---|---:|---:|:---:|")
def target_cells(t):
    """The ratio and verdict cells of a target row (results.md and README)."""
    return (rtext(t["got"]),
            "**%s**" % t["verdict"] if t["verdict"] == "FAIL" else t["verdict"])


for t in targets:
    got, verdict = target_cells(t)
    w("| %s | %s | %s | %.2f | %s |" % (t["text"], t["detail"], got, t["want"], verdict))
w("")

# Data tables, one per workload.
w("## Data path")
w("")
w("× limit: throughput divided by that of the limit for the same workload in the same run")
w("(warm rows: ext4 on the NVMe with the page cache dropped; hot rows: ext4 from the page")
w("cache; cold rows: raw curl GETs to s3rver, to /dev/null). × file: cold rows over their")
w("second limit, the same GETs written into a file on the same NVMe (s3cachefs writes every")
w("byte it fetches into its cache there). Rows measured in rounds show their medians, and")
w("ratios the median of the rounds' ratios with their min–max. Latencies are fio's")
w("completion latencies per I/O (p50/p99 over all jobs).")
w("")
order = [("ext4", "nvme"), ("ext4", "pagecache"), ("curl", "cold"), ("curl-file", "cold")]
for s in ("s3cachefs", "s3fs", "rclone"):
    order += [(s, "cold"), (s, "warm"), (s, "hot")]
for wl, title in WORKLOADS.items():
    present = [k for k in order if (k + (wl,)) in R]
    if not present:
        continue
    w("### %s" % title)
    w("")
    # The second limit's column where it was measured for this workload.
    two = ("curl-file", "cold", wl) in R
    w("| system | state | MiB/s | IOPS | p50 | p99 | × limit |%s |" % (" × file |" if two else ""))
    w("|---|---|---:|---:|---:|---:|---:|%s---|" % ("---:|" if two else ""))
    for k in present:
        key = k + (wl,)
        r = R[key]
        st = cell_status(r)
        name = STATE_LABEL.get(k, None)
        sysname, state = (name, "") if name else (k[0], k[1])
        if name:
            sysname = {"curl-file": "curl → file (limit)"}.get(k[0], k[0] + " (limit)")
            state = {"nvme": "NVMe", "pagecache": "page cache", "cold": "cold"}[k[1]]
        if st:
            w("| %s | %s | – | – | – | – | – |%s %s |" % (sysname, state, " – |" if two else "", st))
            continue
        r2 = (" %s |" % rtext(ratio(key, True))) if two else ""
        w("| %s | %s | %s | %s | %s | %s | %s |%s %s |" % (
            sysname, state, fmt(num(r["mibs"])), fmt(num(r["iops"]), 0),
            fmt_us(num(r["p50"])), fmt_us(num(r["p99"])),
            rtext(ratio(key)), r2, r["note"]))
        rkey = ("curl", "cold", wl + "r")
        if k == ("curl", "cold") and ok(rkey):
            rr = R[rkey]
            rt = vs(num(rr["mibs"]), num(r["mibs"]) if not st else None, "")
            w("| curl, ranged (reference) | cold | %s | – | – | – | %s |%s %s |" % (
                fmt(num(rr["mibs"])), "%.2f" % rt if rt is not None else "–", " – |" if two else "",
                rr["note"]))
    w("")

# Time to first byte.
w("### Time to first byte of a cold large object")
w("")
w("open() + read() of one byte of a %s MiB object nobody has read yet (a `stat` first, untimed);" %
  env.get("big_mb", "?"))
w("curl: `time_starttransfer` of a ranged GET of its first 4 KiB.")
w("")
w("| system | time | × curl |")
w("|---|---:|---:|")
cb = metric(("curl", "cold", "ttfb"), "p50")
for s in ("curl", "s3cachefs", "s3fs", "rclone"):
    r = R.get((s, "cold", "ttfb"))
    st = cell_status(r)
    if st:
        w("| %s | %s | – |" % (s, st))
    else:
        v = num(r["p50"])
        w("| %s | %s | %s |" % (s, fmt_us(v), "%.1f" % (v / cb) if cb and v else "–"))
w("")

def walk_cell(r, absent="–"):
    """A metadata walk's cell: its time and rate, what went wrong, or
    @absent when it did not run."""
    if r is None:
        return absent
    return cell_status(r) or "%.2f s (%s/s)" % (num(r["secs"]), r["iops"])


# Metadata.
w("## Metadata")
w("")
w("Wall time of `ls -l` of one directory and of `find -type f` over a tree; cold = just")
w("mounted (nothing listed, page cache and dentries dropped), warm = the same command again")
w("right after. Deadline %s s per walk; objects/s in brackets." % env.get("meta_timeout", "?"))
w("")
w("| system | ls -l cold | ls -l warm | find cold | find warm |")
w("|---|---:|---:|---:|---:|")
for s in ("s3cachefs", "s3fs", "rclone"):
    cells = []
    for wl in ("ls-l", "find"):
        for mode_ in ("cold", "warm"):
            cells.append(walk_cell(R.get((s, mode_, wl)), "not run"))
    if any(c != "not run" for c in cells):
        w("| %s | %s |" % (s, " | ".join([cells[0], cells[1], cells[2], cells[3]])))
w("")

# Small objects.
if any(k[2] in ("small", "smallf") for k in R):
    w("### Small objects")
    w("")
    w("%s objects of 100 KiB, read whole by 8 threads in one shuffled order (open, read, close;" %
      env.get("small_n", "?"))
    w("no listing first: a loader that opens names from an index), each run cut after %s s;" %
      env.get("small_runtime", "?"))
    w("cold: nothing cached; warm: the files that system read cold, again, page cache dropped.")
    w("Limits: curl with 8 parallel keep-alive GETs of the same names (cold); the same files")
    w("read from s3cachefs' cache directory on the ext4 (warm). Rows marked fakes3: the same names")
    w("on the in-memory fake S3 (one shared body), where a LIST costs what a GET does, as on S3")
    w("(s3rver answers a LIST in 1-2 s under TCG whatever its prefix); the cold limit is curl's")
    w("GETs of them, the warm one ext4's reads of the same files. The fakes3 runs are cut after")
    w("%s s (all the names, in the full run), with `meta_ttl=3600` (the warm run reads names the" %
      env.get("smallf_runtime", "?"))
    w("cold one checked minutes before).")
    w("")
    w("| system | state | files/s | MiB/s | × limit | |")
    w("|---|---|---:|---:|---:|---|")
    # The limits by workload and state: curl's cold GETs, ext4's warm reads.
    lim = {(w_, state): metric(k + (w_,), "iops") for w_ in ("small", "smallf")
           for state, k in (("cold", ("curl", "cold")), ("warm", ("ext4", "nvme")))}
    rows = [(k, "small") for k in [("curl", "cold"), ("ext4", "nvme")] +
            [(s_, m_) for s_ in ("s3cachefs", "s3fs", "rclone") for m_ in ("cold", "warm")]]
    rows += [(k, "smallf") for k in (("curl", "cold"), ("ext4", "nvme"), ("s3cachefs", "cold"),
                                      ("s3cachefs", "warm"))]
    for k, wl in rows:
        r = R.get(k + (wl,))
        if r is None:
            continue
        st = cell_status(r)
        name = k[0] + (" (limit)" if k[0] in ("curl", "ext4") else "")
        state = {"nvme": "cache ext4"}.get(k[1], k[1]) + (" (fakes3)" if wl == "smallf" else "")
        if st:
            w("| %s | %s | – | – | – | %s |" % (name, state, st))
            continue
        l_ = lim[(wl, "cold" if k[1] == "cold" else "warm")]
        v = num(r["iops"])
        w("| %s | %s | %s | %s | %s | %s |" % (name, state, fmt(v, 0), fmt(num(r["mibs"])),
                                             "%.2f" % (v / l_) if l_ and v else "–", r["note"]))
    w("")

# Writes.
if any(k[2] in ("ckpt", "creates") for k in R):
    w("### Writes")
    w("")
    w("Checkpoint: %s of the shards (%s MiB each) written at once into a directory of each system, one" %
      (env.get("ckpt_files", "4"), env.get("shard_mb", "?")))
    w("writer per file (create, 4 MiB writes, fsync, close), timed until S3 has every object with")
    w("its size (HEAD polls; rclone uploads after close). Limit: the same files as parallel")
    w("multipart uploads straight to s3rver (python http.client, 16 MiB parts, 4 per file in flight,")
    w("all files at once: s3cachefs' defaults). ext4 with fsync: a reference, not a limit.")
    w("Small files: 8 threads create 4 KiB files (create, write, close) for %s s; limit: 8 keep-alive" %
      env.get("create_runtime", "?"))
    w("PutObject streams. A close on s3cachefs and s3fs returns once the object is in S3; on rclone,")
    w("before it is uploaded. s3cachefs write-back (`writeback,upload_delay=1`): an fsync or close")
    w("returns once the cache device has the file; its \"closes\" row")
    w("times the writers (against ext4 with fsync), its \"in S3\" row the same run until S3 had every")
    w("object, after `s3cachectl sync` as a job ends (against curl). \"No streamed uploads\": the")
    w("same mount with `stream_part_mb=0` (every part goes up after the fsync), a reference for what")
    w("uploading finished parts while the files are written gains in this run.")
    w("")
    w("| system | workload | MiB/s | files/s | s | × limit | |")
    w("|---|---|---:|---:|---:|---:|---|")
    for wl in ("ckpt", "creates"):
        m = "mibs" if wl == "ckpt" else "iops"
        lim = metric(("curl", "write", wl), m)
        for k in [("curl", "write"), ("ext4", "nvme"), ("s3cachefs", "write"),
                  ("s3cachefs-nostream", "write"), ("s3cachefs-wb", "ack"), ("s3cachefs-wb", "write"), ("s3fs", "write"),
                  ("rclone", "write")]:
            r = R.get(k + (wl,))
            if r is None:
                continue
            name = k[0] + {"curl": " (limit)", "ext4": " (fsync, reference)"}.get(k[0], "")
            if k[0] == "s3cachefs-wb":
                name = "s3cachefs write-back (%s)" % ("closes" if k[1] == "ack" else "in S3, after s3cachectl sync")
            if k[0] == "s3cachefs-nostream":
                name = "s3cachefs, no streamed uploads (stream_part_mb=0, reference)"
            st = cell_status(r)
            if st:
                w("| %s | %s | – | – | – | – | %s |" % (name, wl, st))
                continue
            v = num(r[m])
            x = "%.2f" % (v / lim) if lim and v and k[0] != "ext4" and k[1] != "ack" else "–"
            w("| %s | %s | %s | %s | %s | %s | %s |" % (name, wl, fmt(num(r["mibs"])),
                                                     fmt(num(r["iops"]), 0), r["secs"], x, r["note"]))
    w("")

# The big directory.
if any(k[2].startswith("bigls") for k in R):
    w("### A directory of %s objects" % env.get("bigls_n", "?"))
    w("")
    w("Served by tests/s3server/fakes3.py (s3rver lists such a bucket in minutes under TCG).")
    w("Limit: ListObjectsV2 pages (1000 keys each) over one keep-alive connection (python")
    w("http.client: an exec of curl per page costs more than the page under TCG). First entry:")
    w("`os.scandir()` of the cold directory until its first entry, on a fresh mount. `ls -l`")
    w("cold: a fresh mount and an empty cache; warm: the same again right after; its limit is")
    w("`ls -l` of as many empty files in one directory of the cache ext4, after one untimed walk.")
    if env.get("dir_index", "1") == "1":
        w("s3cachefs mounts with `dir_index`: a listing leaves an index per directory, not a cache")
        w("file per object (docs/architecture.md, \"Directory indexes\").")
    w("`find -type f` over %s objects in %s directories of the same bucket, cold: a fresh mount on"
      % (env.get("bigfind_n", "?"), env.get("bigfind_dirs", "?")))
    w("an empty cache; its limit lists every directory, over one connection in turn and over 8 at")
    w("once, and counts the faster.")
    w("")
    w("| system | first entry | `ls -l` cold | `ls -l` warm | `find` cold | |")
    w("|---|---:|---:|---:|---:|---|")
    for s_ in ("curl", "s3cachefs", "ext4"):
        cells = []
        r = R.get((s_, "cold", "bigls-first"))
        cells.append((cell_status(r) or fmt_us(num(r["p50"]))) if r else "–")
        for m_, wl in (("cold", "bigls"), ("warm", "bigls"), ("cold", "bigfind")):
            cells.append(walk_cell(R.get((s_, m_, wl))))
        cost = R.get((s_, "cold", "bigls-cost"))
        w("| %s | %s | %s |" % (s_ + (" (limit)" if s_ != "s3cachefs" else ""), " | ".join(cells),
                               cost["note"] if cost else ""))
    w("")

# The huge directory, listed to the end.
if any(k[2].startswith("hugels") for k in R):
    w("### A directory of %s objects, listed to the end" % env.get("hugels_n", "?"))
    w("")
    w("The same fakes3 bucket. s3cachefs: `ls -f` (readdir, no stat) of the cold directory on a")
    w("fresh mount and an empty cache; limit: its ListObjectsV2 pages over one keep-alive")
    w("connection. What it left: the daemon's memory and the cache directory's blocks (`du`).")
    w("")
    w("| system | cold listing | ratio | |")
    w("|---|---:|---:|---|")
    lim = R.get(("curl", "cold", "hugels"))
    for s_ in ("curl", "s3cachefs"):
        r = R.get((s_, "cold", "hugels"))
        if r is None:
            continue
        cost = R.get((s_, "cold", "hugels-cost"))
        rt = "–"
        if s_ != "curl" and lim and not cell_status(r) and not cell_status(lim) and \
           num(r["secs"]) and num(lim["secs"]):
            rt = "%.2f" % (num(lim["secs"]) / num(r["secs"]))
        w("| %s | %s | %s | %s |" % (s_ + (" (limit)" if s_ == "curl" else ""), walk_cell(r),
                                     rt, cost["note"] if cost else r["note"]))
    w("")

# Why.
missed = [t for t in targets if t["verdict"] == "FAIL"]
w("## Why targets were missed, and what would close them")
w("")
if not missed:
    w("Every target with figures passed in this run.")
    w("")
else:
    w("Missed in this run: %s." % ", ".join("`%s`" % t["id"] for t in missed))
    w("")
    seen = set()
    for t in missed:
        texts = [x for x in analysis_for(t["id"]) if x not in seen]
        for x in texts:
            seen.add(x)
    # Print the analysis sections that apply, in the file's order.
    for k, lines in analysis.items():
        text = "\n".join(lines).strip()
        if text in seen and not k.startswith("_"):
            w(text)
            w("")
    if "_always" in analysis:
        w("\n".join(analysis["_always"]).strip())
        w("")

# Evidence from this run.
ev = []
lat = os.path.join(RUN, "logs", "s3cachefs-fetch-latency-cold.txt")
if os.path.exists(lat):
    with open(lat) as f:
        hist = [l.split() for l in f if l.strip()]
    nz = [(b, n) for b, n in hist if n != "0"]
    if nz:
        ev.append("s3cachefs FETCH upcall latency after the cold phase (sysfs `fetch_latency`, "
                  "bucket: count): " + ", ".join("%s: %s" % (b, n) for b, n in nz) + ".")
sysfs = os.path.join(RUN, "logs", "s3cachefs-sysfs.log")
if os.path.exists(sysfs):
    with open(sysfs) as f:
        txt = f.read()
    m = re.findall(r"== (cold seq4|filled|end)\n(.*)\n", txt)
    for label, line in m:
        ev.append("s3cachefs counters after %s: `%s`" % (label, line.strip()))
def stack_summary(path, comm="fio", top=5, depth=7):
    """Most frequent kernel stacks of COMM in a stacks-*.txt sample file."""
    counts = collections.Counter()
    total = 0
    cur, frames = None, []

    def flush():
        nonlocal total
        if cur == comm and frames:
            total += 1
            counts[" ← ".join(frames[:depth])] += 1

    with open(path) as f:
        for line in f:
            if line.startswith("== "):
                flush()
                cur, frames = line.split()[1], []
                continue
            m = re.search(r"\] ([A-Za-z0-9_.]+)\+", line)
            if m and not m.group(1).startswith(("entry_SYSCALL", "do_syscall_64")):
                frames.append(m.group(1))
    flush()
    return total, counts.most_common(top)


for p in ("warm-seq1", "warm-seq4", "warm-rand4k", "cold-seq1"):
    stf = os.path.join(RUN, "logs", "stacks-%s.txt" % p)
    if os.path.exists(stf):
        total, common = stack_summary(stf)
        if total:
            ev.append("Where the fio readers were during the s3cachefs %s profile run (%d samples of "
                      "their kernel stacks, /proc/PID/stack every 0.2 s; a stack of one frame or "
                      "none is a reader on the CPU or between calls):\n\n```\n%s\n```" % (
                          p, total, "\n".join("%4.0f%%  %s" % (100.0 * n / total, sig or "(running)")
                                              for sig, n in common)))
for p in ("warm-seq1", "warm-seq4", "warm-rand4k", "cold-seq1"):
    pf = os.path.join(RUN, "logs", "profile-%s-comm.txt" % p)
    sf = os.path.join(RUN, "logs", "profile-%s.txt" % p)
    if os.path.exists(sf):
        with open(sf) as f:
            top = [l.rstrip() for l in f if re.match(r"^\s+\d", l)][:14]
        comm = []
        if os.path.exists(pf):
            with open(pf) as f:
                comm = [l.strip() for l in f if re.match(r"^\s+\d", l)][:6]
        ev.append("perf (cpu-clock, whole guest) during a s3cachefs %s run; by command: %s\n\n```\n%s\n```" % (
            p, "; ".join(re.sub(r"\s+", " ", c) for c in comm), "\n".join(top)))
if ev:
    w("### Evidence recorded in this run")
    w("")
    for e in ev:
        w("- " + e)
    w("")

# Timing.
w("## Duration of each phase")
w("")
w("| phase | seconds |")
w("|---|---:|")
for p in phases:
    w("| %s | %.0f |" % (p[0], float(p[1])))
w("")
w("Raw figures: `build/bench/run-%s/bench/results.tsv`; fio JSON, daemon and peer logs," % mode)
w("perf reports: `build/bench/run-%s/bench/logs/`." % mode)
w("")

# Only the one publishing run writes the published page and the README.
PUB = os.path.join(REPO, "docs", "bench")
if host.get("publish") != "1":
    why = ("a partial or private run (%s)" % host["left_knobs"] if host.get("left_knobs")
           else "not a publishing run (host.txt has no publish=1)")
    if README:
        print("report: %s: not writing %s" % (why, README), file=sys.stderr)
        sys.exit(1)
    if os.path.realpath(OUT) == os.path.realpath(PUB):
        print("report: %s: not writing %s" % (why, PUB), file=sys.stderr)
        sys.exit(1)
os.makedirs(OUT, exist_ok=True)
# Everything is written to .new files first and renamed at the end: a
# failure leaves the page, the chart and the README as they were.
pending = []


def put(path, text):
    with open(path + ".new", "w") as f:
        f.write(text)
    pending.append(path)


put(os.path.join(OUT, "results.md"), "\n".join(md))
try:
    chart(os.path.join(OUT, "results.png") + ".new")
    pending.append(os.path.join(OUT, "results.png"))
except (OSError, subprocess.CalledProcessError) as e:
    print("report: gnuplot failed: %s" % e, file=sys.stderr)
    for p_ in pending:
        os.unlink(p_ + ".new")
    sys.exit(1)


def readme_block():
    """The README's copy of this run: the same header as results.md, and
    the target table."""
    b = []
    npass = sum(1 for t in targets if t["verdict"] == "PASS")
    b += stamp()
    b.append("")
    b.append("%d of %d targets met (%s shards of %s MiB); every figure, the peers' rows and "
             "the phases are in [docs/bench/results.md](docs/bench/results.md), the chart in "
             "[docs/bench/results.png](docs/bench/results.png)." % (
                 npass, len(targets), env.get("shards", "?"), env.get("shard_mb", "?")))
    b.append("")
    b.append("| target | measured | ratio | result |")
    b.append("|---|---|---:|:---:|")
    for t in targets:
        b.append("| %s | %s | %s | %s |" % ((t["text"], t["detail"]) + target_cells(t)))
    return "\n".join(b)


if README:
    BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
    with open(README) as f:
        text = f.read()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        print("report: %s has no %s ... %s block; nothing written" % (README, BEGIN, END), file=sys.stderr)
        for p_ in pending:
            os.unlink(p_ + ".new")
        sys.exit(1)
    put(README, text[:i + len(BEGIN)] + "\n" + readme_block() + "\n" + text[j:])
for p_ in pending:
    os.replace(p_ + ".new", p_)
for t in targets:
    print("%-5s %-50s %s" % (t["verdict"], t["text"], t["detail"]))
