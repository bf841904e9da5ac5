#!/usr/bin/env python3
"""A pid that is reused by a new process is a new task: the table holds the
new start time and name, never the old one. The reuse is forced with
/proc/sys/kernel/ns_last_pid, with and without giving the daemon time to
see the first process exit."""
import os
import signal
import sys
import time

from trackharness import Scope, log

s = Scope(log_level="debug")
failures = []
try:
    for settle in (0.3, 0.0):
        first = s.spawn("/bin/sleep", "30")
        time.sleep(0.3)
        d = s.dump()
        old = {t["tid"]: t for t in d["tasks"]}.get(first)
        if not old:
            failures.append(f"{first} not tracked")
            continue
        os.kill(first, signal.SIGKILL)
        time.sleep(settle + 0.05)  # start times tick every 10 ms
        again = s.reuse(first, 30)
        if again != first:
            log(f"could not get pid {first} back (pid allocation raced): skipping this round")
            continue
        time.sleep(0.3)
        d = s.dump()
        new = {t["tid"]: t for t in d["tasks"]}.get(first)
        if not new:
            failures.append(f"reused {first} not tracked (settle {settle})")
        elif new["start_time"] == old["start_time"]:
            failures.append(f"reused {first} kept the old start time (settle {settle})")
        else:
            log(f"pid {first} reused: start time {old['start_time']} -> {new['start_time']}")
    ok, d, detail = s.compare()
    if not ok:
        failures.append(detail)
    text = s.log_text()
    if "exit tid=" not in text:
        failures.append("no exit logged for the first owner")
finally:
    s.close()
for f in failures:
    log("FAIL:", f)
sys.exit(1 if failures else 0)
