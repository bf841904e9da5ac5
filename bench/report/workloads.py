"""The report's matrix: configurations x workloads, as task lists for
scenario.py, and the figures one run contributes."""

import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIGS = ["stock", "nice", "muqssd", "muqssd+iso"]

CONFIG_TEXT = {
    "stock": "the kernel alone",
    "nice": "probe at nice -10, background at nice 10 (what an auto-nice daemon does)",
    "muqssd": "muqssd scoped to the load, no per-task configuration",
    "muqssd+iso": "muqssd, probe started with `muqssctl run -I` (SCHED_ISO)",
}

# Probes: (period ms, work ms) of frame-probe, or REQRESP (bench/load/reqresp,
# throughput its own requests per second), or LOCKWAIT (bench/load/lock-wait:
# its wait for a mutex an IDLEPRIO thread holds goes in the wake columns),
# or CYCLICTEST (report/cyclictest-probe: cyclictest's wake-ups every 1 ms
# in the fair class), or None (the background's work).
FRAME = (1000 / 60, 3.0)
AUDIO = (5.0, 0.5)
# An X server's pace: a wake-up every 10 ms for a few ms of work.
XLIKE = (10.0, 3.0)
REQRESP = "reqresp"
LOCKWAIT = "lockwait"
CYCLICTEST = "cyclictest"

# The thread-mode hackbench of issue 14's wall-time goal (about 1 s
# alone on the 2-CPU VM), shorter for the short runs of --quick and --dry.
HACKBENCH_THREADS = {"full": "-p -T -g 4 -l 2000", "quick": "-p -T -g 4 -l 500",
                     "dry": "-p -T -g 2 -l 50"}


def cells(ncpu, mode):
    """name -> (probe, background kind, size or hackbench arguments). --quick
    keeps the heavier hog count, --dry the lighter."""
    all_cells = {
        f"frame-{2 * ncpu}hogs": (FRAME, "hogs", 2 * ncpu),
        f"frame-{4 * ncpu}hogs": (FRAME, "hogs", 4 * ncpu),
        f"audio-{2 * ncpu}hogs": (AUDIO, "hogs", 2 * ncpu),
        f"audio-{4 * ncpu}hogs": (AUDIO, "hogs", 4 * ncpu),
        "build": (FRAME, "build", 2 * ncpu),
        "frame-hackbench": (FRAME, "hackbench", None),
        "reqresp": (REQRESP, "hogs", 0),
        "reqresp-2hogs": (REQRESP, "hogs", 2),
        "lockwait-2hogs": (LOCKWAIT, "hogs", 2),
        # A ring of 4 threads waking each other (bench/load/ring) beside
        # an X-like probe and one game-like hog, whose work is the row's.
        "xlike-ring": (XLIKE, "ring", 1),
        f"cyclictest-{4 * ncpu}hogs": (CYCLICTEST, "hogs", 4 * ncpu),
        "hackbench-threads": (None, "hackbench", HACKBENCH_THREADS[mode]),
    }
    if mode == "full":
        return all_cells
    n = 4 * ncpu if mode == "quick" else 2 * ncpu
    keep = (f"frame-{n}hogs", f"audio-{n}hogs", "build", "frame-hackbench", "reqresp-2hogs",
            "hackbench-threads", "lockwait-2hogs", f"cyclictest-{4 * ncpu}hogs", "xlike-ring")
    return {k: all_cells[k] for k in keep}


def duration(name, d, mode):
    """hackbench -l 2000 needs room for several completions on a loaded machine."""
    return max(d, 15.0) if name == "hackbench-threads" and mode == "full" else d


def configs(cell):
    """A cell without a probe has nothing to start as ISO; nor has the lock
    waiter, whose holder is IDLEPRIO."""
    return [c for c in CONFIGS if cell[0] not in (None, LOCKWAIT) or c != "muqssd+iso"]


def ctl(b):
    # Inside the scope, "muqssctl run" applies the class before exec.
    return f"{b}/muqssctl/muqssctl --socket $MUQSS_SOCK run"


def tasks(b, cell, config, d, raw_file, hackbench_args):
    """The scenario.run() task list of one run, and whether muqssd runs."""
    probe, kind, size = cell
    bg_prefix = "nice -n 10 " if config == "nice" else ""
    probe_prefix = {"nice": "nice -n -10 ", "muqssd+iso": ctl(b) + " -I -- "}.get(config, "")
    out = []
    if kind == "hogs":
        out += [(f"hog{i}", f"{bg_prefix}{b}/bench/load/hog {d}") for i in range(size)]
    elif kind == "ring":
        out.append(("ring", f"{bg_prefix}{b}/bench/load/ring -d {d}"))
        out += [(f"hog{i}", f"{bg_prefix}{b}/bench/load/hog {d}") for i in range(size)]
    elif kind == "build":
        out.append(("build", f"{bg_prefix}{HERE}/compile-loop {b} {size} {d}"))
    elif kind == "hackbench":
        out.append(("hackbench", f"{bg_prefix}{HERE}/hackbench-loop {d} {size or hackbench_args}"))
    if probe == REQRESP:
        out.append(("probe", f"{probe_prefix}{b}/bench/load/reqresp -d {d} -o {raw_file}"))
    elif probe == CYCLICTEST:
        out.append(("probe", f"{probe_prefix}{HERE}/cyclictest-probe {d}"))
    elif probe == LOCKWAIT:
        # The first half second: muqssd meets the waiter and its holder.
        out.append(("probe", f"{probe_prefix}{b}/bench/load/lock-wait -s 0.5 -d {d} "
                             f"-o {raw_file}"))
    elif probe:
        period, work = probe
        out.append(("probe", f"{probe_prefix}{b}/bench/load/frame-probe -p {period:.3f} "
                             f"-w {work} -d {d} -o {raw_file}"))
    return out, config.startswith("muqssd")


def figures(r, d):
    """One run's figures; work is the throughput (bench/README.md)."""
    f = {}
    p = r.get("probe")
    if p and "lock_wait_p99_us" in p:
        for k in ("p50", "p99", "max"):
            f[f"wake_{k}_us"] = p[f"lock_wait_{k}_us"]
        f["waits"] = p["waits"]
    elif p:
        for k in ("wake_p50_us", "wake_p99_us", "wake_max_us", "missed_pct", "frames", "samples",
                  "requests", "rps", "rtt_p99_us", "walk_p50_us", "worker_wait_us_per_req"):
            if k in p:
                f[k] = p[k]
    hogs = [v for k, v in r.items() if k.startswith("hog") and v]
    if hogs:
        f["work"] = sum(v["iterations"] for v in hogs)
    if r.get("ring"):
        f["ring_handoffs"] = r["ring"]["handoffs"]
    if r.get("build"):
        f["work"] = r["build"]["compiles"]
        f["compiles_failed"] = r["build"]["failed"]
    if r.get("hackbench") and r["hackbench"]["times"]:
        f["hackbench_time_s"] = statistics.median(r["hackbench"]["times"])
        f["hackbench_runs"] = r["hackbench"]["runs"]
        f["work"] = 1 / f["hackbench_time_s"]
    if "rps" in f:
        if "work" in f:
            f["bg_work"] = f["work"]
        f["work"] = f["rps"]
    if r.get("_daemon_cpu_s") is not None:
        f["daemon_cpu_s"] = r["_daemon_cpu_s"]
        f["daemon_cpu_pct"] = 100 * r["_daemon_cpu_s"] / d
    # The sensor's programs run in the traced tasks: their time is in the
    # throughput already, and shown apart here (% of one CPU).
    progs = r.get("_bpf_progs")
    if progs:
        f["bpf_cpu_pct"] = 100 * sum(ns for ns, _ in progs.values()) / (d * 1e9)
        for name, (ns, cnt) in progs.items():
            f[f"bpf_pct.{name}"] = 100 * ns / (d * 1e9)
            f[f"bpf_ns_per_run.{name}"] = ns / cnt if cnt else 0.0
    return f
