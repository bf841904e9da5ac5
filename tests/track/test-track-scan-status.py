#!/usr/bin/env python3
"""A scan sorts the rest of the machine out through status, not stat:
stat waits on a task mid-exec (bench/README.md, "The exec_update_lock
stall"), and a scan runs on the loop thread. With --scope-pid on a small
tree and a reconcile scan every 100 ms, strace on the daemon sees no open
of any stat file of a task outside the scope, while the machine has many;
the scans do run (they open status files), and a process started in scope
meanwhile is tracked."""
import os
import re
import shutil
import subprocess
import sys
import time

from trackharness import Scope, log

INTERVAL_MS = 100
WATCH_S = 1.5

if shutil.which("strace") is None:
    log("strace is not installed")
    sys.exit(77)

s = Scope(conf_text=f"[tracking]\nreconcile_interval_ms = {INTERVAL_MS}\n")
ok = False
try:
    out = os.path.join(s.tmp, "strace.out")
    tracer = subprocess.Popen(["timeout", "-s", "KILL", "20", "strace", "-f", "-qq",
                               "-e", "trace=openat", "-o", out, "-p", str(s.daemon_pid)],
                              stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "/bin/sleep", "30")
    time.sleep(WATCH_S)
    tracer.terminate()
    tracer.wait(timeout=10)
    scope = set(s.proc_tasks()) | {s.root_pid}
    stat_opens, status_opens = [], 0
    with open(out, errors="replace") as f:
        for line in f:
            m = re.search(r'"/proc/(\d+)/task/(\d+)/(stat|status)"', line)
            if not m:
                continue
            if m.group(3) == "status":
                status_opens += 1
            elif int(m.group(1)) not in scope:
                stat_opens.append(line.strip())
    others = sum(1 for d in os.listdir("/proc") if d.isdigit())
    good, d, detail = s.compare(settle=0.5, tries=20)
    log(f"{WATCH_S} s of reconcile scans every {INTERVAL_MS} ms: {status_opens} status opens, "
        f"{len(stat_opens)} stat opens outside the scope; {others} processes on the machine; "
        f"table: {detail}")
    for line in stat_opens[:5]:
        log("  " + line)
    ok = good and not stat_opens and status_opens > others and others > 20
    if not ok:
        log(s.log_text()[-3000:])
finally:
    s.close()
sys.exit(0 if ok else 1)
