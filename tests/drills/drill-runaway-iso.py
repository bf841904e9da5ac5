#!/usr/bin/env python3
"""Runaway boosted tasks: two ISO spinners on 2 CPUs. The daemon keeps
answering within 100 ms, holds them at the ISO cap (iso_cpu, read over the
whole machine by default), and a normal task in the scope still runs.

The test itself runs SCHED_FIFO just under the daemon (with reset-on-fork,
so nothing it starts inherits it): it measures the daemon's latency, not
how long the kernel keeps a measuring client off the CPU."""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sched_util import (HOG, Daemon, Scope, assert_clean, hog_pids,  # noqa: E402
                        skip_unless_root_on_two_cpus, task_sched)
import wire  # noqa: E402

SECONDS = 10
CAP = 70


def main():
    skip = skip_unless_root_on_two_cpus()
    if skip:
        return skip
    # Spinners run "hog 31", the normal task "hog 29": told apart by argv.
    scope = Scope([f"{HOG} 31 >/dev/null", f"{HOG} 31 >/dev/null", f"{HOG} 29 >/dev/null"],
                  limit=35)
    d = None
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(19))
        d = Daemon(scope.root.pid, scope.tmp)
        spinners, normal = hog_pids(scope, "31"), hog_pids(scope, "29")
        assert len(spinners) == 2 and len(normal) == 1, f"hogs: {spinners} {normal}"
        normal = normal[0]
        time.sleep(0.3)
        for p in spinners:
            d.ctl("iso", str(p))
        latencies, ctl_wall, iso_pct = [], [], []
        fifo_samples = demoted_samples = 0
        start = {p: wire.cpu_ticks(p) for p in spinners + [normal]}
        t0 = time.monotonic()
        windows = []
        while time.monotonic() - t0 < SECONDS:
            w0 = time.monotonic()
            w_start = {p: wire.cpu_ticks(p) for p in spinners + [normal]}
            for _ in range(5):
                latencies.append(wire.status_latency(d.sock))
            q = json.loads(d.ctl("--json", "queues").stdout)
            iso_pct.extend(c["iso_percent"] for c in q["cpus"])
            c0 = time.monotonic()
            d.ctl("status")
            ctl_wall.append(time.monotonic() - c0)
            while time.monotonic() - w0 < 1.0:
                for p in spinners:
                    pol = task_sched(p)[1]
                    fifo_samples += pol == "fifo"
                    demoted_samples += pol != "fifo"
                time.sleep(0.005)
            span = (time.monotonic() - w0) * wire.tick_hz()
            windows.append({p: (wire.cpu_ticks(p) - w_start[p]) / span for p in w_start})
        hz = wire.tick_hz()
        total = time.monotonic() - t0
        share = {p: (wire.cpu_ticks(p) - start[p]) / hz / total for p in start}
        late = windows[len(windows) // 2:]
        iso_late = sum(sum(w[p] for p in spinners) for w in late) / len(late)
        normal_late = sum(w[normal] for w in late) / len(late)
        first_iso = sum(windows[0][p] for p in spinners)
        lat_ms = sorted(x * 1000 for x in latencies)
        print(f"status latency over the socket: n={len(lat_ms)} median {lat_ms[len(lat_ms) // 2]:.2f} ms,"
              f" max {lat_ms[-1]:.2f} ms")
        print(f"muqssctl status wall time (new SCHED_OTHER process each): "
              f"median {sorted(ctl_wall)[len(ctl_wall) // 2] * 1000:.0f} ms, max {max(ctl_wall) * 1000:.0f} ms")
        print(f"iso_percent: max {max(iso_pct):.1f}, last {iso_pct[-2:]} (cap {CAP})")
        print(f"spinner policy samples: fifo {fifo_samples}, demoted {demoted_samples}")
        print(f"CPU (in CPUs): spinners first second {first_iso:.2f}, second half {iso_late:.2f};"
              f" normal hog second half {normal_late:.2f}; whole run {share}")
        assert lat_ms[-1] < 100, f"status took {lat_ms[-1]:.1f} ms"
        assert max(iso_pct[len(iso_pct) // 2:]) <= CAP + 5, f"iso_percent over the cap: {iso_pct}"
        assert demoted_samples > 0, "the spinners were never demoted"
        # "Still gets CPU": not starved. Fair would be ~0.2 CPU (the 0.6 left
        # over, shared with the two demoted spinners); 0.05-0.13 is measured.
        assert normal_late >= 0.02, f"the normal task got {normal_late:.2f} CPU"
        d.kill(signal.SIGTERM)
        d = None
        assert_clean(scope.pids(), "after SIGTERM")
        print("1 passed, 0 failed")
        return 0
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
