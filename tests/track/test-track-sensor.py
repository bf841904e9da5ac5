#!/usr/bin/env python3
"""Which sensor tracks tasks: --sensor bpf gives the bpf sensor (as root on
a kernel with BTF), and so does the default (auto), with no notice of a
fallback; `[tracking] sensor = connector` and --poll choose the others, and
the command line wins over the file. On the bpf sensor a fork, a thread and
an exec in scope are in the table, and a task outside the scope is not.
Skips (77) only where bpf is not built in or cannot load, saying why."""
import os
import subprocess
import sys

from sched_util import report
from trackharness import HELPER, Scope, log

if os.geteuid() != 0:
    print("needs root")
    sys.exit(77)

failures = []


def sensor_of(s):
    return s.status()["tracking"]["sensor"]


s = Scope(["--sensor", "bpf"])
try:
    s.skip_unless("bpf")
    outsider = subprocess.Popen(["timeout", "-s", "KILL", "20", "sleep", "10"])
    forked = s.spawn("/usr/bin/timeout", "-s", "KILL", "20", HELPER, "threads", "3", "10000")
    execd = s.spawn("/usr/bin/timeout", "-s", "KILL", "20", "/bin/bash", "-c",
                    "sleep 0.3; exec -a renamed /bin/sleep 10")
    ok, d, detail = s.compare()
    log("bpf:", detail, "events", d["events"], "lost", d["sensor_lost"])
    if not ok:
        failures.append(f"bpf sensor table differs from /proc: {detail}")
    if d["events"] == 0:
        failures.append("bpf sensor: no event counted")
    tids = {t["tid"] for t in d["tasks"]}
    if outsider.pid in tids:
        failures.append("bpf sensor: a task outside the scope is in the table")
    outsider.kill()
    outsider.wait()
finally:
    s.close()

s = Scope([])
try:
    got = sensor_of(s)
    if got != "bpf":
        failures.append(f"auto chose {got}, not bpf")
    if "sensor unavailable" in s.log_text():
        failures.append("auto logged a fallback notice on a machine where bpf loads")
finally:
    s.close()

for args, conf, want in (
        ([], "[tracking]\nsensor = connector\n", "connector"),
        (["--sensor", "bpf"], "[tracking]\nsensor = connector\n", "bpf"),
        (["--poll"], "[tracking]\nsensor = bpf\n", "poll"),
        ([], "[tracking]\nforce_poll = yes\n", "poll")):
    s = Scope(args, conf_text=conf)
    try:
        got = sensor_of(s)
        log(args, conf.strip().replace("\n", " "), "->", got)
        if got != want:
            failures.append(f"{args} with {conf!r}: sensor {got}, not {want}")
        # Only the bpf sensor measures wake latency: null, not a made-up zero.
        if want == "connector" and s.status().get("wake_latency", "absent") is not None:
            failures.append(f"connector: wake_latency is {s.status().get('wake_latency', 'absent')}")
    finally:
        s.close()

sys.exit(report(failures))
