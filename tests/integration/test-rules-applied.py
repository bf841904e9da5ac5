#!/usr/bin/env python3
"""Native rules classify programs at exec, with no pid typed: a hog matched
by comm runs SCHED_IDLE (IDLEPRIO) and goes back when muqssd stops; one
matched by its command line, and one by its cgroup (a cgroup2 group the
test makes), are batch. The cmdline and cgroup are read only for programs
a rule could need them for, so these two prove that reading happens. A
program's command line is read off the loop thread, with its stat at its
fork and exec: the start-up scan aside, the loop reads none itself."""

import atexit
import json
import os
import shutil
import signal
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
                "cmdline=\"hog 21( |$)\" class=batch\n")
        if cg:
            f.write(f"comm=hog cgroup={rel} class=batch\n")
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write(f"[daemon]\nrules_dir = {rules}\n")
    cmds = [f"bash -c 'sleep 1; exec {HOG} 20'", f"bash -c 'sleep 1; exec {HOG} 21'"]
    if cg:
        cmds.append(f"bash -c 'echo $$ > {cg}/cgroup.procs; sleep 1; exec {HOG} 22'")
    want = {"20": "idleprio", "21": "batch", "22": "batch"} if cg else \
        {"20": "idleprio", "21": "batch"}
    failed = []
    scope = Scope(cmds, limit=30)
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)

        def loop_cmdline_reads():
            status = json.loads(d.ctl("--json", "status").stdout)
            return status["tracking"]["cmdline_reads_on_loop"]

        # After the start-up scan, which reads on the loop: nothing runs
        # boosted yet.
        reads_at_start = loop_cmdline_reads()

        def classes():
            tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
            by_tid = {t["tid"]: t["class"] for t in tasks}
            return {arg: by_tid.get(p) for arg, p in hogs_by_arg(scope, want).items()}

        end = time.monotonic() + 8
        got = {}
        while time.monotonic() < end:
            got = classes()
            if got == want and task_sched(hogs_by_arg(scope, want)["20"])[1] == "idle":
                break
            time.sleep(0.05)
        for arg, cls in want.items():
            ok = got.get(arg) == cls
            print(("ok: " if ok else "FAIL: ") + f"hog {arg} is {cls}")
            if not ok:
                failed.append(f"hog {arg}: {got.get(arg)}, not {cls}")
        reads = loop_cmdline_reads() - reads_at_start
        print(("ok: " if reads == 0 else "FAIL: ") +
              f"{reads} command lines read on the loop after the start-up scan")
        if reads:
            failed.append(f"{reads} command lines read on the loop thread")
        hog = hogs_by_arg(scope, want).get("20")
        policy = hog and task_sched(hog)[1]
        if policy != "idle":
            failed.append(f"the idleprio hog runs {policy}")
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
