#!/usr/bin/env python3
"""bench/run --quick --dry: the whole report pipeline (every workload and
configuration, the ISO and task-count runs, Markdown, JSON, gnuplot PNGs)
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
                            "--out", out], capture_output=True, text=True, timeout=150)
        print(p.stdout[-4000:], p.stderr[-4000:])
        if p.returncode:
            sys.exit(f"bench/run exited {p.returncode}")
        with open(os.path.join(out, "latest.json")) as f:
            res = json.load(f)
        for cell, cfgs in res["medians"].items():
            got = sorted(cfgs)
            if got != sorted(["stock", "nice", "muqssd", "muqssd+iso"]):
                sys.exit(f"{cell}: configurations {got}")
            for cfg, m in cfgs.items():
                for k in ("wake_p99_us", "missed_pct", "throughput_vs_stock", "verdict"):
                    if m.get(k) is None:
                        sys.exit(f"{cell} {cfg}: no {k}")
                if cfg.startswith("muqssd") and m.get("daemon_cpu_s") is None:
                    sys.exit(f"{cell} {cfg}: no daemon CPU figure")
        if len(res["medians"]) < 4 or not res["iso_share"]["series"] or not res["daemon_scaling"]:
            sys.exit("cells, ISO series or task-count runs missing")
        with open(os.path.join(out, "latest.md")) as f:
            md = f.read()
        for want in ("| workload |", "Where muqssd loses", "nice-based", "iso_cpu"):
            if want not in md:
                sys.exit(f"latest.md lacks {want!r}")
        pngs = [n for n in os.listdir(out) if n.endswith(".png")]
        for want in ("missed.png", "iso-share.png", "daemon-cpu.png"):
            if want not in pngs:
                sys.exit(f"{want} missing: {pngs}")
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
