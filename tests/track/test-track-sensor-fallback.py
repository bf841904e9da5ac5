#!/usr/bin/env python3
"""Where bpf cannot load (here: muqssd started without CAP_BPF, CAP_PERFMON
and CAP_SYS_ADMIN in its bounding set, as a container or a stricter unit
would), --sensor auto and --sensor bpf both fall back to the proc
connector with exactly one notice that says why, and track as before:
a task started after the daemon is in the table."""
import os
import shutil
import sys

from sched_util import report
from trackharness import HELPER, Scope, log

if os.geteuid() != 0 or not shutil.which("setpriv"):
    print("needs root and setpriv(1)")
    sys.exit(77)

NO_BPF = ["setpriv", "--bounding-set", "-bpf,-perfmon,-sys_admin", "--"]
failures = []
for args in ([], ["--sensor", "auto"], ["--sensor", "bpf"]):
    s = Scope(args, wrapper=NO_BPF)
    try:
        st = s.status()["tracking"]
        notices = [line for line in s.log_text().splitlines() if "sensor unavailable" in line]
        log(args, "->", st["sensor"], notices)
        if st["sensor"] != "connector":
            failures.append(f"{args}: sensor {st['sensor']}, not connector")
        if len(notices) != 1:
            failures.append(f"{args}: {len(notices)} fallback notices, not 1")
        elif "built without" not in notices[0] and "CAP_BPF" not in notices[0]:
            failures.append(f"{args}: the notice does not say why: {notices[0]}")
        late = s.spawn("/usr/bin/timeout", "-s", "KILL", "20", HELPER, "threads", "2", "10000")
        ok, d, detail = s.compare()
        if not ok or late not in {t["tid"] for t in d["tasks"]}:
            failures.append(f"{args}: tracking after the fallback: {detail}")
    finally:
        s.close()

sys.exit(report(failures))
