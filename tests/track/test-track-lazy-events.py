#!/usr/bin/env python3
"""Forks and exits that wake nobody: the bpf sensor queues a fork's or an
exit's event without waking the daemon, and the tick reads the queue
first. A process in scope starts 3 threads that sleep 5 s, then sleeps
itself: no other event comes, yet the daemon's count (STATUS, which
applies no queued event) shows the threads within 2 s of their start,
before they wake, and drops them within 2 s of their exit."""
import sys
import time

from trackharness import Scope, log

CHILD = ("import threading, time\n"
         "time.sleep(1.5)\n"
         "ts = [threading.Thread(target=time.sleep, args=(5,)) for _ in range(3)]\n"
         "[t.start() for t in ts]\n"
         "[t.join() for t in ts]\n"
         "time.sleep(30)\n")
BOUND_S = 2.0


def wait_count(s, want, until):
    """The monotonic time STATUS first showed want tasks, or None by until."""
    while time.monotonic() < until:
        if s.status()["tracking"]["count"] == want:
            return time.monotonic()
        time.sleep(0.05)
    return None


s = Scope()
ok = False
try:
    t0 = time.monotonic()
    pid = s.spawn("/usr/bin/timeout", "-s", "KILL", "60", sys.executable, "-c", CHILD)
    s._child_of(pid)  # timeout(1) has forked the child
    base = s.dump()["count"]  # the root, timeout(1) and the child, applied
    log("tasks before the threads:", base)
    seen = wait_count(s, base + 3, t0 + 1.5 + BOUND_S)
    gone = seen and wait_count(s, base, t0 + 1.5 + 5 + BOUND_S)
    log("threads seen", f"{seen - t0:.2f} s" if seen else "never", "after the spawn; gone",
        f"{gone - t0:.2f} s" if gone else "never", "(started at 1.5 s, exit at 6.5 s)")
    ok = bool(seen and gone)
finally:
    s.close()
sys.exit(0 if ok else 1)
