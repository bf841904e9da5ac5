#!/usr/bin/env python3
"""What muqssd sets on a task (its EEVDF slice, its pin) is not what the
task's children are owed: a shell that forks all the time, managed for a
few seconds, then muqssd stops. Every thread left in the scope then has
the slice and affinity of the scope's root, not the daemon's."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import NCPU, Daemon, Scope, assert_clean, per_thread, slice_of  # noqa: E402

# Spends ~250 ms of CPU without sleeping (a hog long enough to settle, so
# muqssd gives it our slice), then, still holding it, forks a sleeper that
# outlives the daemon's exit.
FORKER = ("bash -c 'while :; do x=0; for ((i = 0; i < 150000; i++)); do x=$((x+i)); done; "
          "sleep 0.8 & sleep 0.05; done'")


def slices(scope):
    """Every live thread of the scope and its slice."""
    return per_thread(scope.pids(), slice_of)


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    if slice_of(os.getpid()) is None:
        print("no EEVDF slice on this kernel")
        return 77
    scope = Scope([FORKER], limit=30)
    try:
        want = slice_of(scope.root.pid)
        d = Daemon(scope.root.pid, scope.tmp)
        time.sleep(1)
        # The slice is the forker's only while it spins: look a while.
        end = time.monotonic() + 5
        while True:
            during = slices(scope)
            ours = [t for t, s in during.items() if s not in (None, want)]
            if ours or time.monotonic() > end:
                break
            time.sleep(0.05)
        time.sleep(1)
        print(f"while managed: {len(ours)} of {len(during)} threads have another slice "
              f"than the root's {want} ns")
        assert ours, "muqssd never set a slice: the test shows nothing"
        d.kill(signal.SIGTERM)
        assert d.proc.returncode == 0, f"muqssd exited {d.proc.returncode}"
        left = slices(scope)
        bad = {t: s for t, s in left.items() if s not in (None, want)}
        # Children born while it ran are among them: the sleeps live 0.8 s.
        print(f"after exit: {len(left)} threads, {len(bad)} with another slice")
        assert not bad, f"slices left changed (want {want}): {bad}"
        assert_clean(scope.pids(), "after SIGTERM")
        assert all(os.sched_getaffinity(t) == set(range(NCPU)) for t in left
                   if os.path.exists(f"/proc/{t}")), "a thread left pinned"
        print("1 passed, 0 failed")
        return 0
    finally:
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
