#!/usr/bin/env python3
"""PID reuse: a managed process exits and a new process gets its pid
(forced through ns_last_pid, as tests/track does). A request made with the
old process's start time is refused, the new process does not inherit the
old one's class, and the crash-restore record of the old process does not
touch the new one."""

import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "track"))
sys.path.insert(0, HERE)
from trackharness import BUILD, MUQSSD, Scope, log  # noqa: E402
from sched_util import task_sched  # noqa: E402
import wire  # noqa: E402

CTL = os.path.join(BUILD, "muqssctl", "muqssctl")


def start_time(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[19])


def ctl(s, *args):
    return subprocess.run([CTL, "--socket", os.path.join(s.tmp, "sock"), *args],
                          capture_output=True, text=True, timeout=10)


def wait_sock(s):
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(s.tmp, "sock")):
        assert time.monotonic() < deadline, "no control socket"
        time.sleep(0.05)


def wait_policy(pid, want, seconds=3):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if task_sched(pid)[1] == want:
            return True
        time.sleep(0.02)
    return False


def reuse(s, pid):
    """A new sleeper on pid, or None when pid allocation raced us."""
    again = s.reuse(pid, 30)
    return again if again == pid else None


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    s = Scope()
    rounds = 0
    try:
        wait_sock(s)
        # 1. A request that carries the old start time is refused.
        old = s.spawn("/bin/sleep", "30")
        time.sleep(0.3)
        old_start = start_time(old)
        r = ctl(s, "idleprio", str(old))
        assert r.returncode == 0, f"idleprio {old}: {r.stderr}"
        assert wait_policy(old, "idle"), "idleprio was not applied"
        conn = wire.connect(os.path.join(s.tmp, "sock"))
        wire.hello(conn)
        os.kill(old, signal.SIGKILL)
        time.sleep(0.05)
        new = reuse(s, old)
        if new:
            rounds += 1
            assert start_time(new) != old_start, "the new process has the old start time"
            t, reply = wire.call(conn, wire.SET_CLASS,
                                 {"pid": old, "class": "iso", "start_time": old_start})
            log(f"set_class with the old start time on reused pid {old}: type {t} {reply}")
            assert t == wire.ERROR and reply.get("errno") == 3, f"acted on the reused pid: {reply}"
            # Not the old process: it must not come back as IDLEPRIO.
            time.sleep(0.5)
            pol = task_sched(new)[1]
            assert pol == "other", f"the new process runs {pol}, the old one's class"
            # muqssctl iso PID now names the new process: it may act, as on a new task.
            r = ctl(s, "iso", str(new))
            log(f"muqssctl iso {new} (the new owner): exit {r.returncode} {r.stderr.strip()}")
        else:
            log(f"could not get pid {old} back (allocation raced): round 1 skipped")
        conn.close()

        # 2. The restore record of the old process leaves the new one alone.
        old = s.spawn("/bin/sleep", "30")
        time.sleep(0.3)
        r = ctl(s, "idleprio", str(old))
        assert r.returncode == 0, f"idleprio {old}: {r.stderr}"
        assert wait_policy(old, "idle"), "idleprio was not applied"
        records = os.listdir(os.path.join(s.state, "tasks"))
        assert str(old) in records, f"no restore record for {old}: {records}"
        os.kill(s.daemon_pid, signal.SIGKILL)
        s.daemon.wait(timeout=10)
        os.kill(old, signal.SIGKILL)
        time.sleep(0.05)
        new = reuse(s, old)
        if new:
            rounds += 1
            # Something the restore would undo, were it to take new for old.
            os.sched_setscheduler(new, os.SCHED_BATCH, os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, new, 7)
            subprocess.run([MUQSSD, "--restore", "--state-dir", s.state], check=True, timeout=30,
                           capture_output=True)
            pol = task_sched(new)[1]
            nice = os.getpriority(os.PRIO_PROCESS, new)
            log(f"after --restore: the new owner of {new} runs {pol} nice {nice}")
            assert pol == "batch" and nice == 7, f"--restore touched the new process: {pol} {nice}"
            left = os.listdir(os.path.join(s.state, "tasks"))
            assert str(old) not in left, f"the stale record is still there: {left}"
        else:
            log(f"could not get pid {old} back (allocation raced): round 2 skipped")
        assert rounds > 0, "pid reuse never succeeded"
        print(f"{rounds} passed, 0 failed")
        return 0
    finally:
        s.close()


if __name__ == "__main__":
    sys.exit(main())
