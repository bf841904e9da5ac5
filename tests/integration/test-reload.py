#!/usr/bin/env python3
"""Reloads keep what the command line chose and leak nothing: a config with
[exempt] lists, reloaded several times, under --log-level debug. In the
ASan build LeakSanitizer fails the daemon's exit if a reload leaked the
old lists; in both builds the debug log goes on after the reloads, and the
exemption of the new file holds."""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sched_util import HOG, Daemon, Scope  # noqa: E402


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    scope = Scope([f"{HOG} 20 >/dev/null"], limit=30)
    conf = os.path.join(scope.tmp, "exempt.conf")
    d = None
    try:
        with open(conf, "w") as f:
            f.write("[exempt]\ncomm = never-me another\nexe = /opt/nothing/*\n")
        d = Daemon(scope.root.pid, scope.tmp, extra=("--log-level", "debug"), config=conf)
        for i in range(3):
            with open(conf, "w") as f:
                f.write(f"[exempt]\ncomm = round{i} hog\nexe = /opt/nothing{i}/*\n")
            d.ctl("reload")
            time.sleep(0.3)
        # A class change logs at debug level.
        d.ctl("iso", str(scope.pids()[-1]))
        time.sleep(0.3)
        d.log.flush()
        log = open(d.log.name, "rb").read()
        after = log.rsplit(b"configuration reloaded", 1)[-1]
        assert log.count(b"configuration reloaded") == 3, "three reloads"
        # Debug lines after the last reload: --log-level was kept.
        assert b"now iso" in after, f"debug logging stopped at reload: {after[-800:]}"
        status = json.loads(d.ctl("--json", "status").stdout)
        assert status["counters"]["reloads"] == 3, status
        os.kill(d.pid, signal.SIGTERM)
        rc = d.proc.wait(timeout=20)
        d = None
        # ASan's leak check makes a leaking daemon exit non-zero.
        assert rc == 0, f"muqssd exited {rc}"
        print("1 passed, 0 failed")
        return 0
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
