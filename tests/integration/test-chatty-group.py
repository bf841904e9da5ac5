#!/usr/bin/env python3
"""A chatty group (issue 35), on the bpf sensor: four threads that wake
each other in a circle through futexes (bench/load/ring), each a few
microseconds a wake-up, keep a CPU busy beside a game-like hog and an
X-like probe (10 ms period, 3 ms work). None of them is a hog on its
own, so each used to wait armed (SCHED_FIFO) for its next wake-up, and
together they held a CPU ahead of the game. muqssd charges the group as
one: its members are listed as group hogs and stay in the fair class,
while the X-like probe, a sleeper of another process, is still boosted.
Nothing is left changed."""

import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import (BUILD, HOG, PROBE, Daemon, Scope, assert_clean, report,  # noqa: E402
                        exe_pid, skip_unless_root_on_two_cpus, task_sched, threads_of, wait_for)

RING = os.path.join(BUILD, "bench", "load", "ring")
SETTLE_S, RECORD_S = 2, 5


def group_hogs(d):
    q = json.loads(d.ctl("--json", "queues").stdout)
    return {t["tid"] for c in q["cpus"] for t in c["queue"] if t.get("group_hog")}


def main():
    skip = skip_unless_root_on_two_cpus()
    if skip:
        return skip
    span = SETTLE_S + RECORD_S
    scope = Scope([f"{RING} -d {span + 2}", f"{HOG} {span + 2}",
                   f"{PROBE} -p 10 -w 3 -d {span + 2} > /dev/null"], limit=span + 20)
    d, failed = None, []
    try:
        d = Daemon(scope.root.pid, scope.tmp, extra=("--sensor", "bpf"))
        if not d.on_bpf():
            print("SKIP: the bpf sensor does not load here; only it tells who woke whom")
            return 77
        assert wait_for(lambda: (p := exe_pid(scope, RING)) and len(threads_of(p)) == 5), \
            "the ring did not start its four threads"
        ring = exe_pid(scope, RING)
        members = [t for t in threads_of(ring) if t != ring]
        probe = exe_pid(scope, PROBE)
        assert probe, "the probe did not start"
        time.sleep(SETTLE_S)
        fifo = {t: 0 for t in members}
        probe_fifo, samples, listed = 0, 0, set()
        end = time.monotonic() + RECORD_S
        while time.monotonic() < end:
            try:
                for t in members:
                    fifo[t] += task_sched(t)[1] == "fifo"
                probe_fifo += task_sched(probe)[1] == "fifo"
            except OSError:
                break
            samples += 1
            if samples % 20 == 0:
                listed |= group_hogs(d)
            time.sleep(0.005)
        share = {t: round(n / max(samples, 1), 3) for t, n in fifo.items()}
        print(f"{samples} samples; ring members seen SCHED_FIFO: {share}; probe seen SCHED_FIFO "
              f"{probe_fifo / max(samples, 1):.3f}; listed as group hogs: {sorted(listed)}")
        if not set(members) <= listed:
            failed.append(f"ring members not all listed as group hogs: {sorted(listed)} "
                          f"of {members}")
        # One sample in 20 leaves room for a window the group rested in.
        if max(share.values()) > 0.05:
            failed.append(f"ring members boosted while the group is busy: {share}")
        if probe_fifo == 0:
            failed.append("the X-like probe was never boosted: the test saw no contention")
        d.kill(signal.SIGTERM)
        d = None
        assert_clean(scope.pids(), "after SIGTERM")
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
