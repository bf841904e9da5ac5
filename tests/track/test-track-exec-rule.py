#!/usr/bin/env python3
"""Exec storm with one rule: 2,000 short programs named storm-target at
200 a second, every other one forked by a parent that exits at once, with
the rule comm=storm-target class=normal nice=5. Every one of them must get
nice 5 (each waits up to 10 s for it, then reports)."""
import os
import shutil
import sys
import tempfile
import time

from trackharness import BUILD, HELPER, Scope, log

COUNT, RATE = 2000, 200
TARGET = os.path.join(BUILD, "tests", "track", "storm-target")

s = None
ok = False
tmp_rules = None
try:
    # The rules dir must exist before the daemon starts.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp_rules = tempfile.mkdtemp(prefix="muqss-rules-", dir=shm)
    with open(os.path.join(tmp_rules, "10-storm.rules"), "w") as f:
        f.write("comm=storm-target class=normal nice=5\n")
    count_file = os.path.join(tmp_rules, "started")
    os.environ["MUQSS_STORM_COUNT"] = count_file  # the scope root passes it on
    s = Scope(conf_text=f"[daemon]\nrules_dir = {tmp_rules}\n",
              log_level=os.environ.get("MUQSS_LOG_LEVEL", "info"))
    out = os.path.join(s.tmp, "targets")
    open(out, "w").close()
    t0 = time.time()
    s.spawn("/usr/bin/timeout", "-s", "KILL", "80", HELPER, "execstorm",
            str(COUNT), str(RATE), TARGET, out, "5")
    # COUNT / RATE seconds of spawning where the machine keeps up; each
    # target then reports within 10 s.
    while not os.path.exists(count_file) and time.time() < t0 + 82:
        time.sleep(0.25)
    if not os.path.exists(count_file):
        raise SystemExit(log("the spawner did not finish in 80 s: the machine is too busy") or 1)
    with open(count_file) as f:
        started = int(f.read())
    deadline = time.time() + 14
    lines = []
    while time.time() < deadline:
        with open(out) as f:
            lines = f.read().splitlines()
        if len(lines) >= started:
            break
        time.sleep(0.25)
    got = [tuple(int(x) for x in ln.split()) for ln in lines]
    late = [g for g in got if g[2] < 0]
    at_main = sum(1 for g in got if g[1] == 5)
    waits = sorted(g[2] for g in got if g[2] >= 0)
    d = s.dump()
    # ppid: the spawner's child, or the scope root for the orphans.
    log(f"{started} of {COUNT} started, {len(got)} reported in {time.time() - t0:.1f} s; "
        f"{at_main} had nice 5 at main; {len(late)} never got it (pid, ppid at main: "
        f"{[(g[0], g[3]) for g in late[:10]]}; scope root {s.root_pid}); max wait "
        f"{waits[-1] if waits else '-'} ms; lost-event recoveries {d['lost_event_recoveries']}")
    ok = started > 0 and len(got) == started and not late
    if not ok:
        log(s.log_text()[-3000:])
finally:
    if s:
        s.close()
    if tmp_rules:
        shutil.rmtree(tmp_rules, ignore_errors=True)
sys.exit(0 if ok else 1)
