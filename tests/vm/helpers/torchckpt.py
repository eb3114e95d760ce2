#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""torchckpt: the checkpoint pattern of a training loop, with a reader.

  torchckpt.py save DIR N REF    N checkpoints of a small model to DIR, each
                                 torch.save(DIR/model.pt.tmp) then
                                 os.replace(tmp, DIR/model.pt); the last
                                 state dict is also saved to REF (local
                                 disk) for the comparison after a remount
  torchckpt.py read DIR SECONDS [STOP]
                                 torch.load(DIR/model.pt) in a loop while
                                 the saver runs, for SECONDS at most or
                                 until the file STOP exists: every load must
                                 succeed and be one whole checkpoint (all
                                 tensors of one step); prints "loads=K
                                 steps=a,b,..."
  torchckpt.py same DIR REF      DIR/model.pt equals REF, tensor by tensor

Exit status 0 on success, 1 with a message on the first difference.
"""
import os
import sys
import time

import torch


def model_at(step):
    """A small model whose every tensor says which step it is from."""
    torch.manual_seed(1234)
    net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                              torch.nn.Linear(512, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 10))
    sd = net.state_dict()
    for t in sd.values():
        t.add_(float(step))
    sd["step"] = torch.tensor(step)
    return sd


def whole(sd):
    """The step of @sd if each of its tensors is that step's, else None."""
    step = int(sd["step"])
    want = model_at(step)
    if set(want) != set(sd):
        return None
    for k, t in want.items():
        if not torch.equal(t, sd[k]):
            return None
    return step


def save(d, n, ref):
    final = os.path.join(d, "model.pt")
    tmp = final + ".tmp"
    for step in range(1, n + 1):
        sd = model_at(step)
        torch.save(sd, tmp)
        os.replace(tmp, final)
    torch.save(model_at(n), ref)
    return 0


def read(d, seconds, stop=None):
    final = os.path.join(d, "model.pt")
    end = time.time() + seconds
    loads, steps = 0, set()
    while time.time() < end and not (stop and loads and os.path.exists(stop)):
        try:
            sd = torch.load(final)
        except FileNotFoundError:
            if not loads:
                time.sleep(0.05)	# before the first save
                continue
            print("model.pt vanished after %d loads" % loads)
            return 1
        step = whole(sd)
        if step is None:
            print("load %d: not one whole checkpoint" % loads)
            return 1
        loads += 1
        steps.add(step)
    print("loads=%d steps=%s" % (loads, ",".join(map(str, sorted(steps)))))
    return 0


def same(d, ref):
    got = torch.load(os.path.join(d, "model.pt"))
    want = torch.load(ref)
    if set(got) != set(want):
        print("keys differ")
        return 1
    for k in want:
        if not torch.equal(got[k], want[k]):
            print("tensor %s differs" % k)
            return 1
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "save":
        return save(argv[2], int(argv[3]), argv[4])
    if len(argv) in (4, 5) and argv[1] == "read":
        return read(argv[2], float(argv[3]), argv[4] if len(argv) == 5 else None)
    if len(argv) == 4 and argv[1] == "same":
        return same(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
