#!/usr/bin/env python3
"""rtkit under one user's flood (issue 34): `nobody` keeps hundreds of
calls in flight on 16 connections, replaced every 200 calls, half of them
for its own thread and half for root's. Meanwhile another user (uid 1,
`daemon`) and root each ask 20 times for a nice on their own thread, and
every one of those calls succeeds; nobody gets at most rtkit-daemon's 25
requests in 20 s; the daemon's log grows by a bounded number of lines,
not one a refused call."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from dbus_util import SETPRIV, missing_for_bus_tests, rtkit_bus  # noqa: E402
from expect import Expect  # noqa: E402
from sched_util import BUILD, Daemon, Scope, uid_of  # noqa: E402

FLOOD = os.path.join(BUILD, "tests", "drills", "rtkit-flood")
OTHER = ["setpriv", "--reuid=1", "--regid=1", "--clear-groups"]
RTKIT = ["org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
         "org.freedesktop.RealtimeKit1"]
FLOOD_SEC = 40       # stopped once the calls below are made
CALLS = 20           # each, by uid 1 and by root: under the 25 of a window
BURST = 25           # rtkit-daemon's actions per 20 s, per user
# A window's lines: nobody's 25 and a few about refusals; beside them the
# 2 x 20 granted to the others.
WINDOW_LOG_LINES = 50


def sleeper_of(scope, uid):
    for p in scope.pids():
        try:
            if open(f"/proc/{p}/comm", "rb").read().strip() == b"sleep" and uid_of(p) == uid:
                return p
        except OSError:
            pass
    return None


def nice_call(user, pid):
    return subprocess.run([*user, "busctl", "--system", "call", "--", *RTKIT,
                           "MakeThreadHighPriorityWithPID", "tti", str(pid), str(pid), "-5"],
                          capture_output=True, text=True, timeout=40)


def log_lines(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def main():
    skip = missing_for_bus_tests("busctl", "setpriv")
    if skip:
        return skip
    tmp = tempfile.mkdtemp(prefix="muqss-rtkit-flood-")
    bus, conf = rtkit_bus(tmp)
    scope = Scope([" ".join(SETPRIV) + " sleep 60", " ".join(OTHER) + " sleep 60", "sleep 60"],
                  limit=70)
    d = flood = None
    expect = Expect()
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)
        log = os.path.join(tmp, "muqssd.log")
        mine, other, root = (sleeper_of(scope, u) for u in (65534, 1, 0))
        assert mine and other and root, "the scope's sleepers did not start"
        end = time.monotonic() + 10
        while time.monotonic() < end and nice_call([], root).returncode:
            time.sleep(0.1)
        p = nice_call(OTHER, other)
        expect("uid 1 is answered before the flood", p.returncode == 0, p.stderr.strip())

        before = log_lines(log)
        flood = subprocess.Popen(["timeout", "-s", "KILL", str(FLOOD_SEC + 10), *SETPRIV, FLOOD,
                                  str(FLOOD_SEC), "16", "64", str(mine), str(root)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        began = time.monotonic()
        time.sleep(1)
        refused = {"uid 1": [], "root": []}
        for _ in range(CALLS):
            for who, user, pid in (("uid 1", OTHER, other), ("root", [], root)):
                p = nice_call(user, pid)
                if p.returncode:
                    refused[who].append(p.stderr.strip())
            time.sleep(0.1)
        flood_running = flood.poll() is None
        flood.send_signal(15)
        windows = 1 + int((time.monotonic() - began) // 20)  # nobody's, one if all goes well
        max_lines = 2 * CALLS + windows * WINDOW_LOG_LINES
        out, err = flood.communicate(timeout=30)
        grown = log_lines(log) - before
        counts = out.split()
        if len(counts) != 4:
            raise AssertionError(f"rtkit-flood failed: {out!r} {err.strip()!r}")
        sent, ok, denied, other_err = map(int, counts)
        print(f"nobody: {sent} calls, {ok} granted, {denied} denied, {other_err} other; "
              f"log grew by {grown} lines")
        expect("the flood lasted the other users' calls", flood_running)
        expect("nobody flooded (thousands of calls)", sent >= 2000, sent)
        for who, errs in refused.items():
            expect(f"all {CALLS} calls of {who} succeed during the flood", not errs,
                   f"{len(errs)} refused: {errs[:2]}")
        expect(f"nobody is granted at most {BURST} in 20 s", ok <= BURST * windows, ok)
        expect(f"the log grew by at most {max_lines} lines", grown <= max_lines, grown)
    finally:
        if flood and flood.poll() is None:
            flood.kill()
            flood.wait()
        if d:
            d.kill(15)
        scope.close()
        bus.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return expect.exit_code()


if __name__ == "__main__":
    sys.exit(main())
