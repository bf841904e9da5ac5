"""One round of issue 13's stall load, shared by drill-stall and
bench/stall/run: a fresh scope, muqssd scoped to it (or not: the stock
kernel), then at once the 60 Hz frame task, 8 hogs through timeout(1) and
an exec storm (/bin/true in a loop, and shells), 6 s.

A hog is `sh` started by timeout(1), so every hog is a task in the middle
of an exec at the start, and the storm keeps execs in flight throughout:
the load under which the loop once blocked ~1 s on /proc/PID/stat of a
task mid-exec (do_task_stat waits on the target's exec_update_lock).

The caller runs SCHED_FIFO (just under the daemon, with reset-on-fork:
nothing it starts inherits it), so it reads the status and stops the
daemon on time while boosted hogs hold both CPUs."""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from sched_util import MUQSSCTL, PROBE, Daemon, Scope, assert_clean, release_fifo, threads_of

SECONDS = 6
HOGS = 8
# Above every boost (1-11), below the daemon (20) and its deadman.
PRIO = 19
TICK_KEYS = ("count", "bound_us", "late_max_us", "late_p99_us", "over_bound", "deadman_trips")

# Each storm loop counts what it ran; EPOCHREALTIME without its dot is us.
# Starved past its time, timeout's SIGTERM makes it say so.
STORM = """n=0; end=$(( ${EPOCHREALTIME/./} + $1 )); shift
trap 'echo $n cut; exit' TERM
while (( ${EPOCHREALTIME/./} < end )); do "$@"; n=$((n + 1)); done
echo $n
"""


def caller_fifo(inherit=False):
    flags = os.SCHED_FIFO if inherit else os.SCHED_FIFO | os.SCHED_RESET_ON_FORK
    os.sched_setscheduler(0, flags, os.sched_param(PRIO))


def caller_other():
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def root_script(work):
    q = lambda name: shlex.quote(os.path.join(work, name))  # noqa: E731
    us = SECONDS * 1000000
    # The probe first: it ends before the hogs, which are then still there
    # to be checked once the daemon is gone. It counts wake-ups, not
    # seconds: starved, it runs on past the hogs, and SIGTERM makes it
    # report what it has.
    lines = [f"read _ < {q('go')}",
             f"timeout -k 5 {SECONDS + 6} {PROBE} -p 16.7 -w 3 -d {SECONDS} -o {q('probe.raw')}"
             f" > {q('probe.out')} 2>&1 &"]
    lines += [f"timeout {SECONDS + 1} sh -c 'while :; do :; done' &"] * HOGS
    lines += [f"timeout -k 3 {SECONDS + 2} bash {q('storm.sh')} {us} /bin/true > {q('storm-true.out')} &",
              f"timeout -k 3 {SECONDS + 2} bash {q('storm.sh')} {us} sh -c true > {q('storm-sh.out')} &",
              "wait"]
    return "\n".join(lines) + "\n"


def go(path, timeout=10.0):
    """Open the scope root's fifo once it reads it; -ENXIO until then."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            release_fifo(path)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("the scope root never read its go fifo")
            time.sleep(0.01)


def ctl_status(d):
    """`muqssctl --json status`, the CLI itself: started at the caller's
    FIFO priority, as a SCHED_OTHER client would wait out the boosts."""
    caller_fifo(inherit=True)
    try:
        p = subprocess.run([MUQSSCTL, "--socket", d.sock, "--json", "status"],
                           capture_output=True, text=True, timeout=10)
    finally:
        caller_fifo()
    if p.returncode:
        raise RuntimeError(f"muqssctl --json status: rc {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def storm_count(path):
    """(execs, whether the loop was cut short by its timeout)."""
    try:
        with open(path) as f:
            words = f.read().split()
        return int(words[0]), "cut" in words
    except (OSError, ValueError, IndexError):
        return None, True


def live_threads(pids):
    return sum(len(threads_of(p)) for p in pids)


def run(muqssd=True, keep_raw=None):
    """One round. Returns its figures; raises on what makes the round
    void (no probe result, the daemon gone, a status without its tick
    fields). 'left' lists threads left FIFO, stopped or pinned after the
    daemon's exit (an empty list is clean); the caller decides what that
    means. keep_raw: a path to copy the probe's wake-ups to."""
    work = tempfile.mkdtemp(prefix="muqss-stall-")
    r = {"mode": "muqssd" if muqssd else "stock"}
    scope = d = None
    try:
        with open(os.path.join(work, "storm.sh"), "w") as f:
            f.write(STORM)
        with open(os.path.join(work, "root.sh"), "w") as f:
            f.write(root_script(work))
        os.mkfifo(os.path.join(work, "go"))
        caller_fifo()
        scope = Scope([f"bash {shlex.quote(os.path.join(work, 'root.sh'))}"], limit=SECONDS + 12)
        if muqssd:
            # MUQSS_STALL_LOG_LEVEL=debug: for a hunt, with MUQSS_STALL_KEEP_DIR.
            level = os.environ.get("MUQSS_STALL_LOG_LEVEL")
            d = Daemon(scope.root.pid, scope.tmp, extra=("--log-level", level) if level else ())
        go(os.path.join(work, "go"))
        t0 = time.monotonic()
        out = os.path.join(work, "probe.out")
        # The daemon must outlive the probe, or its last frames are the
        # stock kernel's; the hogs, started after it, run a second longer.
        while time.monotonic() - t0 < SECONDS + 2:
            if os.path.exists(out) and os.path.getsize(out):
                break
            time.sleep(0.02)
        r["probe_done_s"] = round(time.monotonic() - t0, 3)
        # Not done yet: its last frames run after the daemon is stopped.
        r["probe_outlived_daemon"] = bool(d) and not os.path.getsize(out)
        if d:
            if d.proc.poll() is not None:
                raise RuntimeError(f"muqssd exited mid-round: rc {d.proc.returncode}")
            st = ctl_status(d)
            tick = st.get("tick")
            missing = [k for k in TICK_KEYS if not isinstance(tick, dict) or k not in tick]
            if missing:
                raise RuntimeError(f"status has no tick {missing}: {st}")
            r["tick"] = {k: tick[k] for k in TICK_KEYS}
            # Stop it with the hogs still running (they outlive the probe
            # by about a second), so "clean" is checked on live tasks.
            pids = scope.pids()
            d.kill(signal.SIGTERM)
            r["daemon_rc"] = d.proc.returncode
            r["warnings"] = log_warnings(d.log.name)
            log_name = d.log.name
            d = None
            r["checked_threads"] = live_threads(pids)
            try:
                assert_clean(pids, "after SIGTERM")
                r["left"] = []
            except AssertionError as e:
                r["left"] = [str(e)]
                r["left_comm"] = comms(int(t) for t in re.findall(r"\((\d+), '", str(e)))
                keep_unclean(log_name)
        scope.root.wait(timeout=SECONDS + 20)
        r["probe"] = probe_figures(work)
        r["wake_max_frame"] = worst_frame(os.path.join(work, "probe.raw"))
        r["execs_true"], cut_true = storm_count(os.path.join(work, "storm-true.out"))
        r["execs_sh"], cut_sh = storm_count(os.path.join(work, "storm-sh.out"))
        r["storm_cut"] = cut_true or cut_sh
        if keep_raw:
            shutil.copyfile(os.path.join(work, "probe.raw"), keep_raw)
        return r
    finally:
        if d:
            d.kill(signal.SIGTERM)
        if scope:
            scope.close()
        caller_other()
        shutil.rmtree(work, ignore_errors=True)


def comms(tids):
    """{tid: its comm and its process's argv}, as bytes made printable."""
    out = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/comm", "rb") as f:
                comm = f.read().strip()
            with open(f"/proc/{tid}/cmdline", "rb") as f:
                argv = f.read().replace(b"\0", b" ").strip()
            out[tid] = (comm + b": " + argv).decode(errors="backslashreplace")
        except OSError:
            out[tid] = "gone"
    return out


def keep_unclean(log_name):
    """With MUQSS_STALL_KEEP_DIR set, an unclean round's daemon log is
    kept there, for the cause."""
    keep = os.environ.get("MUQSS_STALL_KEEP_DIR")
    if not keep:
        return
    os.makedirs(keep, exist_ok=True)
    shutil.copyfile(log_name, os.path.join(keep, f"muqssd-unclean-{int(time.time() * 1000)}.log"))


def log_warnings(path, keep=5):
    """The daemon's first lines about late ticks and deadman trips (each
    kind logged once a second at most), how many there were, and the
    longest tick they name: the status's late_max_us is how late a tick
    started, not how long one took."""
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if "tick ran" in l or "deadman:" in l]
    except OSError:
        return {"count": None, "first": [], "took_max_us": None}
    took = [int(m.group(1)) for l in lines if (m := re.search(r"took (\d+) us", l))]
    return {"count": len(lines), "first": lines[:keep], "took_max_us": max(took, default=0)}


def worst_frame(raw):
    """Which wake-up (0 = the first frame) was the latest: when in the
    round it came, at about 16.7 ms a frame."""
    try:
        with open(raw) as f:
            lat = [float(x) for x in f.read().split()]
    except (OSError, ValueError):
        return None
    return lat.index(max(lat)) if lat else None


def probe_figures(work):
    try:
        with open(os.path.join(work, "probe.out")) as f:
            text = f.read()
    except OSError:
        raise RuntimeError("the frame probe left no output")
    lines = [l for l in text.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError(f"no frame-probe result: {text!r}")
    p = json.loads(lines[-1])
    if not p.get("frames"):
        raise RuntimeError(f"the frame probe ran no frame: {p}")
    return p


def table_head():
    return (f"{'round':>5} {'mode':6} {'late max':>10} {'over':>5} {'trips':>5} {'ticks':>6} "
            f"{'wake p99':>10} {'wake max':>10} {'missed':>7} {'execs':>11} {'clean':>9}")


def table_row(n, r):
    t = r.get("tick")
    tick = (f"{t['late_max_us']:>8.0f}us {t['over_bound']:>5.0f} {t['deadman_trips']:>5.0f} "
            f"{t['count']:>6.0f}") if t else f"{'-':>10} {'-':>5} {'-':>5} {'-':>6}"
    p = r["probe"]
    clean = ("-" if "left" not in r else
             f"{'yes' if not r['left'] else 'NO'}/{r['checked_threads']}")
    return (f"{n:>5} {r['mode']:6} {tick} {p['wake_p99_us']:>8.0f}us {p['wake_max_us']:>8.0f}us "
            f"{p['missed']:>3}/{p['frames']:<3} {r['execs_true'] or 0:>5}+{r['execs_sh'] or 0:<4}"
            f"{'!' if r['storm_cut'] else ' '} "
            f"{clean:>9}")
