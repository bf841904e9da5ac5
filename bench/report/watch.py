"""What watching costs (issue 31's goals), per sensor: muqssd's CPU and peak
RSS beside an idle scope and sleeping threads, and over an exec storm whose
program one nice rule matches. Sensors alternate within each repetition;
every repetition is kept, the report shows the median and the worst."""

import json
import os
import statistics
import tempfile
import time

import scenario
from extras import cpu_pct_over, end_load, settle, sleepers, threads_in

SENSORS = ("connector", "bpf")
RULE_NICE = 5
POLL_MS = 10  # storm-target's polling period: the waits' resolution
TARGET_WAIT_S = 10  # how long a storm target waits for its rule

# Issue 31: % of one CPU after start-up, by sleeping threads in scope
# (1: an idle scope); peak RSS; the storm's reaction and CPU.
CPU_GOAL = {1: 0.05, 1000: 0.05, 10000: 0.2}
RSS_GOAL_KB = 8 * 1024
STORM_GOAL = {"median_ms": 1.0, "cpu_pct": 1.0}

#        sleeping-thread loads   storm execs, rate a second
MODES = {
    "full": ([1, 1000, 10000], 2000, 150),
    "quick": ([1, 1000, 10000], 1000, 150),
    "dry": ([1, 200], 60, 150),
}


def sensor_of(daemon):
    """The sensor muqssd ended up with: a refused bpf falls back."""
    return json.loads(daemon.ctl("--json", "status").stdout)["tracking"]["sensor"]


def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1])
    return None


def idle_row(b, sensor, threads, max_settle, window):
    """muqssd's CPU over window seconds once settled, beside sleeping threads."""
    d = max_settle + window + 2
    got = {}

    def setup(daemon, pids):
        got["sensor_used"] = sensor_of(daemon)
        got.update(settle(daemon.pid, max_settle))
        got["threads_in_scope"] = threads_in(pids)
        got["daemon_cpu_pct"] = cpu_pct_over(daemon.pid, window)
        got["rss_peak_kb"] = vm_hwm_kb(daemon.pid)
        end_load(pids)

    scenario.run(sleepers(b, threads, d), d, muqssd=True, setup=setup,
                 daemon_args=("--sensor", sensor))
    return dict(got, load=threads, window_s=window)


def storm_figures(lines, started):
    """storm-target's lines ("pid nice_at_main ms_until_nice ppid") -> figures."""
    got = [tuple(int(x) for x in ln.split()) for ln in lines if len(ln.split()) == 4]
    at_main = sum(1 for g in got if g[1] == RULE_NICE)
    rest = sorted(g[2] for g in got if g[1] != RULE_NICE and g[2] >= 0)
    # Reaction of every process, 0 for those niced before main().
    every = sorted([0] * at_main + rest)
    return {"started": started, "reported": len(got),
            "classified": sum(1 for g in got if g[2] >= 0), "at_main": at_main,
            "rest_wait_p50_ms": statistics.median(rest) if rest else None,
            "rest_wait_p99_ms": rest[int(0.99 * (len(rest) - 1))] if rest else None,
            "wait_p50_ms": statistics.median(every) if every else None}


def storm_row(b, sensor, count, rate):
    """count execs of storm-target at rate a second (tests/track's
    track-helper execstorm, every other one orphaned at once) under the rule
    comm=storm-target nice=5; muqssd's CPU from the first exec until the
    last target reported."""
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    d = count / rate + TARGET_WAIT_S + 5
    got = {}
    with tempfile.TemporaryDirectory(prefix="muqss-watch-", dir=shm) as tmp:
        rules, conf = os.path.join(tmp, "rules"), os.path.join(tmp, "muqssd.conf")
        out, count_file = os.path.join(tmp, "targets"), os.path.join(tmp, "started")
        os.mkdir(rules)
        with open(os.path.join(rules, "10-storm.rules"), "w") as f:
            f.write(f"comm=storm-target class=normal nice={RULE_NICE}\n")
        with open(conf, "w") as f:
            f.write(f"[daemon]\nrules_dir = {rules}\n")
        open(out, "w").close()
        # reap-all keeps the orphans in the scope's tree until they are done.
        cmd = (f"env MUQSS_STORM_COUNT={count_file} {os.path.dirname(__file__)}/reap-all "
               f"{b}/tests/track/track-helper execstorm {count} {rate} "
               f"{b}/tests/track/storm-target {out} {RULE_NICE}")

        def setup(daemon, pids):
            c0, t0 = scenario.proc_run_s(daemon.pid), time.monotonic()
            got["sensor_used"] = sensor_of(daemon)
            started, lines = None, []
            while time.monotonic() < t0 + d and (started is None or len(lines) < started):
                time.sleep(0.1)
                try:
                    with open(count_file) as f:
                        started = int(f.read())
                except (OSError, ValueError):  # not written yet
                    continue
                with open(out) as f:
                    lines = f.read().splitlines()
            c1, t1 = scenario.proc_run_s(daemon.pid), time.monotonic()
            got.update(storm_figures(lines, started or 0), storm_s=round(t1 - t0, 1),
                       daemon_cpu_pct=round(100 * (c1 - c0) / (t1 - t0), 3),
                       rss_peak_kb=vm_hwm_kb(daemon.pid))

        scenario.run([("storm", cmd)], d, muqssd=True, setup=setup,
                     daemon_args=("--sensor", sensor), config=conf)
    return dict(got, load="storm", execs=count, rate=rate)


def watch_cost(b, mode, reps, max_settle, window, began):
    """Every repetition's rows, each sensor in turn, and their summary."""
    loads, count, rate = MODES[mode]
    runs = []
    for rep in range(reps):
        for sensor in SENSORS:
            for load in loads + ["storm"]:
                r = (storm_row(b, sensor, count, rate) if load == "storm"
                     else idle_row(b, sensor, load, max_settle, window))
                runs.append(dict(r, rep=rep + 1, sensor=sensor))
                print(f"[{time.monotonic() - began:5.0f} s] watch rep {rep + 1} {sensor:9} "
                      f"{load!s:6} {json.dumps({k: v for k, v in r.items() if 'every' not in k})}",
                      flush=True)
    return {"runs": runs, "rows": summarise(runs), "poll_ms": POLL_MS,
            "storm_execs": count, "storm_rate": rate}


def med_worst(vals, worst):
    vals = [v for v in vals if v is not None]
    return (statistics.median(vals), worst(vals)) if vals else (None, None)


def summarise(runs):
    """Per sensor and load: median and worst repetition of each figure, and
    whether the worst repetition meets issue 31's goals."""
    rows = []
    for sensor in SENSORS:
        for load in dict.fromkeys(r["load"] for r in runs):
            rs = [r for r in runs if r["sensor"] == sensor and r["load"] == load]
            if not rs:
                continue
            row = {"sensor": sensor, "load": load, "reps": len(rs),
                   "sensor_used": sorted({r.get("sensor_used") or "?" for r in rs}),
                   "cpu_pct": med_worst([r.get("daemon_cpu_pct") for r in rs], max),
                   "rss_peak_kb": med_worst([r.get("rss_peak_kb") for r in rs], max)}
            cpu_goal = STORM_GOAL["cpu_pct"] if load == "storm" else CPU_GOAL.get(load)
            met = [row["cpu_pct"][1] is not None and cpu_goal is not None
                   and row["cpu_pct"][1] <= cpu_goal]
            if load == "storm":
                row["missed_rule"] = max(r["started"] - r["classified"] for r in rs)
                row["short_started"] = max(r["execs"] - r["started"] for r in rs)
                row["at_main"] = med_worst([r["at_main"] for r in rs], min)
                for k in ("rest_wait_p50_ms", "rest_wait_p99_ms", "wait_p50_ms"):
                    row[k] = med_worst([r[k] for r in rs], max)
                met += [row["missed_rule"] == 0 and row["short_started"] == 0,
                        row["wait_p50_ms"][1] is not None
                        and row["wait_p50_ms"][1] <= STORM_GOAL["median_ms"]]
            else:
                row["settled"] = all(r.get("settled") for r in rs)
                met.append(row["rss_peak_kb"][1] is not None
                           and row["rss_peak_kb"][1] <= RSS_GOAL_KB)
            row["cpu_goal_pct"], row["goals_met"] = cpu_goal, all(met)
            rows.append(row)
    return rows
