#!/usr/bin/env python3
"""--scope-cgroup: the daemon tracks exactly the tasks of a cgroup subtree
the test made (cgroup2, or with --v1 the v1 cpu hierarchy).

Inside: processes started before the daemon (start-up scan), after it
(fork events), in a nested child cgroup, and a process moved in from
outside (found by reconciliation). Outside: a busy tree and a sleeping
tree of the same test that must stay untracked. The cgroups are removed
on the way out, failed or not."""
import os
import signal
import subprocess
import sys
import time

from trackharness import HELPER, CgroupScope, cgroup_root, log

version = 1 if "--v1" in sys.argv else 2
if os.geteuid() != 0:
    log("needs root to make cgroups")
    sys.exit(77)
if cgroup_root(version) is None:
    log(f"no cgroup v{version} hierarchy mounted" + (" with cpu" if version == 1 else ""))
    sys.exit(77)

outside = []
s = CgroupScope(version)
ok = False
try:
    # Outside the cgroup: started by the test itself, bounded.
    for argv in (["/bin/sh", "-c", "while :; do :; done"], [HELPER, "threads", "8", "30000"]):
        outside.append(subprocess.Popen(["timeout", "-s", "KILL", "40", *argv],
                                        start_new_session=True))
    # Before the daemon: the start-up scan must find these.
    for _ in range(5):
        s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "4", "30000")
    nested = s.mkdir("sub")
    late = s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "3", "30000")
    s.move(late, nested)
    # Sub-second reconciliation so a task moved in is picked up quickly.
    with open(s.conf, "w") as f:
        f.write("[tracking]\nreconcile_interval_ms = 500\n")
    s.start_daemon()
    # After: fork events, some exiting.
    for i in range(20):
        s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "2",
                str(300 if i % 2 else 30000))
    # Moved in from outside after the daemon started.
    mover = subprocess.Popen([HELPER, "threads", "5", "30000"], start_new_session=True)
    outside.append(mover)
    time.sleep(0.3)
    s.move(mover.pid, nested)
    time.sleep(1.5)
    ok, d, detail = s.compare()
    log("cgroup v%d:" % version, detail)
    table = {t["tid"] for t in d["tasks"]}
    strays = [p.pid for p in outside if p is not mover and p.poll() is None
              for t in os.listdir(f"/proc/{p.pid}/task") if int(t) in table]
    if strays:
        log("tracked outside the cgroup:", strays)
        ok = False
    if ok and d["count"] < 60:
        log("too few tasks in the table:", d["count"])
        ok = False
    if ok and mover.pid not in table:
        log("the process moved in was not picked up")
        ok = False
    if not ok:
        log(s.log_text()[-3000:])
finally:
    # Each in a session of its own: kill timeout(1) and what it runs.
    for p in outside:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait(timeout=10)
    s.close()
sys.exit(0 if ok else 1)
