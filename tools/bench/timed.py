# SPDX-License-Identifier: GPL-2.0
"""timed.py - THREADS threads repeat one operation until SECONDS have
passed (the bench's create and PutObject rates, fswrite.py and
putlimit.py)."""
import threading
import time


def run(threads, seconds, one, setup=None):
    """Call one(state, k, n) for n = 0, 1, ... in each thread k until the
    time is up (state: setup(k)'s result, or None). Return (seconds, calls
    made, the first error or None)."""
    count = [0]
    errors = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(k):
        n = 0
        try:
            state = setup(k) if setup else None
            while time.monotonic() < stop:
                one(state, k, n)
                n += 1
        except Exception as e:  # noqa: BLE001 - reported, not raised
            errors.append(str(e))
        with lock:
            count[0] += n

    t0 = time.monotonic()
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.monotonic() - t0, count[0], errors[0] if errors else None
