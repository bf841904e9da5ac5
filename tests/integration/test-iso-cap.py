#!/usr/bin/env python3
"""The ISO cap, live, per-CPU reading: an ISO hog beside two normal hogs
is boosted, demoted when muqssd's reading passes iso_cpu, and boosted
again once the reading clears (MuQSS's hysteresis, 70% down to ~63%),
over and over; the reading stays near that band once it has filled."""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, Daemon, Scope, assert_clean, hog_pids, task_sched  # noqa: E402

SECONDS = 16
ISO_ARG = str(SECONDS + 1)  # tells the ISO hog from the others


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    scope = Scope([f"{HOG} {ISO_ARG}", f"{HOG} {SECONDS}", f"{HOG} {SECONDS}"], limit=SECONDS + 10)
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        d.ctl("set", "iso_reading", "per-cpu")
        iso = next(iter(hog_pids(scope, ISO_ARG)), None)
        assert iso, "no ISO hog found"
        d.ctl("iso", str(iso))
        start = time.monotonic()
        states, late = [], []
        while time.monotonic() < start + SECONDS - 3:
            pol = task_sched(iso)[1]
            if not states or states[-1] != pol:
                states.append(pol)
            if time.monotonic() > start + 8:
                q = json.loads(d.ctl("--json", "queues").stdout)
                late.append(max(c["iso_percent"] for c in q["cpus"]))
            time.sleep(0.05)
        flips = "".join("B" if s == "fifo" else "n" for s in states)
        print(f"ISO hog: boosted (B) / normal (n): {flips}; reading after 8 s: "
              f"{min(late)}..{max(late)}%, median {sorted(late)[len(late) // 2]}%")
        assert "BnB" in flips, f"never boosted again after its first demotion: {flips}"
        assert 55 <= min(late) and max(late) <= 72, f"reading out of the band: {late}"
        d.kill(signal.SIGTERM)
        d = None
        assert_clean(scope.pids(), "after SIGTERM")
        print("1 passed, 0 failed")
        return 0
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
