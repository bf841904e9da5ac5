#!/usr/bin/env python3
"""One user cannot lock others out of the control socket. Uid 65534 opens
300 connections and keeps them alive with a STATUS every second (a trickle
that renews every idle timeout); then 20 uids hold 16 each. Throughout,
root's `status` and `set` answer as quickly as on an idle socket, a user
with no connection yet is served, and uid 65534 never holds more than its
share (16)."""

import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sched_util import MUQSSCTL, Daemon, Scope  # noqa: E402
import subprocess  # noqa: E402
import wire  # noqa: E402

HOLD_S = 12


def holder(path, uid, n, seconds, report):
    """A child, as uid, holding up to n connections with a trickle of
    requests; writes how many were served to the pipe report."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        socks, served = [], 0
        for _ in range(n):
            try:
                s = wire.connect(path)
                wire.hello(s)
                socks.append(s)
                served += 1
            except (AssertionError, OSError, EOFError):
                pass  # refused, with a reason
        os.write(report, f"{served}\n".encode())
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for s in list(socks):
                try:
                    wire.call(s, wire.STATUS)
                except (OSError, EOFError):
                    socks.remove(s)  # dropped to make room
            time.sleep(1)
        code = 0
    finally:
        os._exit(code)


def root_calls(sock, n=10):
    worst = 0.0
    for _ in range(n):
        for args in (["status"], ["set", "rr_interval", "6"]):
            t0 = time.monotonic()
            p = subprocess.run([MUQSSCTL, "--socket", sock, *args], capture_output=True,
                               timeout=10)
            dt = time.monotonic() - t0
            assert p.returncode == 0, f"root's {' '.join(args)} failed: {p.stderr!r}"
            worst = max(worst, dt)
        time.sleep(0.1)
    return worst


def wait_served(r, count, timeout=30):
    out, deadline = b"", time.monotonic() + timeout
    while out.count(b"\n") < count and time.monotonic() < deadline:
        out += os.read(r, 4096)
    return [int(x) for x in out.split()]


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    scope = Scope(["sleep 60"], limit=60)
    d = None
    kids = []
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        os.chmod(scope.tmp, 0o755)  # others may reach the socket (mode 0666)
        idle = root_calls(d.sock)

        # One uid, 300 connections, each kept alive.
        r, w = os.pipe()
        kids.append(holder(d.sock, 65534, 300, HOLD_S, w))
        (served,) = wait_served(r, 1)
        assert served == 16, f"uid 65534 got {served} connections, want 16"
        one_uid = root_calls(d.sock)

        # Twenty uids, 16 each: more than the open slots.
        for uid in range(65000, 65020):
            kids.append(holder(d.sock, uid, 16, HOLD_S, w))
        many = wait_served(r, 20)
        late = holder(d.sock, 64999, 1, 2, w)
        kids.append(late)
        (late_served,) = wait_served(r, 1)
        assert late_served == 1, "a user with no connection yet was refused"
        many_uids = root_calls(d.sock)
        print(f"root's worst status/set: idle {idle * 1000:.0f} ms, one uid flooding "
              f"{one_uid * 1000:.0f} ms, 20 uids {many_uids * 1000:.0f} ms; "
              f"served per uid {many}")
        # The usual time, with room for a loaded machine.
        for what, t in (("one uid flooding", one_uid), ("20 uids", many_uids)):
            assert t < max(1.0, idle * 5), f"root's request took {t:.2f} s with {what}"
        assert d.proc.poll() is None, "muqssd died"
        print("1 passed, 0 failed")
        return 0
    finally:
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
                os.waitpid(k, 0)
            except OSError:
                pass
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
