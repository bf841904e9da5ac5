#!/usr/bin/env python3
"""The sd_notify protocol as a service manager sees it: READY=1 after start,
WATCHDOG=1 at about half the watchdog period, RELOADING=1 then READY=1 around
SIGHUP (also when the new config is refused), STOPPING=1 on SIGTERM.

The daemon is scoped to a sleep of our own, with its socket and state in a
temporary directory, under timeout."""
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

WATCHDOG_USEC = 200000
# Python does not export it; 35 on every architecture but parisc/sparc.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


class Notify:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        # Kernel timestamps: when muqssd sent, not when we got around to
        # reading, so a busy test runner does not blur the gaps.
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind(path)
        self.sender = None

    def recv(self, deadline):
        """One message as (send time, sender pid, set of lines), or None.
        The time is CLOCK_REALTIME, as SO_TIMESTAMPNS gives it."""
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        self.sock.settimeout(left)
        try:
            data, anc, _, _ = self.sock.recvmsg(
                4096, socket.CMSG_SPACE(12) + socket.CMSG_SPACE(16))
        except socket.timeout:
            return None
        pid = None
        stamp = time.time()
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("iII", payload[:12])[0]
            elif level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", payload[:16])
                stamp = sec + nsec / 1e9
        return stamp, pid, set(data.decode().split("\n"))

    def expect(self, line, timeout, seen=None):
        """Waits for a message holding line; returns its time. Every
        message on the way is appended to seen."""
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(deadline)
            if m is None:
                sys.exit(f"FAIL: no {line} within {timeout} s")
            if seen is not None:
                seen.append(m)
            if self.sender is None:
                self.sender = m[1]
            elif m[1] != self.sender:
                sys.exit(f"FAIL: message from pid {m[1]}, not the daemon {self.sender}")
            if line in m[2]:
                return m[0]

    def expect_prefix(self, prefix, timeout):
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(deadline)
            if m is None:
                sys.exit(f"FAIL: no {prefix} line within {timeout} s")
            for line in m[2]:
                if line.startswith(prefix):
                    print(f"status: {line}")
                    return


def main():
    build = os.environ["MUQSS_BUILD_ROOT"]
    tmp = tempfile.mkdtemp(prefix="muqss-notify-")
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write("[scheduler]\nrr_interval = 6\n")
    notify = Notify(os.path.join(tmp, "notify"))
    scope = subprocess.Popen(["sleep", "60"])
    env = dict(os.environ, NOTIFY_SOCKET=os.path.join(tmp, "notify"),
               WATCHDOG_USEC=str(WATCHDOG_USEC))
    # timeout forks the daemon, so WATCHDOG_PID could not name it: leave it
    # unset, which sd_watchdog_enabled() accepts.
    env.pop("WATCHDOG_PID", None)
    daemon = subprocess.Popen(
        ["timeout", "30", os.path.join(build, "muqssd", "muqssd"),
         "--config", conf, "--scope-pid", str(scope.pid),
         "--socket", os.path.join(tmp, "control"),
         "--state-dir", os.path.join(tmp, "state")], env=env)
    try:
        notify.expect("READY=1", 10)
        notify.expect_prefix("STATUS=", 2)

        # WATCHDOG=1 at about half the period: every gap under the period.
        seen = []
        end = time.monotonic() + 1.5
        times = []
        while time.monotonic() < end:
            m = notify.recv(end)
            if m and "WATCHDOG=1" in m[2]:
                times.append(m[0])
        gaps = sorted(b - a for a, b in zip(times, times[1:]))
        period = WATCHDOG_USEC / 1e6
        if len(gaps) < 5:
            sys.exit(f"FAIL: {len(times)} WATCHDOG=1 in 1.5 s")
        median = gaps[len(gaps) // 2]
        print(f"{len(times)} WATCHDOG=1 in 1.5 s, gaps {gaps[0]:.3f}..{gaps[-1]:.3f} s, "
              f"median {median:.3f} s (period {period} s)")
        # sd-event pings between a quarter and three quarters of the
        # period; a gap of a whole period would get us killed.
        if gaps[-1] >= period:
            sys.exit("FAIL: a watchdog gap reached the period")
        if not period / 4 - 0.01 <= median <= period * 3 / 4:
            sys.exit("FAIL: watchdog pings not at about half the period")

        os.kill(notify.sender, signal.SIGHUP)
        t0 = notify.expect("RELOADING=1", 5, seen)
        t1 = notify.expect("READY=1", 5, seen)
        print(f"reload: READY=1 {1000 * (t1 - t0):.1f} ms after RELOADING=1")
        if t1 < t0:
            sys.exit("FAIL: READY=1 before RELOADING=1")

        # A bad new config is refused; the protocol is the same and the
        # daemon stays up.
        with open(conf, "w") as f:
            f.write("[scheduler]\nrr_interval = 0\n")
        os.kill(notify.sender, signal.SIGHUP)
        notify.expect("RELOADING=1", 5, seen)
        notify.expect("READY=1", 5, seen)
        if daemon.poll() is not None:
            sys.exit("FAIL: the daemon exited on a bad reload")

        os.kill(notify.sender, signal.SIGTERM)
        notify.expect("STOPPING=1", 5, seen)
        rc = daemon.wait(10)
        if rc != 0:
            sys.exit(f"FAIL: the daemon exited with {rc}")
        print("ok")
    finally:
        if daemon.poll() is None:
            # timeout passes SIGTERM on to muqssd, which restores and exits.
            daemon.terminate()
            try:
                daemon.wait(5)
            except subprocess.TimeoutExpired:
                if notify.sender:
                    os.kill(notify.sender, signal.SIGKILL)
                daemon.kill()
                daemon.wait()
        scope.kill()
        scope.wait()
        notify.sock.close()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
