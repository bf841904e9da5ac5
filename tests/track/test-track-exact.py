#!/usr/bin/env python3
"""200 processes x 4 threads, half exiting at random times: after quiescence
the daemon's table equals /proc for the scope, exactly. With --poll, the
same through the /proc polling fallback. Either way, after the start-up
scan no stat file is read on the loop thread: polling's scans hand theirs
to the stat readers too."""
import random
import sys
import time

from trackharness import HELPER, Scope, log

poll = "--poll" in sys.argv
s = Scope(["--poll"] if poll else [])
ok = False
try:
    random.seed(42)
    at_start = s.dump()["stat_reads_on_loop"]
    short = []
    for i in range(200):
        ms = random.randint(100, 4000) if i % 2 else 50000
        pid = s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "4", str(ms))
        if i % 2:
            short.append(pid)
    time.sleep(4.5)
    ok, d, detail = s.compare()
    log("after half exited:", detail, "polling" if d["polling"] else "connector",
        "lost-event recoveries", d["lost_event_recoveries"])
    if ok and d["polling"] != poll:
        log("wrong mode: polling =", d["polling"])
        ok = False
    on_loop = d["stat_reads_on_loop"] - at_start
    log("stat reads on the loop after the start-up scan:", on_loop)
    if ok and on_loop:
        ok = False
    if ok:
        n = d["count"]
        if n < 100 * 5:
            log("too few tasks in the table:", n)
            ok = False
finally:
    s.close()
sys.exit(0 if ok else 1)
