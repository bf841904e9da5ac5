#!/usr/bin/env python3
"""A native rule classifies a program at exec, with no pid typed: a hog
matched by comm runs SCHED_IDLE (IDLEPRIO), and goes back when muqssd stops."""

import atexit
import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, Daemon, Scope, task_sched  # noqa: E402


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    tmp = tempfile.mkdtemp(prefix="muqss-rules-")
    atexit.register(shutil.rmtree, tmp, True)
    rules = os.path.join(tmp, "rules.d")
    os.mkdir(rules)
    with open(os.path.join(rules, "10-test.rules"), "w") as f:
        f.write("comm=hog class=idleprio\n")
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write(f"[daemon]\nrules_dir = {rules}\n")
    scope = Scope([f"bash -c 'sleep 1; exec {HOG} 20'"], limit=30)
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)
        hog = None
        end = time.monotonic() + 8
        while time.monotonic() < end:
            for p in scope.pids():
                try:
                    with open(f"/proc/{p}/comm", "rb") as f:
                        if f.read().strip() == b"hog":
                            hog = p
                except OSError:
                    pass
            if hog and task_sched(hog)[1] == "idle":
                break
            time.sleep(0.05)
        assert hog, "the hog never started"
        policy = task_sched(hog)[1]
        assert policy == "idle", f"rule not applied: hog runs {policy}"
        d.kill(signal.SIGTERM)
        policy = task_sched(hog)[1]
        assert policy == "other", f"not restored after SIGTERM: {policy}"
        print("1 passed, 0 failed")
        return 0
    finally:
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
