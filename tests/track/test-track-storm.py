#!/usr/bin/env python3
"""Event storm: 4 spawners x 5,000 fork+exec of /bin/true plus hackbench
threads, all in the scope. Afterwards the table is exact; the lost-event
recovery counter says whether the kernel dropped events on the way."""
import os
import shutil
import sys
import time

from trackharness import HELPER, Scope, log

PER_SPAWNER = 5000
s = Scope()
ok = False
try:
    t0 = time.time()
    spawners = [s.spawn("/usr/bin/timeout", "-s", "KILL", "55", HELPER, "storm", str(PER_SPAWNER))
                for _ in range(4)]
    hb = shutil.which("hackbench")
    if hb:
        s.spawn("/usr/bin/timeout", "-s", "KILL", "20", hb, "-T", "-g", "1", "-l", "1000")
    else:
        log("hackbench (rt-tests) not installed: storm without it")
    while any(os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/stat", "rb").read().rsplit(b") ", 1)[1][:1]
              not in (b"Z", b"X") for p in spawners):
        if time.time() - t0 > 58:
            break
        time.sleep(0.2)
    elapsed = time.time() - t0
    time.sleep(0.5)
    ok, d, detail = s.compare(tries=30)
    log(f"{4 * PER_SPAWNER} fork+exec in {elapsed:.1f} s; {d['events']} events;",
        "lost-event recoveries:", d["lost_event_recoveries"], ";", detail)
finally:
    s.close()
sys.exit(0 if ok else 1)
