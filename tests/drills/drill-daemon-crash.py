#!/usr/bin/env python3
"""Crash drill: the real daemon is SIGKILLed 20 times at a random moment
while it boosts ISO tasks, stops an IDLEPRIO hog and pins interactive
tasks. Each crash is followed, in turn, by `muqssd --restore` or by a
restart then SIGTERM. After every round no thread in the scope is stopped,
FIFO or pinned by muqssd, each has its original policy and nice, and every
task the test started is alive.

One of the tasks is an interactive shell that forks all the time: a child
born while the dead daemon's pin is on its parent inherits that pin, and
no record names it. A first, deterministic step checks that restore
repairs such children (and leaves alone those it must not touch).

MUQSS_DRILL_SEED=n replays a run; the seed is printed."""

import os
import random
import shutil
import signal
import subprocess
import sys
import time

from sched_util import (HOG, MUQSSD, NCPU, PROBE, Daemon, Scope, assert_clean, per_thread,  # noqa: E402
                        scope_changes, slice_of, snapshot, state_dir_for, task_sched, threads_of)

ROUNDS = 20
ALL = set(range(NCPU))
# Told apart by argv: the hogs by their duration, the shell by its loop.
ISO_HOG, PINNED_HOG, IDLE_HOG = "91", "92", "93"
FORKER = "while :; do sleep 0.05; /bin/true; sleep 0.3 & done"


def argv_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="surrogateescape") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def lineage(tid):
    """ppid and start time (clock ticks) of tid, or None."""
    try:
        with open(f"/proc/{tid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def parent_name(pid):
    me = lineage(pid)
    return os.path.basename((argv_of(me[0]) or [""])[0]) if me else ""


def started_tasks(scope):
    """The long-lived tasks the scope started, by role: the shell's own
    subshells are not among them."""
    roles = {}
    for p in scope.pids():
        argv = argv_of(p)
        if not argv:
            continue
        name = os.path.basename(argv[0])
        if name == "hog" and len(argv) > 1:
            roles.setdefault({ISO_HOG: "iso", PINNED_HOG: "pinned", IDLE_HOG: "idle"}[argv[1]],
                             []).append(p)
        elif name == "frame-probe":
            roles.setdefault("probe", []).append(p)
        elif name == "bash" and argv[-1] == FORKER and parent_name(p) == "timeout":
            roles.setdefault("forker", []).append(p)
    return roles


def wait_started(scope, want):
    """A SCHED_IDLE task next to hogs may take a while to get to its exec."""
    for _ in range(500):
        roles = started_tasks(scope)
        if {k: len(v) for k, v in roles.items()} == want:
            return roles
        time.sleep(0.01)
    raise AssertionError(f"the scope did not start: {roles}")


def policy_of(tid):
    return task_sched(tid)[1], os.getpriority(os.PRIO_PROCESS, tid), slice_of(tid)


def policy_snapshot(pids):
    return per_thread(pids, policy_of)


def watch(scope, affinity, seconds):
    """Every thread seen FIFO/stopped/pinned over a window, and the last sample."""
    total = {"fifo": set(), "stopped": set(), "pinned": set()}
    end = time.monotonic() + seconds
    last = scope_changes(scope, affinity)
    while True:
        for k in total:
            total[k] |= last[k]
        if time.monotonic() >= end:
            return total, last
        time.sleep(0.01)
        last = scope_changes(scope, affinity)


def wait_acting(scope, affinity, limit=3.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        s = scope_changes(scope, affinity)
        if s["fifo"] or s["stopped"] or s["pinned"]:
            return
        time.sleep(0.01)
    raise AssertionError("the daemon never boosted, stopped or pinned anything in the scope")


def assert_policies(pids, orig, what, slices):
    """Policy and nice, and with slices the EEVDF slice too, as they were
    (a thread born since has what the scope's root has)."""
    bad = []
    n = 3 if slices else 2
    for p in pids:
        for t in threads_of(p):
            try:
                now = policy_of(t)
            except OSError:
                continue
            want = orig["policies"].get(t, orig["default"])
            if now[:n] != want[:n]:
                bad.append((t, now, want))
    if bad:
        raise AssertionError(f"{what}: policy, nice or slice not the original: {bad}")


def assert_alive(roles, what):
    for role, pids in roles.items():
        for p in pids:
            try:
                state = task_sched(p)[0]
            except OSError:
                state = "gone"
            if state in ("Z", "X", "gone"):
                raise AssertionError(f"{what}: the {role} task {p} died ({state})")


def live_pids(scope):
    """A zombie keeps the policy it died with (a boost, if the daemon saw
    the exit and dropped its record); it will never run again."""
    out = []
    for p in scope.pids():
        try:
            if task_sched(p)[0] not in ("Z", "X"):
                out.append(p)
        except OSError:
            pass
    return out


def assert_restored(scope, orig, what, slices):
    # Once more after a failure: a task may have exited between the two reads.
    for last in (False, True):
        try:
            assert_clean(live_pids(scope), what, orig["affinity"])
            assert_policies(live_pids(scope), orig, what, slices)
            return
        except AssertionError:
            if last:
                raise
            time.sleep(0.05)


def records_left(state_dir):
    try:
        return [n for n in os.listdir(os.path.join(state_dir, "tasks")) if n.isdigit()]
    except FileNotFoundError:
        return []


def read_records(state_dir):
    """The state records as the dead daemon left them, by tid: kept to
    tell, after a failure, what the restore had to go on."""
    out = {}
    for name in records_left(state_dir):
        try:
            with open(os.path.join(state_dir, "tasks", name), "rb") as f:
                out[int(name)] = f.read().decode(errors="replace").split()
        except OSError:
            pass
    return out


def explain(scope, affinity, records):
    """What the restore knew of each thread left pinned: its parent, their
    start times and masks, and the records naming either."""
    lines = []
    for t in sorted(scope_changes(scope, affinity)["pinned"]):
        me = lineage(t)
        parent = me[0] if me else None
        up = lineage(parent) if parent else None
        try:
            pmask = sorted(os.sched_getaffinity(parent)) if parent else None
        except OSError:
            pmask = None
        lines.append(f"  {t}: argv {argv_of(t)} ppid/start {me}; parent {parent} argv "
                     f"{argv_of(parent) if parent else None} start {up[1] if up else None} "
                     f"mask {pmask}")
        for who in (t, parent):
            if who in records:
                lines.append(f"    record {who}: {' '.join(records[who])}")
    with open("/proc/uptime") as f:
        lines.append(f"  uptime {f.read().split()[0]} s, {os.sysconf('SC_CLK_TCK')} ticks/s")
    return "\n".join(lines)


def run_round(n, rng, scope, roles, orig, totals, daemons):
    how = "restore" if n % 2 == 0 else "restart"
    delay = rng.uniform(0.2, 2.0)
    d = Daemon(scope.root.pid, scope.tmp)
    daemons.append(d)
    for p in roles["iso"] + roles["probe"][1:]:
        d.ctl("iso", str(p))
    affinity = orig["affinity"]
    wait_acting(scope, affinity)
    seen, at_kill = watch(scope, affinity, delay)
    d.kill(signal.SIGKILL)
    # Let the shell fork under the dead daemon's pin: what no record names.
    time.sleep(0.1)
    orphans = {t for t in scope_changes(scope, affinity)["pinned"] if t not in affinity}
    records = read_records(d.state)
    if how == "restore":
        d.restore()
    else:
        d = Daemon(scope.root.pid, scope.tmp)
        daemons.append(d)
        time.sleep(rng.uniform(0.1, 0.5))
        d.kill(signal.SIGTERM)
        assert d.proc.returncode == 0, f"round {n}: muqssd exited {d.proc.returncode} on SIGTERM"
    what = f"round {n} ({how})"
    # Slices too: a restarted daemon gives a child the slice of its parent's
    # owner back before it records the child (undo_inherited).
    try:
        assert_restored(scope, orig, what, slices=True)
    except AssertionError:
        print(f"{what}: left pinned, and what the restore had:\n"
              f"{explain(scope, affinity, records)}", flush=True)
        raise
    assert_alive(roles, what)
    left = records_left(d.state)
    assert not left, f"{what}: state records left: {left}"
    figures = {k: len(v) for k, v in seen.items()}
    print(f"round {n:2d} ({how}, kill after {delay:.2f} s): seen fifo={figures['fifo']} "
          f"stopped={figures['stopped']} pinned={figures['pinned']}; at the kill "
          f"fifo={len(at_kill['fifo'])} stopped={len(at_kill['stopped'])} "
          f"pinned={len(at_kill['pinned'])}; children pinned after it={len(orphans)}; clean",
          flush=True)
    for k in figures:
        totals[k] += figures[k] > 0
    totals["orphans"] += len(orphans)


def stop_daemons(daemons):
    """On a failure: no daemon left running, nothing left changed."""
    for d in daemons:
        if d.proc.poll() is None:
            try:
                d.kill(signal.SIGTERM)
            except subprocess.TimeoutExpired:
                d.kill(signal.SIGKILL)
    if daemons:
        subprocess.run(["timeout", "-s", "KILL", "20", MUQSSD, "--restore", "--state-dir",
                        daemons[-1].state])


def write_record(state_dir, tid, start):
    """A record as muqssd writes it before it pins and idles a task."""
    tasks = os.path.join(state_dir, "tasks")
    os.makedirs(tasks, mode=0o755, exist_ok=True)
    cpus = f"0-{NCPU - 1}" if NCPU > 1 else "0"
    with open("/proc/sys/kernel/random/boot_id", "rb") as f:
        boot_id = f.read().decode().strip()
    text = (f"version=1\ntid={tid}\ntgid={tid}\nstart={start}\npolicy=0\npriority=0\nnice=0\n"
            f"reset_on_fork=0\nslice_ns=0\naffinity={cpus}\nchanged=3\nstopped=0\nboosted=0\n"
            f"boot_id={boot_id}\n")
    fd = os.open(os.path.join(tasks, str(tid)), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, text.encode())
    os.close(fd)


def start_time(pid):
    me = lineage(pid)
    if not me:
        raise AssertionError(f"repair check: {pid} is gone")
    return me[1]


def repair_check(tmp):
    """Restore puts back the children a recorded parent forked under our
    pin and SCHED_IDLE, and only those: not the ones older than the record,
    not one of another uid."""
    state_dir = state_dir_for(tmp + "-repair")
    shell = subprocess.Popen(["timeout", "-s", "KILL", "30", "bash", "-c",
                              "while read -r cmd; do $cmd & done"],
                             stdin=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(0.2)
        with open(f"/proc/{shell.pid}/task/{shell.pid}/children", "rb") as f:
            parent = int(f.read().split()[0])

        def spawn(cmd):
            before = set(children_of(parent))
            shell.stdin.write(cmd + "\n")
            shell.stdin.flush()
            for _ in range(200):
                new = set(children_of(parent)) - before
                if new and all(os.path.basename((argv_of(c) or [""])[0]) == "sleep"
                               for c in new):
                    return new.pop()
                time.sleep(0.01)
            raise AssertionError(f"repair check: {cmd} did not start")

        owner_pinned = spawn("taskset -c 0 sleep 30")
        owner_idle = spawn("chrt --idle 0 sleep 30")
        # Older than the record by more than the 10 ms of a start time tick.
        time.sleep(0.1)
        write_record(state_dir, parent, start_time(parent))
        os.sched_setaffinity(parent, {0})
        os.sched_setscheduler(parent, os.SCHED_IDLE, os.sched_param(0))
        inherited = spawn("sleep 30")
        foreign = spawn("setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30")
        subprocess.run(["timeout", "-s", "KILL", "20", MUQSSD, "--restore", "--state-dir",
                        state_dir], check=True)
        want = {parent: ("other", ALL), inherited: ("other", ALL),
                owner_pinned: ("other", {0}), owner_idle: ("idle", ALL),
                foreign: ("idle", {0})}
        got = {t: task_sched(t)[1:4:2] for t in want}
        if NCPU > 1:
            assert got == want, f"repair check: want {want}, got {got}"
        print(f"repair: the parent and its inherited child put back, owner-pinned, "
              f"owner-idle and other-uid children left alone: {got}", flush=True)
    finally:
        for c in descendants_of(shell.pid):
            try:
                os.kill(c, signal.SIGKILL)
            except OSError:
                pass
        shell.wait()


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def descendants_of(pid):
    out = [pid]
    for c in children_of(pid):
        out += descendants_of(c)
    return out


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    seed = int(os.environ.get("MUQSS_DRILL_SEED", time.time_ns() % 1000000))
    print(f"seed {seed} (MUQSS_DRILL_SEED={seed} replays it)", flush=True)
    rng = random.Random(seed)
    # Owner-pinned, one per CPU, so normal work surely fills every CPU and
    # the SCHED_IDLE hog gets stopped.
    cmds = ([f"{HOG} {ISO_HOG} >/dev/null", f"chrt --idle 0 {HOG} {IDLE_HOG} >/dev/null",
             f"{PROBE} -d 95 >/dev/null", f"{PROBE} -d 95 >/dev/null", f"bash -c '{FORKER}'"]
            + [f"taskset -c {c} {HOG} {PINNED_HOG} >/dev/null" for c in range(NCPU)])
    scope = Scope(cmds, limit=95)
    totals = {"fifo": 0, "stopped": 0, "pinned": 0, "orphans": 0}
    daemons = []
    start = time.monotonic()
    passed = False
    try:
        repair_check(scope.tmp)
        roles = wait_started(scope, {"iso": 1, "idle": 1, "probe": 2, "forker": 1,
                                     "pinned": NCPU})
        policies = policy_snapshot(scope.pids())
        orig = {"affinity": snapshot(scope.pids()), "policies": policies,
                "default": policies[scope.root.pid]}
        for n in range(ROUNDS):
            run_round(n, rng, scope, roles, orig, totals, daemons)
        assert totals["fifo"] == ROUNDS, "a round saw nothing boosted"
        assert totals["pinned"] > 0, "nothing was ever pinned"
        assert totals["stopped"] > 0, "the IDLEPRIO hog was never stopped"
        with open(os.path.join(scope.tmp, "muqssd.log"), errors="replace") as f:
            bad = [ln for ln in f if "Sanitizer" in ln or "runtime error:" in ln]
        assert not bad, f"sanitizer reports in muqssd.log: {bad[:5]}"
        print(f"summary: {ROUNDS} rounds in {time.monotonic() - start:.1f} s, seed {seed}: "
              f"rounds with a boost {totals['fifo']}, with a stop {totals['stopped']}, "
              f"with a pin {totals['pinned']}; children pinned after a crash "
              f"{totals['orphans']}, all put back")
        print("1 passed, 0 failed")
        passed = True
        return 0
    finally:
        stop_daemons(daemons)
        scope.close()
        log = os.path.join(scope.tmp, "muqssd.log")
        if not passed and os.path.exists(log):
            with open(log, errors="replace") as f:
                print("muqssd.log, last lines:\n" + "".join(f.readlines()[-30:]))
        shutil.rmtree(scope.tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
