#!/usr/bin/env python3
"""Native rules classify programs at exec, with no pid typed: a hog matched
by comm runs SCHED_IDLE (IDLEPRIO) and goes back when muqssd stops; one
matched by its command line, and one by its cgroup (a cgroup2 group the
test makes), are batch. The cmdline and cgroup are read only for programs
a rule could need them for, so these two prove that reading happens. A
program's command line is read off the loop thread, with its stat at its
fork and exec, and the loop reads none itself: when the batch hog's comm
changes, its rule would need the command line again, and the task keeps
its class (strace sees the loop thread open no cmdline). Two hogs already
running when muqssd starts take their rules too, one by comm and one by
its command line (read at start-up, before the first tick)."""

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, Daemon, Scope, hog_pids, task_sched  # noqa: E402


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    return None


def cmdline_of(pid):
    """Its command line, arguments joined by spaces; b"" once gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().rstrip(b"\0").replace(b"\0", b" ")
    except OSError:
        return b""


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().rstrip(b"\n").decode(errors="replace")
    except OSError:
        return ""


def loop_cmdline_reads(trace, tid):
    """Reads of a cmdline file by the loop thread (tid), from strace's
    openat, read, pread64 and close lines. The loop opens one at a fork
    or exec event (an open takes no lock of the task's) for the readers
    to read; a read is what may wait."""
    fds, reads = {}, []
    with open(trace, errors="replace") as f:
        for line in f:
            if not line.startswith(f"{tid} "):
                continue
            m = re.search(r'openat\(AT_FDCWD, "([^"]*)".* = (\d+)$', line)
            if m:
                fds[m.group(2)] = m.group(1)
                continue
            m = re.search(r'(?:p?read(?:64)?|close)\((\d+)', line)
            if m and fds.get(m.group(1), "").endswith("/cmdline"):
                if "close(" in line:
                    fds.pop(m.group(1))
                else:
                    reads.append(line.strip())
    return reads


def hogs_by_arg(scope, args):
    """{first argument: pid} of the scope's running hogs."""
    found = {}
    for arg in args:
        pids = hog_pids(scope, arg)
        if pids:
            found[arg] = pids[0]
    return found


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    tmp = tempfile.mkdtemp(prefix="muqss-rules-")
    atexit.register(shutil.rmtree, tmp, True)
    root = cgroup2_root()
    cg = None
    if root:
        cg = tempfile.mkdtemp(prefix="muqss-rules-", dir=root)
        atexit.register(lambda: os.path.isdir(cg) and os.rmdir(cg))
    rel = "/" + os.path.relpath(cg, root) if cg else None
    rules = os.path.join(tmp, "rules.d")
    os.mkdir(rules)
    with open(os.path.join(rules, "10-test.rules"), "w") as f:
        f.write("comm=hog class=idleprio\n"
                "cmdline=\"hog 2[15]( |$)\" class=batch\n"
                "cmdline=\" renamer-23$\" class=batch\n")
        if cg:
            f.write(f"comm=hog cgroup={rel} class=batch\n")
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write(f"[daemon]\nrules_dir = {rules}\n")
    # A shell matched by its command line that renames itself (a comm
    # change only the task itself may make) and then waits.
    # (bash would exec a last command in place: "; true" keeps it.)
    renamer = ("bash -c 'sleep 1; exec bash -c \"sleep 3; printf renamed > /proc/\\$\\$/comm; "
               "sleep 20; true\" renamer-23'")
    # 24 and 25 run before muqssd starts (Scope waits 0.3 s).
    cmds = [f"bash -c 'sleep 1; exec {HOG} 20'", f"bash -c 'sleep 1; exec {HOG} 21'", renamer,
            f"{HOG} 24", f"{HOG} 25"]
    if cg:
        cmds.append(f"bash -c 'echo $$ > {cg}/cgroup.procs; sleep 1; exec {HOG} 22'")
    want = {"20": "idleprio", "21": "batch", "24": "idleprio", "25": "batch"}
    if cg:
        want["22"] = "batch"
    failed = []
    scope = Scope(cmds, limit=30)
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)

        def undecided():
            status = json.loads(d.ctl("--json", "status").stdout)
            return status["tracking"]["rules_undecided"]

        def classes():
            tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
            by_tid = {t["tid"]: t["class"] for t in tasks}
            return {arg: by_tid.get(p) for arg, p in hogs_by_arg(scope, want).items()}

        end = time.monotonic() + 8
        got = {}
        while time.monotonic() < end:
            got = classes()
            hogs = hogs_by_arg(scope, want)
            if got == want and all(a in hogs and task_sched(hogs[a])[1] == "idle"
                                   for a in ("20", "24")):
                break
            time.sleep(0.05)
        for arg, cls in want.items():
            ok = got.get(arg) == cls
            print(("ok: " if ok else "FAIL: ") + f"hog {arg} is {cls}")
            if not ok:
                failed.append(f"hog {arg}: {got.get(arg)}, not {cls}")
        # The renamer's comm change: its rule would need the command line
        # again. It renames itself 4 s after the start.
        before = undecided()
        trace = os.path.join(tmp, "strace.out")
        tracer = None
        if shutil.which("strace"):
            tracer = subprocess.Popen(["timeout", "-s", "KILL", "20", "strace", "-f", "-qq",
                                       "-e", "trace=openat,read,pread64,close", "-o", trace,
                                       "-p", str(d.pid)], stderr=subprocess.DEVNULL)
        end = time.monotonic() + 8
        while time.monotonic() < end and undecided() == before:
            time.sleep(0.05)
        n = undecided() - before
        print(("ok: " if n >= 1 else "FAIL: ") + f"{n} rule left undecided at the comm change")
        if n < 1:
            failed.append("the comm change did not reach the rules")
        if tracer:
            tracer.terminate()
            tracer.wait(timeout=10)
            on_loop = loop_cmdline_reads(trace, d.pid)
            print(("ok: " if not on_loop else "FAIL: ") +
                  f"{len(on_loop)} command lines read by the loop thread")
            if on_loop:
                failed.append(f"the loop thread read {on_loop[:3]}")
        else:
            print("no strace: the loop thread's opens were not checked")
        # The shell itself (its children are forked with its name too).
        renamed = min((p for p in scope.pids() if comm_of(p) == "renamed"
                       and cmdline_of(p).startswith(b"bash -c sleep 3")), default=None)
        tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
        cls = next((t["class"] for t in tasks if t["tid"] == renamed), None)
        print(("ok: " if cls == "batch" else "FAIL: ") + f"renamed shell is {cls}")
        if cls != "batch":
            failed.append(f"the renamed shell is {cls}, not batch")
        for arg in ("20", "24"):
            hog = hogs_by_arg(scope, want).get(arg)
            policy = hog and task_sched(hog)[1]
            print(("ok: " if policy == "idle" else "FAIL: ") + f"hog {arg} runs {policy}")
            if policy != "idle":
                failed.append(f"the idleprio hog {arg} runs {policy}")
        hog = hogs_by_arg(scope, want).get("20")
        d.kill(signal.SIGTERM)
        policy = hog and task_sched(hog)[1]
        if policy != "other":
            failed.append(f"not restored after SIGTERM: {policy}")
        if not cg:
            print("no cgroup2 hierarchy: the cgroup rule was not tried")
    finally:
        scope.close()
        if cg:
            for _ in range(50):
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.1)
    print(f"{0 if failed else 1} passed, {len(failed)} failed")
    for f in failed:
        print("  " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
