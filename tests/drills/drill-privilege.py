#!/usr/bin/env python3
"""Privilege: what tests/control's `nobody` case leaves out. As nobody:
another unprivileged user's task (whole process and one thread, every
class), IDLEPRIO -> NORMAL, BATCH or ISO on its own task, every tunable
and reload are refused, and the other user's task is left as it was.
A root process whose threads have different real uids (one thread
dropped privilege): a whole-process request needs every thread to be
nobody's, and a thread's id named as a process is no process. Then, as
root: a symlink or other file planted at the socket path or the state
path is not followed, and the daemon refuses to start."""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from sched_util import (BUILD, MUQSSCTL, MUQSSD, Daemon, Scope, task_sched, uid_of,  # noqa: E402
                        threads_of)

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
OTHER = ["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups"]
MIXED = os.path.join(BUILD, "tests", "drills", "drill-mixed-uid")
CLASSES = ("iso", "idleprio", "normal", "batch")


def as_nobody(sock, *args):
    return subprocess.run(NOBODY + [MUQSSCTL, "--socket", sock, *args], capture_output=True,
                          text=True, timeout=10)


def sleepers(scope, uid):
    return [p for p in scope.pids()
            if os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/comm", "rb").read().strip() == b"sleep"
            and uid_of(p) == uid]


def refused(sock, want, *args, code=4):
    """muqssctl's exit code 4: permission denied; 5: no such process."""
    r = as_nobody(sock, *args)
    assert r.returncode == code and want in r.stderr, \
        f"nobody: muqssctl {' '.join(args)}: exit {r.returncode} {r.stderr.strip()!r}"
    return r.stderr.strip()


@contextlib.contextmanager
def daemon_on(cmds):
    """(scope, daemon): the daemon on a scope of cmds, its socket within
    nobody's reach; both gone after."""
    scope = Scope(cmds, limit=40)
    os.chmod(scope.tmp, 0o755)  # nobody must reach the socket
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        yield scope, d
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


def user_checks():
    with daemon_on([" ".join(NOBODY) + " sleep 30", " ".join(OTHER) + " sleep 30"]) as (scope, d):
        time.sleep(0.3)
        mine, = sleepers(scope, 65534)
        other, = sleepers(scope, 1)
        before = {t: task_sched(t)[:3] for t in threads_of(other)}
        msgs = []
        for cls in CLASSES:
            msgs.append(refused(d.sock, f"permission denied: pid {other} belongs to uid 1", cls,
                                str(other)))
            msgs.append(refused(d.sock, f"permission denied: pid {other} belongs to uid 1", cls,
                                "-t", str(other)))
        after = {t: task_sched(t)[:3] for t in threads_of(other)}
        assert before == after, f"the other user's task changed: {before} -> {after}"
        # IDLEPRIO is a one-way door for users, as in MuQSS.
        r = as_nobody(d.sock, "idleprio", str(mine))
        assert r.returncode == 0, f"nobody idleprio own: {r.stderr}"
        for cls in ("normal", "batch", "iso"):
            msgs.append(refused(d.sock, f"leaving idleprio needs root (pid {mine})", cls, str(mine)))
        r = subprocess.run([MUQSSCTL, "--socket", d.sock, "normal", str(mine)],
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 0, f"root normal: {r.stderr}"
        for name, value in (("iso_cpu", "100"), ("rr_interval", "1"), ("iso_reading", "per-cpu")):
            msgs.append(refused(d.sock, "changing tunables needs root", "set", name, value))
        msgs.append(refused(d.sock, "reload needs root", "reload"))
        for m in sorted(set(msgs)):
            print("refused:", m)


def mixed_procs(scope):
    """{mode: (pid, tid of its root thread, tid of its nobody thread)} of
    the scope's drill-mixed-uid processes, once each has dropped."""
    out = {}
    end = time.monotonic() + 10
    while time.monotonic() < end and len(out) < 2:
        for p in scope.pids():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                if not argv[0].endswith(b"/drill-mixed-uid"):
                    continue
                by_uid = {uid_of(t): t for t in threads_of(p)}
            except OSError:
                continue
            if sorted(by_uid) == [0, 65534]:
                out[argv[1].decode()] = (p, by_uid[0], by_uid[65534])
        time.sleep(0.05)
    assert len(out) == 2, f"drill-mixed-uid did not start: {out}"
    return out


def mixed_threads():
    with daemon_on([f"{MIXED} worker 65534", f"{MIXED} main 65534"]) as (scope, d):
        procs = mixed_procs(scope)
        time.sleep(0.3)
        pids = [p for p, _, _ in procs.values()]
        before = {t: task_sched(t)[:3] for p in pids for t in threads_of(p)}
        # Root's main thread, a second thread nobody's: that thread's id
        # named as a process (whose main thread went SCHED_IDLE before).
        pid, root_tid, nobody_tid = procs["worker"]
        assert pid == root_tid
        for cls in CLASSES:
            refused(d.sock, f"no such process: {nobody_tid}", cls, str(nobody_tid), code=5)
        # The main thread nobody's, a second thread root's: the whole
        # process is not nobody's (its main thread's uid was all checked).
        pid, root_tid, nobody_tid = procs["main"]
        assert pid == nobody_tid
        for cls in CLASSES:
            refused(d.sock, f"thread {root_tid} of pid {pid} belongs to uid 0", cls, str(pid))
        time.sleep(0.3)  # a lever the loop pulls at its next tick
        after = {t: task_sched(t)[:3] for p in pids for t in threads_of(p)}
        assert before == after, f"a root thread changed: {before} -> {after}"
        print("mixed-uid process: whole-process requests refused, threads unchanged")


def start_refused(scope_pid, tmp, sock, state, what):
    """The daemon must exit non-zero without creating anything."""
    conf = os.path.join(tmp, "empty.conf")
    open(conf, "w").close()
    p = subprocess.run(["timeout", "-s", "KILL", "10", MUQSSD, "--config", conf, "--socket", sock,
                        "--state-dir", state, "--scope-pid", str(scope_pid)],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode not in (0, 137, -9), f"{what}: muqssd started (exit {p.returncode})"
    line = (p.stderr or p.stdout).strip().splitlines()
    print(f"{what}: refused: {line[-1] if line else '(no message)'}")


def planted_files():
    scope = Scope(["sleep 30"], limit=40)
    tmp = tempfile.mkdtemp(prefix="muqss-plant-")
    try:
        victim = os.path.join(tmp, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        victim_dir = os.path.join(tmp, "victim-dir")
        os.mkdir(victim_dir, 0o700)
        good_state = os.path.join(tmp, "state-ok")
        sock = os.path.join(tmp, "control")
        # The socket path: a symlink to a file, a dangling symlink, a file.
        os.symlink(victim, sock)
        start_refused(scope.root.pid, tmp, sock, good_state, "symlink at the socket path")
        os.unlink(sock)
        os.symlink(os.path.join(tmp, "nowhere"), sock)
        start_refused(scope.root.pid, tmp, sock, good_state, "dangling symlink at the socket path")
        assert not os.path.exists(os.path.join(tmp, "nowhere")), "followed the dangling symlink"
        os.unlink(sock)
        with open(sock, "w") as f:
            f.write("file\n")
        start_refused(scope.root.pid, tmp, sock, good_state, "regular file at the socket path")
        os.unlink(sock)
        # The state path: a symlink to a directory, its tasks/ a symlink, a
        # directory others may write, a file.
        state = os.path.join(tmp, "state")
        os.symlink(victim_dir, state)
        start_refused(scope.root.pid, tmp, sock, state, "symlink at the state dir")
        os.unlink(state)
        os.mkdir(state, 0o755)
        os.symlink(victim_dir, os.path.join(state, "tasks"))
        start_refused(scope.root.pid, tmp, sock, state, "symlink at the state dir's tasks/")
        os.unlink(os.path.join(state, "tasks"))
        os.chmod(state, 0o777)
        start_refused(scope.root.pid, tmp, sock, state, "world-writable state dir")
        os.chmod(state, 0o755)
        os.chown(state, 65534, 65534)
        start_refused(scope.root.pid, tmp, sock, state, "state dir owned by nobody")
        os.rmdir(state)
        with open(state, "w") as f:
            f.write("file\n")
        start_refused(scope.root.pid, tmp, sock, state, "regular file at the state dir")
        assert open(victim).read() == "precious\n", "the victim file was changed"
        assert os.listdir(victim_dir) == [], f"written through a symlink: {os.listdir(victim_dir)}"
    finally:
        scope.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    user_checks()
    mixed_threads()
    planted_files()
    print("3 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
