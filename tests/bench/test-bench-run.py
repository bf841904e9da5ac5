#!/usr/bin/env python3
"""bench/run --quick --dry: the whole report pipeline (every kind of workload
and configuration: frame probe, request/response, hackbench alone; the ISO, task-count and
watch-cost runs, Markdown, JSON, gnuplot PNGs)
with 1 s runs, into a temp dir, so the harness cannot rot. Figures are
not checked: the machine is not quiet during the test suite."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("MUQSS_SOURCE_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD = os.environ.get("MUQSS_BUILD_ROOT", os.path.join(SRC, "build"))


def main():
    if os.geteuid() != 0:
        print("needs root (nice -10, muqssd)")
        sys.exit(77)
    for tool in ("hackbench", "gnuplot"):
        if not shutil.which(tool):
            sys.exit(f"{tool} missing: .ci/setup installs rt-tests and gnuplot-nox")
    out = tempfile.mkdtemp(prefix="muqss-test-bench-")
    try:
        p = subprocess.run([os.path.join(SRC, "bench/run"), "--quick", "--dry", "--build", BUILD,
                            "--out", out], capture_output=True, text=True, timeout=210)
        print(p.stdout[-8000:], p.stderr[-4000:])
        if p.returncode:
            sys.exit(f"bench/run exited {p.returncode}")
        with open(os.path.join(out, "latest.json")) as f:
            res = json.load(f)
        for cell, cfgs in res["medians"].items():
            probe = res["cells"][cell]["probe"]
            # The lock waiter's holder is IDLEPRIO: no ISO run of it.
            want = ["stock", "nice", "muqssd"] + (["muqssd+iso"] if probe and probe != "lockwait"
                                                  else [])
            got = sorted(cfgs)
            if got != sorted(want):
                sys.exit(f"{cell}: configurations {got}")
            # A 1 s run on a loaded machine may finish no compile at all,
            # in any configuration: then there is no ratio to take, and
            # that is the only excuse.
            idle = any(r["cell"] == cell and not r.get("work") for r in res["runs"])
            need = ["verdict"] + ([] if idle else ["throughput_vs_stock"])
            need += ["wake_p99_us"] if probe else []
            need += ["missed_pct"] if probe == "frame-probe" else []
            need += ["rps", "worker_wait_us_per_req"] if probe == "reqresp" else []
            need += ["waits"] if probe == "lockwait" else []
            need += ["samples"] if probe == "cyclictest" else []
            for cfg, m in cfgs.items():
                for k in need:
                    if m.get(k) is None:
                        sys.exit(f"{cell} {cfg}: no {k}")
                # Paired per repetition wherever the ratio of medians exists.
                if cfg != "stock" and not idle and (m.get("throughput_paired") is None
                                       or m.get("throughput_worst") is None):
                    sys.exit(f"{cell} {cfg}: no paired throughput ratio")
                if probe and cfg != "stock" and m.get("p99_worst") is None:
                    sys.exit(f"{cell} {cfg}: no worst paired p99")
                if cfg.startswith("muqssd") and m.get("daemon_cpu_s") is None:
                    sys.exit(f"{cell} {cfg}: no daemon CPU figure")
        kinds = {c["probe"] for c in res["cells"].values()}
        if kinds != {"frame-probe", "reqresp", "lockwait", "cyclictest", None} or \
                "frame-hackbench" not in res["cells"] or "xlike-ring" not in res["cells"]:
            sys.exit(f"a kind of cell is missing: {sorted(res['cells'])}")
        if len(res["medians"]) < 6 or not res["iso_share"]["series"] or not res["daemon_scaling"]:
            sys.exit("cells, ISO series or task-count runs missing")
        # Watch cost: every load on both sensors (a build without bpf runs
        # the connector under the bpf row's name), each with a CPU figure.
        rows = (res.get("watch_cost") or {}).get("rows", [])
        loads = {(r["sensor"], r["load"]) for r in rows if r["cpu_pct"][0] is not None}
        if {s for s, _ in loads} != {"connector", "bpf"} or len(loads) != len(rows) \
                or ("bpf", "storm") not in loads or ("connector", "storm") not in loads:
            sys.exit(f"watch-cost rows missing or without a CPU figure: {sorted(map(str, loads))}")
        with open(os.path.join(out, "latest.md")) as f:
            md = f.read()
        for want in ("| workload |", "(worst)", "Where muqssd loses", "nice-based", "iso_cpu",
                     "What watching costs", "Exec storm"):
            if want not in md:
                sys.exit(f"latest.md lacks {want!r}")
        # The build row on the bpf sensor counts its programs' own time.
        if os.path.exists(os.path.join(BUILD, "muqssd/track/sensor_bpf.skel.h")):
            got = [r for r in res["runs"] if r["cell"] == "build" and r["config"] == "muqssd"]
            if not got or any(r.get("bpf_cpu_pct") is None for r in got):
                sys.exit(f"build muqssd: no bpf program figures: {got}")
            if "The bpf sensor's programs" not in md:
                sys.exit("latest.md lacks the bpf programs' table")
        pngs = [n for n in os.listdir(out) if n.endswith(".png")]
        for want in ("missed.png", "iso-share.png", "daemon-cpu.png"):
            if want not in pngs:
                sys.exit(f"{want} missing: {pngs}")
        if not any(n.startswith("cdf-reqresp") for n in pngs):
            sys.exit(f"no request/response CDF: {pngs}")
        if not any(n.startswith("cdf-frame") for n in pngs):
            sys.exit(f"no wake-latency CDF: {pngs}")
        for n in pngs:
            with open(os.path.join(out, n), "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    sys.exit(f"{n}: not a PNG")
        print("ok:", out)
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
