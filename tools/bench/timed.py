# SPDX-License-Identifier: GPL-2.0
"""timed.py - threads for the bench's writers (fswrite.py, putlimit.py): run
callables at once, or repeat one operation in THREADS threads until SECONDS
have passed."""
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
    together([lambda k=k: worker(k) for k in range(threads)])
    return time.monotonic() - t0, count[0], errors[0] if errors else None


def together(fns):
    """Run every callable of FNS in a thread of its own; wait for all."""
    ts = [threading.Thread(target=f) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def report(secs, count, err):
    """Print run()'s result as "seconds calls" (or its error when nothing
    was done); return the exit status."""
    if err and not count:
        print("error: " + err)
        return 1
    print("%.3f %d" % (secs, count))
    return 0
