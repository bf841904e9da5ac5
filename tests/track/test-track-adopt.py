#!/usr/bin/env python3
"""A request for a task in scope that the table does not hold yet: polling
every 20 s (and reconciling every 20 s), a sleeper started after muqssd is
unseen for that long, yet `muqssctl iso` on it works at once (the daemon
reads it from /proc, off its loop, and answers then), and so does `muqssctl idleprio` on a
thread of a new process. A process outside the scope is still refused."""
import os
import signal
import subprocess
import sys
import time

from trackharness import BUILD, HELPER, Scope, log

MUQSSCTL = os.path.join(BUILD, "muqssctl", "muqssctl")
CONF = "[tracking]\npoll_interval_ms = 20000\nreconcile_interval_ms = 20000\n"


def ctl(s, *args):
    return subprocess.run([MUQSSCTL, "--socket", os.path.join(s.tmp, "sock"), *args],
                          capture_output=True, text=True, timeout=10)


def policy(tid):
    with open(f"/proc/{tid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[38])


s = Scope(extra_args=["--poll"], conf_text=CONF)
outside = None
ok = False
try:
    late = s.spawn("/usr/bin/timeout", "-s", "KILL", "30", "/bin/sleep", "25")
    threaded = s.spawn("/usr/bin/timeout", "-s", "KILL", "30", HELPER, "threads", "3", "25000")
    time.sleep(0.3)
    tids = sorted(int(t) for t in os.listdir(f"/proc/{threaded}/task"))
    on_loop = s.dump()["stat_reads_on_loop"]
    p = ctl(s, "iso", str(late))
    log("iso on a task not yet polled:", p.returncode, p.stdout.strip(), p.stderr.strip())
    assert p.returncode == 0, "iso refused for a task in scope not yet in the table"
    p = ctl(s, "idleprio", str(threaded))
    assert p.returncode == 0, f"idleprio on a new process refused: {p.stderr}"
    # SCHED_IDLE is 5; the daemon applies it within a tick or two.
    deadline = time.time() + 5
    while time.time() < deadline and policy(tids[-1]) != 5:
        time.sleep(0.05)
    assert policy(tids[-1]) == 5, "a thread of the adopted process is not idleprio"
    # Read off the loop: a stat read waits for an exec to end.
    on_loop = s.dump()["stat_reads_on_loop"] - on_loop
    log("stat reads on the loop for the two requests:", on_loop)
    assert on_loop == 0, f"{on_loop} stat reads on the loop to adopt the requests' tasks"
    # Outside the scope: a child of this test, not of the scope root.
    outside = subprocess.Popen(["timeout", "-s", "KILL", "30", "sleep", "25"])
    time.sleep(0.2)
    sleeper = int(open(f"/proc/{outside.pid}/task/{outside.pid}/children").read().split()[0])
    p = ctl(s, "iso", str(sleeper))
    assert p.returncode != 0, "a process outside the scope was adopted"
    ok = True
    log("1 passed, 0 failed")
finally:
    if outside:
        # timeout(1) leads its own process group: its sleep goes too.
        os.killpg(outside.pid, signal.SIGKILL)
        outside.wait()
    s.close()
sys.exit(0 if ok else 1)
