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
project's README.md when it writes docs/bench), the block between
"<!-- bench:begin -->" and "<!-- bench:end -->" there is replaced with this
run's target table, so that the README always shows the latest results.
"""
import collections
import os
import re
import subprocess
import sys

RUN, OUT = sys.argv[1], sys.argv[2]
README = sys.argv[3] if len(sys.argv) > 3 else None
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

COLS = ["system", "mode", "workload", "status", "mibs", "iops", "p50", "p99", "secs", "note"]
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
STATE_LABEL = {
    ("ext4", "nvme"): "ext4 limit, NVMe (page cache dropped)",
    ("ext4", "pagecache"): "ext4 limit, page cache",
    ("curl", "cold"): "curl limit (raw ranged GETs to s3rver)",
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


rows = []
with open(os.path.join(RUN, "results.tsv")) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        parts += [""] * (len(COLS) - len(parts))
        rows.append(dict(zip(COLS, parts[:len(COLS)])))
R = {}
for r in rows:
    R[(r["system"], r["mode"], r["workload"])] = r

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


def limit_of(sysname, mode):
    if sysname in ("ext4", "curl"):
        return (sysname, mode)
    return LIMIT.get(mode)


def ratio(key):
    """Throughput of KEY over its limit's, same workload, same run."""
    sysname, mode, wl = key
    lim = limit_of(sysname, mode)
    if not lim:
        return None
    m = "mibs"
    a, b = metric(key, m), metric(lim + (wl,), m)
    if a is None or not b:
        return None
    return a / b


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


for wl in ("seq1", "seq4"):
    a, b = metric(("s3cachefs", "warm", wl), "mibs"), metric(("ext4", "nvme", wl), "mibs")
    target("warm-seq-%s" % wl, "warm sequential (%s) ≥ 0.95 × ext4 NVMe" % wl, vs(a, b, ""), 0.95,
           "%s vs %s MiB/s" % (fmt(a), fmt(b)))
for wl in ("seq1", "seq4"):
    a, b = metric(("s3cachefs", "hot", wl), "mibs"), metric(("ext4", "pagecache", wl), "mibs")
    target("hot-seq-%s" % wl, "hot sequential (%s) ≥ 0.95 × ext4 page cache" % wl, vs(a, b, ""), 0.95,
           "%s vs %s MiB/s" % (fmt(a), fmt(b)))
a, b = metric(("s3cachefs", "warm", "rand4k"), "iops"), metric(("ext4", "nvme", "rand4k"), "iops")
target("warm-rand4k", "warm 4 KiB random IOPS ≥ 0.80 × ext4 NVMe", vs(a, b, ""), 0.80,
       "%s vs %s IOPS" % (fmt(a), fmt(b)))
for p in PEERS:
    for wl in ("seq1", "seq4"):
        a, b = metric(("s3cachefs", "warm", wl), "mibs"), metric((p, "warm", wl), "mibs")
        target("warm-seq-%s-%s" % (wl, p), "warm sequential (%s) ≥ 2.5 × %s" % (wl, p), vs(a, b, ""), 2.5,
               "%s vs %s MiB/s" % (fmt(a), fmt(b)))
    a, b = metric(("s3cachefs", "warm", "rand4k"), "iops"), metric((p, "warm", "rand4k"), "iops")
    target("warm-rand4k-%s" % p, "warm 4 KiB random ≥ 2 × %s" % p, vs(a, b, ""), 2.0,
           "%s vs %s IOPS" % (fmt(a), fmt(b)))
for wl in WORKLOADS:
    m = main_metric(wl)
    a = metric(("s3cachefs", "hot", wl), m)
    b, who = best_peer("hot", wl, m)
    if a is None and b is None:
        continue
    unit = "IOPS" if m == "iops" else "MiB/s"
    target("hot-%s-peers" % wl, "hot %s ≥ best peer" % wl, vs(a, b, ""), 1.0,
           "%s vs %s %s (%s)" % (fmt(a), fmt(b), unit, who or "–"))
for wl in ("seq1", "seq4"):
    a, b = metric(("s3cachefs", "cold", wl), "mibs"), metric(("curl", "cold", wl), "mibs")
    # The ranged-GET reference row (guest.sh curl_ranged): not the target's
    # limit, but it tells the server's per-request cost from ours.
    rg = metric(("curl", "cold", wl + "r"), "mibs")
    extra = "; %.2f × curl as 8 MiB ranged GETs (%s MiB/s)" % (a / rg, fmt(rg)) if a and rg else ""
    target("cold-seq-%s" % wl, "cold sequential (%s) ≥ 0.80 × raw curl" % wl, vs(a, b, ""), 0.80,
           "%s vs %s MiB/s%s" % (fmt(a), fmt(b), extra))

for wl in ("dseq1", "drand4k"):
    m = main_metric(wl)
    unit = "IOPS" if m == "iops" else "MiB/s"
    a, b = metric(("s3cachefs", "warm", wl), m), metric(("ext4", "nvme", wl), m)
    target("warm-direct-%s" % wl, "warm O_DIRECT %s ≥ 0.90 × ext4 O_DIRECT" % wl, vs(a, b, ""), 0.90,
           "%s vs %s %s" % (fmt(a), fmt(b), unit))
a, b = metric(("s3cachefs", "cold", "ttfb"), "p50"), metric(("curl", "cold", "ttfb"), "p50")
target("cold-ttfb", "cold time to first byte ≤ 1.5 × curl's", vs(b, a, ""), 1 / 1.5,
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
        ("warm", "ext4 NVMe"),
        ("hot", "ext4 page cache"),
        ("cold", "curl"),
    ]
    series = ["s3cachefs", "s3fs", "rclone"]
    lines = []
    labels = []
    for mode, limname in groups:
        wls = [w for w in WORKLOADS if metric(LIMIT[mode] + (w,), "mibs")]
        for wl in wls:
            vals = []
            for s in series:
                r = ratio((s, mode, wl))
                vals.append("%.3f" % r if r is not None else "0")
            labels.append("%s\\n%s" % (mode, wl))
            lines.append('"%s %s" %s' % (mode, wl, " ".join(vals)))
        lines.append('"" 0 0 0')
    if lines:
        lines.pop()
    with open(data, "w") as f:
        f.write("# label " + " ".join(series) + "\n")
        f.write("\n".join(lines) + "\n")
    title = "s3cachefs vs peers, %s run %s: throughput / limit (warm: ext4 NVMe, hot: ext4 page cache, cold: raw curl)" % (
        host.get("mode", env.get("mode", "")), host.get("date", ""))
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


# --- results.md -------------------------------------------------------------------
md = []
w = md.append
mode = host.get("mode", "")
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
w("Generated by `tools/bench/bench.sh%s` (see [README.md](README.md)); %s, commit `%s`%s." % (
    " --quick" if mode == "quick" else "", host.get("date", "?"), host.get("commit", "?"),
    " with uncommitted changes under kmod/ daemon/ uapi/" if host.get("dirty", "0") not in ("0", "") else ""))
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
    avg = sum(l for l, _ in loads) / len(loads)
    others = max(n for _, n in loads) - 1
    w("| host load | mean load average %.2f during the run%s |" % (
        avg,
        "; **up to %d other QEMU guest(s) shared the host's CPUs** (figures are noisier, "
        "the ratios less so)" % others if others > 0 else "; no other guest ran meanwhile"))
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
w("full, page cache dropped; hot = in the page cache; cold = empty cache.")
w("")
w("| target | measured | ratio | needed | result |")
w("|---|---|---:|---:|:---:|")
def target_cells(t):
    """The ratio and verdict cells of a target row (results.md and README)."""
    return ("%.2f" % t["got"] if t["got"] is not None else "–",
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
w("cache; cold rows: raw curl GETs to s3rver). Latencies are fio's completion latencies")
w("per I/O (p50/p99 over all jobs).")
w("")
order = [("ext4", "nvme"), ("ext4", "pagecache"), ("curl", "cold")]
for s in ("s3cachefs", "s3fs", "rclone"):
    order += [(s, "cold"), (s, "warm"), (s, "hot")]
for wl, title in WORKLOADS.items():
    present = [k for k in order if (k + (wl,)) in R]
    if not present:
        continue
    w("### %s" % title)
    w("")
    w("| system | state | MiB/s | IOPS | p50 | p99 | × limit | |")
    w("|---|---|---:|---:|---:|---:|---:|---|")
    for k in present:
        key = k + (wl,)
        r = R[key]
        st = cell_status(r)
        name = STATE_LABEL.get(k, None)
        sysname, state = (name, "") if name else (k[0], k[1])
        if name:
            sysname, state = k[0] + " (limit)", {"nvme": "NVMe", "pagecache": "page cache", "cold": "cold"}[k[1]]
        if st:
            w("| %s | %s | – | – | – | – | – | %s |" % (sysname, state, st))
            continue
        rt = ratio(key)
        w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            sysname, state, fmt(num(r["mibs"])), fmt(num(r["iops"]), 0),
            fmt_us(num(r["p50"])), fmt_us(num(r["p99"])),
            "%.2f" % rt if rt is not None else "–", r["note"]))
        rkey = ("curl", "cold", wl + "r")
        if k == ("curl", "cold") and ok(rkey):
            rr = R[rkey]
            rt = vs(num(rr["mibs"]), num(r["mibs"]) if not st else None, "")
            w("| curl, ranged (reference) | cold | %s | – | – | – | %s | %s |" % (
                fmt(num(rr["mibs"])), "%.2f" % rt if rt is not None else "–", rr["note"]))
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
    w("Checkpoint: the %d shards (%s MiB each) written at once into a directory of each system, one" %
      (4, env.get("shard_mb", "?")))
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

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "results.md"), "w") as f:
    f.write("\n".join(md))
try:
    chart(os.path.join(OUT, "results.png"))
except (OSError, subprocess.CalledProcessError) as e:
    print("report: gnuplot failed: %s" % e, file=sys.stderr)
    sys.exit(1)


def readme_block():
    """The README's copy of this run: what ran, and the target table."""
    b = []
    npass = sum(1 for t in targets if t["verdict"] == "PASS")
    b.append("Latest run (`tools/bench/bench.sh%s`, %s shards of %s MiB, commit `%s`, %s, "
             "%s s wall, %s): %d of %d targets met; every figure, the peers' rows and "
             "the phases are in [docs/bench/results.md](docs/bench/results.md)." % (
                 " --quick" if mode == "quick" else "", env.get("shards", "?"),
                 env.get("shard_mb", "?"), host.get("commit", "?"), host.get("date", "?"),
                 host.get("wall_s", "?"),
                 ("host shared with %d other guest(s), noisy" % others) if loads and others > 0
                 else "no other guest on the host", npass, len(targets)))
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
        print("report: %s has no %s ... %s block; not updated" % (README, BEGIN, END), file=sys.stderr)
    else:
        text = text[:i + len(BEGIN)] + "\n" + readme_block() + "\n" + text[j:]
        with open(README, "w") as f:
            f.write(text)
for t in targets:
    print("%-5s %-50s %s" % (t["verdict"], t["text"], t["detail"]))
