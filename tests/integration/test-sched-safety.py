#!/usr/bin/env python3
"""The live loop boosts, pins and stops real tasks in its scope, never
anything outside it, and leaves nothing changed after SIGTERM, or after
SIGKILL followed by `muqssd --restore` or a restart."""

import os
import resource
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, PROBE, NCPU, Daemon, Scope, assert_clean, scope_changes, snapshot  # noqa: E402


def observe(scope, seconds):
    """What the daemon did to the scope's tasks, sampled: thread counts
    summed over the samples."""
    seen = {"fifo": 0, "stopped": 0, "pinned": 0}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for k, tids in scope_changes(scope).items():
            seen[k] += len(tids)
        time.sleep(0.01)
    return seen


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    outside = Scope([f"{HOG} 40"], limit=40)
    # Interactive sleepers get boosted and pinned; the SCHED_IDLE hog is
    # IDLEPRIO and is stopped while the normal hogs fill both CPUs.
    # Owner-pinned, one per CPU, so normal work surely fills every CPU.
    cmds = [f"taskset -c {c} {HOG} 40" for c in range(NCPU)] + [f"chrt --idle 0 {HOG} 40",
                                    f"{PROBE} -d 40"]
    scope = Scope(cmds, limit=40)
    time.sleep(0.3)
    affinity = snapshot(scope.pids())
    stops = 0
    try:
        for round_, how in enumerate(["SIGTERM", "SIGKILL+restore", "SIGKILL+restart"]):
            d = Daemon(scope.root.pid, scope.tmp)
            seen = observe(scope, 3)
            print(f"round {round_} ({how}): {seen}")
            assert seen["fifo"] > 0, "nothing was ever boosted"
            # The fd table was grown at start (enforce_protect_self()):
            # a growth in a tick waits for an RCU grace period.
            with open(f"/proc/{d.pid}/status") as f:
                fdsize = int(next(l for l in f if l.startswith("FDSize:")).split()[1])
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            assert fdsize >= min(1024, limit), f"fd table of {fdsize}, not grown at start"
            # Known flake (see the issue note): in some 3 s windows the
            # IDLEPRIO gate never stops the hog, so it must stop in at
            # least one of the rounds.
            stops += seen["stopped"]
            assert_clean(outside.pids(), "outside the scope, while running")
            if how == "SIGTERM":
                d.kill(signal.SIGTERM)
            else:
                d.kill(signal.SIGKILL)
                if how == "SIGKILL+restore":
                    d.restore()
                else:
                    d = Daemon(scope.root.pid, scope.tmp)
                    d.kill(signal.SIGTERM)
            assert_clean(scope.pids(), how, affinity)
            assert_clean(outside.pids(), "outside the scope")
            alive = [p for p in scope.pids() if os.path.exists(f"/proc/{p}")]
            assert len(alive) >= len(cmds), f"tasks died: {alive}"
        assert stops > 0, "the IDLEPRIO hog was never stopped"
        print("1 passed, 0 failed")
        return 0
    finally:
        scope.close()
        outside.close()


if __name__ == "__main__":
    sys.exit(main())
