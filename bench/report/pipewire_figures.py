"""The PipeWire row's figures: what pw-profiler's log says of each run,
their median and worst over repetitions, and the row's Markdown."""

import statistics

CONFIGS = ["stock", "rtkit-daemon", "muqssd"]
# What runs beside PipeWire; idle (nothing) is the machine's own floor.
LOADS = ["8hogs", "build", "idle"]
CONFIG_TEXT = {
    "stock": "no RT for PipeWire: nothing answers its rtkit request",
    "rtkit-daemon": "Debian's rtkit-daemon (with polkitd) grants it: SCHED_RR 20, RLIMIT_RTTIME 200 ms",
    "muqssd": "muqssd answers it as rtkit: the data threads become ISO",
}
QUANTUM, RATE = 64, 48000
PERIOD_US = QUANTUM * 1e6 / RATE
# A follower's status in a profiler record (pw_node_activation states).
AWAKE, FINISHED = 2, 3


def parse_profile(path, node, d):
    """pw-profiler's log, one line a graph cycle: the driver's 4 columns
    (period, its own time, delay, the quantum in µs), then 8 a follower (id,
    then signal, awake, finish as µs after the driver's signal, ..., status).
    The client's wake-up is awake - signal, over the cycles it woke in; a
    cycle is an xrun when pw-play was not finished when the record was taken
    or finished later than one quantum after the cycle began, i.e. after the
    next cycle was due. pw-profiler clamps
    a driver period over 1.3 quanta to 1.4: those cycles, where PipeWire's
    own data thread woke 0.4 quanta late or more, count as server late."""
    wakes, xruns, late, cycles, client = [], 0, 0, 0, 0
    with open(path, "rb") as f:
        for raw in f:
            cols = raw.decode("ascii", "replace").split("\t")
            try:
                d1, period = float(cols[0]), float(cols[3])
            except (ValueError, IndexError):
                continue
            cycles += 1
            late += d1 > 1.3 * period
            for i in range(4, len(cols) - 7, 8):
                if cols[i].strip() != str(node):
                    continue
                sig, awake, fin, status = (int(cols[i + k]) for k in (1, 2, 3, 6))
                client += 1
                if status >= AWAKE:
                    wakes.append(max(0, awake - sig))
                xruns += status != FINISHED or fin > period
    if not cycles:
        return {}
    wakes.sort()
    f = {"cycles": cycles, "cycles_expected": int(d * RATE / QUANTUM),
         "client_cycles": client, "xruns": xruns, "xruns_per_min": 60 * xruns / d,
         "server_late_pct": 100 * late / cycles}
    if wakes:
        f.update(wake_p50_us=wakes[len(wakes) // 2], wake_p99_us=wakes[int(0.99 * (len(wakes) - 1))],
                 wake_max_us=wakes[-1])
    # Cycles with no record of pw-play: shown beside the xruns, not in them.
    lost = max(0, f["cycles_expected"] - client)
    f["cycles_lost"] = lost
    return f


def short(f):
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in f.items()
            if k not in ("client_log_tail", "rt_threads", "iso_threads")}


def summarize(runs, runaways):
    """Median and worst over repetitions of each figure."""
    out = {}
    for kind in LOADS:
        for cfg in CONFIGS:
            rs = [r for r in runs if r["background"] == kind and r["config"] == cfg and "cycles" in r]
            # The threads PipeWire's request made RT (rtkit-daemon) or ISO (muqssd).
            key = "iso_threads" if cfg == "muqssd" else "rt_threads"
            s = {"runs": len(rs), "granted": sum(bool(r.get(key)) for r in rs)}
            for k, worst in (("xruns_per_min", max), ("wake_p99_us", max), ("wake_max_us", max),
                             ("server_late_pct", max), ("cycles_lost", max)):
                v = [r[k] for r in rs if r.get(k) is not None]
                if v:
                    s[k] = statistics.median(v)
                    s[k + "_worst"] = worst(v)
            out[f"{kind}/{cfg}"] = s
    for cfg in CONFIGS[1:]:
        rs = [r for r in runaways if r["config"] == cfg and "share_of_machine_pct" in r]
        if rs:
            v = [r["share_of_machine_pct"] for r in rs]
            out[f"runaway/{cfg}"] = {
                "runs": len(rs), "share_of_machine_pct": statistics.median(v),
                "share_of_machine_pct_worst": max(v), "killed": sum(r["client_killed"] for r in rs),
                "runaway_cpu_s_worst": max(r["runaway_cpu_s"] for r in rs)}
    return out


def markdown(res):
    s = res["summary"]
    L = ["## PipeWire at quantum 64",
         "",
         f"A real PipeWire, null sink at quantum {QUANTUM} ({RATE} Hz: a cycle every "
         f"{PERIOD_US:.0f} µs), `pw-play` linked to it; {res['reps']} repetitions of "
         f"{res['duration_s']:g} s, the three ways alternated within each. Figures from "
         "PipeWire's profiler (`pw-profiler`): the client's wake-up is its data thread's "
         "signal-to-awake time; an xrun is a cycle pw-play had not finished within the "
         "quantum; server late: cycles PipeWire's own data thread began 0.4 quanta late or more. "
         "Median over repetitions, worst in brackets.",
         ""]
    L += [f"- **{c}**: {t}" for c, t in CONFIG_TEXT.items()]
    L += ["", "| background | configuration | xruns/min (worst) | client wake p99 µs (worst) | "
          "max µs | server late % (worst) | runs granted |", "|---|---|---:|---:|---:|---:|---:|"]
    for key, m in s.items():
        if key.startswith("runaway") or not m.get("runs"):
            continue
        kind, cfg = key.split("/")
        L.append(f"| {kind} | {cfg} | {m['xruns_per_min']:.1f} ({m['xruns_per_min_worst']:.1f}) | "
                 f"{m.get('wake_p99_us', 0):.0f} ({m.get('wake_p99_us_worst', 0):.0f}) | "
                 f"{m.get('wake_max_us_worst', 0):.0f} | {m['server_late_pct']:.2f} "
                 f"({m['server_late_pct_worst']:.2f}) | {m['granted']} of {m['runs']} |")
    L += ["", "Runaway: pw-play's realtime data thread spinning from its next wake-up "
          "(`bench/load/pw-spin.so`, preloaded), beside a hog a CPU; its CPU over 5 s as a "
          "share of the machine (iso_cpu is 70%) and whether the kernel killed pw-play "
          "(module-rt sets RLIMIT_RTTIME to rtkit's RTTimeUSecMax, 200 ms, under both):", "",
          "| configuration | runaway CPU s, worst | share of machine % (worst) | client killed |",
          "|---|---:|---:|---:|"]
    for cfg in CONFIGS[1:]:
        m = s.get(f"runaway/{cfg}")
        if m:
            L.append(f"| {cfg} | {m['runaway_cpu_s_worst']:.2f} | {m['share_of_machine_pct']:.1f} "
                     f"({m['share_of_machine_pct_worst']:.1f}) | {m['killed']} of {m['runs']} |")
    return "\n".join(L) + "\n"
