"""A private D-Bus bus for a test: its own dbus-daemon, config and socket
in the test's directory, bounded by timeout and stopped at exit."""

import atexit
import os
import shutil
import subprocess
import time

SETPRIV = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

SYSTEM_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class Bus:
    """kind 'system': a bus of the test's own config that anyone may use.
    kind 'session': dbus-daemon --session, run as user (argv prefix)."""

    def __init__(self, tmp, kind, user=(), limit=120):
        self.sock = os.path.join(tmp, f"{kind}_bus_socket")
        if kind == "system":
            conf = os.path.join(tmp, "system-bus.conf")
            with open(conf, "w") as f:
                f.write(SYSTEM_CONF.format(sock=self.sock))
            args = ["--config-file", conf]
        else:
            args = ["--session", f"--address=unix:path={self.sock}"]
        self.log = open(os.path.join(tmp, f"{kind}-bus.log"), "w")
        self.proc = subprocess.Popen(["timeout", "-s", "KILL", str(limit), *user, "dbus-daemon",
                                      "--nofork", "--nopidfile", *args],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        atexit.register(self.close)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dbus-daemon ({kind}) did not start")
            time.sleep(0.02)
        self.address = f"unix:path={self.sock}"

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def missing_for_bus_tests(*progs):
    """77 (meson's skip) with the reason printed, or None: a test of a
    private system bus runs as root and needs dbus-daemon and progs."""
    if os.geteuid() != 0:
        print("needs root")
        return 77
    for prog in ("dbus-daemon", *progs):
        if not shutil.which(prog):
            print(f"{prog} is not installed")
            return 77
    return None


def rtkit_bus(tmp):
    """A private system bus in tmp that unprivileged callers reach, made
    the bus of this process and its children, and a muqssd.conf serving
    rtkit on it: (bus, path of the config)."""
    os.chmod(tmp, 0o755)
    bus = Bus(tmp, "system")
    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write("[rtkit]\nenable = yes\n")
    return bus, conf
