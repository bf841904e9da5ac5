#!/usr/bin/env python3
"""The bpf sensor's ring buffer overflows while muqssd is stopped (SIGSTOP)
through a storm of 8,000 fork+exec+exit in the scope and the start of 20
long-lived processes: once it runs again the loss is counted
(tracking.sensor_lost) and healed by a rescan of /proc (a lost-event
recovery), so the table equals /proc, the long-lived ones in it. Skips
(77) where bpf does not load."""
import os
import signal
import sys
import time

from sched_util import report
from trackharness import HELPER, Scope, log


def running(pid):
    """pid has not exited yet; it may be reaped while we read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b") ", 1)[1][:1]
    except OSError:
        return False
    return state not in (b"Z", b"X")


failures = []
s = Scope(["--sensor", "bpf"])
try:
    s.skip_unless("bpf")
    os.kill(s.daemon_pid, signal.SIGSTOP)
    try:
        spawners = [s.spawn("/usr/bin/timeout", "-s", "KILL", "50", HELPER, "storm", "2000")
                    for _ in range(4)]
        keep = [s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "2", "30000")
                for _ in range(20)]
        t0 = time.time()
        while time.time() - t0 < 50 and any(running(p) for p in spawners):
            time.sleep(0.2)
    finally:
        os.kill(s.daemon_pid, signal.SIGCONT)
    ok, d, detail = s.compare(tries=30)
    log("after the overflow:", detail, "sensor_lost", d["sensor_lost"],
        "recoveries", d["lost_event_recoveries"])
    if d["sensor_lost"] == 0:
        failures.append("no loss counted: the storm did not overflow the ring buffer")
    if d["lost_event_recoveries"] == 0:
        failures.append("the loss was not followed by a rescan")
    if not ok:
        failures.append(f"table differs from /proc: {detail}")
    missing = set(keep) - {t["tid"] for t in d["tasks"]}
    if missing:
        failures.append(f"long-lived processes started during the loss missing: {sorted(missing)}")
finally:
    s.close()
sys.exit(report(failures))
