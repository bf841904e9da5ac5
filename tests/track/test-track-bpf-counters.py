#!/usr/bin/env python3
"""The bpf sensor's per-task counters (tasks --json, "bpf") agree with what
/proc says of the same tasks: a spinner reads R with its CPU time within
5% (or 20 ms) of schedstat, a sleeper that wakes every 10 ms reads its
voluntary switches within 5% of status, and both name a CPU the machine
has. Skips (77) where bpf does not load."""
import os
import sys
import time

from sched_util import report
from trackharness import Scope, log

failures = []


def proc_counters(tid):
    with open(f"/proc/{tid}/schedstat", "rb") as f:
        cpu_ns = int(f.read().split()[0])
    with open(f"/proc/{tid}/status", "rb") as f:
        ctx = {k: int(v) for k, _, v in (line.partition(b":") for line in f.read().splitlines())
               if k in (b"voluntary_ctxt_switches", b"nonvoluntary_ctxt_switches")}
    return cpu_ns, ctx[b"voluntary_ctxt_switches"]


def near(a, b, rel, floor):
    return abs(a - b) <= max(rel * max(a, b), floor)


s = Scope(["--sensor", "bpf"])
try:
    s.skip_unless("bpf")
    # The workloads, not their timeout(1).
    spin = s._child_of(s.spawn("/usr/bin/timeout", "-s", "KILL", "20", "/bin/sh", "-c",
                               "while :; do :; done"))
    nap = s._child_of(s.spawn("/usr/bin/timeout", "-s", "KILL", "20", sys.executable, "-c",
                              "import time\nwhile True: time.sleep(0.01)"))
    time.sleep(2)
    tasks = {t["tid"]: t for t in s.dump()["tasks"]}
    truth = {tid: proc_counters(tid) for tid in (spin, nap)}
    for tid, what in ((spin, "spinner"), (nap, "sleeper")):
        b = tasks.get(tid, {}).get("bpf")
        log(what, tid, "bpf", b, "proc cpu_ns, nvcsw", truth[tid])
        if not b:
            failures.append(f"{what}: no bpf counters in tasks --json")
            continue
        if not 0 <= b["last_cpu"] < os.cpu_count():
            failures.append(f"{what}: last_cpu {b['last_cpu']}")
    b = tasks.get(spin, {}).get("bpf")
    if b:
        if b["state"] != "R":
            failures.append(f"spinner reads {b['state']}, not R")
        if not near(b["cpu_ns"], truth[spin][0], 0.05, 20e6):
            failures.append(f"spinner cpu_ns {b['cpu_ns']} against schedstat {truth[spin][0]}")
    b = tasks.get(nap, {}).get("bpf")
    if b:
        if truth[nap][1] < 50 or not near(b["nvcsw"], truth[nap][1], 0.05, 3):
            failures.append(f"sleeper nvcsw {b['nvcsw']} against status {truth[nap][1]}")
        if not 0 <= b["wake_ago_ns"] < 1e9:
            failures.append(f"sleeper last woke {b['wake_ago_ns']} ns ago")
finally:
    s.close()
sys.exit(report(failures))
