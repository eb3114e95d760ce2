#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""judge: a peer suite's results against its list of expected failures.

    judge.py EXPECTED.txt RESULTS

RESULTS has one line per assertion: "MODE NAME NUM ok|fail DETAIL" (NUM is
"-" where a test has no numbered assertions, "plan" where it did not run
all it planned; DETAIL may be empty). MODE is
the mount the test ran on ("default", "writeback"), NAME the test
("chmod/00.t", "fsx-mmap").

EXPECTED.txt has one entry a line: "NAME [NUMS] [@MODE] # [tag] reason"
(NUMS: "3,5-9"; none: every assertion of NAME; @MODE: on that mount
only). The tag must name a limit of README's limits table (TAGS below),
so the list cannot grow an entry for a bug; an entry without a reason is
refused.

Prints one line per (MODE, NAME) that ran, tab-separated: "ok|not_ok",
a description, and a diagnostic (may be empty, "\\n" for newlines). A
test is not ok if an assertion not on the list failed, or one on the list
passed or never ran (take it off the list: the limit is gone or the list
is wrong).
Exits 2 if the list itself is malformed.
"""
import re
import sys

# README, "Writes": the table of what S3 cannot express, or what is not
# built yet. Nothing else may excuse a failure.
TAGS = {
    "hardlink": "hard link: EPERM",
    "special": "mkfifo, mknod, a socket's bind: EPERM",
    "xattr": "user extended attributes: EOPNOTSUPP",
    "dir-rename": "rename of a directory: EXDEV",
    "big-rename": "rename of a file above 5 GiB: EXDEV",
    "exchange": "RENAME_EXCHANGE, RENAME_WHITEOUT: EINVAL",
    "dir-meta": "chmod/chown of a directory to other values: EPERM",
    "dir-times": "a directory's times and link count are this node's",
    "atime": "access times are this node's",
    # Above the table, in the same section: a key's 1024-byte limit.
    "key-length": "a key over S3's 1024 bytes: ENAMETOOLONG",
}


def parse_nums(s):
    out = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def load_expected(path):
    exp = []          # (name, nums or None, mode or None, reason)
    bad = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            body, _, reason = line.rstrip("\n").partition("#")
            if not body.strip():
                continue
            m = re.match(r"\s*\[([a-z-]+)\]\s*(\S.*)", reason)
            if not m or m.group(1) not in TAGS:
                bad.append(f"{path}:{i}: no [tag] of a documented limit "
                           f"({', '.join(sorted(TAGS))}) and reason")
                continue
            words = body.split()
            name, nums, mode = words[0], None, None
            for w in words[1:]:
                if w.startswith("@"):
                    mode = w[1:]
                elif re.fullmatch(r"[0-9,-]+", w):
                    nums = parse_nums(w)
                else:
                    bad.append(f"{path}:{i}: cannot parse '{w}'")
            exp.append((name, nums, mode, f"[{m.group(1)}] {m.group(2)}"))
    return exp, bad


def expected_reason(exp, mode, name, num):
    for n, nums, m, reason in exp:
        if n != name or (m and m != mode):
            continue
        if num == "plan":
            return None       # a test that died is never expected
        if nums is None or (num.isdigit() and int(num) in nums):
            return reason
    return None


def main():
    exp, bad = load_expected(sys.argv[1])
    if bad:
        for b in bad:
            print(f"not_ok\texpected list is well-formed\t{b}")
        sys.exit(2)
    tests = {}        # (mode, name) -> list of (num, status, detail)
    with open(sys.argv[2]) as f:
        for line in f:
            p = line.rstrip("\n").split(" ", 4)
            if len(p) < 4:
                continue
            tests.setdefault((p[0], p[1]), []).append(
                (p[2], p[3], p[4] if len(p) > 4 else ""))
    for (mode, name), res in tests.items():
        passed = xfail = 0
        new, fixed = [], []
        for num, status, detail in res:
            reason = expected_reason(exp, mode, name, num)
            if status == "ok":
                passed += 1
                if reason:
                    fixed.append(f"{num}: passes, but listed: {reason}")
            elif reason:
                xfail += 1
            else:
                new.append(f"{num}: {detail}")
        # A listed assertion that never ran: the list is stale.
        seen = {int(n) for n, _, _ in res if n.isdigit()}
        for n, nums, m, reason in exp:
            if n == name and nums and (not m or m == mode):
                fixed += [f"{x}: listed, never ran: {reason}"
                          for x in sorted(nums - seen)]
        desc = f"{mode}: {name}: {passed} passed, {xfail} expected failures"
        if new or fixed:
            diag = [f"unexpected failure {d}" for d in new[:20]]
            if len(new) > 20:
                diag.append(f"... and {len(new) - 20} more")
            diag += [f"expected failure {d}" for d in fixed[:20]]
            print(f"not_ok\t{desc}, {len(new)} unexpected failures, "
                  f"{len(fixed)} listed ones passed or did not run\t" + "\\n".join(diag))
        else:
            print(f"ok\t{desc}\t")


main()
