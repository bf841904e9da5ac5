#!/usr/bin/env python3
"""A real rtkit client: PipeWire as an unprivileged user with RLIMIT_RTPRIO 0,
so that its module-rt must ask over D-Bus, on a private system bus where
muqssd serves rtkit. Its data loop thread becomes ISO and its main thread
gets the nice it asked for (-11), with nothing configured per program."""

import atexit
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbus_util import SETPRIV, Bus  # noqa: E402
from sched_util import Daemon, Scope  # noqa: E402

PW_CONF = """
context.properties = { support.dbus = true }
context.modules = [
  { name = libpipewire-module-rt
    args = { nice.level = -11 rt.prio = 88 rtportal.enabled = false rtkit.enabled = true } }
  { name = libpipewire-module-protocol-native }
]
"""


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    for prog in ("dbus-daemon", "setpriv", "prlimit", "pipewire"):
        if not shutil.which(prog):
            print(f"{prog} is not installed (packages dbus-daemon, util-linux, pipewire-bin)")
            return 77
    tmp = tempfile.mkdtemp(prefix="muqss-pipewire-")
    atexit.register(shutil.rmtree, tmp, True)
    os.chmod(tmp, 0o755)
    runtime = os.path.join(tmp, "xdg")  # the user's XDG_RUNTIME_DIR
    os.mkdir(runtime, 0o700)
    os.chown(runtime, 65534, 65534)
    bus = Bus(tmp, "system")
    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write("[rtkit]\nenable = yes\n")
    pw_conf = os.path.join(tmp, "pipewire.conf")
    with open(pw_conf, "w") as f:
        f.write(PW_CONF)
    pw_log = os.path.join(tmp, "pipewire.log")
    pw = (f"{' '.join(SETPRIV)} prlimit --rtprio=0 env -u DBUS_SESSION_BUS_ADDRESS "
          f"XDG_RUNTIME_DIR={runtime} PIPEWIRE_DEBUG=3 pipewire -c {pw_conf}")
    # PipeWire starts once muqssd serves the name.
    scope = Scope([f"bash -c 'while [ ! -e {tmp}/go ]; do sleep 0.05; done; "
                   f"exec {pw} > {pw_log} 2>&1'"], limit=40)
    failed = []

    def expect(what, cond, detail=""):
        print(("ok: " if cond else "FAIL: ") + what)
        if not cond:
            failed.append(f"{what}: {detail}")

    d = None
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)
        log = os.path.join(tmp, "muqssd.log")
        end = time.monotonic() + 10
        while time.monotonic() < end and "rtkit: serving" not in open(log).read():
            time.sleep(0.05)
        open(os.path.join(tmp, "go"), "w").close()

        def pw_tasks():
            tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
            return [t for t in tasks if t["comm"] == "pipewire" and t["uid"] == 65534]

        end = time.monotonic() + 15
        while time.monotonic() < end and not any(t["class"] == "iso" for t in pw_tasks()):
            time.sleep(0.1)
        tasks = pw_tasks()
        out = open(pw_log).read()
        expect("pipewire asked rtkit", "using RTKit" in out, out[-2000:])
        iso = [t for t in tasks if t["class"] == "iso"]
        expect("its data loop thread is iso", len(iso) == 1 and iso[0]["tid"] != iso[0]["tgid"],
               tasks)
        main_thread = [t for t in tasks if t["tid"] == t["tgid"]]
        expect("its main thread got nice -11 and stays normal",
               main_thread and main_thread[0]["class"] == "normal" and
               os.getpriority(os.PRIO_PROCESS, main_thread[0]["tid"]) == -11, main_thread)
        expect("no thread runs a real-time policy of its own",
               all(t["class"] != "rt" for t in tasks), tasks)
    finally:
        # Stopped before the scope goes: it restores what it changed.
        if d:
            d.kill(15)
        scope.close()
    print(f"{0 if failed else 1} passed, {len(failed)} failed")
    for f in failed:
        print("  " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
