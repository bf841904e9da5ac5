#!/usr/bin/env python3
"""A container's tasks, managed from the initial namespaces through a
cgroup scope: in a cgroup the test makes, a process runs
unshare --pid --fork --mount-proc, and in that PID namespace a shell forks
and execs children, some before the daemon starts and some after. muqssd
(--scope-cgroup) must track them all by their host pids, exactly as /proc
lists them; apply a rule (comm=ctr-nice, nice 7) to a child exec'd in the
namespace after it started; and `muqssctl iso` on a host pid must work.
Runs on each sensor: the connector and bpf name tasks by the initial
namespace's pids whatever namespace they are in."""
import os
import shutil
import subprocess
import sys
import time

from trackharness import BUILD, HELPER, CgroupScope, cgroup_root, log

MUQSSCTL = os.path.join(BUILD, "muqssctl", "muqssctl")

# In the namespace: pid 1 is this shell. Some children now, more once the
# test creates $go (after the daemon started): forks that exec at once,
# a chain of execs, threads, and the one the rule names.
INNER = r"""
tmp=$1 helper=$2
sleep 30 &
sh -c 'exec sleep 30' &
"$helper" threads 3 30000 &
while [ ! -e "$tmp/go" ]; do sleep 0.05; done
sh -c "exec env sh -c 'exec $tmp/ctr-nice 30'" &
"$tmp/ctr-nice" 30 &
"$helper" threads 2 30000 &
sleep 30 &
echo $! > "$tmp/late"
wait
"""


def ctl(s, *args):
    return subprocess.run([MUQSSCTL, "--socket", os.path.join(s.tmp, "sock"), *args],
                          capture_output=True, text=True, timeout=10)


def stat_fields(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def nspids(pid):
    """NSpid: its pid in each namespace, the host's first."""
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"NSpid:"):
                return [int(x) for x in line.split()[1:]]
    return []


def comm_of(pid):
    with open(f"/proc/{pid}/comm", "rb") as f:
        return f.read().strip()


if os.geteuid() != 0:
    log("needs root to make cgroups and PID namespaces")
    sys.exit(77)
if cgroup_root(2) is None:
    log("no cgroup v2 hierarchy mounted")
    sys.exit(77)
if not shutil.which("unshare"):
    log("no unshare(1)")
    sys.exit(77)

s = CgroupScope(2)
ok = False
try:
    shutil.copy("/bin/sleep", os.path.join(s.tmp, "ctr-nice"))
    rules = os.path.join(s.tmp, "rules")
    os.mkdir(rules)
    with open(os.path.join(rules, "10-ctr.rules"), "w") as f:
        f.write("comm=ctr-nice class=normal nice=7\n")
    with open(s.conf, "w") as f:
        f.write(f"[daemon]\nrules_dir = {rules}\n")
    ns_init = s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "unshare", "--pid", "--fork",
                      "--mount-proc", "/bin/sh", "-c", INNER, "inner", s.tmp, HELPER)
    time.sleep(0.5)
    s.start_daemon()
    open(os.path.join(s.tmp, "go"), "w").close()
    deadline = time.time() + 10
    while not os.path.exists(os.path.join(s.tmp, "late")) and time.time() < deadline:
        time.sleep(0.05)
    ok, d, detail = s.compare()
    log("container:", detail)
    table = {t["tid"]: t for t in d["tasks"]}
    # The test means something only if most of them are in the namespace.
    inside = [t for t in table if len(nspids(t)) == 2]
    log(f"{len(inside)} of {len(table)} tracked tasks are in the child PID namespace")
    if ok and len(inside) < 10:
        log("too few tasks in the namespace:", inside)
        ok = False
    # The rule: each ctr-nice, exec'd in the namespace, gets nice 7.
    ruled = [t for t in inside if comm_of(t) == b"ctr-nice"]
    deadline = time.time() + 5
    while time.time() < deadline and any(int(stat_fields(t)[16]) != 7 for t in ruled):
        time.sleep(0.1)
    nice = {t: int(stat_fields(t)[16]) for t in ruled}
    log("ctr-nice tasks (host pid: nice):", nice)
    if ok and (len(ruled) != 2 or any(v != 7 for v in nice.values())):
        log("the rule did not apply to each ctr-nice in the namespace")
        ok = False
    # muqssctl iso by host pid, on a sleep started after the daemon; the
    # pid the shell inside wrote is the namespace's.
    with open(os.path.join(s.tmp, "late")) as f:
        late_ns = int(f.read())
    late = [t for t in inside if nspids(t)[1] == late_ns and comm_of(t) == b"sleep"]
    p = ctl(s, "iso", str(late[0])) if late else None
    log("iso on the late sleep", late, "(ns pid %d):" % late_ns,
        p and (p.returncode, p.stdout.strip(), p.stderr.strip()))
    if ok and (not late or p.returncode != 0):
        log("muqssctl iso on a host pid of the namespace failed")
        ok = False
    if ok:
        log("1 passed, 0 failed")
    else:
        log(s.log_text()[-3000:])
finally:
    s.close()
sys.exit(0 if ok else 1)
