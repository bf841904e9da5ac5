"""One bounded, scoped load run for bench/run: a scope root process starts
the load, an optional muqssd manages only that subtree, every piece has a
timeout. sched_util (tests/lib) reads MUQSS_BUILD_ROOT when imported."""

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

import sched_util

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def proc_run_s(pid):
    """A process's CPU time in seconds from its threads' schedstat (ns, where
    /proc/PID/stat counts 10 ms ticks); a thread gone takes its share along."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                total += int(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"


def bpf_stats_enable():
    """The kernel's run time per bpf program, on for a run; returns the
    value to put back, or None where it cannot be turned on."""
    try:
        with open(BPF_STATS) as f:
            old = f.read().strip()
        with open(BPF_STATS, "w") as f:
            f.write("1")
        return old
    except OSError:
        return None


def bpf_stats_restore(old):
    if old is not None:
        with open(BPF_STATS, "w") as f:
            f.write(old)


def bpf_prog_runtime():
    """{name: (run_time_ns, run_cnt)} of the loaded muqss_* programs (the
    bench runs one muqssd at a time), from bpftool; {} without it."""
    try:
        p = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, timeout=10)
        progs = json.loads(p.stdout or b"[]")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
    out = {}
    for prog in progs:
        name = prog.get("name", "")
        if name.startswith("muqss_"):
            ns, cnt = out.get(name, (0, 0))
            out[name] = (ns + prog.get("run_time_ns", 0), cnt + prog.get("run_cnt", 0))
    return out


class Daemon(sched_util.Daemon):
    """The tests' scoped muqssd, whose stop() also restores and gives its CPU seconds."""

    def stop(self):
        cpu = proc_cpu_s(self.pid)
        try:
            self.kill(signal.SIGTERM)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.restore()
        shutil.rmtree(self.state, ignore_errors=True)
        return cpu


def run(tasks, duration, muqssd=False, setup=None, daemon_args=(), config=None, bpf_stats=False):
    """tasks: [(name, shell command)]; setup(daemon, pids) runs once the load
    has started; daemon_args and config (a path) go to muqssd. Returns {name:
    the JSON of its last stdout line, "_daemon_cpu_s": s}; with bpf_stats,
    also "_bpf_progs": {program: (run_time_ns, run_cnt)} over the window
    (the kernel's counters cost each program two clock reads a run)."""
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
        stats_old = bpf_stats_enable() if muqssd and bpf_stats else None
        progs = None
        try:
            if muqssd:
                try:
                    daemon = Daemon(root.pid, work, daemon_args, config)
                except RuntimeError:
                    with open(os.path.join(work, "muqssd.log"), "rb") as f:
                        print("muqssd's log:", f.read()[-2000:].decode(errors="replace"), flush=True)
                    raise
            before = bpf_prog_runtime() if stats_old is not None else None
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
            if before is not None:
                after = bpf_prog_runtime()
                progs = {k: (ns - before.get(k, (0, 0))[0], cnt - before.get(k, (0, 0))[1])
                         for k, (ns, cnt) in after.items()}
        finally:
            bpf_stats_restore(stats_old)
            if root.poll() is None:
                os.killpg(root.pid, signal.SIGKILL)
                root.wait()
            cpu = daemon.stop() if daemon else None
        results = {"_daemon_cpu_s": cpu}
        if progs:
            results["_bpf_progs"] = progs
        for name, _ in tasks:
            try:
                with open(os.path.join(work, name + ".out")) as f:
                    last = [l for l in f.read().splitlines() if l.startswith("{")][-1]
                results[name] = json.loads(last)
            except (OSError, IndexError, ValueError):
                results[name] = None
        return results
