#!/usr/bin/env python3
"""muqssd in a PID namespace of its own (unshare --pid --fork --mount-proc),
as in a container: it must name tasks by that namespace's pids, the ones
its /proc shows. This file runs itself inside the namespace (--inside),
with a scope root there, and checks that

  - the sensor asked for runs, or one notice says why not: bpf loads and
    reports the namespace's pids; the proc connector delivers nothing
    outside the initial namespace, so muqssd polls /proc; auto (the
    connector) polls too, and never tracks silently nothing;
  - the table equals /proc inside the namespace: the tasks started before
    the daemon, and those forked and exec'd after it;
  - a rule (comm=ns-nice, nice 7) applies to a task exec'd after it started;
  - muqssctl iso on a task started after it works.
The namespace's end kills whatever is left in it."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from trackharness import BUILD, HELPER, SENSOR, Scope, log

MUQSSCTL = os.path.join(BUILD, "muqssctl", "muqssctl")


def outside():
    if os.geteuid() != 0:
        log("needs root")
        return 77
    if not shutil.which("unshare"):
        log("no unshare(1)")
        return 77
    return subprocess.run(["timeout", "-s", "KILL", "90", "unshare", "--pid", "--fork",
                           "--mount-proc", sys.executable, os.path.abspath(__file__),
                           "--inside"]).returncode


def nice_of(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[16])


def check_sensor(s, got):
    """The sensor that runs is the one asked for, or a notice says why."""
    text = s.log_text()
    if SENSOR == "bpf" and got != "bpf":
        if "built without it" in text:
            log("SKIP: muqssd was built without the bpf sensor")
            sys.exit(77)
        return f"asked for bpf in a PID namespace, got {got}"
    if SENSOR in ("connector", "") and got == "poll" and \
            "proc connector delivers no events" not in text:
        return "muqssd polls without saying that its connector is silent"
    if got not in ("bpf", "connector", "poll"):
        return f"no sensor: {got}"
    return None


def inside():
    # The rules dir must exist before the daemon starts.
    rules = tempfile.mkdtemp(prefix="muqss-rules-", dir="/dev/shm")
    s = None
    ok = False
    try:
        target = os.path.join(rules, "ns-nice")
        shutil.copy("/bin/sleep", target)
        with open(os.path.join(rules, "10-ns.rules"), "w") as f:
            f.write("comm=ns-nice class=normal nice=7\n")
        # No reconciliation in the test's time: the sensor alone must
        # name each new task right.
        s = Scope(extra_args=["--sensor", SENSOR] if SENSOR else [],
                  conf_text=f"[daemon]\nrules_dir = {rules}\n"
                  "[tracking]\nreconcile_interval_ms = 60000\n")
        s.spawn("/usr/bin/timeout", "-s", "KILL", "60", HELPER, "threads", "3", "30000")
        d = s.dump()
        got = d["sensor"]
        log(f"in a PID namespace (our pid {os.getpid()}): asked for {SENSOR or 'auto'}, "
            f"got {got}")
        error = check_sensor(s, got)
        # After it: forks that exec at once, a chain of execs, the rule's.
        for argv in (["/bin/sh", "-c", f"exec /usr/bin/env /bin/sh -c 'exec {target} 30'"],
                     [target, "30"], ["/bin/sh", "-c", "exec /bin/sleep 30"],
                     [HELPER, "threads", "2", "30000"]):
            s.spawn("/usr/bin/timeout", "-s", "KILL", "60", *argv)
        late = s.spawn("/bin/sleep", "30")
        if not error:
            same, d, detail = s.compare()
            log("table against /proc in the namespace:", detail)
            error = None if same else "the table is not /proc of the namespace: " + detail
        ruled = [t["tid"] for t in d["tasks"] if t["comm"] == "ns-nice"]
        deadline = time.time() + 5
        while time.time() < deadline and any(nice_of(t) != 7 for t in ruled):
            time.sleep(0.1)
        nice = {t: nice_of(t) for t in ruled}
        log("ns-nice (pid: nice):", nice)
        if not error and (len(ruled) != 2 or any(v != 7 for v in nice.values())):
            error = "the rule did not apply to each ns-nice"
        p = subprocess.run([MUQSSCTL, "--socket", os.path.join(s.tmp, "sock"), "iso", str(late)],
                           capture_output=True, text=True, timeout=10)
        log("iso on the late sleep:", p.returncode, p.stdout.strip(), p.stderr.strip())
        if not error and p.returncode != 0:
            error = "muqssctl iso on a task started after the daemon failed"
        ok = not error
        if error:
            log(error)
            log(s.log_text()[-3000:])
        else:
            log("1 passed, 0 failed")
    finally:
        if s:
            s.close()
        shutil.rmtree(rules, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(inside() if "--inside" in sys.argv else outside())
