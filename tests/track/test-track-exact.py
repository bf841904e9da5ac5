#!/usr/bin/env python3
"""200 processes x 4 threads, half exiting at random times: after quiescence
the daemon's table equals /proc for the scope, exactly. With --poll, the
same through the /proc polling fallback. Either way, after the start-up
scan no stat file is read on the loop thread: polling's scans hand theirs
to the stat readers too. On the bpf sensor no new task's stat is read at
all: its fork event tells it, and the table's start times and parents,
from those, equal /proc's."""
import random
import sys
import time

from trackharness import HELPER, Scope, log

poll = "--poll" in sys.argv
s = Scope(["--poll"] if poll else [])
ok = False
try:
    random.seed(42)
    d0 = s.dump()
    at_start = d0["stat_reads_on_loop"]
    short = []
    for i in range(200):
        ms = random.randint(100, 4000) if i % 2 else 50000
        pid = s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "4", str(ms))
        if i % 2:
            short.append(pid)
    time.sleep(4.5)
    ok, d, detail = s.compare()
    log("after half exited:", detail, "polling" if d["polling"] else d["sensor"],
        "lost-event recoveries", d["lost_event_recoveries"])
    if ok and d["polling"] != poll:
        log("wrong mode: polling =", d["polling"])
        ok = False
    on_loop = d["stat_reads_on_loop"] - at_start
    log("stat reads on the loop after the start-up scan:", on_loop)
    if ok and on_loop:
        ok = False
    table = {t["tid"]: t for t in d["tasks"]}
    truth = s.proc_tasks()
    wrong_ppid = [t for t in truth if t in table and truth[t]["ppid"] != table[t]["ppid"]]
    if ok and wrong_ppid:
        log("parents differ from /proc:", [(t, truth[t]["ppid"], table[t]["ppid"])
                                           for t in wrong_ppid[:10]])
        ok = False
    told = d["stats_told"] - d0["stats_told"]
    log("new tasks whose stat the sensor told:", told, "on", d["sensor"])
    if ok and (told < 200 * 5 if d["sensor"] == "bpf" else told != 0):
        log("expected", "at least 1000" if d["sensor"] == "bpf" else "none")
        ok = False
    if ok:
        n = d["count"]
        if n < 100 * 5:
            log("too few tasks in the table:", n)
            ok = False
finally:
    s.close()
sys.exit(0 if ok else 1)
