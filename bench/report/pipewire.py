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
import subprocess
import tempfile
import time

import scenario
from dbus_util import Bus
from pipewire_figures import (CONFIG_TEXT, CONFIGS, LOADS, QUANTUM, RATE, markdown,  # noqa: F401
                              parse_profile, short, summarize)
import sched_util
from sched_util import Scope, descendants, threads_of

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
    v = sched_util.wait_for(cond, timeout, 0.1)
    if not v:
        raise RuntimeError(f"pipewire row: {what} did not happen in {timeout:g} s")
    return v


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


def background(b, kind, d, ncpu):
    if kind == "idle":
        return []
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
        # Read at FIFO 18, as the ISO share run does: a spinning RT thread
        # would starve a normal-class sampler.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(18))
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


def row(b, reps, d, ncpu, log=print, loads=("8hogs", "build")):
    """The whole row: reps repetitions, each every background x every
    configuration, then the runaway under rtkit-daemon and muqssd."""
    with tempfile.TemporaryDirectory(prefix="muqss-pw-tone-", dir="/dev/shm") as td:
        tone_path = os.path.join(td, "tone.wav")
        tone(tone_path, d + 70)
        os.chmod(td, 0o755)
        runs, runaways = [], []
        for rep in range(reps):
            for kind in loads:
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
