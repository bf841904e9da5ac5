#!/usr/bin/env python3
"""An owner's affinity call is never lost to a pin of ours: tasks that
run `taskset -c 0` right after their exec, while muqssd manages the scope
and queues each exec at once, end up on CPU 0 and stay there, and are
still on CPU 0 alone after muqssd exits (the owner's mask, not ours and
not all CPUs)."""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, NCPU, Daemon, Scope, assert_clean, hog_pids, threads_of  # noqa: E402

N = 8


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    if NCPU < 2:
        print("needs 2 CPUs")
        return 77
    # Started one by one after the daemon is up, so each exec is queued
    # (and may be pinned) while taskset is about to set its own mask.
    cmds = [f"bash -c 'sleep {1 + 0.1 * i}; exec taskset -c 0 {HOG} 5'" for i in range(N)]
    scope = Scope(cmds, limit=20)
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        time.sleep(1 + 0.1 * N + 1.5)
        running = hog_pids(scope)
        assert len(running) == N, (f"expected {N} hogs, found {len(running)}: " +
                                   str([(p, open(f"/proc/{p}/comm", "rb").read().strip()) for p in scope.pids()
                                        if os.path.exists(f"/proc/{p}")]))
        bad = {t: sorted(os.sched_getaffinity(t)) for p in running for t in threads_of(p)
               if os.sched_getaffinity(t) != {0}}
        print(f"while managed: {len(running)} hogs, {len(bad)} off their owner's CPU 0")
        assert not bad, f"owner's mask lost while managed: {bad}"
        d.kill(signal.SIGTERM)
        d = None
        bad = {p: sorted(os.sched_getaffinity(p)) for p in running
               if os.path.exists(f"/proc/{p}") and os.sched_getaffinity(p) != {0}}
        assert not bad, f"owner's mask not put back after exit: {bad}"
        assert_clean(scope.pids(), "after SIGTERM", {p: {0} for p in running})
        print("1 passed, 0 failed")
        return 0
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
