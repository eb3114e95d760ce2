#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The daemon's layering, checked (TAP).

daemon/lib/ is the S3 client (libs3c.a, shared with s3cachectl); the
daemon proper sits on it. Checks, from the sources and the built objects:
  - lib/ includes only lib/ headers, the uapi header and system headers;
  - no include cycles: between headers, nor between modules (x.c and x.h
    are module x; x uses y if either includes y.h);
  - no call cycles between modules (x.o needs a symbol y.o defines), so a
    lower layer reaches an upper one only through a hook it is given;
  - libs3c.a needs no symbol of the daemon;
  - modules with one caller (the fleet tier, below FETCH; its leases,
    below the tier) are included and called by that caller alone, and a
    private header (tierlease.h) by its one file alone.
Usage: layering.py [DAEMON_DIR] (default: ../../daemon from here).
"""
import glob
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                      os.path.join(here, '..', '..', 'daemon'))
n = 0
failed = 0


def point(good, what, detail=''):
    global n, failed
    n += 1
    print(('ok' if good else 'not ok') + ' %d - layering: %s' % (n, what))
    if not good:
        failed += 1
        for line in detail.splitlines():
            print('#   ' + line)


def module(path):
    """x.c and x.h are module x; so are x_*.c and x_*.h when x.h exists
    (one subsystem over several files, with a private header)."""
    rel = os.path.splitext(os.path.relpath(path, top))[0]
    d, base = os.path.split(rel)
    if '_' in base:
        head = base.split('_')[0]
        if os.path.exists(os.path.join(top, d, head + '.h')):
            return os.path.join(d, head)
    return rel


def includes(path):
    with open(path) as f:
        return re.findall(r'^#include\s+"([^"]+)"', f.read(), re.M)


def resolve(src, inc):
    """The file an #include "inc" in src names (None: outside daemon/)."""
    for base in (os.path.dirname(src), top):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(p) and p.startswith(top + os.sep):
            return p
    return None


def cycles(graph):
    """Each cycle found by a depth-first search, as a list of nodes."""
    out, state, stack = [], {}, []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                out.append(stack[stack.index(w):] + [w])
            elif not state.get(w):
                visit(w)
        stack.pop()
        state[v] = 2
    for v in sorted(graph):
        if not state.get(v):
            visit(v)
    return out


files = sorted(glob.glob(os.path.join(top, '*.[ch]')) +
               glob.glob(os.path.join(top, 'lib', '*.[ch]')))
point(len(glob.glob(os.path.join(top, 'lib', '*.c'))) > 0,
      'the S3 client is its own directory (daemon/lib)')

bad = []
for f in files:
    if not f.startswith(os.path.join(top, 'lib') + os.sep):
        continue
    for inc in includes(f):
        p = resolve(f, inc)
        if inc == 'uapi/s3cachefs.h':
            continue
        if p is None or not p.startswith(os.path.join(top, 'lib') + os.sep):
            bad.append('%s includes "%s"' % (os.path.relpath(f, top), inc))
point(not bad, 'lib/ includes nothing of the daemon', '\n'.join(bad))

hgraph, mgraph = {}, {}
for f in files:
    for inc in includes(f):
        p = resolve(f, inc)
        if p is None:
            continue
        if f.endswith('.h'):
            hgraph.setdefault(f, set()).add(p)
        if module(p) != module(f):
            mgraph.setdefault(module(f), set()).add(module(p))
c = cycles(hgraph)
point(not c, 'no include cycles between headers',
      '\n'.join(' -> '.join(os.path.relpath(x, top) for x in cy) for cy in c))
c = cycles(mgraph)
point(not c, 'no include cycles between modules',
      '\n'.join(' -> '.join(cy) for cy in c))


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True).stdout
    defined, undef = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            undef.add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBRC':
            defined.add(parts[2])
    return defined, undef


objs = sorted(glob.glob(os.path.join(top, '*.o')) +
              glob.glob(os.path.join(top, 'lib', '*.o')))
point(len(objs) > 10, 'the daemon is built (%d objects)' % len(objs))
defs, undefs = {}, {}
for o in objs:
    defs[module(o)], undefs[module(o)] = symbols(o)
owner = {}
for m, ds in defs.items():
    for s in ds:
        owner.setdefault(s, m)
cgraph = {}
for m, us in undefs.items():
    for s in us:
        if s in owner and owner[s] != m:
            cgraph.setdefault(m, set()).add(owner[s])
c = cycles(cgraph)
point(not c, 'no call cycles between modules (a layer calls up through hooks)',
      '\n'.join(' -> '.join(cy) for cy in c))
bad = sorted('%s needs %s (%s)' % (m, s, owner[s])
             for m, us in undefs.items() if m.startswith('lib/')
             for s in us if s in owner and not owner[s].startswith('lib/'))
point(not bad, 'libs3c.a needs no symbol of the daemon', '\n'.join(bad))

# A module below one operation: only that operation includes or calls it
# (op_fetch -> tier -> tierlease).
ONLY = {'tier': {'op_fetch'}, 'tierlease': {'tier'}}
for low, callers in sorted(ONLY.items()):
    bad = sorted('%s includes "%s.h"' % (os.path.relpath(f, top), low)
                 for f in files
                 if module(f) not in callers | {low} and
                 any(resolve(f, i) == os.path.join(top, low + '.h')
                     for i in includes(f)))
    bad += sorted('%s calls %s (%s)' % (m, s, low)
                  for m, us in undefs.items() if m not in callers | {low}
                  for s in us if owner.get(s) == low)
    point(low in defs and not bad,
          '%s is used by %s alone' % (low, ', '.join(sorted(callers))),
          '\n'.join(bad) if bad else ('' if low in defs else
                                       'no %s.o built' % low))

# A private header: included by the one file named and its own module's.
PRIVATE = {'tierlease.h': {'tier.c'}}
for hdr, users in sorted(PRIVATE.items()):
    path = os.path.join(top, hdr)
    bad = sorted('%s includes "%s"' % (os.path.relpath(f, top), hdr)
                 for f in files
                 if os.path.relpath(f, top) not in users and
                 module(f) != module(path) and
                 any(resolve(f, i) == path for i in includes(f)))
    point(os.path.exists(path) and not bad,
          '%s is included by %s alone' % (hdr, ', '.join(sorted(users))),
          '\n'.join(bad) if bad else ('' if os.path.exists(path) else
                                        'no %s' % hdr))
print('1..%d' % n)
sys.exit(1 if failed else 0)
