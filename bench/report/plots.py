"""Data files and PNGs (gnuplot) for the report."""

import os
import subprocess

from workloads import CONFIGS

HERE = os.path.dirname(os.path.abspath(__file__))


def gnuplot(script, out_dir, size, **var):
    cmd = "; ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in var.items())
    cmd += f'; set terminal pngcairo size {size} enhanced font "sans,11"; set output out'
    subprocess.run(["gnuplot", "-e", cmd, os.path.join(HERE, script)], cwd=out_dir,
                   check=True, timeout=60)


def read_raw(paths):
    vals = []
    for p in paths:
        try:
            with open(p) as f:
                vals += [float(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
    return sorted(vals)


def cdf(out_dir, cell, raw_by_cfg, title, points=400):
    """raw_by_cfg: config -> list of raw files. All repetitions pooled;
    at most about `points` steps per curve plus the tail."""
    name = f"cdf-{cell}"
    blocks = []
    for cfg in CONFIGS:
        vals = read_raw(raw_by_cfg.get(cfg, []))
        if not vals:
            continue
        n = len(vals)
        step = max(1, n // points)
        idx = sorted(set(list(range(0, n, step)) + list(range(max(0, n - 50), n))))
        rows = [f"{max(vals[i], 1) / 1e3:.4f} {(i + 1) / n:.5f}" for i in idx]
        blocks.append(f"{cfg}\n" + "\n".join(rows))
    if not blocks:
        return None
    with open(os.path.join(out_dir, name + ".dat"), "w") as f:
        f.write("\n\n\n".join(blocks) + "\n")
    gnuplot("cdf.gp", out_dir, "900,560", data=name + ".dat", out=name + ".png", n=len(blocks),
            title_text=title)
    return name + ".png"


def missed(out_dir, med):
    """The missed-periods plot, or None when no cell run has a periodic probe."""
    if not any(m.get("missed_pct") is not None for cfgs in med.values() for m in cfgs.values()):
        return None
    top = max([m.get("missed_pct") or 0 for cfgs in med.values() for m in cfgs.values()] + [1])
    with open(os.path.join(out_dir, "missed.dat"), "w") as f:
        f.write("workload " + " ".join(CONFIGS) + "\n")
        for cell, cfgs in med.items():
            vals = [cfgs.get(c, {}).get("missed_pct") for c in CONFIGS]
            if all(v is None for v in vals):  # no periodic probe in this cell
                continue
            f.write(cell + " " + " ".join("0" if v is None else f"{v:.3f}" for v in vals) + "\n")
    gnuplot("missed.gp", out_dir, "1000,560", data="missed.dat", out="missed.png", ncfg=len(CONFIGS),
            ymax=round(top * 1.1 + 0.5, 1))
    return "missed.png"


def iso_share(out_dir, iso):
    with open(os.path.join(out_dir, "iso.dat"), "w") as f:
        for s in iso["series"]:
            r = s["iso_percent_reading"]
            f.write(f"{s['t_s']} {s['iso_share_pct']} {'?' if r is None else r}\n")
    t = iso.get("tunables", {})
    gnuplot("iso.gp", out_dir, "900,500", data="iso.dat", out="iso-share.png", cap=t.get("iso_cpu", 70),
            title_text=f"ISO share over time, one ISO hog and one normal hog per CPU "
                       f"(iso_reading {t.get('iso_reading', '?')})")
    return "iso-share.png"


def daemon_cpu(out_dir, scaling, busy):
    with open(os.path.join(out_dir, "daemon.dat"), "w") as f:
        for s in scaling:
            f.write(f"{s['sleeping_threads']} {s['daemon_cpu_pct']}\n")
    gnuplot("daemon.gp", out_dir, "800,500", data="daemon.dat", out="daemon-cpu.png",
            title_text=f"muqssd CPU use against tasks in scope (plus {busy} busy hogs)")
    return "daemon-cpu.png"
