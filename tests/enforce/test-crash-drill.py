#!/usr/bin/env python3
"""Crash drill: SIGKILL an enforcer while it boosts, stops and pins real
processes, then restore (muqssd --restore, or a restarted enforcer) and
check that nothing is left stopped, boosted, pinned or reniced."""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROUNDS = 20
BUILD = os.environ.get("MUQSS_BUILD_ROOT", "build")
MUQSSD = os.path.join(BUILD, "muqssd", "muqssd")
DRILL = os.path.join(BUILD, "tests", "enforce", "crash-drill")
SPIN = "import time\nend = time.time() + 60\nwhile time.time() < end: pass\n"

children = []
tmpdirs = []
totals = {"stopped": 0, "changed": 0}


def cleanup():
    for p in children:
        try:
            p.send_signal(signal.SIGCONT)
            p.kill()
            p.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    for d in tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    cleanup()
    sys.exit(1)


def proc_state(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0].decode()


def snapshot(pid):
    return {
        "policy": os.sched_getscheduler(pid),
        "nice": os.getpriority(os.PRIO_PROCESS, pid),
        "affinity": os.sched_getaffinity(pid),
    }


def spawn():
    ncpu = os.cpu_count()
    kids = [
        subprocess.Popen(["sleep", "60"]),
        subprocess.Popen(["sleep", "60"]),
        subprocess.Popen(["sleep", "60"]),
        subprocess.Popen([sys.executable, "-c", SPIN]),
    ]
    children.extend(kids)
    # Originals an owner set, which restore must bring back exactly.
    if ncpu >= 2:
        os.sched_setaffinity(kids[0].pid, {1})
    os.setpriority(os.PRIO_PROCESS, kids[1].pid, 4)
    os.sched_setscheduler(kids[2].pid, os.SCHED_BATCH, os.sched_param(0))
    return kids


def records(state):
    d = os.path.join(state, "tasks")
    return [n for n in os.listdir(d) if not n.startswith(".")] if os.path.isdir(d) else []


def drill_round(rnd, kids, originals):
    state = tempfile.mkdtemp(prefix="muqss-drill-")
    tmpdirs.append(state)
    pids = [str(k.pid) for k in kids]
    drill = subprocess.Popen(["timeout", "30", DRILL, state] + pids,
                             stdout=subprocess.PIPE, text=True)
    line = drill.stdout.readline().strip()
    if line != "ready":
        drill.kill()
        fail(f"round {rnd}: drill did not get ready ({line!r}, rc {drill.wait()})")
    time.sleep(random.uniform(0, 0.3))
    # The drill runs under timeout(1): kill the enforcer itself, not timeout.
    kid = subprocess.run(["pgrep", "-P", str(drill.pid)], capture_output=True, text=True)
    for pid in kid.stdout.split():
        os.kill(int(pid), signal.SIGKILL)
    drill.wait(timeout=10)
    left = len(records(state))
    if left == 0:
        fail(f"round {rnd}: the killed drill left no records")
    # What the crash left behind, so a round that tested nothing shows.
    stopped = sum(proc_state(k.pid) == "T" for k in kids)
    changed = sum(snapshot(k.pid) != o for k, o in zip(kids, originals))
    totals["stopped"] += stopped
    totals["changed"] += changed

    how = "muqssd --restore" if rnd % 2 == 0 else "restart"
    if rnd % 2 == 0:
        cmd = ["timeout", "10", MUQSSD, "--restore", "--state-dir", state]
    else:
        cmd = ["timeout", "10", DRILL, "--restart", state]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"round {rnd}: {how} failed ({r.returncode}): {r.stderr}")
    if records(state):
        fail(f"round {rnd}: records left after {how}: {records(state)}")
    for k, orig in zip(kids, originals):
        if k.poll() is not None:
            fail(f"round {rnd}: child {k.pid} died")
        deadline = time.time() + 1
        while proc_state(k.pid) == "T" and time.time() < deadline:
            time.sleep(0.005)
        if proc_state(k.pid) == "T":
            fail(f"round {rnd}: child {k.pid} left stopped")
        now = snapshot(k.pid)
        if now != orig:
            fail(f"round {rnd}: child {k.pid} is {now}, was {orig}")
    print(f"round {rnd:2}: killed with {left} record(s), {stopped} child(ren) stopped, "
          f"{changed} changed; {how}: all restored")


def symlink_refused():
    base = tempfile.mkdtemp(prefix="muqss-drill-link-")
    tmpdirs.append(base)
    real = os.path.join(base, "real")
    os.makedirs(os.path.join(real, "tasks"))
    link = os.path.join(base, "state")
    os.symlink(real, link)
    r = subprocess.run(["timeout", "10", MUQSSD, "--restore", "--state-dir", link],
                       capture_output=True, text=True)
    if r.returncode == 0:
        fail("a symlinked state dir was accepted")

    victim = os.path.join(base, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    os.symlink(victim, os.path.join(real, "tasks", "12345"))
    r = subprocess.run(["timeout", "10", MUQSSD, "--restore", "--state-dir", real],
                       capture_output=True, text=True)
    with open(victim) as f:
        if f.read() != "precious\n":
            fail("restore wrote through a planted symlink")
    if os.path.lexists(os.path.join(real, "tasks", "12345")):
        fail("a planted symlink record was kept")
    if "refused" not in r.stderr:
        fail(f"the planted symlink was not reported: {r.stderr}")
    print("symlinks: state dir refused, record refused and removed, victim intact")


def main():
    if os.geteuid() != 0:
        print("skip: changing other tasks' policies needs root", file=sys.stderr)
        sys.exit(77)
    for exe in (MUQSSD, DRILL):
        if not os.access(exe, os.X_OK):
            fail(f"{exe} not built")
    try:
        kids = spawn()
        time.sleep(0.1)
        originals = [snapshot(k.pid) for k in kids]
        for rnd in range(ROUNDS):
            drill_round(rnd, kids, originals)
        print(f"over {ROUNDS} rounds the crash left {totals['stopped']} stopped and "
              f"{totals['changed']} changed children; every one restored")
        if totals["changed"] == 0:
            fail("no round caught a child changed: the drill tested nothing")
        symlink_refused()
    except Exception as e:  # noqa: BLE001 - any failure must clean up
        fail(repr(e))
    cleanup()


if __name__ == "__main__":
    main()
