#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nscheck: random namespace operations on a writable s3cachefs mount
(allow_delete), checked against a model after every step: the mount's tree
and bytes, and the bucket's keys and bytes in s3rver's data directory.

    nscheck.py MNT S3DIR SEED OPS [MODEL.json] [--verify-only]

Files are created, overwritten (O_TRUNC), changed in place, appended to,
renamed (to a new name or over another file, across directories) and
unlinked; directories made, removed (ENOTEMPTY while anything is in them)
and renamed (EXDEV). A small name space makes names collide. The model is
written to MODEL.json (default: next to S3DIR) at the end; --verify-only
checks a mount (a second one, on an empty cache) against it. Prints the seed and,
on the first difference, the step and what differed, and exits 1.
"""
import errno
import json
import os
import random
import sys

SUFFIX = "._S3rver_object"


def s3_state(root):
    """Keys and bytes s3rver holds under ROOT (its bucket directory)."""
    keys = {}
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(SUFFIX):
                continue
            rel = os.path.relpath(os.path.join(d, f[:-len(SUFFIX)]), root)
            key = "" if rel == "." else rel
            if f == SUFFIX:       # "dir/" marker: dir/._S3rver_object
                key = os.path.relpath(d, root) + "/"
            with open(os.path.join(d, f), "rb") as fh:
                keys[key] = fh.read()
    return keys


def mount_state(mnt):
    dirs, files = set(), {}
    for d, subdirs, names in os.walk(mnt):
        rel = os.path.relpath(d, mnt)
        if rel != ".":
            dirs.add(rel)
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as fh:
                files[os.path.relpath(p, mnt)] = fh.read()
    return dirs, files


class Check:
    def __init__(self, mnt, s3dir, seed):
        self.mnt, self.s3dir = mnt, s3dir
        self.rnd = random.Random(seed)
        self.files = {}           # path -> bytes
        self.dirs = set()         # paths of directories (not the root)
        self.step = 0
        self.counts = {}

    def p(self, rel):
        return os.path.join(self.mnt, rel)

    def fail(self, what):
        print(f"not ok: step {self.step}: {what}")
        sys.exit(1)

    def parent_of(self, rel):
        return os.path.dirname(rel)

    def pick_dir(self):
        return self.rnd.choice([""] + sorted(self.dirs))

    def new_name(self, d):
        for _ in range(20):
            n = self.rnd.choice("abcdef") + self.rnd.choice(["", "1", "2", ".bin"])
            rel = os.path.join(d, n) if d else n
            if rel not in self.files and rel not in self.dirs:
                return rel
        return None

    def data(self):
        n = self.rnd.choice([0, 1, 100, 4096, 5000, 70000])
        return bytes(self.rnd.getrandbits(8) for _ in range(min(n, 64))) * (n // 64) + \
            bytes(n % 64)

    def put(self, rel, mode):
        """Write new bytes to the file @rel, opened with @mode."""
        b = self.data()
        with open(self.p(rel), mode) as f:
            f.write(b)
        self.files[rel] = b

    def expect_err(self, fn, want):
        try:
            fn()
        except OSError as e:
            if e.errno != want:
                self.fail(f"{errno.errorcode.get(e.errno)} where {errno.errorcode[want]} was expected")
            return
        self.fail(f"succeeded where {errno.errorcode[want]} was expected")

    def run_op(self):
        r = self.rnd.random()
        files = sorted(self.files)
        if r < 0.22 or not files:
            d = self.pick_dir()
            rel = self.new_name(d)
            if rel is None:
                return "skip"
            self.put(rel, "xb")
            return "create"
        if r < 0.32:
            self.put(self.rnd.choice(files), "wb")
            return "overwrite"
        if r < 0.42:
            rel = self.rnd.choice(files)
            old = bytearray(self.files[rel])
            off = self.rnd.randrange(0, len(old) + 1)
            piece = b"M%d" % self.step
            fd = os.open(self.p(rel), os.O_RDWR)
            os.pwrite(fd, piece, off)
            os.close(fd)
            if off + len(piece) > len(old):
                old.extend(bytes(off + len(piece) - len(old)))
            old[off:off + len(piece)] = piece
            self.files[rel] = bytes(old)
            return "modify"
        if r < 0.47:
            rel = self.rnd.choice(files)
            with open(self.p(rel), "ab") as f:
                f.write(b"appended\n")
            self.files[rel] += b"appended\n"
            return "append"
        if r < 0.62:
            src = self.rnd.choice(files)
            if self.rnd.random() < 0.4 and len(files) > 1:
                dst = self.rnd.choice([f for f in files if f != src])
            else:
                dst = self.new_name(self.pick_dir())
                if dst is None:
                    return "skip"
            os.rename(self.p(src), self.p(dst))
            self.files[dst] = self.files.pop(src)
            return "rename"
        if r < 0.72:
            rel = self.rnd.choice(files)
            os.unlink(self.p(rel))
            del self.files[rel]
            return "unlink"
        if r < 0.84:
            d = self.pick_dir()
            rel = self.new_name(d)
            if rel is None:
                return "skip"
            os.mkdir(self.p(rel))
            self.dirs.add(rel)
            return "mkdir"
        if not self.dirs:
            return "skip"
        d = self.rnd.choice(sorted(self.dirs))
        if r < 0.95:
            busy = any(x.startswith(d + "/") for x in list(self.files) + list(self.dirs))
            if busy:
                self.expect_err(lambda: os.rmdir(self.p(d)), errno.ENOTEMPTY)
                return "rmdir-notempty"
            os.rmdir(self.p(d))
            self.dirs.discard(d)
            return "rmdir"
        dst = self.new_name(self.pick_dir())
        if dst is None or dst.startswith(d + "/"):
            return "skip"
        self.expect_err(lambda: os.rename(self.p(d), self.p(dst)), errno.EXDEV)
        return "rename-dir"

    def verify_mount(self, mnt):
        dirs, files = mount_state(mnt)
        if dirs != self.dirs:
            self.fail(f"mount: directories {sorted(dirs ^ self.dirs)} differ")
        if set(files) != set(self.files):
            self.fail(f"mount: files {sorted(set(files) ^ set(self.files))} differ")
        for k, b in files.items():
            if b != self.files[k]:
                self.fail(f"mount: {k}: {len(b)} bytes, the model has {len(self.files[k])}")

    def verify_s3(self):
        keys = s3_state(self.s3dir)
        want = {k: b for k, b in self.files.items()}
        for d in self.dirs:
            want[d + "/"] = b""
        if set(keys) != set(want):
            self.fail(f"bucket: keys {sorted(set(keys) ^ set(want))} differ")
        for k, b in keys.items():
            if b != want[k]:
                self.fail(f"bucket: {k}: {len(b)} bytes, the model has {len(want[k])}")

    def save(self, path):
        json.dump({"dirs": sorted(self.dirs),
                   "files": {k: v.hex() for k, v in self.files.items()}},
                  open(path, "w"))

    def load(self, path):
        m = json.load(open(path))
        self.dirs = set(m["dirs"])
        self.files = {k: bytes.fromhex(v) for k, v in m["files"].items()}


def main():
    mnt, s3dir, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    model = os.path.join(os.path.dirname(os.path.abspath(s3dir)), "nscheck.model.json")
    c = Check(mnt, s3dir, seed)
    args = [a for a in sys.argv[5:] if a != "--verify-only"]
    if args:
        model = args[0]
    if "--verify-only" in sys.argv:
        c.load(model)
        c.verify_mount(mnt)
        print(f"ok: {mnt} matches the model ({len(c.files)} files, {len(c.dirs)} directories)")
        return
    print(f"seed {seed}, {ops} operations")
    for c.step in range(1, ops + 1):
        try:
            what = c.run_op()
        except OSError as e:
            c.fail(f"{errno.errorcode.get(e.errno, e.errno)}: {e}")
        c.counts[what] = c.counts.get(what, 0) + 1
        c.verify_s3()
        if c.step % 10 == 0 or c.step == ops:
            c.verify_mount(mnt)
    c.save(model)
    print(f"ok: {ops} operations, {len(c.files)} files and {len(c.dirs)} directories left; "
          + ", ".join(f"{k} {v}" for k, v in sorted(c.counts.items())))


if __name__ == "__main__":
    main()
