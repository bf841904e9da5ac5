#!/usr/bin/env python3
"""The control socket and rtkit's D-Bus API are two doors to the same
class changes: one table of requests, made by nobody (or root, the admin
of both) through each door, must be allowed or refused alike, and do the
same to the thread. A real-time request through rtkit is a SET_CLASS to
iso; a high-priority one a SET_CLASS of the nice in the class the thread
has.

The one intended difference is left out of the table: rtkit grants a
nice down to its MinNiceLevel (-15) that the control socket grants only
as far as the process's RLIMIT_NICE. Below -15 both refuse (row "nice
-16")."""

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "drills"))
from dbus_util import SETPRIV, missing_for_bus_tests, rtkit_bus  # noqa: E402
from sched_util import BUILD, Daemon, Scope, threads_of, uid_of  # noqa: E402
import wire  # noqa: E402

NOBODY = 65534
RTKIT = ["org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
         "org.freedesktop.RealtimeKit1"]
MIXED = os.path.join(BUILD, "tests", "drills", "drill-mixed-uid")
# Two threads that only sleep.
SLEEPER = ("/usr/bin/python3 -c 'import threading,time; "
           "threading.Thread(target=time.sleep, args=(50,)).start(); time.sleep(50)'")
OTHER = ["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups"]

# (what, target, class set up by root, request, allowed[, caller]): a
# request is ("class", "iso") or ("nice", n); the caller is nobody unless
# the row names root (0), the admin of both doors.
TABLE = [
    ("own thread to iso", "own-worker", "normal", ("class", "iso"), True),
    ("own main thread to iso", "own-main", "normal", ("class", "iso"), True),
    ("own idleprio thread to iso", "own-main", "idleprio", ("class", "iso"), False),
    ("own idleprio worker to iso", "own-worker", "idleprio", ("class", "iso"), False),
    ("own thread nice 5", "own-worker", "normal", ("nice", 5), True),
    ("own idleprio thread nice 5", "own-worker", "idleprio", ("nice", 5), True),
    ("own thread nice -16", "own-worker", "normal", ("nice", -16), False),
    ("another user's thread to iso", "other", "normal", ("class", "iso"), False),
    ("another user's thread nice 5", "other", "normal", ("nice", 5), False),
    ("nobody's thread of a root process to iso", "mixed-nobody", "normal", ("class", "iso"),
     True),
    ("root's thread of a process whose main thread is nobody's to iso", "mixed-root", "normal",
     ("class", "iso"), False),
    ("root takes nobody's idleprio thread to iso", "own-worker", "idleprio", ("class", "iso"),
     True, 0),
]


def control_call(sock, body, uid=None):
    """One SET_CLASS through the control socket, as uid (None: root):
    (allowed, message)."""
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(r)
            if uid is not None:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            with wire.connect(sock) as s:
                wire.hello(s)
                t, reply = wire.call(s, wire.SET_CLASS, body)
            out = {"ok": t == wire.OK, "message": reply.get("message", "")}
        except Exception as e:  # reported to the parent, which fails the row
            out = {"ok": False, "message": f"client failed: {e!r}"}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = json.loads(f.read() or b'{"ok": false, "message": "no answer"}')
    os.waitpid(child, 0)
    return out["ok"], out["message"]


def rtkit_call(pid, tid, request, uid=NOBODY):
    """The same request through rtkit, as uid (nobody or root): (allowed,
    message)."""
    kind, value = request
    method, sig = (("MakeThreadRealtimeWithPID", "ttu") if kind == "class"
                   else ("MakeThreadHighPriorityWithPID", "tti"))
    p = subprocess.run([*(SETPRIV if uid == NOBODY else []), "busctl", "--system", "call", "--", *RTKIT, method, sig,
                        str(pid), str(tid), str(10 if kind == "class" else value)],
                       capture_output=True, text=True, timeout=10)
    return p.returncode == 0, p.stderr.strip()


def control_body(pid, tid, cls, request):
    kind, value = request
    if kind == "class":
        return {"pid": pid, "tid": tid, "class": value}
    return {"pid": pid, "tid": tid, "class": cls, "nice": value}


def task_of(d, tid):
    tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
    t = next((t for t in tasks if t["tid"] == tid), None)
    return (t["class"], t["nice"]) if t else None


def comm_of(pid):
    with open(f"/proc/{pid}/comm", "rb") as f:
        return f.read().strip()


def find_targets(scope):
    """{target name: (pid, tid)} once every program runs as it should."""
    end = time.monotonic() + 10
    out = {}
    while time.monotonic() < end and len(out) < 5:
        for p in scope.pids():
            try:
                comm, threads = comm_of(p), sorted(threads_of(p))
                uids = {t: uid_of(t) for t in threads}
            except OSError:
                continue
            if comm == b"python3" and uids.get(p) == NOBODY and len(threads) == 2:
                out["own-main"] = (p, p)
                out["own-worker"] = (p, threads[-1])
            elif comm == b"sleep" and uids.get(p) == 1:
                out["other"] = (p, p)
            elif comm == b"drill-mixed-uid" and sorted(uids.values()) == [0, NOBODY]:
                other = next(t for t in threads if t != p)
                if uids[p] == 0:
                    out["mixed-nobody"] = (p, other)
                else:
                    out["mixed-root"] = (p, other)
        time.sleep(0.05)
    assert len(out) == 5, f"the scope's programs did not start: {sorted(out)}"
    return out


def main():
    skip = missing_for_bus_tests("busctl", "setpriv")
    if skip:
        return skip
    tmp = tempfile.mkdtemp(prefix="muqss-doors-")
    atexit.register(shutil.rmtree, tmp, True)
    _, conf = rtkit_bus(tmp)  # nobody reaches the bus and the control socket
    scope = Scope([" ".join(SETPRIV) + " " + SLEEPER, " ".join(OTHER) + " sleep 50",
                   f"{MIXED} worker {NOBODY}", f"{MIXED} main {NOBODY}"], limit=60)
    failed = []  # (row, why)
    d = None
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)
        targets = find_targets(scope)
        end = time.monotonic() + 10
        while time.monotonic() < end and subprocess.run(
                ["busctl", "--system", "status", RTKIT[0]], capture_output=True,
                timeout=10).returncode:
            time.sleep(0.05)
        time.sleep(0.3)  # every thread adopted
        for what, target, cls, request, want, *caller in TABLE:
            uid = caller[0] if caller else NOBODY
            pid, tid = targets[target]
            seen = {}
            for door in ("control socket", "rtkit"):
                ok, msg = control_call(d.sock, {"pid": pid, "tid": tid, "class": cls, "nice": 0})
                assert ok, f"{what}: root's setup failed: {msg}"
                before = task_of(d, tid)
                if door == "rtkit":
                    ok, msg = rtkit_call(pid, tid, request, uid)
                else:
                    ok, msg = control_call(d.sock, control_body(pid, tid, cls, request),
                                           uid or None)
                after = task_of(d, tid)
                kind, value = request
                done = after == ((value, 0) if kind == "class" else (cls, value))
                seen[door] = ok
                good = ok == want and (done if want else after == before)
                print(f"{'ok' if good else 'FAIL'}: {what} through the {door}: "
                      f"{'allowed' if ok else 'refused'} ({msg or 'no message'}), "
                      f"{before} -> {after}")
                if not good:
                    failed.append((what, f"through the {door}"))
            if seen["control socket"] != seen["rtkit"]:
                failed.append((what, f"the doors disagree: {seen}"))
        d.kill(signal.SIGTERM)
        d = None
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()
    bad = {what for what, _ in failed}
    print(f"{len(TABLE) - len(bad)} rows passed, {len(bad)} failed")
    for what, why in failed:
        print(f"  {what}: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
