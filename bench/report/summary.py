"""Medians, ratios against stock, verdicts, and the Markdown report."""

import statistics

from workloads import CONFIGS, CONFIG_TEXT

# A median within these bounds of stock's is "same": the machine's own
# noise between alternated runs is of this order.
LAT_BAND = (0.9, 1.1)
WORK_BAND = (0.95, 1.05)
MISSED_BAND_PTS = 1.0


def medians(samples):
    """samples[cell][config][figure] = [per-run values] -> medians."""
    return {cell: {cfg: {k: statistics.median(v) for k, v in figs.items()}
                   for cfg, figs in cfgs.items()}
            for cell, cfgs in samples.items()}


def word(ratio, band, lower_is_better):
    if ratio is None:
        return "n/a"
    lo, hi = band
    if lo <= ratio <= hi:
        return "same"
    return "better" if (ratio < lo) == lower_is_better else "worse"


def ratio(a, b):
    return a / b if a is not None and b else None


def missed_word(m, ref):
    diff = m["missed_pct"] - ref["missed_pct"]
    return "same" if abs(diff) <= MISSED_BAND_PTS else ("better" if diff < 0 else "worse"), diff


def paired(runs):
    """{cell: {config: {figure: [ratio to stock's run of the same repetition]}}}:
    alternated runs minutes apart cancel the machine's drift better than a
    ratio of medians, and the worst pair shows what a median hides."""
    stock = {(r["cell"], r["rep"]): r for r in runs if r["config"] == "stock"}
    out = {}
    for r in runs:
        s = stock.get((r["cell"], r["rep"]))
        if r["config"] == "stock" or not s:
            continue
        d = out.setdefault(r["cell"], {}).setdefault(r["config"], {})
        for k, name in (("wake_p99_us", "p99"), ("work", "throughput")):
            if r.get(k) is not None and s.get(k):
                d.setdefault(name, []).append(r[k] / s[k])
        if r.get("daemon_cpu_pct") is not None:
            d.setdefault("daemon_cpu_pct", []).append(r["daemon_cpu_pct"])
    return out


def compare(med, runs=()):
    """Adds to every cell's medians the ratio of medians to stock's, the
    median and worst of the per-repetition ratios (runs: every run's
    figures), and a verdict from the paired median where there is one."""
    pairs = paired(runs)
    for cell, cfgs in med.items():
        stock = cfgs.get("stock", {})
        for cfg, m in cfgs.items():
            m["p99_vs_stock"] = ratio(m.get("wake_p99_us"), stock.get("wake_p99_us"))
            m["throughput_vs_stock"] = ratio(m.get("work"), stock.get("work"))
            pr = pairs.get(cell, {}).get(cfg, {})
            for name, worst in (("p99", max), ("throughput", min), ("daemon_cpu_pct", max)):
                if pr.get(name):
                    m[f"{name}_paired"] = statistics.median(pr[name])
                    m[f"{name}_worst"] = worst(pr[name])
                    m[f"{name}_per_rep"] = pr[name]
            if cfg == "stock":
                m["verdict"] = "reference"
                continue
            r99 = m.get("p99_paired", m["p99_vs_stock"])
            rw = m.get("throughput_paired", m["throughput_vs_stock"])
            parts = [f"p99 {word(r99, LAT_BAND, True)} ×{fmt(r99, 2)}"] if r99 is not None else []
            if m.get("missed_pct") is not None and stock.get("missed_pct") is not None:
                mw, diff = missed_word(m, stock)
                parts.append(f"missed {mw} {diff:+.1f} pts")
            parts.append(f"throughput {word(rw, WORK_BAND, False)} ×{fmt(rw, 2)}")
            m["verdict"] = "; ".join(parts)
    return med


def bpf_markdown(med):
    """The bpf sensor's programs, where a run counted them (the build row):
    their own CPU, charged to the tasks they trace, median of the runs."""
    rows = []
    for cell, cfgs in med.items():
        for cfg in CONFIGS:
            m = cfgs.get(cfg) or {}
            if m.get("bpf_cpu_pct") is None:
                continue
            progs = sorted(k.split(".", 1)[1] for k in m if k.startswith("bpf_pct."))
            rows.append(f"| {cell} | {cfg} | {fmt(m['bpf_cpu_pct'], 3)} | "
                        + ", ".join(f"{p} {fmt(m[f'bpf_pct.{p}'], 3)} "
                                    f"({fmt(m.get(f'bpf_ns_per_run.{p}'), 0)} ns)" for p in progs)
                        + " |")
    if not rows:
        return []
    return ["", "## The bpf sensor's programs", "",
            "`kernel.bpf_stats_enabled=1` over the window: the programs' run time as % of one "
            "CPU (in the traced tasks, so inside the throughput above), and per program the "
            "mean time a run.", "",
            "| workload | configuration | all programs % | per program % (ns a run) |",
            "|---|---|---:|---|"] + rows


def fmt(v, digits=1, scale=1.0):
    return "–" if v is None else f"{v * scale:.{digits}f}"


def with_worst(m, name, digits=2):
    """'median (worst)' of a paired figure, or the ratio of medians."""
    if m.get(f"{name}_paired") is None:
        return fmt(m.get(f"{name}_vs_stock"), digits)
    return f"{fmt(m[f'{name}_paired'], digits)} ({fmt(m[f'{name}_worst'], digits)})"


def mw(pair, digits=2, scale=1.0):
    """'median (worst)' of a (median, worst) pair."""
    return f"{fmt(pair[0], digits, scale)} ({fmt(pair[1], digits, scale)})"


def watch_markdown(w):
    """The watch-cost tables: one row per sensor and load (bench/report/watch.py)."""
    rows = w["rows"]
    reps = max((r["reps"] for r in rows), default=0)
    L = ["", "## What watching costs", "",
         f"muqssd with each sensor; {reps} repetition(s), median and (worst). CPU is % of one "
         "CPU from its threads' schedstat over a window after its start-up scan settled; "
         "RSS is its peak (VmHWM). Goals (issue 31): the worst repetition meets them. "
         "\"sensor\" is the one asked for; a different one in brackets is what it got.", "",
         "| sensor | scope | muqssd CPU % | goal % | peak RSS MB (goal ≤ 8) | goals met |",
         "|---|---|---:|---:|---:|---|"]

    def sensor(r):
        got = [s for s in r["sensor_used"] if s != r["sensor"]]
        return r["sensor"] + (f" ({', '.join(got)})" if got else "")

    for r in rows:
        if r["load"] == "storm":
            continue
        scope = "idle (one sleeping process)" if r["load"] == 1 else f"{r['load']:,} sleeping threads"
        L.append(f"| {sensor(r)} | {scope}{'' if r['settled'] else ', still scanning'} | "
                 f"{mw(r['cpu_pct'], 3)} | {fmt(r['cpu_goal_pct'], 2)} | "
                 f"{mw(r['rss_peak_kb'], 1, 1 / 1024)} | {'yes' if r['goals_met'] else 'no'} |")
    storm = [r for r in rows if r["load"] == "storm"]
    if storm:
        L += ["", f"Exec storm: {w['storm_execs']:,} execs of `storm-target` at {w['storm_rate']}/s "
              "(every other one orphaned at once), rule `comm=storm-target nice=5`. Each target "
              f"checks its nice at main(), then every {w['poll_ms']} ms for up to 10 s, so a wait "
              f"is known to {w['poll_ms']} ms only; the median reaction over all counts those "
              "niced by main() as 0. Goals: all classified, median reaction ≤ 1 ms, CPU ≤ 1%.", "",
              "| sensor | missed the rule (worst) | niced by main() | wait of the rest p50 / p99 ms | "
              "median reaction ms | muqssd CPU % | goals met |",
              "|---|---:|---:|---:|---:|---:|---|"]
        L += [f"| {sensor(r)} | {r['missed_rule']}"
              + (f" (+{r['short_started']} not started)" if r["short_started"] else "")
              + f" | {mw(r['at_main'], 0)} | {mw(r['rest_wait_p50_ms'], 0)} / "
              f"{mw(r['rest_wait_p99_ms'], 0)} | {mw(r['wait_p50_ms'], 0)} | "
              f"{mw(r['cpu_pct'], 2)} | {'yes' if r['goals_met'] else 'no'} |" for r in storm]
    return L


def markdown(meta, med, iso, scaling, watch=None):
    L = [f"# muqssd benchmark report",
         "",
         f"Produced by `{meta['command']}` on {meta['date']}.",
         "",
         f"- machine: {meta['cpu_model']}, {meta['cpus']} CPUs, {meta['mem_gb']} GB; "
         f"kernel {meta['kernel']}",
         f"- load average when the run started: {meta['loadavg']} "
         "(anything else running skews every figure; ratios within one run hold up best)",
         f"- {meta['reps']} repetitions of {meta['duration_s']} s per cell, configurations "
         "alternated within each repetition; every figure is a median over repetitions",
         "- wake latency: how late the probe woke after its absolute deadline; "
         "missed: periods whose work ended after the next period was due",
         "- throughput: the request/response load's requests per second, else the background "
         "load's work (hog iterations, compiles completed, hackbench runs per second); "
         ">1 is more work done",
         "- vs stock: the ratio to stock's run of the same repetition, median over the "
         "repetitions, and in brackets the worst repetition (highest p99, lowest throughput; "
         "for muqssd's CPU the highest reading)",
         "- verdict: against stock; paired p99 and throughput within ±10% / ±5% and missed within "
         f"±{MISSED_BAND_PTS:g} point are \"same\"",
         "",
         "Configurations:",
         ""]
    if not med:  # bench/run --only watch: the title, the machine, the watch tables
        return "\n".join(L[:6] + watch_markdown(watch) + [""])
    L += [f"- **{c}**: {CONFIG_TEXT[c]}" for c in CONFIGS]
    L += ["",
          "| workload | configuration | wake p50 ms | p99 ms | max ms | missed % | "
          "p99 vs stock (worst) | throughput vs stock (worst) | muqssd CPU % (worst) | "
          "verdict vs stock |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for cell, cfgs in med.items():
        for cfg in CONFIGS:
            m = cfgs.get(cfg)
            if m is None:
                continue
            L.append(f"| {cell} | {cfg} | {fmt(m.get('wake_p50_us'), 2, 1e-3)} | "
                     f"{fmt(m.get('wake_p99_us'), 2, 1e-3)} | {fmt(m.get('wake_max_us'), 1, 1e-3)} | "
                     f"{fmt(m.get('missed_pct'))} | {with_worst(m, 'p99')} | "
                     f"{with_worst(m, 'throughput')} | {fmt(m.get('daemon_cpu_pct'), 2)}"
                     + (f" ({fmt(m['daemon_cpu_pct_worst'], 2)})" if m.get('daemon_cpu_pct_worst')
                        is not None else "") + f" | {m.get('verdict', '')} |")
    L += bpf_markdown(med)
    losses = [(cell, cfg, m["verdict"]) for cell, cfgs in med.items() for cfg, m in cfgs.items()
              if cfg.startswith("muqssd") and "worse" in m.get("verdict", "")]
    L += ["", "## Where muqssd loses to stock", ""]
    L += [f"- {cell}, {cfg}: {v}" for cell, cfg, v in losses] or ["- nowhere in this run"]
    L += ["", "## muqssd against the nice-based configuration", "",
          "What a user would otherwise get from an auto-nice daemon; ratios are muqssd / nice.", "",
          "| workload | configuration | p99 vs nice | missed % vs nice | throughput vs nice |",
          "|---|---|---|---|---|"]
    for cell, cfgs in med.items():
        n = cfgs.get("nice")
        for cfg in ("muqssd", "muqssd+iso"):
            m = cfgs.get(cfg)
            if not n or not m:
                continue
            r99, rw = ratio(m.get("wake_p99_us"), n.get("wake_p99_us")), ratio(m.get("work"), n.get("work"))
            missed = "–"
            if m.get("missed_pct") is not None and n.get("missed_pct") is not None:
                missed = f"{missed_word(m, n)[0]} {m['missed_pct']:.1f} vs {n['missed_pct']:.1f}"
            L.append(f"| {cell} | {cfg} | {word(r99, LAT_BAND, True)} ×{fmt(r99, 2)} | "
                     f"{missed} | {word(rw, WORK_BAND, False)} ×{fmt(rw, 2)} |")
    if iso:
        cap = iso.get("tunables", {}).get("iso_cpu")
        tail = [s["iso_share_pct"] for s in iso["series"][len(iso["series"]) // 2:]]
        L += ["", "## ISO share against iso_cpu", "",
              f"One ISO hog per CPU against as many normal hogs under muqssd, iso_cpu {cap}%, "
              f"iso_reading {iso.get('tunables', {}).get('iso_reading')}: the ISO hogs held "
              f"{fmt(statistics.median(tail) if tail else None)}% of the machine "
              "(median over the second half of the run). See iso-share.png."]
    if scaling:
        L += ["", "## muqssd's own CPU use against the number of tasks", "",
              "After the start-up scan of the new tasks (settled: three 0.5 s readings in a row "
              "under a third of the peak or under 0.5% of a CPU; otherwise the window began while "
              "it was still scanning).", "",
              "| sleeping threads | threads in scope | busy hogs | start-up scan | "
              "muqssd CPU % of one CPU |",
              "|---:|---:|---:|---|---:|"]
        L += [f"| {s['sleeping_threads']} | {s.get('threads_in_scope', '–')} | {s['busy']} | "
              f"{'settled' if s.get('settled') else 'still scanning'} after {s.get('settle_s')} s | "
              f"{fmt(s.get('daemon_cpu_pct'), 2)} |" for s in scaling]
    if watch:
        L += watch_markdown(watch)
    L += ["", "Plots: cdf-*.png (wake-latency CDF, frame workloads), missed.png, iso-share.png, "
          "daemon-cpu.png. Every run's figures are in latest.json.", ""]
    return "\n".join(L)
