#!/usr/bin/env python3
"""Tracking benchmarks (not tests): the tracker alone, without the
scheduling loop or the enforcer (trackbench.c), in a scope of its own.

  bench/track/bench-track.py [BUILDDIR]     (root; ~3 minutes)
  DURATION=60 sets the idle windows (seconds); ONLY="storm idle-10k" picks
  runs (reaction storm idle-1k idle-1k-tick idle-10k idle-10k-tick
  daemon-1k daemon-10k reaction-daemon; the daemon-* and reaction-daemon
  runs are not in the default set).

The daemon-* runs measure the whole muqssd (tracker, scheduling loop,
enforcer) scoped to a subtree of 1,000 or 10,000 sleeping threads plus 4
bounded hogs (bench/load/hog): its CPU over DURATION from /proc/<pid>/stat,
its RSS, and how many tasks it tracks and holds active.

Figures: idle CPU and RSS with 1,000 and 10,000 sleeping threads plus 4
busy ones; storm cost per 1,000 fork+exec+exit and events/s; reaction
from exec (the kernel's event timestamp) to the table being updated.
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(SRC), "build-track")
DURATION = int(os.environ.get("DURATION", "60"))
HELPER = os.path.join(BUILD, "tests", "track", "track-helper")
TMP = tempfile.mkdtemp(prefix="muqss-bench-", dir="/dev/shm")
BENCH = os.path.join(TMP, "trackbench")
HZ = os.sysconf("SC_CLK_TCK")

ROOT = r"""
import ctypes, os, signal, sys, json
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for line in sys.stdin:
    argv = json.loads(line)
    print(os.posix_spawn(argv[0], argv, os.environ), flush=True)
"""


def build():
    libs = [f"{BUILD}/muqssd/{m}/libmuqss-{m}.a" for m in ("track", "config", "util")]
    flags = subprocess.check_output(["pkg-config", "--cflags", "--libs", "libnl-3.0",
                                     "libsystemd", "libcjson", "inih"], text=True).split()
    subprocess.check_call(["cc", "-O2", "-g", "-D_GNU_SOURCE", "-Wno-unused-parameter",
                           f"-I{SRC}/muqssd/track", f"-I{SRC}/muqssd/util",
                           f"-I{SRC}/muqssd/config", f"-I{BUILD}/muqssd/config",
                           "-o", BENCH, os.path.join(HERE, "trackbench.c"), *libs, *flags])


class Run:
    def __init__(self, *args):
        self.root = subprocess.Popen(["timeout", "-s", "KILL", "600", sys.executable, "-c", ROOT],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.log = open(os.path.join(TMP, "bench.log"), "w")
        self.bench = subprocess.Popen(["timeout", "-s", "KILL", "600", BENCH, "--scope-pid",
                                       str(self.root.pid), *args],
                                      stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.bench.stdout.readline().strip() == "ready"
        self.pid = int(open(f"/proc/{self.bench.pid}/task/{self.bench.pid}/children", "rb").read().split()[0])

    def spawn(self, *argv):
        self.root.stdin.write(__import__("json").dumps(list(argv)) + "\n")
        self.root.stdin.flush()
        return int(self.root.stdout.readline())

    def cpu(self):
        rest = open(f"/proc/{self.pid}/stat", "rb").read().rsplit(b")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / HZ

    def rss_kb(self, field="VmRSS"):
        for line in open(f"/proc/{self.pid}/status", "rb"):
            if line.startswith(field.encode() + b":"):
                return int(line.split()[1])

    def stats(self):
        os.kill(self.pid, signal.SIGUSR1)
        f = self.bench.stdout.readline().split()
        return dict(zip(f[::2], map(int, f[1::2])))

    def close(self):
        self.root.kill()  # timeout -s KILL: python dies, children stay
        subprocess.run(["pkill", "-KILL", "-P", str(self.root.pid)], check=False)
        try:
            os.kill(self.pid, signal.SIGKILL)  # trackbench itself, under timeout
        except ProcessLookupError:
            pass
        self.bench.wait()
        self.root.wait()


def wait_gone(pids, limit):
    t0 = time.time()
    while time.time() - t0 < limit:
        alive = [p for p in pids if os.path.exists(f"/proc/{p}") and
                 open(f"/proc/{p}/stat", "rb").read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")]
        if not alive:
            return
        time.sleep(0.1)


def idle(threads_per_proc, tick):
    r = Run("--tick-ms", "4") if tick else Run()
    try:
        kids = [r.spawn("/usr/bin/timeout", "-s", "KILL", str(DURATION + 60), HELPER, "threads",
                        str(threads_per_proc), str((DURATION + 50) * 1000)) for _ in range(100)]
        busy = [r.spawn("/usr/bin/timeout", "-s", "KILL", str(DURATION + 40), "/bin/sh", "-c",
                        "while :; do :; done") for _ in range(4)]
        time.sleep(3)
        s = r.stats()
        c0, t0 = r.cpu(), time.time()
        time.sleep(DURATION)
        c1, t1 = r.cpu(), time.time()
        s = r.stats()
        pct = 100 * (c1 - c0) / (t1 - t0)
        print(f"idle {s['count']} tasks ({s['active']} active), tick {'4 ms, budget for a 2 s sweep (the tracker may cap it)' if tick else 'off'}: "
              f"CPU {pct:.3f}% of one CPU over {t1 - t0:.0f} s, RSS {r.rss_kb() / 1024:.1f} MiB",
              flush=True)
        del kids, busy
    finally:
        r.close()


class DaemonRun(Run):
    """The real muqssd, scoped to the spawner's subtree, default config."""

    def __init__(self, *extra):
        self.root = subprocess.Popen(["timeout", "-s", "KILL", "600", sys.executable, "-c", ROOT],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        open(os.path.join(TMP, "empty.conf"), "w").close()
        self.log = open(os.path.join(TMP, "muqssd.log"), "w")
        self.sock = os.path.join(TMP, "control")
        self.bench = subprocess.Popen(
            ["timeout", "-s", "KILL", "600", os.path.join(BUILD, "muqssd", "muqssd"),
             "--config", os.path.join(TMP, "empty.conf"), "--socket", self.sock,
             "--state-dir", os.path.join(TMP, "state"), "--scope-pid", str(self.root.pid), *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        t0 = time.time()
        while not os.path.exists(self.sock):
            if self.bench.poll() is not None or time.time() - t0 > 10:
                raise RuntimeError("muqssd did not start")
            time.sleep(0.02)
        self.pid = int(open(f"/proc/{self.bench.pid}/task/{self.bench.pid}/children", "rb").read().split()[0])

    def stats(self):
        """count and active from the daemon's status (its tracking object)."""
        out = subprocess.run([os.path.join(BUILD, "muqssctl", "muqssctl"), "--socket", self.sock,
                              "--json", "status"], capture_output=True, timeout=30, check=True)
        tr = __import__("json").loads(out.stdout)["tracking"]
        return {"count": tr["count"], "active": tr["active"]}

    def close(self):
        try:
            os.kill(self.pid, signal.SIGTERM)  # restores what it changed
            self.bench.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        Run.close(self)
        subprocess.run([os.path.join(BUILD, "muqssd", "muqssd"), "--restore", "--state-dir",
                        os.path.join(TMP, "state")], check=False, timeout=30)


def daemon_idle(threads_per_proc):
    r = DaemonRun()
    try:
        hog = os.path.join(BUILD, "bench", "load", "hog")
        for _ in range(100):
            r.spawn("/usr/bin/timeout", "-s", "KILL", str(DURATION + 60), HELPER, "threads",
                    str(threads_per_proc), str((DURATION + 50) * 1000))
        for _ in range(4):
            r.spawn("/usr/bin/timeout", "-s", "KILL", str(DURATION + 40), hog, str(DURATION + 30))
        time.sleep(5)
        c0, t0 = r.cpu(), time.time()
        time.sleep(DURATION)
        c1, t1 = r.cpu(), time.time()
        # RSS before the dump: the dump is the bench's, not the daemon's work.
        rss = {f: r.rss_kb(f) / 1024 for f in ("VmRSS", "RssAnon", "RssFile")}
        s = r.stats()
        pct = 100 * (c1 - c0) / (t1 - t0)
        print(f"muqssd, {100 * threads_per_proc} sleeping threads + 4 hogs ({s['count']} tracked, "
              f"{s['active']} active): "
              f"CPU {pct:.3f}% of one CPU over {t1 - t0:.0f} s, RSS {rss['VmRSS']:.1f} MiB "
              f"= {rss['VmRSS'] * 1.048576:.2f} MB "
              f"(anon {rss['RssAnon']:.1f}, file {rss['RssFile']:.1f}; "
              f"{r.rss_kb() / 1024:.1f} after the dump), "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        r.close()


def storm():
    r = Run()
    try:
        n = 2500
        s0, c0, t0 = r.stats(), r.cpu(), time.time()
        sp = [r.spawn("/usr/bin/timeout", "-s", "KILL", "120", HELPER, "storm", str(n))
              for _ in range(4)]
        wait_gone(sp, 120)
        time.sleep(0.5)
        s1, c1, t1 = r.stats(), r.cpu(), time.time() - 0.5
        ev = s1["events"] - s0["events"]
        print(f"storm: {4 * n} fork+exec+exit in {t1 - t0:.1f} s, {ev} events "
              f"({ev / (t1 - t0):.0f}/s handled); tracker CPU {c1 - c0:.2f} s = "
              f"{1000 * (c1 - c0) / (4 * n) * 1000:.0f} ms per 1,000 processes; "
              f"lost-event recoveries {s1['lost'] - s0['lost']}; table {s1['count']}", flush=True)
    finally:
        r.close()


def exec_latencies(log, marker, end_key):
    """Sorted us from each exec event (event_ns) to end_key, read from
    the debug lines of TMP/log that carry marker."""
    lat = []
    for line in open(os.path.join(TMP, log)):
        if marker in line and "event_ns=" in line:
            f = dict(w.split("=", 1) for w in line.split() if "=" in w)
            lat.append((int(f[end_key]) - int(f["event_ns"])) / 1000)
    return sorted(lat)


def print_latencies(label, lat):
    if not lat:
        print(f"{label}: no timed lines in the log", flush=True)
        return
    print(f"{label} over {len(lat)} execs (1 serial spawner): median {statistics.median(lat):.0f} us, "
          f"p99 {lat[int(len(lat) * 0.99) - 1]:.0f} us, max {lat[-1]:.0f} us", flush=True)


def reaction():
    r = Run("--debug")
    try:
        p = r.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "storm", "2000")
        wait_gone([p], 60)
        time.sleep(0.5)
        r.stats()
    finally:
        r.close()
    print_latencies("reaction", exec_latencies("bench.log", "exec tid=", "table_ns"))


def reaction_daemon():
    """The whole daemon: from the kernel's exec event to the task queued
    in a run queue with its class (muqssd's "queued" debug line)."""
    r = DaemonRun("--log-level", "debug")
    try:
        p = r.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "storm", "2000")
        wait_gone([p], 60)
        time.sleep(0.5)
    finally:
        r.close()
    print_latencies("muqssd, exec to queued", exec_latencies("muqssd.log", "queued tid=", "queued_ns"))


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("bench-track: needs root (proc connector)")
    build()
    print("tracker alone (no scheduling loop, no enforcer); 2 CPUs;", os.uname().release)
    only = os.environ.get("ONLY", "reaction storm idle-1k idle-1k-tick idle-10k idle-10k-tick").split()
    runs = {
        "reaction": reaction, "reaction-daemon": reaction_daemon, "storm": storm,
        "idle-1k": lambda: idle(10, tick=False), "idle-1k-tick": lambda: idle(10, tick=True),
        "idle-10k": lambda: idle(100, tick=False), "idle-10k-tick": lambda: idle(100, tick=True),
        "daemon-1k": lambda: daemon_idle(10), "daemon-10k": lambda: daemon_idle(100),
    }
    try:
        for name in only:
            runs[name]()
    finally:
        __import__("shutil").rmtree(TMP, ignore_errors=True)
