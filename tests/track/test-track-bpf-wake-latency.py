#!/usr/bin/env python3
"""Wake latency as the bpf sensor measures it in the kernel (status
"wake_latency", tasks --json "bpf"."wake_latency") agrees with what two
sleepers measure of themselves, beside one hog more than there are CPUs.
Each sleeper wakes every 5 ms and counts its wakes and how late each came
back (timer slack 1 ns); `muqssctl iso` moves one of them to ISO.

- Counts: a sleeper's own histogram holds one entry a wake (within 10%),
  its class's 5 s window about 5 s of its wakes, and a hog, preempted
  again and again but never woken, next to none: a switch in after a
  preemption is no wakeup.
- Figures: each is the upper bound of a log2 bucket, and the kernel's wait
  (wakeup to switch in) is part of the lateness the sleeper sees, so a
  task's p50 and p99 are at most twice the sleeper's own (its class's p50
  at most three times that of its last 5 s); p50 <= p99 <= max, all in the
  microseconds to a second.
- muqssctl top shows both classes' figures.
Skips (77) where bpf does not load."""
import json
import os
import subprocess
import sys
import time

from sched_util import report
from trackharness import BUILD, Scope, log

MUQSSCTL = os.path.join(BUILD, "muqssctl", "muqssctl")
SLEEPER = r"""
import ctypes, json, os, sys, time
ctypes.CDLL(None).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK: 1 ns
out, late, n = sys.argv[1], [], 0
while True:
    t0 = time.monotonic_ns()
    time.sleep(0.005)
    late.append(time.monotonic_ns() - t0 - 5_000_000)
    n += 1
    if n % 20 == 0:
        s, r = sorted(late), sorted(late[-1000:])
        with open(out + ".new", "w") as f:
            json.dump({"n": n, "t": time.monotonic(), "p50_us": s[len(s) // 2] / 1000,
                       "p99_us": s[len(s) * 99 // 100] / 1000,
                       "recent_p50_us": r[len(r) // 2] / 1000}, f)
        os.rename(out + ".new", out)
"""

failures = []


def mine(path):
    with open(path) as f:
        return json.load(f)


def plausible(what, w):
    if not 1 <= w["p50_us"] <= w["p99_us"] <= w["max_us"] <= 2e6:
        failures.append(f"{what}: implausible {w}")


def near_own(what, w, own):
    """Over the same wakes, each of the kernel's waits is part of the
    lateness the sleeper saw, and a bucket's bound at most twice it."""
    for k in ("p50_us", "p99_us"):
        if w[k] > 2 * own[k] * 1.1 + 2:
            failures.append(f"{what}: {k} {w[k]} over twice the sleeper's own {own[k]}")


s = Scope(["--sensor", "bpf"])
try:
    s.skip_unless("bpf")
    hogs = [s._child_of(s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "/bin/sh", "-c",
                                "while :; do :; done")) for _ in range(os.cpu_count() + 1)]
    files = {c: os.path.join(s.tmp, f"sleeper-{c}.json") for c in ("normal", "iso")}
    naps = {c: s._child_of(s.spawn("/usr/bin/timeout", "-s", "KILL", "60", sys.executable,
                                   "-c", SLEEPER, files[c])) for c in files}
    t0 = time.monotonic()
    time.sleep(0.5)
    p = subprocess.run([MUQSSCTL, "--socket", os.path.join(s.tmp, "sock"), "iso",
                        str(naps["iso"])], capture_output=True, text=True, timeout=10)
    if p.returncode:
        failures.append(f"muqssctl iso: {p.returncode} {p.stderr}")
    # A whole window of the class after the move: 5 s, and a second's snapshot.
    time.sleep(1.5)
    before = {c: mine(files[c]) for c in files}
    time.sleep(6)
    own = {c: mine(files[c]) for c in files}
    d = s.dump()
    status = s.status()
    tasks = {t["tid"]: t for t in d["tasks"]}
    wl = status.get("wake_latency")
    log("wake_latency", wl)
    log("own", own, "measured", time.monotonic() - t0, "s after the start")
    if not isinstance(wl, dict):
        failures.append(f"status wake_latency is {wl!r}")
        wl = {}
    for c, tid in naps.items():
        t = tasks.get(tid, {})
        w = t.get("bpf", {}).get("wake_latency")
        log(c, "sleeper", tid, "class", t.get("class"), "wake_latency", w)
        if t.get("class") != c:
            failures.append(f"{c} sleeper: class {t.get('class')}")
        if not w:
            failures.append(f"{c} sleeper: no bpf wake_latency in tasks --json")
            continue
        # Its wakes since its fork, a few of python's start-up among them.
        if not own[c]["n"] * 0.9 - 5 <= w["count"] <= own[c]["n"] * 1.1 + 60:
            failures.append(f"{c} sleeper: {w['count']} wakes counted, it slept {own[c]['n']} times")
        plausible(f"{c} sleeper", w)
        near_own(f"{c} sleeper", w, own[c])
        # The class's last 5 s: this sleeper's wakes in that time, nobody
        # else's (the hogs never sleep, the rest of the scope waits on a pipe).
        cw = wl.get(c)
        rate = (own[c]["n"] - before[c]["n"]) / (own[c]["t"] - before[c]["t"])
        if not cw:
            failures.append(f"status wake_latency has no {c}")
            continue
        if not 0.7 * 5 * rate <= cw["count"] <= 1.3 * 6 * rate + 20:
            failures.append(f"status {c}: {cw['count']} wakes in 5 s, its sleeper woke "
                            f"{rate:.0f} times a second")
        plausible(f"status {c}", cw)
        # Its last 1,000 wakes are about the window's, not exactly: slack.
        if cw["p50_us"] > 3 * own[c]["recent_p50_us"] + 5:
            failures.append(f"status {c}: p50_us {cw['p50_us']} against the sleeper's "
                            f"{own[c]['recent_p50_us']} over its last 5 s")
    top = subprocess.run([MUQSSCTL, "--socket", os.path.join(s.tmp, "sock"), "top", "-n", "1"],
                         capture_output=True, text=True, timeout=10).stdout
    line = next((ln for ln in top.splitlines() if ln.startswith("Wake latency")), "")
    log("top:", line)
    if " normal " not in line or " iso " not in line:
        failures.append(f"muqssctl top shows no wake latency of both classes: {line!r}")
    for tid in hogs:
        b = tasks.get(tid, {}).get("bpf", {})
        w = b.get("wake_latency")
        log("hog", tid, "nivcsw", b.get("nivcsw"), "wake_latency", w)
        if not w or b.get("nivcsw", 0) < 20:
            failures.append(f"hog {tid}: not preempted enough to tell ({b})")
        elif w["count"] > 10:
            failures.append(f"hog {tid}: {w['count']} wakes counted, preempted {b['nivcsw']} times")
finally:
    s.close()
sys.exit(report(failures))
