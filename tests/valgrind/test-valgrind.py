#!/usr/bin/env python3
"""The real daemon under valgrind memcheck for a minute or more, scheduling
a scope of hogs and a frame probe while clients ask it for status, queues
and tasks and move a task between ISO and normal; then SIGTERM. Passes
when memcheck reports no error and no definite or indirect leak, and the
scope is left unchanged.

MUQSS_VALGRIND_SECONDS sets how long the clients run (default 60)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from sched_util import HOG, MUQSSCTL, MUQSSD, NCPU, PROBE, Scope, assert_clean, snapshot  # noqa: E402

SECONDS = int(os.environ.get("MUQSS_VALGRIND_SECONDS", "60"))
# Start-up under memcheck takes seconds; the rest is the load and the exit.
LIMIT = SECONDS + 90


def start_daemon(scope, log):
    sock = os.path.join(scope.tmp, "control")
    conf = os.path.join(scope.tmp, "empty.conf")
    open(conf, "w").close()
    proc = subprocess.Popen(
        ["timeout", "-s", "KILL", str(LIMIT), "valgrind", "--tool=memcheck", "--leak-check=full",
         "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
         "--error-exitcode=99", "--track-origins=yes", f"--log-file={log}",
         MUQSSD, "--config", conf, "--socket", sock, "--state-dir", os.path.join(scope.tmp, "state"),
         "--scope-pid", str(scope.root.pid), "--log-level", "info"],
        stdout=open(os.path.join(scope.tmp, "muqssd.log"), "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("muqssd did not start under valgrind")
        time.sleep(0.1)
    return proc, sock


def ctl(sock, *args):
    # Generous: a request waits for a memcheck-slowed loop.
    p = subprocess.run([MUQSSCTL, "--socket", sock, *args], capture_output=True, text=True,
                       timeout=30)
    if p.returncode:
        raise AssertionError(f"muqssctl {' '.join(args)}: {p.returncode} {p.stderr}")
    return p.stdout


def entries(doc):
    """Every object with a "tid" in a queues or tasks reply."""
    if isinstance(doc, dict):
        if "tid" in doc:
            yield doc
        for v in doc.values():
            yield from entries(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from entries(v)


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    if not shutil.which("valgrind"):
        raise RuntimeError("valgrind is not installed (.ci/setup installs it)")
    cmds = [f"taskset -c {c} {HOG} {LIMIT}" for c in range(NCPU)]
    cmds += [f"chrt --idle 0 {HOG} {LIMIT}", f"{PROBE} -d {LIMIT}"]
    scope = Scope(cmds, limit=LIMIT)
    daemon = None
    log = os.path.join(scope.tmp, "memcheck.log")
    try:
        affinity = snapshot(scope.pids())
        target = next(p for p in scope.pids() if open(f"/proc/{p}/comm", "rb").read().strip() == b"frame-probe")
        daemon, sock = start_daemon(scope, log)
        # What the daemon did, so that a pass means it was busy.
        seen = {"requests": 0, "max_tasks": 0, "max_queued": 0, "boosted": 0, "target_iso": 0}
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            ctl(sock, "status")
            ctl(sock, "iso", str(target))
            queued = list(entries(json.loads(ctl(sock, "queues", "--json"))))
            seen["max_queued"] = max(seen["max_queued"], len(queued))
            seen["boosted"] += sum(1 for e in queued if e.get("boosted"))
            seen["target_iso"] += any(e.get("tid") == target and e.get("class") == "iso" for e in queued)
            tasks = list(entries(json.loads(ctl(sock, "tasks", "--json"))))
            seen["max_tasks"] = max(seen["max_tasks"], len(tasks))
            ctl(sock, "get")
            ctl(sock, "normal", str(target))
            seen["requests"] += 6
            time.sleep(0.2)
        print(f"over {SECONDS} s: {seen}")
        assert seen["max_tasks"] > 0 and seen["max_queued"] > 0, "the daemon did no work"
        daemon.send_signal(signal.SIGTERM)
        rc = daemon.wait(timeout=60)
        daemon = None
        report = open(log).read()
        errors = re.search(r"ERROR SUMMARY: (\d+) errors", report)
        leaks = {k: re.search(rf"{k} lost: ([\d,]+) bytes", report) for k in ("definitely", "indirectly")}
        print(f"muqssd exit {rc}; " + (errors.group(0) if errors else "no summary") + "; " +
              ", ".join(f"{k} lost {m.group(1) if m else 0} bytes" for k, m in leaks.items()))
        if rc != 0 or not errors or errors.group(1) != "0":
            print(report[-6000:])
            raise AssertionError(f"memcheck is not clean (exit {rc})")
        assert_clean(scope.pids(), "after SIGTERM", affinity)
    finally:
        if daemon and daemon.poll() is None:
            # timeout(1) is the direct child; valgrind runs as its child.
            for p in open(f"/proc/{daemon.pid}/task/{daemon.pid}/children", "rb").read().split():
                os.kill(int(p), signal.SIGKILL)
            daemon.wait()
        scope.close()
        shutil.rmtree(scope.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
