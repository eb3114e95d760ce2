#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tree: a directory tree as a mount shows it, or as S3 holds it, and the
difference of two such descriptions.

    tree.py mount DIR OUT.json      walk DIR (lstat, never follow)
    tree.py s3 S3DIR PREFIX OUT.json
                                    the keys under PREFIX in s3rver's
                                    bucket directory S3DIR
    tree.py diff A.json B.json      print what differs, exit 1 if anything

An entry is a path relative to the top with: type (f, d, l), for a file
its size and SHA-256, for a symlink its target, and where both sides know
them mode (permission bits), uid, gid and, for files, mtime (whole
seconds: what x-amz-meta-mtime holds). S3's view: "KEY" is a file (a
symlink when x-amz-meta-mode says S_IFLNK: the body is its target), a
"DIR/" marker or any key below DIR makes DIR a directory. Directory times
are this node's (README, the limits table) and never compared; neither is
atime.
"""
import hashlib
import json
import os
import stat
import sys

SUFFIX = "._S3rver_object"
META = "._S3rver_metadata.json"


def sha(data):
    return hashlib.sha256(data).hexdigest()


def walk_mount(top):
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, top)
            st = os.lstat(p)
            e = {"mode": stat.S_IMODE(st.st_mode), "uid": st.st_uid,
                 "gid": st.st_gid}
            if stat.S_ISDIR(st.st_mode):
                e["type"] = "d"
            elif stat.S_ISLNK(st.st_mode):
                e["type"] = "l"
                e["target"] = os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                e["type"] = "f"
                e["mtime"] = int(st.st_mtime)
                with open(p, "rb") as fh:
                    data = fh.read()
                e["size"], e["sha"] = len(data), sha(data)
            else:
                e["type"] = "other %o" % stat.S_IFMT(st.st_mode)
            out[rel] = e
    return out


def walk_s3(root, prefix):
    out = {}
    base = os.path.join(root, prefix)

    def add_dir(rel):
        while rel and rel != "." and rel not in out:
            out[rel] = {"type": "d"}
            rel = os.path.dirname(rel)

    for d, _, files in os.walk(base):
        for f in files:
            if not f.endswith(SUFFIX):
                continue
            obj = os.path.join(d, f)
            meta = {}
            try:
                with open(obj[:-len(SUFFIX)] + META) as fh:
                    meta = {k.lower(): v for k, v in json.load(fh).items()}
            except (OSError, ValueError):
                pass
            if f == SUFFIX:             # "dir/" marker: dir/._S3rver_object
                rel = os.path.relpath(d, base)
                add_dir(os.path.dirname(rel))
                e = out.setdefault(rel, {"type": "d"})
                e["type"] = "d"
            else:
                rel = os.path.relpath(obj[:-len(SUFFIX)], base)
                add_dir(os.path.dirname(rel))
                with open(obj, "rb") as fh:
                    data = fh.read()
                e = out[rel] = {}
                mode = meta.get("x-amz-meta-mode")
                if mode is not None and stat.S_ISLNK(int(mode)):
                    e["type"], e["target"] = "l", data.decode(errors="replace")
                else:
                    e["type"], e["size"], e["sha"] = "f", len(data), sha(data)
                    if "x-amz-meta-mtime" in meta:
                        e["mtime"] = int(float(meta["x-amz-meta-mtime"]))
            for k in ("mode", "uid", "gid"):
                v = meta.get("x-amz-meta-" + k)
                if v is not None:
                    e[k] = stat.S_IMODE(int(v)) if k == "mode" else int(v)
    return out


def diff(a, b):
    lines = []
    for p in sorted(set(a) | set(b)):
        if p not in a or p not in b:
            lines.append(f"{p}: only in {'the first' if p in a else 'the second'}"
                         f" ({(a.get(p) or b.get(p))['type']})")
            continue
        x, y = a[p], b[p]
        for k in ("type", "size", "sha", "target", "mode", "uid", "gid", "mtime"):
            if k in x and k in y and x[k] != y[k]:
                fx, fy = x[k], y[k]
                if k == "mode":
                    fx, fy = oct(fx), oct(fy)
                lines.append(f"{p}: {k} {fx} vs {fy}")
    return lines


def main():
    cmd = sys.argv[1]
    if cmd == "mount":
        tree = walk_mount(sys.argv[2])
    elif cmd == "s3":
        tree = walk_s3(sys.argv[2], sys.argv[3])
    elif cmd == "diff":
        with open(sys.argv[2]) as fa, open(sys.argv[3]) as fb:
            lines = diff(json.load(fa), json.load(fb))
        for line in lines[:30]:
            print(line)
        if len(lines) > 30:
            print(f"... {len(lines) - 30} more")
        sys.exit(1 if lines else 0)
    else:
        sys.exit(f"tree.py: unknown command {cmd}")
    with open(sys.argv[-1], "w") as fh:
        json.dump(tree, fh, indent=0, sort_keys=True)
    print(f"{len(tree)} entries")


main()
