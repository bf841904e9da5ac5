"""The two runs outside the matrix: ISO share over time against iso_cpu,
and muqssd's own CPU use against the number of tasks in its scope."""

import json
import os
import signal
import time

import scenario
from sched_util import descendants, threads_of
from workloads import ctl


def iso_share(b, d, ncpu, step=0.5):
    """One ISO hog per CPU against as many normal hogs, sampled every step
    seconds: the ISO hogs' share of the machine from their CPU time, and the
    daemon's own iso_percent reading (mean over CPUs)."""
    # The hogs outlive the sampling by a second or so: setup starts late.
    tasks = [(f"iso{i}", f"{ctl(b)} -I -- {b}/bench/load/hog {d + 1}") for i in range(ncpu)]
    tasks += [(f"hog{i}", f"{b}/bench/load/hog {d + 1}") for i in range(ncpu)]
    got = {"series": []}

    def setup(daemon, pids):
        iso = [pid for name, pid in pids.items() if name.startswith("iso")]
        seen = {}  # pid -> last CPU seconds read: a hog that exits keeps its count

        def iso_cpu():
            stopped = 0
            for root in iso:
                for p in descendants(root):
                    c = scenario.proc_cpu_s(p)
                    if c is not None:
                        seen[p] = max(c, seen.get(p, 0))
                    try:
                        with open(f"/proc/{p}/stat", "rb") as f:
                            stopped += f.read().rsplit(b")", 1)[1].split()[0] in (b"t", b"T")
                    except (OSError, IndexError):
                        pass
            got["_stopped"] = stopped
            return sum(seen.values())

        # The ISO hogs would starve a normal-class sampler: read at FIFO 10
        # (muqssctl inherits it), back to normal once done.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            got["tunables"] = json.loads(daemon.ctl("--json", "status").stdout)["tunables"]
            sample(daemon, iso_cpu)
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    def sample(daemon, iso_cpu):
        start = last_t = time.monotonic()
        last_cpu = iso_cpu()
        k = 1
        while start + k * step < start + d - 0.5:
            time.sleep(max(0, start + k * step - time.monotonic()))
            cpu, now = iso_cpu(), time.monotonic()
            k = max(k + 1, int((now - start) / step) + 1)
            try:
                q = json.loads(daemon.ctl("--json", "queues").stdout)["cpus"]
                reading = sum(c["iso_percent"] for c in q) / len(q)
            except (AssertionError, ValueError, KeyError, ZeroDivisionError):
                reading = None
            got["series"].append({"t_s": round(now - start, 3),
                                  "iso_share_pct": round(100 * (cpu - last_cpu) / (ncpu * (now - last_t)), 2),
                                  "iso_percent_reading": reading,
                                  "iso_tasks_stopped": got.pop("_stopped", 0)})
            last_t, last_cpu = now, cpu

    r = scenario.run(tasks, d + 1, muqssd=True, setup=setup)
    got["daemon_cpu_s"] = r["_daemon_cpu_s"]
    return got


def daemon_scaling(b, counts, max_settle, window, busy, step=0.5):
    """muqssd's CPU over window seconds, scoped to N sleeping threads (100 a
    process) and busy hogs, once its start-up scan has settled (three 0.5 s
    readings under a third of the highest) or after max_settle seconds."""
    out = []
    for n in counts:
        d = max_settle + window + 2
        procs = max(1, n // 100)
        tasks = [(f"sleep{i}", f"{b}/bench/load/sleepers {n // procs} {int(d * 1000)}") for i in range(procs)]
        tasks += [(f"hog{i}", f"{b}/bench/load/hog {d}") for i in range(busy)]
        got = {}

        def setup(daemon, pids):
            series, t0 = [], time.monotonic()
            c_last, t_last = scenario.proc_cpu_s(daemon.pid), t0
            settled = False
            while t_last - t0 < max_settle and not settled:
                time.sleep(max(0, t0 + step * (len(series) + 1) - time.monotonic()))
                c, t = scenario.proc_cpu_s(daemon.pid), time.monotonic()
                series.append(round(100 * (c - c_last) / (t - t_last), 1))
                c_last, t_last = c, t
                settled = len(series) >= 4 and max(series[-3:]) < max(series) / 3
            got["settled"], got["settle_s"] = settled, round(t_last - t0, 1)
            got["threads_in_scope"] = sum(len(threads_of(p)) for r in pids.values() for p in descendants(r))
            c0, w0 = scenario.proc_cpu_s(daemon.pid), time.monotonic()
            time.sleep(window)
            c1, w1 = scenario.proc_cpu_s(daemon.pid), time.monotonic()
            got["daemon_cpu_pct"] = round(100 * (c1 - c0) / (w1 - w0), 3)
            got["settle_cpu_pct_every_0.5s"] = series
            for pid in pids.values():  # timeout(1) passes it on to the load
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

        r = scenario.run(tasks, d, muqssd=True, setup=setup)
        got.update(sleeping_threads=n, busy=busy, window_s=window,
                   daemon_cpu_s_total=r["_daemon_cpu_s"])
        print(f"  {n:6} threads: muqssd {got['daemon_cpu_pct']}% of a CPU "
              f"({'settled' if got['settled'] else 'still scanning'} after {got['settle_s']} s)",
              flush=True)
        out.append(got)
    return out
