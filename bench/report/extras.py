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

        # The ISO hogs would starve a normal-class sampler: read at FIFO 18
        # (muqssctl inherits it), back to normal once done.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(18))
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


def settle(pid, max_settle, step=0.5, floor_pct=0.5):
    """Waits out a daemon's start-up scan: until three step-second readings
    of its CPU are under a third of the highest (or all under floor_pct, an
    idle scope's scan being too small to show), or max_settle seconds."""
    series, t0 = [], time.monotonic()
    c_last, t_last = scenario.proc_run_s(pid), t0
    settled = False
    while t_last - t0 < max_settle and not settled:
        time.sleep(max(0, t0 + step * (len(series) + 1) - time.monotonic()))
        c, t = scenario.proc_run_s(pid), time.monotonic()
        series.append(round(100 * (c - c_last) / (t - t_last), 2))
        c_last, t_last = c, t
        last = max(series[-3:])
        settled = len(series) >= 4 and (last < max(series) / 3 or last < floor_pct)
    return {"settled": settled, "settle_s": round(t_last - t0, 1),
            f"settle_cpu_pct_every_{step:g}s": series}


def cpu_pct_over(pid, window):
    """A process's CPU over the next window seconds, in % of one CPU."""
    c0, w0 = scenario.proc_run_s(pid), time.monotonic()
    time.sleep(window)
    c1, w1 = scenario.proc_run_s(pid), time.monotonic()
    return round(100 * (c1 - c0) / (w1 - w0), 3)


def end_load(pids):
    """Ends a scenario's load early: timeout(1) passes SIGTERM on."""
    for pid in pids.values():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def threads_in(pids):
    """Threads below a scenario's load processes, themselves included."""
    return sum(len(threads_of(p)) for r in pids.values() for p in descendants(r))


def sleepers(b, n, d):
    """scenario.run() tasks: n sleeping threads, 100 a process, for d seconds."""
    procs = max(1, n // 100)
    return [(f"sleep{i}", f"{b}/bench/load/sleepers {n // procs} {int(d * 1000)}")
            for i in range(procs)]


def daemon_scaling(b, counts, max_settle, window, busy, step=0.5):
    """muqssd's CPU over window seconds, scoped to N sleeping threads (100 a
    process) and busy hogs, once its start-up scan has settled (three 0.5 s
    readings under a third of the highest) or after max_settle seconds."""
    out = []
    for n in counts:
        d = max_settle + window + 2
        tasks = sleepers(b, n, d)
        tasks += [(f"hog{i}", f"{b}/bench/load/hog {d}") for i in range(busy)]
        got = {}

        def setup(daemon, pids):
            got.update(settle(daemon.pid, max_settle, step))
            got["threads_in_scope"] = threads_in(pids)
            got["daemon_cpu_pct"] = cpu_pct_over(daemon.pid, window)
            end_load(pids)

        r = scenario.run(tasks, d, muqssd=True, setup=setup)
        got.update(sleeping_threads=n, busy=busy, window_s=window,
                   daemon_cpu_s_total=r["_daemon_cpu_s"])
        print(f"  {n:6} threads: muqssd {got['daemon_cpu_pct']}% of a CPU "
              f"({'settled' if got['settled'] else 'still scanning'} after {got['settle_s']} s)",
              flush=True)
        out.append(got)
    return out
