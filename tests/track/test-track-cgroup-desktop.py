#!/usr/bin/env python3
"""[scope] cgroup = on a desktop's layout, in the config file: a test
cgroup holding what systemd makes for a user (user.slice/user-1000.slice/
session-2.scope, app-org.test.Editor-42.scope inside app.slice of the
user's manager) and a system.slice beside it. The scope is user.slice,
given relative to the hierarchy's root as a drop-in would give it;
everything under it is tracked, whether there before muqssd, forked in an
app scope after it starts, or moved in; system.slice is not. cgroup2 (the
unified hierarchy: /sys/fs/cgroup on a unified system, .../unified on this
hybrid one), or with --v1 the v1 cpu hierarchy. Cgroups removed on exit."""
import os
import sys
import time

from trackharness import HELPER, CgroupScope, cgroup_root, log

version = 1 if "--v1" in sys.argv else 2
if os.geteuid() != 0:
    log("needs root to make cgroups")
    sys.exit(77)
if cgroup_root(version) is None:
    log(f"no cgroup v{version} hierarchy mounted" + (" with cpu" if version == 1 else ""))
    sys.exit(77)

s = CgroupScope(version)
ok = False
try:
    user = s.mkdir("user.slice")
    os.mkdir(os.path.join(user, "user-1000.slice"))
    session = os.path.join(user, "user-1000.slice", "session-2.scope")
    manager = os.path.join(user, "user-1000.slice", "user@1000.service")
    os.mkdir(session)
    os.mkdir(manager)
    os.mkdir(os.path.join(manager, "app.slice"))
    app = os.path.join(manager, "app.slice", "app-org.test.Editor-42.scope")
    os.mkdir(app)
    system = s.mkdir("system.slice")
    service = os.path.join(system, "other.service")
    os.mkdir(service)

    def start_in(cgdir, *argv):
        # The program joins its cgroup before it execs: moving timeout(1)
        # after the spawn raced its child, and a launcher that forks at
        # once (the storm) left its programs in the old cgroup.
        return s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "/bin/sh", "-c",
                       'echo $$ > "$0/cgroup.procs" && exec "$@"', cgdir, *argv)

    # Before muqssd: found by the start-up scan (or not, in system.slice).
    start_in(session, HELPER, "threads", "3", "30000")
    start_in(app, HELPER, "threads", "4", "30000")
    start_in(service, HELPER, "threads", "5", "30000")
    start_in(service, "/bin/sh", "-c", "while :; do :; done")
    with open(s.conf, "w") as f:
        f.write(f"[scope]\nmode = cgroup\ncgroup = {s.rel}/user.slice\n"
                "[tracking]\nreconcile_interval_ms = 500\n")
    s.start_daemon(scope_args=[])
    # After: a launcher in the app scope forks programs (fork events),
    # and a process is moved into the session (reconciliation).
    start_in(app, HELPER, "execstorm", "20", "10", "/bin/sleep", "20")
    start_in(service, HELPER, "execstorm", "20", "10", "/bin/sleep", "20")
    start_in(session, HELPER, "threads", "2", "30000")
    s.rel = s.rel + "/user.slice"  # the truth: user.slice's subtree only
    # The storm starts its programs over some 2 s, longer on a loaded
    # machine: compare once they all run.
    deadline = time.monotonic() + 15
    time.sleep(3)
    while len(s.proc_tasks()) < 25 and time.monotonic() < deadline:
        time.sleep(0.2)
    ok, d, detail = s.compare()
    log(f"cgroup v{version}, [scope] cgroup = {s.rel}:", detail)
    table = {t["tid"] for t in d["tasks"]}
    strays = []
    for root, _, _ in os.walk(system):
        with open(os.path.join(root, "cgroup.procs")) as f:
            strays += [int(p) for p in f.read().split() if int(p) in table]
    if strays:
        log("tracked in system.slice:", strays)
        ok = False
    if ok and d["count"] < 25:
        log("too few tasks in the table:", d["count"])
        ok = False
    if not ok:
        log(s.log_text()[-3000:])
finally:
    s.close()
sys.exit(0 if ok else 1)
