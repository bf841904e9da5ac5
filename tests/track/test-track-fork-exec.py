#!/usr/bin/env python3
"""Forks that exec at once, several times over (sh -c 'exec env sh -c
"exec sleep"'): the daemon reads a new task's stat off its loop, maybe
before an exec the task has already made, so it must apply each exec
after the read. Afterwards every task in the scope is in the table with
the comm and exe it has now, in /proc."""
import os
import sys
import time

from trackharness import Scope, log

N = 24
SLEEP = os.path.realpath("/bin/sleep")
ENV = os.path.realpath("/usr/bin/env")
CHAIN = "exec /usr/bin/env /bin/sh -c 'exec /bin/sleep 30'"


def exe_of(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


s = Scope(log_level="debug")
ok = False
try:
    # A shell that starts N chains at once and waits: each chain is a
    # fork then three execs in a row (sh, env, sh, sleep).
    s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "/bin/sh", "-c",
            f"for i in $(seq {N}); do /bin/sh -c \"{CHAIN}\" & done; wait")
    # And one fork that execs before the daemon can have read it.
    s.spawn("/usr/bin/timeout", "-s", "KILL", "60", ENV, SLEEP, "30")
    deadline = time.time() + 20
    detail = ""
    while time.time() < deadline:
        time.sleep(0.3)
        truth = s.proc_tasks()
        sleeps = [t for t, v in truth.items() if v["comm"] == "sleep"]
        if len(sleeps) < N + 1:
            detail = f"{len(sleeps)} of {N + 1} sleeps running"
            continue
        d = s.dump()
        table = {t["tid"]: t for t in d["tasks"]}
        bad = []
        for tid, v in truth.items():
            got = table.get(tid)
            want_exe = exe_of(v["tgid"])
            if (got is None or got["start_time"] != v["start_time"] or got["comm"] != v["comm"]
                    or (want_exe and got.get("exe") != want_exe)):
                bad.append((tid, v["comm"], want_exe, got and (got["comm"], got.get("exe"))))
        extra = sorted(set(table) - set(truth))
        if not bad and not extra and s.proc_tasks() == truth:
            ok = True
            with_exe = sum(1 for t in sleeps if table[t].get("exe") == SLEEP)
            log(f"{len(truth)} tasks match, comm and exe: {len(sleeps)} sleeps "
                f"({with_exe} with exe {SLEEP}); events {d['events']}")
            break
        detail = f"wrong {bad[:5]} extra {extra[:5]}"
        log("not yet:", detail)
    if not ok:
        log("failed:", detail)
        log(s.log_text()[-3000:])
finally:
    s.close()
sys.exit(0 if ok else 1)
