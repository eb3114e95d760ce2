#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""propose: candidate expected-failure entries from a pjdfstest results
file (build/tests/vm-K/1/logs/peer_pjdfstest.results), for a human to
review before anything goes into expected/pjdfstest.txt.

    propose.py RESULTS

A failure is put down to the last root cause before it in its file: a
mkfifo/mknod/bind or link that got EPERM, a chown/chmod by root that got
EPERM (only a directory's can), a rename that got EXDEV, a path of PATH_MAX
bytes. What has no such cause is printed to stderr as UNCLASSIFIED: a bug
until shown otherwise.
"""
import re
import sys
from collections import OrderedDict
WHY = {
 "special": "mkfifo/mknod/bind is EPERM; later assertions on that node follow",
 "hardlink": "link(2) is EPERM; later assertions on the link follow",
 "dir-meta": "chown/chmod of a directory is EPERM; what the other user does there then follows",
 "dir-rename": "rename of a directory is EXDEV",
 "key-length": "a path of PATH_MAX bytes makes keys over S3's 1024: ENAMETOOLONG at mkdir, later assertions follow",
}
def root(detail):
    m = re.search(r"tried '(.*)', expected (.*), got (\S+)", detail)
    if not m: return None
    cmd, got = m.group(1), m.group(3)
    # pjdfstest's "-u UID -g GID[,...]": the same call as another user.
    cmd = re.sub(r"^(-[ug] \S+ )+", "", cmd)
    if len(cmd) > 900: return "key-length"
    if got == "EPERM" and re.match(r"(mkfifo|mknod|bind) ", cmd): return "special"
    if got == "EPERM" and re.match(r"link ", cmd): return "hardlink"
    if got == "EPERM" and re.match(r"(l?chown|chmod|lchmod) ", cmd): return "dir-meta"
    if got == "EXDEV" and cmd.startswith("rename "): return "dir-rename"
    return None
files = OrderedDict()
for line in open(sys.argv[1]):
    p = line.rstrip("\n").split(" ", 4)
    if len(p) < 4 or p[3] != "fail" or not p[2].isdigit(): continue
    files.setdefault(p[1], []).append((int(p[2]), p[4] if len(p) > 4 else ""))
unk = []
for f, fails in files.items():
    cur = None; bytag = OrderedDict()
    for n, d in fails:
        r = root(d)
        if r: cur = r
        t = r or cur
        if t is None: unk.append(f"{f} {n}: {d[:150]}"); continue
        bytag.setdefault(t, []).append(n)
    for t, nums in bytag.items():
        rs = []; a = b = None
        for n in nums:
            if a is None: a = b = n
            elif n == b + 1: b = n
            else: rs.append((a, b)); a = b = n
        rs.append((a, b))
        s = ",".join(f"{x}" if x == y else f"{x}-{y}" for x, y in rs)
        print(f"{f} {s}  # [{t}] {WHY[t]}")
for u in unk: print("UNCLASSIFIED", u, file=sys.stderr)
