"""Shared by the tracking integration tests.

Every test runs the real muqssd with --scope-pid of a scope root it started
(a subreaper python process that spawns the workload on request), a state
dir and socket in a temporary directory, `timeout` on the daemon and on
every workload, and kills everything it started on the way out.
"""
import codecs
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "drills"))
import term  # noqa: E402
import wire  # noqa: E402

term.exit_on_sigterm()

BUILD = os.environ.get("MUQSS_BUILD_ROOT", "")
# The sensor every Scope asks for (meson registers each test once per
# sensor): bpf or connector; unset, the daemon's default (auto).
SENSOR = os.environ.get("MUQSS_TEST_SENSOR", "")


def wire_text(raw):
    """bytes as muqssd sends them: each byte that starts no valid UTF-8
    sequence becomes '?' (PROTOCOL.md). A task's name is any bytes."""
    return raw.decode("utf-8", errors="muqss-wire")


codecs.register_error("muqss-wire", lambda e: ("?" * (e.end - e.start), e.end))
MUQSSD = os.path.join(BUILD, "muqssd", "muqssd")
HELPER = os.path.join(BUILD, "tests", "track", "track-helper")

ROOT_CODE = r"""
import ctypes, os, signal, sys, json
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps
for line in sys.stdin:
    argv = json.loads(line)
    if argv and argv[0] == "@reuse":
        # Fork children until one gets the pid asked for, via ns_last_pid.
        want = int(argv[1]); got = 0
        for _ in range(50):
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(want - 1))
            pid = os.fork()
            if pid == 0:
                os.execv("/bin/sleep", ["sleep", argv[2]])
            if pid == want:
                got = pid; break
            os.kill(pid, 9)
        print(got, flush=True)
        continue
    pid = os.posix_spawn(argv[0], argv, os.environ)
    print(pid, flush=True)
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Scope:
    def __init__(self, extra_args=(), log_level="info", conf_text="# empty: built-in defaults\n",
                 wrapper=(), rules_text=None):
        """wrapper: a command muqssd runs under (setpriv ...); rules_text:
        the daemon's rules (conf_text then holds no [daemon] section)."""
        # tmpfs: the daemon's crash-restore records are written per task.
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.tmp = tempfile.mkdtemp(prefix="muqss-track-", dir=shm)
        self.state = os.path.join(self.tmp, "state")
        self.conf = os.path.join(self.tmp, "muqssd.conf")
        if rules_text is not None:
            rules = os.path.join(self.tmp, "rules")
            os.mkdir(rules)
            with open(os.path.join(rules, "10-test.rules"), "w") as f:
                f.write(rules_text)
            conf_text = f"[daemon]\nrules_dir = {rules}\n" + conf_text
        with open(self.conf, "w") as f:
            f.write(conf_text)
        self.daemon = None
        try:
            extra_args, asked = self._with_sensor(extra_args)
            self._start(extra_args, log_level, wrapper)
            if self.daemon is not None:
                self.skip_unless(asked)
        except BaseException:
            self.close()
            raise

    def _start(self, extra_args, log_level, wrapper):
        self.root = subprocess.Popen(
            ["timeout", "-s", "KILL", "300", sys.executable, "-c", ROOT_CODE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        # The scope is the python process under timeout.
        self.root_pid = self._child_of(self.root.pid)
        self.logf = open(os.path.join(self.tmp, "daemon.log"), "w")
        self.daemon = subprocess.Popen(
            ["timeout", "-s", "TERM", "200", *wrapper, MUQSSD, "--scope-pid", str(self.root_pid),
             "--state-dir", self.state, "--socket", os.path.join(self.tmp, "sock"),
             "--config", self.conf, "--log-level", log_level, *extra_args],
            stdout=self.logf, stderr=subprocess.STDOUT)
        self.daemon_pid = self._child_of(self.daemon.pid)
        self._wait_ready()

    @staticmethod
    def _with_sensor(extra_args):
        """extra_args with --sensor SENSOR unless they choose one; and the
        sensor asked for."""
        if not SENSOR or any(a in ("--poll", "--sensor") for a in extra_args):
            return list(extra_args), ""
        return ["--sensor", SENSOR, *extra_args], SENSOR

    def skip_unless(self, sensor):
        """Exits 77 when the daemon does not run the sensor asked for (bpf
        not built in, or refused here), with its notice that says why."""
        if not sensor:
            return
        got = self.status()["tracking"]["sensor"]
        if got == sensor:
            return
        with open(self.logf.name, errors="replace") as f:
            why = [line for line in f if "sensor unavailable" in line]
        log(f"SKIP: asked for the {sensor} sensor, got {got}:", *why)
        sys.exit(77)  # __init__ closes the scope on the way out

    def log_text(self):
        with open(self.logf.name, errors="replace") as f:
            return f.read()

    def status(self):
        with wire.connect(os.path.join(self.tmp, "sock")) as s:
            wire.hello(s)
            t, status = wire.call(s, wire.STATUS)
        if t != wire.OK:
            raise RuntimeError(f"status answered with type {t}: {status}")
        return status

    @staticmethod
    def _child_of(pid):
        for _ in range(500):
            try:
                with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
                    kids = f.read().split()
                if kids:
                    return int(kids[0])
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"no child under {pid}")

    def _wait_ready(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            with open(self.logf.name, errors="replace") as f:
                text = f.read()
            if ("tracking " in text and " tasks through " in text and
                    os.path.exists(os.path.join(self.tmp, "sock"))):
                return
            if self.daemon.poll() is not None:
                raise RuntimeError("muqssd exited:\n" + text)
            time.sleep(0.05)
        raise RuntimeError("muqssd did not start")

    def spawn(self, *argv):
        """Starts argv as a child of the scope root; returns its pid."""
        self.root.stdin.write(json.dumps(list(argv)) + "\n")
        self.root.stdin.flush()
        # The children share the root's stdout: a line of theirs (hackbench
        # prints one at start) may come before the pid.
        while True:
            line = self.root.stdout.readline()
            if not line:
                raise RuntimeError("the scope root is gone")
            if line.strip().isdigit():
                return int(line)
            log("child said:", line.rstrip())

    def reuse(self, pid, seconds):
        self.root.stdin.write(json.dumps(["@reuse", str(pid), str(seconds)]) + "\n")
        self.root.stdin.flush()
        return int(self.root.stdout.readline())

    def dump(self):
        """The daemon's table and tracking state, over its socket: TASKS
        (queued events applied first), then STATUS."""
        with wire.connect(os.path.join(self.tmp, "sock")) as s:
            wire.hello(s)
            t, tasks = wire.call(s, wire.TASKS)
            if t != wire.END:
                raise RuntimeError(f"tasks answered with type {t}: {tasks}")
            t, status = wire.call(s, wire.STATUS)
            if t != wire.OK:
                raise RuntimeError(f"status answered with type {t}: {status}")
        tr = status["tracking"]
        return {"polling": tr["polling"], "sensor": tr["sensor"], "sensor_lost": tr["sensor_lost"],
                "events": tr["events"], "count": tr["count"],
                "stat_reads_on_loop": tr["stat_reads_on_loop"], "stats_told": tr["stats_told"],
                "lost_event_recoveries": status["counters"]["lost_event_recoveries"],
                "tasks": tasks}

    def proc_tasks(self):
        """The truth: every live thread of the scope root's subtree."""
        children = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    st = f.read()
            except OSError:
                continue
            ppid = int(st[st.rindex(b")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(name))
        todo, procs = [self.root_pid], []
        while todo:
            p = todo.pop()
            procs.append(p)
            todo.extend(children.get(p, []))
        tasks = {}
        for p in procs:
            try:
                tids = os.listdir(f"/proc/{p}/task")
            except OSError:
                continue
            for t in tids:
                try:
                    with open(f"/proc/{p}/task/{t}/stat", "rb") as f:
                        st = f.read()
                except OSError:
                    continue
                rest = st[st.rindex(b")") + 2:].split()
                if rest[0] in (b"Z", b"X"):
                    continue
                tasks[int(t)] = {"tgid": p, "comm": wire_text(st[st.index(b"(") + 1:st.rindex(b")")]),
                                 "start_time": int(rest[19]), "ppid": int(rest[1])}
        return tasks

    def compare(self, settle=0.5, tries=20):
        """Waits for the table to equal /proc; returns (ok, dump, detail)."""
        detail = ""
        for _ in range(tries):
            time.sleep(settle)
            truth = self.proc_tasks()
            d = self.dump()
            table = {t["tid"]: t for t in d["tasks"]}
            missing = sorted(set(truth) - set(table))
            extra = sorted(set(table) - set(truth))
            wrong = sorted(t for t in set(truth) & set(table)
                           if truth[t]["start_time"] != table[t]["start_time"]
                           or truth[t]["tgid"] != table[t]["tgid"])
            if not missing and not extra and not wrong and self.proc_tasks() == truth:
                return True, d, f"{len(truth)} tasks match"
            detail = (f"{len(truth)} in /proc, {len(table)} in table; missing {missing[:10]}"
                      f" extra {extra[:10]} wrong {wrong[:10]}")
            log("not yet:", detail)
        return False, d, detail

    def daemon_cpu_ticks(self):
        with open(f"/proc/{self.daemon_pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
        return int(rest[11]) + int(rest[12])

    def close(self):
        if self.daemon is None:
            # It failed to start: its scope and dir go all the same.
            if getattr(self, "root", None):
                self.root.kill()
                self.root.wait()
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        if self.daemon.poll() is None:
            # To muqssd itself: timeout(1) would follow SIGTERM with a
            # SIGCONT, which can hang an ASan build's exit-time leak check.
            try:
                os.kill(self.daemon_pid, signal.SIGTERM)
            except (OSError, TypeError):
                self.daemon.terminate()
        try:
            self.daemon.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
        # Kill whatever the workload left in the scope, then the root.
        for pid in self.proc_tasks_safe():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.root.kill()
        self.root.wait()
        self.logf.close()
        if os.environ.get("MUQSS_KEEP_TMP") is None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def proc_tasks_safe(self):
        try:
            return sorted({t["tgid"] for t in self.proc_tasks().values()} - {self.root_pid})
        except Exception:
            return []

    def log_text(self):
        with open(self.logf.name, errors="replace") as f:
            return f.read()


# A rule on the command line, which only a read of /proc gives: with it,
# every new process's stat is read, on the bpf sensor too (whose events
# tell the rest of a stat).
READS_FORCED_RULES = 'cmdline="^no such command line$" class=batch\n'


def cgroup_root(version):
    """Mount point of the cgroup2 hierarchy (version 2) or of the v1
    hierarchy holding the cpu controller (version 1); None if absent."""
    with open("/proc/self/mounts", "rb") as f:
        for raw in f:
            dev, mnt, fstype, opts = raw.decode(errors="surrogateescape").split()[:4]
            if version == 2 and fstype == "cgroup2":
                return mnt
            if version == 1 and fstype == "cgroup" and "cpu" in opts.split(","):
                return mnt
    return None


def cgroup_of(pid, version):
    """A process's path in the hierarchy, as /proc/<pid>/cgroup says."""
    with open(f"/proc/{pid}/cgroup", "rb") as f:
        for raw in f:
            line = raw.decode(errors="surrogateescape")
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if (version == 2 and ctrls == "") or (version == 1 and "cpu" in ctrls.split(",")):
                return path
    return None


class CgroupScope(Scope):
    """A cgroup the test makes (and removes): the scope root moves itself
    into it before spawning, so its whole subtree is in it; the daemon
    runs with --scope-cgroup. Tasks outside stay outside."""

    def __init__(self, version, extra_args=(), log_level="info"):
        self.version = version
        mnt = cgroup_root(version)
        self.cg = os.path.join(mnt, f"muqss-test-{os.getpid()}")
        self.rel = "/" + os.path.relpath(self.cg, mnt)
        os.mkdir(self.cg)
        if version == 1:
            # A fresh v1 cpu cgroup has no RT budget: boosting in it would
            # fail with EPERM. Give it some where the parent has any.
            try:
                with open(os.path.join(self.cg, "cpu.rt_runtime_us"), "w") as f:
                    f.write("10000")
            except OSError:
                pass
        super().__init__(extra_args, log_level)

    def _start(self, extra_args, log_level, wrapper):
        code = ("import os\nopen(%r, 'w').write(str(os.getpid()))\n" %
                os.path.join(self.cg, "cgroup.procs")) + ROOT_CODE
        self.root = subprocess.Popen(
            ["timeout", "-s", "KILL", "300", sys.executable, "-c", code],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.root_pid = self._child_of(self.root.pid)

    def start_daemon(self, extra_args=(), log_level="info", scope_args=None):
        """Separate from __init__ so tasks can exist before the daemon.
        scope_args replaces --scope-cgroup CG (e.g. [] for a config's)."""
        self.logf = open(os.path.join(self.tmp, "daemon.log"), "w")
        if scope_args is None:
            scope_args = ["--scope-cgroup", self.cg]
        extra_args, asked = self._with_sensor(extra_args)
        self.daemon = subprocess.Popen(
            ["timeout", "-s", "TERM", "200", MUQSSD, *scope_args,
             "--state-dir", self.state, "--socket", os.path.join(self.tmp, "sock"),
             "--config", self.conf, "--log-level", log_level, *extra_args],
            stdout=self.logf, stderr=subprocess.STDOUT)
        self.daemon_pid = self._child_of(self.daemon.pid)
        self._wait_ready()
        self.skip_unless(asked)

    def mkdir(self, name):
        path = os.path.join(self.cg, name)
        os.mkdir(path)
        return path

    def move(self, pid, cgdir):
        with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def proc_tasks(self):
        """The truth: every live thread of every process whose leader is
        in the cgroup subtree."""
        tasks = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            p = int(name)
            try:
                path = cgroup_of(p, self.version)
            except OSError:
                continue
            if path is None or not (path == self.rel or path.startswith(self.rel + "/")):
                continue
            try:
                tids = os.listdir(f"/proc/{p}/task")
            except OSError:
                continue
            for t in tids:
                try:
                    with open(f"/proc/{p}/task/{t}/stat", "rb") as f:
                        st = f.read()
                except OSError:
                    continue
                rest = st[st.rindex(b")") + 2:].split()
                if rest[0] in (b"Z", b"X") or int(rest[6]) & 0x00200000:
                    continue
                tasks[int(t)] = {"tgid": p, "comm": wire_text(st[st.index(b"(") + 1:st.rindex(b")")]),
                                 "start_time": int(rest[19])}
        return tasks

    def close(self):
        try:
            if getattr(self, "daemon", None) is None:
                self.daemon = subprocess.Popen(["true"])  # Scope.close wants one
            super().close()
        finally:
            self._remove_cgroup()

    def _remove_cgroup(self):
        """Kills everything left in the cgroup subtree, then removes it,
        deepest first. Runs even when the test failed."""
        dirs = [d for d, _, _ in os.walk(self.cg)]
        for _ in range(100):
            left = 0
            for d in dirs:
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        pids = [int(p) for p in f.read().split()]
                except OSError:
                    continue
                left += len(pids)
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
            if not left:
                break
            time.sleep(0.05)
        for d in sorted(dirs, key=len, reverse=True):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                log("could not remove cgroup", d)
