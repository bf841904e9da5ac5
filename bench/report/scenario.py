"""One bounded, scoped load run: a scope root process starts the load, an
optional muqssd manages only that subtree, and every piece has a timeout.

Used by bench/run (the report)."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


class Daemon:
    """muqssd scoped to one pid subtree, on a socket of its own."""

    def __init__(self, build, scope_pid, workdir, extra=()):
        self.build = build
        self.sock = os.path.join(workdir, "control")
        # In memory, as /run is under systemd: on a disk filesystem a state
        # record write can wait for writeback and stall the daemon's tick.
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.state = tempfile.mkdtemp(prefix="muqss-bench-state-", dir=shm)
        self.log = open(os.path.join(workdir, "muqssd.log"), "w")
        cmd = ["timeout", "-s", "TERM", "600", os.path.join(build, "muqssd/muqssd"),
               "--config", os.path.join(os.path.dirname(os.path.abspath(__file__)), "empty.conf"), "--socket", self.sock, "--state-dir", self.state,
               "--scope-pid", str(scope_pid), *extra]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        # Generous: on a machine others load heavily, start-up took 3-10 s.
        deadline = time.monotonic() + 30
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                # A daemon that comes up after we gave up must not stay
                # behind, managing a scope nobody watches.
                self.stop()
                raise RuntimeError("muqssd did not start in time")
            time.sleep(0.02)
        self.pid = self.daemon_pid()

    def daemon_pid(self):
        # timeout(1) is the child; muqssd is its only child.
        for _ in range(100):
            try:
                with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children", "rb") as f:
                    kids = f.read().split()
                if kids:
                    return int(kids[0])
            except OSError:
                pass
            time.sleep(0.01)
        return self.proc.pid

    def ctl(self, *args):
        return subprocess.run([os.path.join(self.build, "muqssctl/muqssctl"), "--socket", self.sock,
                               *args], capture_output=True, text=True, timeout=10)

    def stop(self):
        cpu = proc_cpu_s(self.pid) if getattr(self, "pid", None) else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        subprocess.run([os.path.join(self.build, "muqssd/muqssd"), "--restore", "--state-dir",
                        self.state], capture_output=True, timeout=30)
        shutil.rmtree(self.state, ignore_errors=True)
        return cpu


def run(build, tasks, duration, muqssd=False, daemon_args=(), setup=None):
    """tasks: list of (name, shell command). Each runs under timeout in a scope
    root. setup(daemon, pids) runs after the load starts (e.g. muqssctl iso).
    Returns {name: parsed JSON of the command's last stdout line}, plus the
    daemon's CPU seconds under key "_daemon_cpu_s"."""
    with tempfile.TemporaryDirectory(prefix="muqss-bench-") as work:
        fifo = os.path.join(work, "go")
        os.mkfifo(fifo)
        # The end of the window, sent at "go": every hog stops then
        # (bench/load/hog HOG_UNTIL), however late it started.
        lines = [f"read HOG_UNTIL < {shlex.quote(fifo)}", "export HOG_UNTIL"]
        for name, cmd in tasks:
            out = shlex.quote(os.path.join(work, name + ".out"))
            lines.append(f"timeout -s KILL {duration + 20} {cmd} > {out} 2>&1 & echo $! > {out}.pid")
        lines.append("wait")
        env = dict(os.environ, MUQSS_SOCK=os.path.join(work, "control"))
        root = subprocess.Popen(["bash", "-c", "\n".join(lines)], start_new_session=True, env=env)
        daemon = None
        try:
            if muqssd:
                daemon = Daemon(build, root.pid, work, daemon_args)
            with open(fifo, "w") as f:
                f.write(f"{time.monotonic() + duration:.6f}\n")
            pids = {}
            for name, _ in tasks:
                path = os.path.join(work, name + ".out.pid")
                for _ in range(500):
                    if os.path.exists(path) and os.path.getsize(path):
                        break
                    time.sleep(0.01)
                with open(path) as f:
                    pids[name] = int(f.read())
            if setup:
                setup(daemon, pids)
            root.wait(timeout=duration + 40)
        finally:
            if root.poll() is None:
                os.killpg(root.pid, signal.SIGKILL)
                root.wait()
            cpu = daemon.stop() if daemon else None
        results = {"_daemon_cpu_s": cpu}
        for name, _ in tasks:
            try:
                with open(os.path.join(work, name + ".out")) as f:
                    last = [l for l in f.read().splitlines() if l.startswith("{")][-1]
                results[name] = json.loads(last)
            except (OSError, IndexError, ValueError):
                results[name] = None
        return results
