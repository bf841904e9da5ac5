#!/usr/bin/env python3
"""Files that steer muqssd are trusted with every directory and symlink on
the way (issue 34, item 5). Each of: a world-writable rules dir, a rules
file of uid 65534, a symlink of uid 65534 to root's 0600 file, a state dir
in a directory of uid 65534, a world-writable muqssd.conf.d, fails
--check-config and stops the daemon's start, each naming the path and
why. A reload that finds the rules dir world-writable is refused and
changes nothing: the old tunables and the old rules stay; once the mode
is put right the same reload goes through."""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, MUQSSD, Daemon, Scope, hog_pids, report  # noqa: E402

NOBODY = 65534


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def setup_case(root, name):
    """A dir in root for one case (named after root too: the daemon's
    state dir in /dev/shm is named after it), its rules.d with one good
    rule, and a config naming that rules.d."""
    case = os.path.join(root, f"{os.path.basename(root)}-{name}")
    os.mkdir(case, 0o755)
    rules = os.path.join(case, "rules.d")
    os.mkdir(rules, 0o755)
    write(os.path.join(rules, "10.rules"), "comm=hog class=idleprio\n")
    conf = os.path.join(case, "muqssd.conf")
    write(conf, f"[daemon]\nrules_dir = {rules}\n")
    return case, rules, conf


def world_writable_rules_dir(case, rules, conf):
    os.chmod(rules, 0o777)
    return [], f"{rules}: directory writable by group or others (mode 0777), refusing it"


def nobody_rules_file(case, rules, conf):
    os.chown(os.path.join(rules, "10.rules"), NOBODY, NOBODY)
    return [], f"{rules}/10.rules: owned by uid {NOBODY}, not root, refusing it"


def nobody_symlink(case, rules, conf):
    secret = os.path.join(case, "secret")
    write(secret, "comm=hog class=iso\n", 0o600)
    link = os.path.join(rules, "x.rules")
    os.symlink(secret, link)
    os.lchown(link, NOBODY, NOBODY)
    return [], f"{link}: symlink owned by uid {NOBODY}, not root, refusing it"


def nobody_state_parent(case, rules, conf):
    parent = os.path.join(case, "theirs")
    os.mkdir(parent, 0o755)
    os.chown(parent, NOBODY, NOBODY)
    state = os.path.join(parent, "state")
    return (["--state-dir", state],
            f"{state}: {parent}: directory owned by uid {NOBODY}, not root, refusing it")


def world_writable_dropins(case, rules, conf):
    dropins = conf + ".d"
    os.mkdir(dropins, 0o755)
    write(os.path.join(dropins, "10.conf"), "[scheduler]\nrr_interval = 4\n")
    os.chmod(dropins, 0o777)
    return [], f"{dropins}: directory writable by group or others (mode 0777), refusing it"


CASES = [world_writable_rules_dir, nobody_rules_file, nobody_symlink, nobody_state_parent,
         world_writable_dropins]


def check_refused(scope, case, conf, extra, want):
    """Failures: --check-config passes, or the daemon starts, or either
    does not say want."""
    failed = []
    p = subprocess.run(["timeout", "10", MUQSSD, "--check-config", conf, *extra],
                       capture_output=True, text=True, errors="replace")
    out = p.stdout + p.stderr
    if p.returncode == 0 or want not in out:
        failed.append(f"--check-config exited {p.returncode}: {out.strip()}")
    try:
        d = Daemon(scope.root.pid, case, extra=extra, config=conf)
    except RuntimeError:
        d = None
    if d:
        d.kill(signal.SIGTERM)
        failed.append("the daemon started")
    with open(os.path.join(case, "muqssd.log"), errors="replace") as f:
        log = f.read()
    if d is None and want not in log:
        failed.append(f"the daemon's log does not say why: {log[-600:]}")
    return failed


def wait_class(d, scope, arg, timeout=8):
    """The class muqssd gives the hog started with argument arg."""
    end = time.monotonic() + timeout
    cls = None
    while time.monotonic() < end:
        pids = hog_pids(scope, arg)
        tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
        cls = next((t["class"] for t in tasks if pids and t["tid"] == pids[0]), None)
        if cls and cls != "normal":
            break
        time.sleep(0.05)
    return cls


def check_reload(scope, root):
    """Failures of a reload that meets a world-writable rules dir."""
    failed = []
    case, rules, conf = setup_case(root, "reload")
    write(conf, f"[scheduler]\nrr_interval = 6\n[daemon]\nrules_dir = {rules}\n")
    d = Daemon(scope.root.pid, case, config=conf)
    try:
        write(conf, f"[scheduler]\nrr_interval = 4\n[daemon]\nrules_dir = {rules}\n")
        # The newer file would win: if it were read, hog 31 would be batch.
        write(os.path.join(rules, "20.rules"), "comm=hog class=batch\n")
        os.chmod(rules, 0o777)
        p = d.ctl("reload", check=False)
        want = f"{rules}: directory writable by group or others (mode 0777), refusing it"
        d.log.flush()
        with open(d.log.name, errors="replace") as f:
            log = f.read()
        if p.returncode == 0:
            failed.append("the reload was not refused")
        if want not in log:
            failed.append(f"the log does not say why: {log[-600:]}")
        status = json.loads(d.ctl("--json", "status").stdout)
        if status["tunables"]["rr_interval"] != 6 or status["counters"]["reloads"] != 0:
            failed.append(f"the refused reload changed things: {status['tunables']}, "
                          f"{status['counters']['reloads']} reloads")
        open(os.path.join(root, "go-31"), "w").close()
        cls = wait_class(d, scope, "31")
        if cls != "idleprio":
            failed.append(f"after the refused reload a new hog is {cls}, not idleprio")
        # Put right, the same reload goes through, and the newer rule wins.
        os.chmod(rules, 0o755)
        p = d.ctl("reload", check=False)
        status = json.loads(d.ctl("--json", "status").stdout)
        if p.returncode != 0 or status["tunables"]["rr_interval"] != 4:
            failed.append(f"the reload once put right failed: {p.stderr.strip()}")
        open(os.path.join(root, "go-32"), "w").close()
        cls = wait_class(d, scope, "32")
        if cls != "batch":
            failed.append(f"after the good reload a new hog is {cls}, not batch")
    finally:
        d.kill(signal.SIGTERM)
    return failed


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    scope = Scope(["sleep 30"], limit=40)
    root = scope.tmp
    failed = []
    try:
        for f in CASES:
            case, rules, conf = setup_case(root, f.__name__)
            extra, want = f(case, rules, conf)
            bad = check_refused(scope, case, conf, extra, want)
            print(("FAIL: " if bad else "ok: ") + f.__name__.replace("_", " "))
            failed += [f"{f.__name__}: {b}" for b in bad]
        # Hogs that start when told: after the refused reload, after the good one.
        hogs = Scope([f"bash -c 'while [ ! -e {root}/go-{n} ]; do sleep 0.05; done; "
                      f"exec {HOG} {n} >/dev/null'" for n in (31, 32)], limit=40)
        try:
            bad = check_reload(hogs, root)
        finally:
            hogs.close()
        print(("FAIL: " if bad else "ok: ") + "a refused reload changes nothing")
        failed += bad
    finally:
        scope.close()
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
