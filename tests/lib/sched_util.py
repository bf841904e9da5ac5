"""Helpers for the tests and bench/stall/run that run the real daemon on
real processes, always in a scope they made, always bounded, always
cleaned up. Found through PYTHONPATH (meson sets it: py_harness_dir)."""

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import term

BUILD = os.environ.get("MUQSS_BUILD_ROOT", "build")
MUQSSD = os.path.join(BUILD, "muqssd", "muqssd")
MUQSSCTL = os.path.join(BUILD, "muqssctl", "muqssctl")
HOG = os.path.join(BUILD, "bench", "load", "hog")
PROBE = os.path.join(BUILD, "bench", "load", "frame-probe")
NCPU = os.cpu_count()

term.exit_on_sigterm()


def sanitized(binary=MUQSSD):
    """binary (muqssd unless named) was built with AddressSanitizer: two
    to three times slower."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def skip_unless_root_on_two_cpus():
    """77 (meson's skip) with the reason printed, or None: the drills are
    sized for 2 CPUs and need root."""
    if os.geteuid() != 0:
        print("needs root")
        return 77
    if NCPU != 2:
        print(f"SKIP: the drill is sized for 2 CPUs, this machine has {NCPU}")
        return 77
    return None


def task_sched(tid):
    """(state, policy name, rt prio, affinity set) of one thread."""
    with open(f"/proc/{tid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    state, policy, rtprio = fields[0].decode(), int(fields[38]), int(fields[37])
    names = {0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}
    return state, names.get(policy, str(policy)), rtprio, os.sched_getaffinity(tid)


def slice_of(tid):
    """The EEVDF slice (ns) of a thread; None where the kernel shows none.
    OSError when the thread is gone."""
    with open(f"/proc/{tid}/sched", "rb") as f:
        for line in f:
            if line.startswith(b"se.slice"):
                return int(line.split()[-1])
    return None


def hog_pids(scope, arg=None):
    """The scope's bench/load/hog processes (running hog, not a launcher
    yet to exec it), those started with first argument arg if given."""
    out = []
    for p in scope.pids():
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"/hog") and (arg is None or argv[1] == arg.encode()):
            out.append(p)
    return out


def argv_of(pid):
    """A process's arguments as bytes; [] once gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[:-1]
    except OSError:
        return []


def exe_pid(scope, exe):
    """The scope's process running exe (its argv[0] as started), or None."""
    for p in scope.pids():
        argv = argv_of(p)
        if argv and argv[0] == exe.encode():
            return p
    return None


def uid_of(pid):
    """The real uid of a process; -1 when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def threads_of(pid):
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def descendants(root):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        for t in threads_of(p):
            try:
                with open(f"/proc/{p}/task/{t}/children", "rb") as f:
                    todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
    return out


class Scope:
    """A process subtree: a bash root that starts the given commands."""

    def __init__(self, cmds, limit=60):
        self.tmp = tempfile.mkdtemp(prefix="muqss-test-")
        # After everything, daemons included, is done with it.
        atexit.register(shutil.rmtree, self.tmp, True)
        script = "\n".join(f"timeout -s KILL {limit} {c} &" for c in cmds) + "\nwait\n"
        self.root = subprocess.Popen(["timeout", "-s", "KILL", str(limit + 5), "bash", "-c", script],
                                     start_new_session=True)
        time.sleep(0.3)

    def pids(self):
        return [p for p in descendants(self.root.pid)]

    def close(self):
        pids = self.pids()
        for p in pids:
            for t in threads_of(p):
                try:
                    os.sched_setaffinity(t, range(NCPU))
                    os.sched_setscheduler(t, os.SCHED_OTHER, os.sched_param(0))
                except OSError:
                    pass
            try:
                os.kill(p, signal.SIGCONT)
            except OSError:
                pass
        # Each timeout(1) below the root has a process group of its own.
        for p in reversed(pids):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        self.root.wait()


def state_dir_for(tmp):
    """The daemon's state dir for a test dir: in memory where there is a
    tmpfs, as /run is under systemd. On a disk filesystem a record write can
    wait a second for writeback, which is not what the tests measure. Kept
    across restarts in one test (restore reads it), removed at exit."""
    if not os.path.isdir("/dev/shm"):
        return os.path.join(tmp, "state")
    path = os.path.join("/dev/shm", "muqss-state-" + os.path.basename(tmp))
    atexit.register(shutil.rmtree, path, True)
    return path


class Daemon:
    def __init__(self, scope_pid, tmp, extra=(), config=None, limit=120):
        self.sock = os.path.join(tmp, "control")
        self.state = state_dir_for(tmp)
        conf = config or os.path.join(tmp, "empty.conf")
        if not config:
            open(conf, "w").close()
        self.log = open(os.path.join(tmp, "muqssd.log"), "a")
        # A SIGKILLed daemon leaves its socket; wait for the new one.
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        # MUQSS_TEST_SENSOR runs a scheduling test on the sensor named.
        sensor = os.environ.get("MUQSS_TEST_SENSOR")
        if sensor and not any(a.startswith("--sensor") or a == "--poll" for a in extra):
            extra = ("--sensor", sensor, *extra)
        self.proc = subprocess.Popen(
            ["timeout", "-s", "KILL", str(limit), MUQSSD, "--config", conf, "--socket", self.sock,
             "--state-dir", self.state, "--scope-pid", str(scope_pid), *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                # timeout(1) passes SIGTERM on: no daemon outlives the test.
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    pass
                raise RuntimeError("muqssd did not start")
            time.sleep(0.02)
        self.pid = self._child()

    def _child(self):
        with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children", "rb") as f:
            return int(f.read().split()[0])

    def ctl(self, *args, check=True, timeout=10):
        p = subprocess.run([MUQSSCTL, "--socket", self.sock, *args], capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        if check and p.returncode:
            raise AssertionError(f"muqssctl {' '.join(args)}: {p.stderr}")
        return p

    def kill(self, sig):
        try:
            os.kill(self.pid, sig)
        except OSError:
            pass
        self.proc.wait(timeout=20)

    def on_bpf(self):
        """Whether it tracks through the bpf sensor (its log says so at start)."""
        with open(self.log.name, "rb") as f:
            return b"through the bpf sensor" in f.read()

    def restore(self):
        subprocess.run([MUQSSD, "--restore", "--state-dir", self.state], check=True, timeout=30)


def report(failed):
    """Prints the summary of a test with one pass/fail verdict and its
    failures, one a line; what main returns."""
    print(f"{0 if failed else 1} passed, {len(failed)} failed")
    for f in failed:
        print("  " + f)
    return 1 if failed else 0


def scope_changes(scope, affinity=None):
    """Threads of the scope now FIFO, stopped, or pinned (affinity other
    than their snapshot's, or than all CPUs)."""
    seen = {"fifo": set(), "stopped": set(), "pinned": set()}
    for p in scope.pids():
        for t in threads_of(p):
            try:
                state, pol, _, aff = task_sched(t)
            except OSError:
                continue
            if pol == "fifo":
                seen["fifo"].add(t)
            if state == "T":
                seen["stopped"].add(t)
            if aff != (affinity or {}).get(t, set(range(NCPU))):
                seen["pinned"].add(t)
    return seen


def per_thread(pids, read):
    """{tid: read(tid)} for every live thread of pids; one gone midway is
    left out."""
    out = {}
    for p in pids:
        for t in threads_of(p):
            try:
                out[t] = read(t)
            except OSError:
                pass
    return out


def snapshot(pids):
    """Each thread's affinity, to compare with after the daemon is gone."""
    return per_thread(pids, os.sched_getaffinity)


PF_EXITING = 0x4


def exiting_and_comm(tid):
    """(whether the thread is past the start of its exit, its comm)."""
    try:
        with open(f"/proc/{tid}/stat", "rb") as f:
            head, tail = f.read().rsplit(b")", 1)
        return bool(int(tail.split()[6]) & PF_EXITING), head.split(b"(", 1)[1].decode(errors="replace")
    except (OSError, IndexError, ValueError):
        return True, "?"


def assert_clean(pids, what, affinity=None):
    """No thread of pids stopped, FIFO-boosted or pinned (affinity other
    than the snapshot's, or than all CPUs). A zombie, or a thread already
    exiting (PF_EXITING), is left out: it keeps the policy it died with,
    but it never runs its program again."""
    bad = []
    for p in pids:
        for t in threads_of(p):
            try:
                state, pol, prio, aff = task_sched(t)
            except OSError:
                continue
            if state in ("Z", "X"):
                continue
            want = (affinity or {}).get(t, set(range(NCPU)))
            if state == "T" or pol == "fifo" or aff != want:
                exiting, comm = exiting_and_comm(t)
                if not exiting:
                    bad.append((t, comm, state, pol, prio, sorted(aff)))
    if bad:
        raise AssertionError(f"{what}: left changed: {bad}")


def wait_for(cond, secs=10, step=0.05):
    """cond()'s first true value within secs; at the deadline, its last."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def release_fifo(fifo):
    """Lets go a process blocked reading fifo (a probe's launcher waiting
    with `read -r _ < fifo`); ENXIO, not a hang, if it is gone."""
    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)


def wait_probe(path, deadline):
    """A probe's JSON result at path, once it is written whole; fails at
    deadline (time.monotonic())."""
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as f:
                return json.loads(f.read())
        except (OSError, ValueError):
            time.sleep(0.2)
    raise AssertionError(f"{path}: the probe printed nothing")


def wait_free_pids(need, timeout=30):
    """True once need pids are free, threads counted (/proc/loadavg's
    total), as a test before may still be reaping thousands; False with
    the reason printed if not within timeout."""
    with open("/proc/sys/kernel/pid_max", "rb") as f:
        pid_max = int(f.read())
    deadline = time.monotonic() + timeout
    while True:
        with open("/proc/loadavg", "rb") as f:
            used = int(f.read().split()[3].split(b"/")[1])
        if pid_max - used >= need:
            return True
        if time.monotonic() > deadline:
            print(f"only {pid_max - used} pids free ({used} in use), need {need}")
            return False
        time.sleep(0.5)
