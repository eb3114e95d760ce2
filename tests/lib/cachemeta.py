#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The metadata the daemon stores on a lower file, for tests.

  cachemeta.py get FILE NAME      print xattr NAME; for the object tags
                                  trusted.s3cachefs.{etag,size,mtime} the
                                  value from trusted.s3cachefs.meta (the
                                  compact form) or, without it, the older
                                  per-tag xattr. Exit 1 if there is none.
  cachemeta.py set FILE TAG VALUE change one tag (etag, size or mtime),
                                  keeping the form the file has.

The compact layout is documented in uapi/s3cachefs.h (S3CFS_XATTR_META).
"""
import os
import struct
import sys

META = "trusted.s3cachefs.meta"
TAGS = ("etag", "size", "mtime")


def decode(v):
    if len(v) < 18 or v[0] != 1:
        raise ValueError("bad %s" % META)
    size, mtime = struct.unpack("<Qq", v[2:18])
    e = v[18:]
    if v[1] & 1:
        e = b'"' + e[:16].hex().encode() + e[16:] + b'"'
    return {"etag": e.decode(), "size": str(size), "mtime": str(mtime)}


def encode(t):
    # The raw form: every reader takes it (the compact MD5 form is the
    # daemon's business).
    return (bytes([1, 0]) + struct.pack("<Qq", int(t["size"]), int(t["mtime"]))
            + t["etag"].encode())


def compact(f):
    try:
        return decode(os.getxattr(f, META))
    except OSError:
        return None


def main(argv):
    if len(argv) == 4 and argv[1] == "get":
        f, name = argv[2], argv[3]
        tag = name.rsplit(".", 1)[-1]
        t = compact(f) if name.startswith("trusted.s3cachefs.") and tag in TAGS else None
        if t:
            print(t[tag])
            return 0
        try:
            print(os.getxattr(f, name).decode())
        except OSError:
            return 1
        return 0
    if len(argv) == 5 and argv[1] == "set" and argv[3] in TAGS:
        f, tag, value = argv[2:]
        t = compact(f)
        if t:
            t[tag] = value
            os.setxattr(f, META, encode(t))
        else:
            os.setxattr(f, "trusted.s3cachefs." + tag, value.encode())
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
