#!/usr/bin/env python3
"""Autogroup, as the README says. By default ([scheduler] autogroup = keep)
muqssd leaves it on, so a hog's nice (translated to MuQSS's share) acts
inside its session, and hogs in two sessions share equally, as on the stock
kernel. With autogroup = off, nice acts across sessions (MuQSS's ~3% for
nice 19), and the sysctl comes back at SIGTERM and, after a SIGKILL, with
muqssd --restore. Two hogs owner-pinned to CPU 0, nice 0 and nice 19, in
one session, then in two, then in two with the key."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, MUQSSD, Daemon, Scope, assert_clean, sanitized  # noqa: E402

SECONDS = 4
SYSCTL = "/proc/sys/kernel/sched_autogroup_enabled"


def autogroup():
    with open(SYSCTL) as f:
        return f.read().strip()


def set_autogroup(value):
    with open(SYSCTL, "w") as f:
        f.write(value)


def nice19_share(separate_sessions, key_off=False):
    setsid = "setsid " if separate_sessions else ""
    out = tempfile.mkdtemp(prefix="muqss-autogroup-")
    n0 = f"taskset -c 0 {HOG} {SECONDS}"
    n19 = f"{setsid}taskset -c 0 nice -n 19 {HOG} {SECONDS}"
    if key_off:
        # The kernel puts a task in its session's autogroup at fork and
        # setsid only: the hogs must start after muqssd turned it off, as
        # a session does under a muqssd started at boot.
        wait = f"while [ ! -e {out}/go ]; do sleep 0.05; done"
        n0, n19 = (f"bash -c '{wait}; {c}; true'" for c in (n0, n19))
    scope = Scope([f"{n0} > {out}/n0", f"{n19} > {out}/n19"], limit=SECONDS + 20)
    d = None
    try:
        conf = None
        if key_off:
            conf = os.path.join(scope.tmp, "off.conf")
            with open(conf, "w") as f:
                f.write("[scheduler]\nautogroup = off\n")
        d = Daemon(scope.root.pid, scope.tmp, config=conf)
        if key_off:
            assert autogroup() == "0", "autogroup = off did not turn autogroup off"
            open(os.path.join(out, "go"), "w").close()
        scope.root.wait(timeout=SECONDS + 25)
        d.kill(15)
        d = None
        assert autogroup() == "1", "autogroup not put back at SIGTERM"
        assert_clean(scope.pids(), "after SIGTERM")
        cpu = {}
        for name in ("n0", "n19"):
            with open(os.path.join(out, name)) as f:
                cpu[name] = json.loads(f.read().splitlines()[-1])["cpu_s"]
        return 100 * cpu["n19"] / (cpu["n0"] + cpu["n19"])
    finally:
        if d:
            d.kill(15)
        scope.close()
        shutil.rmtree(out, ignore_errors=True)


def restored_after_kill():
    """SIGKILL leaves autogroup off; --restore puts it back."""
    scope = Scope(["sleep 10"], limit=15)
    try:
        conf = os.path.join(scope.tmp, "off.conf")
        with open(conf, "w") as f:
            f.write("[scheduler]\nautogroup = off\n")
        d = Daemon(scope.root.pid, scope.tmp, config=conf)
        assert autogroup() == "0", "autogroup = off did not turn autogroup off"
        d.kill(9)
        assert autogroup() == "0", "SIGKILL cannot have restored anything"
        subprocess.run([MUQSSD, "--restore", "--state-dir", d.state], check=True, timeout=30)
        assert autogroup() == "1", "muqssd --restore did not put autogroup back"
    finally:
        scope.close()


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    with open("/proc/sys/kernel/sched_autogroup_enabled", "rb") as f:
        if f.read().strip() != b"1":
            print("autogroup is off here: nothing to show")
            return 77
    try:
        same = nice19_share(False)
        time.sleep(0.2)
        apart = nice19_share(True)
        time.sleep(0.2)
        off = nice19_share(True, key_off=True)
        restored_after_kill()
    finally:
        # Whatever failed, the machine gets its autogroup back.
        if autogroup() != "1":
            set_autogroup("1")
    print(f"nice 19 beside nice 0 on one CPU: {same:.1f}% in one session, "
          f"{apart:.1f}% in two sessions, {off:.1f}% in two sessions with autogroup = off")
    # MuQSS's nice 19 share is about 3% (CFS alone: 1.4%); 50% is equal.
    if sanitized(HOG):
        # The hogs are built with ASan too, and an instrumented hog's own
        # CPU figure gives nice 19 12-15% under the same daemon that gives
        # a plain hog 3%: the share is the plain build's to assert.
        print("ASan build: the one-session share is not asserted")
    else:
        assert same < 10, f"one session: nice 19 got {same:.1f}%, expected MuQSS's ~3%"
    assert apart > 35, f"two sessions: nice 19 got {apart:.1f}%, expected an equal share"
    if not sanitized(HOG):
        # The same share as in one session: MuQSS's ~3% (2-5% on an idle
        # machine); the bound is the one-session check's.
        assert off < 10, f"two sessions, autogroup off: nice 19 got {off:.1f}%, expected ~3%"
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
