"""bench/run's PipeWire row (issue 33): a real PipeWire with a null sink at
quantum 64 (48 kHz), pw-play into it, against 8 hogs and a compile; its
rtkit request left unanswered, granted by rtkit-daemon, or answered by
muqssd as ISO; and a runaway client under rtkit-daemon and muqssd.

PipeWire and pw-play run as root without CAP_SYS_NICE and CAP_SYS_RESOURCE,
RLIMIT_RTPRIO 0: they cannot raise themselves, so module-rt asks rtkit on a
private system bus. Root, because rtkit-daemon asks polkit, and with no
logind session here polkit grants only root (the action is allow_any=no);
the bus is private, so rtkit-daemon grants only what the bench started."""

import json
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time

import scenario
from dbus_util import Bus
from sched_util import Scope, descendants, threads_of

CONFIGS = ["stock", "rtkit-daemon", "muqssd"]
CONFIG_TEXT = {
    "stock": "no RT for PipeWire: nothing answers its rtkit request",
    "rtkit-daemon": "Debian's rtkit-daemon (with polkitd) grants it: SCHED_RR 20, RLIMIT_RTTIME 200 ms",
    "muqssd": "muqssd answers it as rtkit: the data threads become ISO",
}
QUANTUM, RATE = 64, 48000
PERIOD_US = QUANTUM * 1e6 / RATE
# A follower's status in a profiler record (pw_node_activation states).
AWAKE, FINISHED = 2, 3
# rtkit 0.13's path and Debian's polkitd.
RTKIT_DAEMON, POLKITD = "/usr/libexec/rtkit-daemon", "/usr/lib/polkit-1/polkitd"
NO_RT = ("setpriv --bounding-set=-sys_nice,-sys_resource --inh-caps=-sys_nice,-sys_resource "
         "prlimit --rtprio=0 --nice=0")

PW_CONF = """context.properties = {
  support.dbus = true
  core.daemon = true
  core.name = pipewire-0
  default.clock.rate = %(rate)d
  default.clock.quantum = %(q)d
  default.clock.min-quantum = %(q)d
  default.clock.max-quantum = %(q)d
}
context.spa-libs = {
  audio.convert.* = audioconvert/libspa-audioconvert
  support.* = support/libspa-support
}
context.modules = [
  { name = libpipewire-module-rt
    args = { nice.level = -11 rt.prio = 88 rtportal.enabled = false rtkit.enabled = true } }
  { name = libpipewire-module-protocol-native }
  { name = libpipewire-module-profiler }
  { name = libpipewire-module-metadata }
  { name = libpipewire-module-spa-node-factory }
  { name = libpipewire-module-client-node }
  { name = libpipewire-module-access args = { } }
  { name = libpipewire-module-adapter }
  { name = libpipewire-module-link-factory }
]
context.objects = [
  { factory = adapter
    args = { factory.name = support.null-audio-sink node.name = bench-sink
             media.class = Audio/Sink audio.position = [ FL FR ]
             node.driver = true priority.driver = 1000
             adapter.auto-port-config = { mode = dsp monitor = false control = false
                                          position = preserve } } }
]
"""
# What a session manager would do: pw-play's stream gets DSP ports.
PORT_CONFIG = ('{ "direction": "Output", "mode": "dsp", "format": { "mediaType": "audio", '
               '"mediaSubtype": "raw", "format": "F32P", "rate": %d, "channels": 2, '
               '"position": [ "FL", "FR" ] } }' % RATE)
# The scope root runs each line sent to it, so all the load descends from it.
ROOT = 'while IFS= read -r line; do eval "$line" & done < "$1"; wait'


def missing():
    """What this row needs and this machine lacks (Debian packages)."""
    need = {"pipewire": "pipewire-bin", "pw-play": "pipewire-bin", "pw-profiler": "pipewire-bin",
            "dbus-daemon": "dbus-daemon", "setpriv": "util-linux", "prlimit": "util-linux"}
    out = sorted({pkg for prog, pkg in need.items() if not shutil.which(prog)})
    if not os.access(RTKIT_DAEMON, os.X_OK) or not os.access(POLKITD, os.X_OK):
        out.append("rtkit (and polkitd)")
    return out


def tone(path, seconds):
    """A 440 Hz stereo WAV, long enough for the run."""
    import math
    import struct
    import wave
    second = b"".join(struct.pack("<hh", v, v) for v in
                      (int(6000 * math.sin(2 * math.pi * 440 * i / RATE)) for i in range(RATE)))
    with wave.open(path, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for _ in range(int(seconds) + 1):
            w.writeframes(second)


def wait_for(what, cond, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    raise RuntimeError(f"pipewire row: {what} did not happen in {timeout:g} s")


def file_has(path, text):
    try:
        with open(path, "rb") as f:
            return text.encode() in f.read()
    except OSError:
        return False


class Run:
    """One bounded PipeWire setup: a private bus, the rtkit answerer of cfg,
    PipeWire and pw-play linked to the null sink, all in one scope."""

    def __init__(self, b, cfg, limit):
        self.b, self.cfg, self.limit = b, cfg, limit
        self.tmp = tempfile.mkdtemp(prefix="muqss-pw-", dir="/dev/shm")
        os.chmod(self.tmp, 0o755)
        self.xdg = os.path.join(self.tmp, "xdg")
        os.mkdir(self.xdg, 0o700)
        self.services, self.daemon, self.scope, self.root, self.ctl = [], None, None, None, None

    def path(self, name):
        return os.path.join(self.tmp, name)

    def pw(self, *argv, timeout=10):
        """A control command (pw-cli, pw-link) from outside the scope, at
        nice -10 so a loaded machine does not stall the setup."""
        return subprocess.run(["timeout", "-s", "KILL", str(timeout), "nice", "-n", "-10", *argv],
                              env=self.env, capture_output=True, text=True, errors="replace")

    def send(self, line):
        self.ctl.write(f"timeout -s KILL {self.limit} {line}\n")
        self.ctl.flush()

    def start(self, tone_path):
        self.bus = Bus(self.tmp, "system", limit=self.limit + 30)
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address,
                        XDG_RUNTIME_DIR=self.xdg)
        fifo = self.path("lines")
        os.mkfifo(fifo)
        self.scope = Scope([f"env DBUS_SYSTEM_BUS_ADDRESS={self.bus.address} XDG_RUNTIME_DIR={self.xdg} "
                            f"bash -c {shlex.quote(ROOT)} root {fifo} 2> {self.path('root.log')}"],
                           limit=self.limit)
        self.root = self.scope.root
        if self.cfg == "rtkit-daemon":
            self.start_rtkit_daemon()
        elif self.cfg == "muqssd":
            conf = self.path("muqssd.conf")
            with open(conf, "w") as f:
                f.write("[rtkit]\nenable = yes\n")
            # The tests' Daemon takes the bus from this process's environment.
            saved = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS")
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = self.bus.address
            try:
                self.daemon = scenario.Daemon(self.root.pid, self.tmp, config=conf)
            finally:
                if saved is None:
                    del os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
                else:
                    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = saved
            wait_for("muqssd serving rtkit", lambda: file_has(self.path("muqssd.log"), "rtkit: serving"))
        self.ctl = open(fifo, "w")
        with open(self.path("pipewire.conf"), "w") as f:
            f.write(PW_CONF % {"rate": RATE, "q": QUANTUM})
        self.send(f"{NO_RT} pipewire -c {self.path('pipewire.conf')} > {self.path('pipewire.log')} 2>&1")
        wait_for("the null sink", lambda: self.node_id("bench-sink"))
        self.send(f"{NO_RT} env LD_PRELOAD={self.b}/bench/load/pw-spin.so "
                  f"MUQSS_SPIN_FILE={self.path('spin')} pw-play --latency={QUANTUM} "
                  f"{tone_path} > {self.path('pw-play.log')} 2>&1")
        play = wait_for("pw-play's node", lambda: self.node_id("pw-play"))
        self.pw("pw-cli", "set-param", str(play), "PortConfig", PORT_CONFIG)
        wait_for("pw-play's ports", lambda: "pw-play:output_FR" in self.pw("pw-link", "-o").stdout)
        for ch in ("FL", "FR"):
            self.pw("pw-link", f"pw-play:output_{ch}", f"bench-sink:playback_{ch}")
        wait_for("the links", lambda: self.pw("pw-link", "-l").stdout.count("|->") >= 2)
        self.play_node = play
        return play

    def start_rtkit_daemon(self):
        # rtkit-daemon limits its own RLIMIT_FSIZE to 0: it logs into a pipe.
        for name, argv in (("polkitd", [POLKITD, "--no-debug"]),
                           ("rtkit", [RTKIT_DAEMON, "--stderr"])):
            log = open(self.path(name + ".log"), "w")
            cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=log)
            p = subprocess.Popen(["timeout", "-s", "KILL", str(self.limit + 20), *argv],
                                 env=self.env, stdout=cat.stdin, stderr=subprocess.STDOUT)
            cat.stdin.close()
            self.services += [p, cat]
        wait_for("rtkit-daemon", lambda: file_has(self.path("rtkit.log"), "Running."))

    def node_id(self, name):
        out = self.pw("pw-cli", "ls", "Node").stdout
        node = None
        for line in out.splitlines():
            s = line.strip()
            if s.startswith("id ") and "Node" in s:
                node = int(s.split()[1].rstrip(","))
            elif s == f'node.name = "{name}"' and node is not None:
                return node
        return None

    def audio_threads(self):
        """{tid: (comm, policy name)} of PipeWire's and pw-play's threads."""
        out = {}
        for p in descendants(self.root.pid):
            for t in threads_of(p):
                try:
                    with open(f"/proc/{p}/task/{t}/comm", "rb") as f:
                        comm = f.read().strip().decode("utf-8", "replace")
                    pol = os.sched_getscheduler(t) & ~getattr(os, "SCHED_RESET_ON_FORK", 0x40000000)
                except OSError:
                    continue
                if comm in ("pipewire", "pw-play", "pw-cat") or comm.startswith("data-loop"):
                    out[t] = (comm, {0: "other", 1: "fifo", 2: "rr"}.get(pol, str(pol)))
        return out

    def grants(self):
        """How PipeWire's request was answered: RT threads, and under muqssd ISO ones."""
        th = self.audio_threads()
        g = {"rt_threads": sorted(f"{c}/{t}" for t, (c, pol) in th.items() if pol in ("rr", "fifo"))}
        for p in descendants(self.root.pid):
            if r_comm(p) in ("pipewire", "pw-play"):
                g[f"rttime_{r_comm(p)}"] = rttime_limit(p)
        if self.daemon:
            tasks = json.loads(self.daemon.ctl("tasks", "--json").stdout)["tasks"]
            g["iso_threads"] = sorted(f"{t['comm']}/{t['tid']}" for t in tasks if t["class"] == "iso")
        return g

    def close(self):
        """Everything down, whatever state it is in: no PipeWire, bus,
        rtkit-daemon or load left, no thread left realtime."""
        if self.ctl:
            self.ctl.close()
        if self.scope:
            self.scope.close()  # every thread back to SCHED_OTHER, then killed
        if self.daemon:
            self.daemon.stop()
        for p in self.services:
            if p.poll() is None:
                p.kill()
            p.wait()
        if getattr(self, "bus", None):
            self.bus.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


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


def background(b, kind, d, ncpu):
    if kind == "8hogs":
        return [f"{b}/bench/load/hog {d} > /dev/null"] * 8
    here = os.path.dirname(os.path.abspath(__file__))
    return [f"{here}/compile-loop {b} {2 * ncpu} {d} > /dev/null"]


def run_one(b, cfg, kind, d, ncpu, tone_path):
    r = Run(b, cfg, int(d) + 60)
    try:
        r.start(tone_path)
        g = r.grants()
        for cmd in background(b, kind, d, ncpu):
            r.send(cmd)
        prof = r.path("profile.log")
        # The observer, outside the scope; it stops after d seconds.
        subprocess.run(["timeout", "-s", "INT", str(d), "nice", "-n", "-10", "pw-profiler",
                        "-o", prof], env=r.env, cwd=r.tmp, capture_output=True)
        f = parse_profile(prof, r.play_node, d) if os.path.exists(prof) else {}
        f.update(g)
        if r.daemon:
            f["daemon_cpu_s"] = scenario.proc_cpu_s(r.daemon.pid)
        return f
    finally:
        r.close()


def runaway(b, cfg, ncpu, tone_path, window=5.0):
    """pw-play's data thread spins from now on, beside a hog a CPU: the CPU
    share it got over window seconds, of one CPU and of the machine, and
    whether RLIMIT_RTTIME killed it (module-rt sets it to rtkit's
    RTTimeUSecMax, 200 ms, for muqssd too; lifting it needs CAP_SYS_RESOURCE)."""
    r = Run(b, cfg, int(window) + 60)
    try:
        r.start(tone_path)
        play = [p for p in descendants(r.root.pid) if r_comm(p) == "pw-play"]
        for _ in range(ncpu):
            r.send(f"{b}/bench/load/hog {window + 1} > /dev/null")
        seen = {}

        def sample():
            for p in play:
                for t in threads_of(p):
                    c = scenario.proc_cpu_s(f"{p}/task/{t}")
                    if c is not None:
                        seen[t] = c
        sample()
        before = dict(seen)
        t0 = time.monotonic()
        open(r.path("spin"), "w").close()
        # Read at FIFO 10, as the ISO share run does: a spinning RT thread
        # would starve a normal-class sampler.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            while time.monotonic() - t0 < window:
                time.sleep(0.1)
                sample()
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        used = {t: seen[t] - before.get(t, 0) for t in seen}
        tid = max(used, key=used.get)
        pol = r.audio_threads().get(tid, ("", "gone"))[1]
        alive = all(os.path.exists(f"/proc/{p}") and r_comm(p) == "pw-play" for p in play)
        log = open(r.path("pw-play.log"), "rb").read().decode("utf-8", "replace")
        return {"runaway_cpu_s": round(used[tid], 3), "window_s": window, "runaway_tid": tid,
                "runaway_is_main_thread": tid in play, "runaway_policy_at_end": pol,
                "share_of_one_cpu_pct": round(100 * used[tid] / window, 1),
                "share_of_machine_pct": round(100 * used[tid] / (window * ncpu), 1),
                "client_killed": not alive, "client_log_tail": log[-300:], **r.grants()}
    finally:
        r.close()


def rttime_limit(pid):
    """RLIMIT_RTTIME of a process, soft and hard, as /proc shows them (µs)."""
    try:
        with open(f"/proc/{pid}/limits", "rb") as f:
            for line in f:
                if line.startswith(b"Max realtime timeout"):
                    return " ".join(x.decode() for x in line.split()[3:5])
    except OSError:
        pass
    return None


def r_comm(pid):
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().strip().decode("utf-8", "replace")
    except OSError:
        return ""


def row(b, reps, d, ncpu, log=print):
    """The whole row: reps repetitions, each every background x every
    configuration, then the runaway under rtkit-daemon and muqssd."""
    with tempfile.TemporaryDirectory(prefix="muqss-pw-tone-", dir="/dev/shm") as td:
        tone_path = os.path.join(td, "tone.wav")
        tone(tone_path, d + 70)
        os.chmod(td, 0o755)
        runs, runaways = [], []
        for rep in range(reps):
            for kind in ("8hogs", "build"):
                for cfg in CONFIGS:
                    try:
                        f = run_one(b, cfg, kind, d, ncpu, tone_path)
                    except RuntimeError as e:
                        f = {"error": str(e)}
                    runs.append({"rep": rep + 1, "background": kind, "config": cfg, **f})
                    log(f"rep {rep + 1} pipewire-{kind:5} {cfg:12} {json.dumps(short(f))}")
            for cfg in CONFIGS[1:]:
                try:
                    f = runaway(b, cfg, ncpu, tone_path)
                except RuntimeError as e:
                    f = {"error": str(e)}
                runaways.append({"rep": rep + 1, "config": cfg, **f})
                log(f"rep {rep + 1} pipewire-runaway {cfg:12} {json.dumps(short(f))}")
    return {"quantum": QUANTUM, "rate": RATE, "duration_s": d, "reps": reps,
            "configs": CONFIG_TEXT, "runs": runs, "runaway": runaways,
            "summary": summarize(runs, runaways)}


def short(f):
    return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in f.items()
            if k not in ("client_log_tail", "rt_threads", "iso_threads")}


def summarize(runs, runaways):
    """Median and worst over repetitions of each figure."""
    out = {}
    for kind in ("8hogs", "build"):
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
