#!/usr/bin/env python3
"""rtkit inside muqssd, on a private system bus: busctl makes the calls
PipeWire's module-rt makes (Properties.Get of MaxRealtimePriority,
MinNiceLevel, RTTimeUSecMax; MakeThreadRealtimeWithPID;
MakeThreadHighPriorityWithPID) as an unprivileged user. The user's own
thread becomes ISO and gets its nice; another user's thread, and requests
past the advertised bounds, get rtkit's AccessDenied.

The daemon's loop reads no stat file for a request (a stat read waits
while its task is in an exec: strace on the daemon sees none by the loop
thread), and a request for a thread the daemon is still reading waits
for that read (every read is slowed to 300 ms here) and then succeeds."""

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
from dbus_util import SETPRIV, Bus  # noqa: E402
from sched_util import Daemon, Scope, threads_of  # noqa: E402

RTKIT = ["org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
         "org.freedesktop.RealtimeKit1"]
# A process of two threads that only sleeps; SIGUSR1 starts one more.
USER_PROG = ("/usr/bin/python3 -c 'import signal,threading,time; "
             "new = lambda *a: threading.Thread(target=time.sleep, args=(50,)).start(); "
             "signal.signal(signal.SIGUSR1, new); new(); time.sleep(50)'")
STAT_DELAY_MS = 300


def busctl(*args, user=True):
    argv = [*(SETPRIV if user else []), "busctl", "--system", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=10)


def call(method, sig, *args):
    return busctl("call", "--", *RTKIT, method, sig, *map(str, args))


def task_of(d, tid):
    tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
    return next((t for t in tasks if t["tid"] == tid), None)


def find(scope, comm, uid):
    for p in scope.pids():
        try:
            with open(f"/proc/{p}/comm") as f:
                c = f.read().strip()
            if c == comm and os.stat(f"/proc/{p}").st_uid == uid and len(threads_of(p)) >= 1:
                return p
        except OSError:
            pass
    return None


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    for prog in ("dbus-daemon", "busctl", "setpriv"):
        if not shutil.which(prog):
            print(f"{prog} is not installed")
            return 77
    tmp = tempfile.mkdtemp(prefix="muqss-rtkit-")
    atexit.register(shutil.rmtree, tmp, True)
    os.chmod(tmp, 0o755)  # the unprivileged caller reaches the bus socket
    bus = Bus(tmp, "system")
    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write("[rtkit]\nenable = yes\n")
    scope = Scope([" ".join(SETPRIV) + " " + USER_PROG, "sleep 50"], limit=60)
    failed = []
    try:
        os.environ["MUQSSD_TEST_STAT_DELAY_MS"] = str(STAT_DELAY_MS)
        d = Daemon(scope.root.pid, tmp, config=conf)
        del os.environ["MUQSSD_TEST_STAT_DELAY_MS"]
        end = time.monotonic() + 10
        user = root_task = None
        while time.monotonic() < end and not (user and len(threads_of(user)) == 2 and root_task):
            user, root_task = find(scope, "python3", 65534), find(scope, "sleep", 0)
            time.sleep(0.05)
        assert user and root_task, "the scope's programs did not start"
        worker = max(threads_of(user))
        while time.monotonic() < end and not busctl("status", RTKIT[0]).returncode == 0:
            time.sleep(0.05)

        def expect(what, cond, detail=""):
            print(("ok: " if cond else "FAIL: ") + what)
            if not cond:
                failed.append(f"{what}: {detail}")

        props = {}
        for name in ("MaxRealtimePriority", "MinNiceLevel", "RTTimeUSecMax"):
            p = busctl("call", *RTKIT[:2], "org.freedesktop.DBus.Properties", "Get", "ss",
                       RTKIT[2], name)
            props[name] = p.stdout.strip()
        expect("properties", props == {"MaxRealtimePriority": "v i 20",
                                       "MinNiceLevel": "v i -15",
                                       "RTTimeUSecMax": "v x 200000"}, props)

        trace = os.path.join(tmp, "strace.out")
        tracer = None
        if shutil.which("strace"):
            tracer = subprocess.Popen(["timeout", "-s", "KILL", "20", "strace", "-f", "-qq",
                                       "-e", "trace=openat", "-o", trace, "-p", str(d.pid)],
                                      stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        p = call("MakeThreadRealtimeWithPID", "ttu", user, worker, 10)
        expect("own thread made realtime", p.returncode == 0, p.stderr)
        if tracer:
            time.sleep(0.1)
            tracer.terminate()
            tracer.wait(timeout=10)
            with open(trace, errors="replace") as f:
                on_loop = [ln.strip() for ln in f
                           if ln.startswith(f"{d.pid} ") and re.search(r'/stat"', ln)]
            expect("no stat read on the loop for the request", not on_loop, on_loop[:3])
        t = task_of(d, worker)
        expect("own thread is iso", t and t["class"] == "iso", t)
        t = task_of(d, user)
        expect("its other thread is not", t and t["class"] == "normal", t)

        p = call("MakeThreadHighPriorityWithPID", "tti", user, user, -10)
        expect("own thread made high priority", p.returncode == 0, p.stderr)
        nice = os.getpriority(os.PRIO_PROCESS, user)
        expect("its nice is -10", nice == -10, nice)

        p = call("MakeThreadRealtimeWithPID", "ttu", root_task, 0, 10)
        expect("another user's thread refused", p.returncode != 0 and "Access denied" in p.stderr,
               p.stderr)
        t = task_of(d, root_task)
        expect("another user's thread stays normal", t and t["class"] == "normal", t)
        p = call("MakeThreadHighPriorityWithPID", "tti", root_task, 0, -5)
        expect("another user's nice refused", p.returncode != 0 and "Access denied" in p.stderr,
               p.stderr)
        expect("its nice stays 0", os.getpriority(os.PRIO_PROCESS, root_task) == 0)

        p = call("MakeThreadRealtimeWithPID", "ttu", user, user, 21)
        expect("priority past MaxRealtimePriority refused",
               p.returncode != 0 and "Access denied" in p.stderr, p.stderr)
        p = call("MakeThreadHighPriorityWithPID", "tti", user, user, -16)
        expect("nice past MinNiceLevel refused",
               p.returncode != 0 and "Access denied" in p.stderr, p.stderr)
        p = call("MakeThreadRealtimeWithPID", "ttu", user, 1, 10)
        expect("a thread not in the process named fails", p.returncode != 0, p.stderr)

        # A thread the daemon is still reading: the request waits for it.
        before = set(threads_of(user))
        os.kill(user, signal.SIGUSR1)
        end = time.monotonic() + 5
        while time.monotonic() < end and not set(threads_of(user)) - before:
            time.sleep(0.005)
        new = max(set(threads_of(user)) - before, default=None)
        began = time.monotonic()
        p = call("MakeThreadRealtimeWithPID", "ttu", user, new or 0, 10)
        took = time.monotonic() - began
        print(f"new thread {new}: answered in {took * 1000:.0f} ms")
        expect("a thread still being read made realtime", new and p.returncode == 0, p.stderr)
        t = task_of(d, new) if new else None
        expect("and it is iso", t and t["class"] == "iso", t)
        t = task_of(d, user)
        expect("main thread still normal", t and t["class"] == "normal", t)

        # A second instance finds the name taken, says so once, and waits.
        tmp2 = tempfile.mkdtemp(prefix="muqss-rtkit2-")
        atexit.register(shutil.rmtree, tmp2, True)
        scope2 = Scope(["sleep 30"], limit=40)
        try:
            d2 = Daemon(scope2.root.pid, tmp2, config=conf)
            log2 = os.path.join(tmp2, "muqssd.log")

            def taken():
                with open(log2) as f:
                    return f.read().count("is taken by another service")
            end = time.monotonic() + 10
            while time.monotonic() < end and not taken():
                time.sleep(0.05)
            time.sleep(0.5)
            expect("a taken name is logged once", taken() == 1, taken())
            d.kill(signal.SIGTERM)

            def served():
                with open(log2) as f:
                    return "which its previous owner let go" in f.read()
            end = time.monotonic() + 10
            while time.monotonic() < end and not served():
                time.sleep(0.05)
            expect("the name passes to it when the owner exits", served())
            p = busctl("get-property", *RTKIT, "MinNiceLevel")
            expect("and it answers", p.stdout.strip() == "i -15", p.stdout + p.stderr)
            d2.kill(signal.SIGTERM)
        finally:
            scope2.close()
    finally:
        scope.close()
    print(f"{0 if failed else 1} passed, {len(failed)} failed")
    for f in failed:
        print("  " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
