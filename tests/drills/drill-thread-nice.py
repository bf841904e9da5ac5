#!/usr/bin/env python3
"""A nice request from a user without privilege gets what setpriority(2)
would give that user, thread by thread, from the nice the owner set:
- a process whose main thread is at nice 0 and another thread at 10, with
  RLIMIT_NICE 0: asking nice 0 for the process is refused (it would lower
  the thread), and the thread stays at 10;
- the same with RLIMIT_NICE 30 (down to -10 allowed): granted;
- a hog at nice 19, which muqssd runs at a translated kernel nice: asking
  that kernel nice is refused (it lowers the owner's 19), asking 19 is not."""

import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sched_util import HOG, Daemon, Scope  # noqa: E402
import wire  # noqa: E402

NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups"
HELPER = """import os, sys, threading, time
def t():
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(threading.get_native_id()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(60)
threading.Thread(target=t, daemon=True).start()
time.sleep(60)
"""


def as_nobody(sock, body):
    """SET_CLASS from uid 65534; (reply type, body)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            s = wire.connect(sock)
            wire.hello(s)
            t, reply = wire.call(s, wire.SET_CLASS, body)
            os.write(w, json.dumps([t, reply]).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(out)


def wait_file(path, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path, "rb") as f:
                return int(f.read())
        except (OSError, ValueError):
            time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def pid_of(scope, needle):
    for p in scope.pids():
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"python3") and needle.encode() in argv:
            return p
    raise AssertionError(f"no process for {needle}")


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    scope = Scope([], limit=1)
    tmp = scope.tmp
    scope.close()
    helper = os.path.join(tmp, "threads.py")
    with open(helper, "w") as f:
        f.write(HELPER)
    os.chmod(tmp, 0o755)
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    os.chmod(out, 0o777)
    strict, loose = os.path.join(out, "strict.tid"), os.path.join(out, "loose.tid")
    # Raising RLIMIT_NICE needs CAP_SYS_RESOURCE, which some containers drop.
    can_raise = subprocess.run(["prlimit", "--nice=30:30", "true"],
                               capture_output=True).returncode == 0
    cmds = [f"prlimit --nice=0:0 {NOBODY} python3 {helper} {strict}",
            f"{NOBODY} nice -n 19 {HOG} 60"]
    if can_raise:
        cmds.append(f"prlimit --nice=30:30 {NOBODY} python3 {helper} {loose}")
    scope = Scope(cmds, limit=60)
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        os.chmod(scope.tmp, 0o755)
        t_strict = wait_file(strict)
        p_strict = pid_of(scope, strict)
        assert os.getpriority(os.PRIO_PROCESS, p_strict) == 0
        assert os.getpriority(os.PRIO_PROCESS, t_strict) == 10

        t, reply = as_nobody(d.sock, {"pid": p_strict, "class": "normal", "nice": 0})
        assert t == wire.ERROR and "permission denied" in reply.get("message", ""), \
            f"nice 0 over a thread at 10, RLIMIT_NICE 0: {t} {reply}"
        assert os.getpriority(os.PRIO_PROCESS, t_strict) == 10, "the thread was lowered"
        print("refused:", reply["message"])
        t, reply = as_nobody(d.sock, {"tid": t_strict, "class": "normal", "nice": 5})
        assert t == wire.ERROR, f"nice 5 for the thread at 10: {t} {reply}"

        if can_raise:
            t_loose = wait_file(loose)
            t, reply = as_nobody(d.sock, {"pid": pid_of(scope, loose), "class": "normal",
                                          "nice": 0})
            assert t == wire.OK, f"nice 0 with RLIMIT_NICE 30: {t} {reply}"
            assert os.getpriority(os.PRIO_PROCESS, t_loose) == 0, "RLIMIT_NICE 30 allows 0"
        else:
            print("no CAP_SYS_RESOURCE to raise RLIMIT_NICE: the granted case is not run")

        hog = [p for p in scope.pids() if open(f"/proc/{p}/comm", "rb").read().strip() == b"hog"]
        assert hog, "no hog"
        hog = hog[0]
        end, kernel = time.monotonic() + 15, 19
        while time.monotonic() < end and kernel == 19:
            time.sleep(0.2)
            kernel = os.getpriority(os.PRIO_PROCESS, hog)
        assert kernel < 19, "the hog's nice 19 was never translated"
        t, reply = as_nobody(d.sock, {"pid": hog, "class": "normal", "nice": kernel})
        assert t == wire.ERROR and "from 19" in reply.get("message", ""), \
            f"the hog's owner asked its translated nice {kernel}: {t} {reply}"
        print("refused:", reply["message"])
        t, reply = as_nobody(d.sock, {"pid": hog, "class": "normal", "nice": 19})
        assert t == wire.OK, f"nice 19 for a hog at 19: {t} {reply}"
        assert d.proc.poll() is None, "muqssd died"
        print("1 passed, 0 failed")
        return 0
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
