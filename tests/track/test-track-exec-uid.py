#!/usr/bin/env python3
"""exec renames, prctl renames and uid changes show in the table."""
import sys
import time

from trackharness import HELPER, Scope, log

s = Scope()
failures = []
try:
    ex = s.spawn("/usr/bin/timeout", "-s", "KILL", "30", "/bin/bash", "-c",
                 "sleep 0.3; exec -a renamed /bin/sleep 30")
    rn = s.spawn(HELPER, "rename", "new-name", "20000")
    su = s.spawn(HELPER, "setuid", "65534", "20000")
    sp = s.spawn("/usr/bin/timeout", "-s", "KILL", "30", "/usr/bin/setpriv", "--reuid", "65534",
                 "--regid", "65534", "--clear-groups", "/bin/bash", "-c", "sleep 0.3; exec sleep 30")
    time.sleep(1.5)

    def child_of(pid):
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return int(f.read().split()[0])

    d = s.dump()
    table = {t["tid"]: t for t in d["tasks"]}
    bash = child_of(ex)          # timeout -> bash, now sleep
    priv = child_of(sp)          # timeout -> setpriv -> bash -> sleep (same pid)
    want = {
        bash: {"comm": "sleep", "exe": "/usr/bin/sleep"},
        rn: {"comm": "new-name"},
        su: {"uid": 65534, "euid": 65534},
        priv: {"comm": "sleep", "uid": 65534, "euid": 65534},
    }
    for tid, fields in want.items():
        t = table.get(tid)
        if not t:
            failures.append(f"{tid} not in the table")
            continue
        for k, v in fields.items():
            got = t[k]
            if k == "exe" and got and got.startswith("/bin/"):
                got = "/usr" + got
            if got != v:
                failures.append(f"{tid}: {k} is {t[k]!r}, want {v!r}")
    ok, d, detail = s.compare()
    if not ok:
        failures.append(detail)
finally:
    s.close()
for f in failures:
    log("FAIL:", f)
sys.exit(1 if failures else 0)
