#!/usr/bin/env python3
"""The bpf sensor's programs and maps live by the daemon's fds only: after
a clean exit (SIGTERM) and after SIGKILL, none of those it held is left
(bpftool prog/map show, by the ids the daemon held while it ran, so another
muqssd on the machine does not count). And the daemon's peak RSS on an
idle scope stays under issue 31's 8 MB: the programs are loaded by a
child, whose parse of the kernel's BTF is not the daemon's (not asserted
on a sanitized build). Skips (77) where bpf does not load."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from sched_util import report, sanitized
from trackharness import MUQSSD, Scope, log
import wire  # noqa: E402 (on the path through trackharness)

BPFTOOL = shutil.which("bpftool") or next(
    (p for p in ("/usr/sbin/bpftool", "/sbin/bpftool") if os.path.exists(p)), None)
if os.geteuid() != 0 or not BPFTOOL:
    print("needs root and bpftool")
    sys.exit(77)

def objects(kind):
    """The ids of every bpf prog or map on the machine."""
    out = subprocess.run(["timeout", "10", BPFTOOL, "-j", kind, "show"],
                         capture_output=True, text=True, check=True).stdout
    return {o["id"] for o in json.loads(out or "[]")}


def held_by(pid):
    """The prog and map ids behind pid's fds (their fdinfo names them;
    a link's fd names its program)."""
    progs, maps = set(), set()
    fdinfo = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fdinfo):
        try:
            with open(os.path.join(fdinfo, fd), "rb") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            key, _, value = line.partition(b":")
            if key == b"prog_id":
                progs.add(int(value))
            elif key == b"map_id":
                maps.add(int(value))
    return progs, maps


PEAK_RSS_KIB = 8 * 1024


failures = []
for how in (signal.SIGTERM, signal.SIGKILL):
    s = Scope(["--sensor", "bpf"])
    try:
        s.skip_unless("bpf")
        progs, maps = held_by(s.daemon_pid)
        log(how.name, "daemon", s.daemon_pid, "holds progs", sorted(progs), "maps", sorted(maps))
        if len(progs) < 4 or not maps:
            failures.append(f"{how.name}: the daemon holds {len(progs)} programs, "
                            f"{len(maps)} maps")
        peak = wire.rss_kib(s.daemon_pid, "VmHWM")
        log(how.name, "daemon peak RSS", peak, "KiB")
        if peak > PEAK_RSS_KIB and not sanitized(MUQSSD):
            failures.append(f"{how.name}: the daemon's peak RSS is {peak} KiB, over "
                            f"{PEAK_RSS_KIB} KiB")
        os.kill(s.daemon_pid, how)
        s.daemon.wait(timeout=10)
        # Freeing is deferred (RCU): give it a moment.
        for _ in range(50):
            left_p = progs & objects("prog")
            left_m = maps & objects("map")
            if not left_p and not left_m:
                break
            time.sleep(0.1)
        log(how.name, "left: progs", sorted(left_p), "maps", sorted(left_m))
        if left_p or left_m:
            failures.append(f"{how.name}: left progs {sorted(left_p)} maps {sorted(left_m)}")
    finally:
        # Kills the scope's tasks too, whatever a killed daemon left on them.
        s.close()

sys.exit(report(failures))
