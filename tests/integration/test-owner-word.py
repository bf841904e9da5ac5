#!/usr/bin/env python3
"""The owner's (and the administrator's) later word wins: a `renice`,
`chrt -b`, `chrt -i` or `taskset` on a managed hog, a managed sleeper
(100 Hz, 2 ms of CPU a period, beside 2 hogs) and a worker (20 Hz, 12 ms
bursts, boosted and dropped back and forth) holds while muqssd
runs, and is what the task keeps after muqssd exits (SIGTERM), or after
SIGKILL and `muqssd --restore`: the owner's value, not the one muqssd
recorded before its first change (issue 16, item 5)."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, NCPU, PROBE, Daemon, Scope, assert_clean, hog_pids, task_sched  # noqa: E402

SLEEPER = f"{PROBE} -p 10 -w 2 -d 30"
# Bursts longer than a slice: boosted, then dropped to the fair class,
# back and forth (an unboost once put back the nice muqssd last set).
WORKER = f"{PROBE} -p 50 -w 12 -d 30"


def nice_of(tid):
    with open(f"/proc/{tid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[16])


def probe_pid(scope, period):
    for p in scope.pids():
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"/frame-probe") and argv[2] == period.encode():
            return p
    raise AssertionError(f"no frame-probe -p {period} in the scope")


def run(*argv):
    subprocess.run(argv, check=True, timeout=10, stdout=subprocess.DEVNULL)


# Each change: (name, apply(pid) -> what the owner set, ok while the
# daemon runs (pid, want) -> bool, ok after it exits (pid, want) -> bool).
def renice(pid):
    run("renice", "-n", "15", "-p", str(pid))
    return 15


def chrt_batch(pid):
    run("chrt", "-b", "-p", "0", str(pid))
    return "batch"


def chrt_idle(pid):
    run("chrt", "-i", "-p", "0", str(pid))
    return "idle"


def taskset(pid):
    # A CPU other than the one we may have pinned it to: a mask equal to
    # our pin cannot be told from ours (see enforce_pin()). The call
    # taskset(1) makes, made at once: spawning taskset between the read
    # and the write gave the daemon milliseconds to move the worker's pin
    # (it is re-pinned at each of its 20 Hz wake-ups) onto that very CPU.
    aff = os.sched_getaffinity(pid)
    cpu = 1 if aff == {0} else 0
    os.sched_setaffinity(pid, {cpu})
    return {cpu}


CHANGES = {
    # A hog runs at muqssd's translation of its owner's nice: any but
    # the old 0 while managed, the owner's own at exit.
    "renice": (renice, lambda p, w: nice_of(p) != 0, lambda p, w: nice_of(p) == w),
    # Our boost reads FIFO; never the old SCHED_OTHER.
    "chrt -b": (chrt_batch, lambda p, w: task_sched(p)[1] in (w, "fifo"),
                lambda p, w: task_sched(p)[1] == w),
    "chrt -i": (chrt_idle, lambda p, w: task_sched(p)[1] in (w, "fifo"),
                lambda p, w: task_sched(p)[1] == w),
    # A pin of ours is inside the owner's mask.
    "taskset": (taskset, lambda p, w: task_sched(p)[3] <= w, lambda p, w: task_sched(p)[3] == w),
}


def round_(name, how):
    apply, ok_running, ok_after = CHANGES[name]
    scope = Scope([f"{HOG} 30", f"{HOG} 30", SLEEPER, WORKER], limit=30)
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        time.sleep(1.5)  # the hogs are hogs, the sleeper boosted and pinned
        targets = {"hog": hog_pids(scope)[0], "sleeper": probe_pid(scope, "10"),
                   "worker": probe_pid(scope, "50")}
        want = {k: apply(p) for k, p in targets.items()}
        bad = set()
        end = time.monotonic() + 2
        while time.monotonic() < end:
            for k, p in targets.items():
                if not ok_running(p, want[k]):
                    bad.add((k, nice_of(p), task_sched(p)[1], tuple(sorted(task_sched(p)[3]))))
            time.sleep(0.01)
        assert not bad, f"{name}: the owner's word did not hold while managed: {bad}"
        if how == "SIGTERM":
            d.kill(signal.SIGTERM)
        else:
            d.kill(signal.SIGKILL)
            d.restore()
        d = None
        after = {k: (nice_of(p), task_sched(p)[1], sorted(task_sched(p)[3])) for k, p in targets.items()}
        lost = {k: after[k] for k, p in targets.items() if not ok_after(p, want[k])}
        assert not lost, f"{name}, {how}: not the owner's value after exit: {lost}"
        affinity = {p: want[k] for k, p in targets.items() if name == "taskset"}
        assert_clean(scope.pids(), f"{name}, {how}", affinity)
        print(f"ok: {name}, {how}: {after}")
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    if NCPU < 2:
        print("needs 2 CPUs")
        return 77
    only = sys.argv[1:]
    rounds = [(n, "SIGTERM") for n in CHANGES] + [("renice", "SIGKILL+restore"),
                                                  ("chrt -b", "SIGKILL+restore")]
    failed = 0
    for name, how in rounds:
        if only and name not in only:
            continue
        try:
            round_(name, how)
        except AssertionError as e:
            print(f"FAIL: {e}")
            failed += 1
    print(f"{len(rounds) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
