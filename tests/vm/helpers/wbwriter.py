#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""wbwriter.py - a random writer for the write-back crash tests.

    wbwriter.py MNT LOG SEED MAX_MIB

Creates and rewrites files n0.bin .. n5.bin in MNT (O_TRUNC, 1 MiB
writes, fsync in 3 writes of 10, close) with sizes from 0 bytes to
MAX_MIB (3: single PUTs only; 12: multipart uploads of 5 MiB parts too),
until killed or a call fails. Appends to LOG, line-buffered, "start"
first, "open NAME SHA256" before each open for writing and "ack NAME
SHA256" after each close that returned 0 (s3_check_acks in
tests/lib/s3.sh reads it); a failed call logs "error NAME ERR" and ends
the writer.
"""
import hashlib
import os
import random
import sys

mnt, log, seed, max_mib = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
out = open(log, 'a', buffering=1)
out.write('start %d\n' % seed)
names = ['n%d.bin' % i for i in range(6)]
gen = 0
while True:
    name = r.choice(names)
    gen += 1
    sizes = [0, 1, 4096, 65537, r.randrange(1 << 20), r.randrange(3 << 20)]
    if max_mib > 5:
        sizes += [(5 << 20) + 1, r.randrange(max_mib << 20)]
    size = r.choice(sizes)
    data = hashlib.sha256(b'%d-%d' % (seed, gen)).digest()
    data = (data * (size // len(data) + 1))[:size]
    sha = hashlib.sha256(data).hexdigest()
    out.write('open %s %s\n' % (name, sha))
    try:
        fd = os.open(os.path.join(mnt, name), os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
        for off in range(0, size, 1 << 20):
            os.write(fd, data[off:off + (1 << 20)])
        if r.random() < 0.3:
            os.fsync(fd)
        os.close(fd)
    except OSError as e:
        out.write('error %s %s\n' % (name, e))
        sys.exit(0)
    out.write('ack %s %s\n' % (name, sha))
