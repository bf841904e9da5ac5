"""What the gamemode bridge's tests share: where the bridge is, its bus
names, and how it is stopped (and why it is stopped that way)."""

import json
import os
import signal
import subprocess

from dbus_util import SETPRIV, Bus
from sched_util import BUILD, threads_of, wait_for  # noqa: F401 (the tests take it from here)

BRIDGE = os.path.join(BUILD, "muqssctl", "gamemode", "muqss-gamemode")
GM = ["com.feralinteractive.GameMode", "/com/feralinteractive/GameMode",
      "com.feralinteractive.GameMode"]


class UserSession:
    """An unprivileged user's (65534) private session bus, in tmp/user
    (its own directory: bus socket, game files), and what runs on it."""

    def __init__(self, tmp):
        os.chmod(tmp, 0o755)
        self.dir = os.path.join(tmp, "user")
        os.mkdir(self.dir)
        os.chown(self.dir, 65534, 65534)
        self.bus = Bus(self.dir, "session", user=SETPRIV)
        self.env = ["env", f"DBUS_SESSION_BUS_ADDRESS={self.bus.address}"]
        self.as_user = " ".join(SETPRIV + self.env)

    def busctl(self, *args):
        return subprocess.run([*SETPRIV, *self.env, "busctl", "--user", *args],
                              capture_output=True, text=True, timeout=10)

    def client_count(self):
        return self.busctl("get-property", *GM, "ClientCount").stdout.strip()

    def start_bridge(self, sock, log, *extra):
        """The bridge as the user, bounded; returns once it owns its name."""
        bridge = subprocess.Popen(["timeout", "-s", "KILL", "60", *SETPRIV, *self.env, BRIDGE,
                                   "--socket", sock, *extra], stdout=log,
                                  stderr=subprocess.STDOUT, env=BRIDGE_ENV)
        assert wait_for(lambda: self.busctl("status", GM[0]).returncode == 0), \
            "bridge did not start"
        return bridge


def classes(d, pid):
    """{tid: class} of pid's threads, as the daemon d reports them."""
    tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
    return {t["tid"]: t["class"] for t in tasks if t["tgid"] == pid}


def all_in(d, pid, cls):
    c = classes(d, pid)
    return c and set(c.values()) == {cls} and set(c) >= set(threads_of(pid))


# In ASan builds, LeakSanitizer says in the bridge's log what its exit-time
# check did: the bridge once hung there, spinning, with its helper attached.
BRIDGE_ENV = dict(os.environ, LSAN_OPTIONS="verbosity=1:log_threads=1")


def bridge_pid(timeout_pid):
    """The bridge itself: timeout(1)'s child (setpriv and env exec it)."""
    try:
        with open(f"/proc/{timeout_pid}/task/{timeout_pid}/children") as f:
            kids = f.read().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        return None


def describe(pid):
    """Where each thread of pid sits: kernel stack, wchan, state."""
    where = []
    try:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError as e:
        return [f"{pid}: {e}"]
    for tid in tids:
        for name in ("stack", "wchan", "status"):
            try:
                with open(f"/proc/{pid}/task/{tid}/{name}", "rb") as f:
                    text = f.read().decode(errors="replace")
            except OSError as e:
                text = str(e)
            if name == "status":
                text = " ".join(line for line in text.splitlines()
                                if line.split(":")[0] in ("Name", "State", "TracerPid",
                                                           "SigPnd", "ShdPnd", "SigBlk"))
            where.append(f"{tid} {name}: {text}")
    return where


def tracer_of(pid):
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"TracerPid:"):
                    return int(line.split()[1]) or None
    except (OSError, ValueError):
        pass
    return None


def stop_bridge(bridge, secs=30):
    """SIGTERM, as systemd stops it. Should it not be gone in secs, says
    where it sits (the stack, its state) before timeout's KILL ends it.

    The signal goes to the bridge itself, not through timeout(1): timeout
    follows SIGTERM with a SIGCONT, and a SIGCONT that lands while an ASan
    build's exit-time leak check attaches its helper discards the helper's
    SIGSTOP, so the check waits for a stop that never comes (reproduced:
    State R, TracerPid set, as in the CI failure)."""
    pid = bridge_pid(bridge.pid)
    if pid:
        os.kill(pid, signal.SIGTERM)
    else:
        bridge.terminate()
    try:
        bridge.wait(timeout=secs)
        return None
    except subprocess.TimeoutExpired:
        where = describe(pid)
        tracer = tracer_of(pid)
        if tracer:  # under ASan, LeakSanitizer's stop-the-world helper
            where += [f"tracer {tracer}:"] + describe(tracer)
        bridge.kill()
        bridge.wait(timeout=10)
        return f"bridge {pid} still there {secs} s after SIGTERM; " + "; ".join(where)
