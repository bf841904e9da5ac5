#!/usr/bin/env python3
"""The shipped unit on a real boot: systemd as PID 1 of a Debian 12 tree in
systemd-nspawn (tests/boot/make-tree.sh builds the tree; .ci/setup runs
it). This build is installed as a distribution would (meson install) into
an overlay over the tree, so the tree stays clean, and muqssd.service is
enabled with a drop-in that asks for sensor = bpf and scopes the daemon to
the container's /system.slice. A oneshot unit ordered after it records
`muqssctl --json status`, whether a child it forks shows in
`muqssctl --json tasks` under its pid in the container (a fork event of
the bpf programs, before any reconciliation could find it), and the
daemon's journal; then it powers off. Under the unit's capability set and
system-call filter the daemon must get the bpf sensor, not a fallback.

nspawn's own bounding set lacks CAP_BPF, CAP_PERFMON and CAP_IPC_LOCK,
which a host's systemd has, and its own seccomp filter refuses bpf(2)
(EPERM): the container gets both, so the unit's settings are what is
tested. Each boot is bounded by timeout(1)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from trackharness import cgroup_root

BUILD = os.environ.get("MUQSS_BUILD_ROOT", "")
TREE = os.environ.get("MUQSS_BOOT_TREE", "/var/lib/machines/muqssd-test")
OUT = "/root/muqss-boot-check"

CHECK = r"""#!/bin/sh
# Runs once muqssd is up (After=muqssd.service); writes OUT.*, powers off.
ctl=@bindir@/muqssctl
out=@out@
in_table() { $ctl --json tasks 2>/dev/null | grep -Eq "\"tid\":[[:space:]]*$1,"; }
{
	for i in $(seq 100); do $ctl --json status > $out.status && break; sleep 0.2; done
	echo "self=$$"
	# This script is in scope (/system.slice), found by a scan.
	for i in $(seq 150); do in_table $$ && break; sleep 0.1; done
	in_table $$ && echo "self_found=yes" || echo "self_found=no"
	# Its child is told by a fork event, under its pid in here.
	sleep 60 &
	child=$!
	found=no
	for i in $(seq 30); do in_table $child && { found=yes; break; }; sleep 0.1; done
	echo "child=$child child_found=$found"
	kill $child
	systemctl show muqssd.service -p ActiveState -p SubState -p NRestarts
	echo "--- journal of muqssd.service"
	journalctl -b -u muqssd.service --no-pager -o cat
} > $out.txt 2>&1
systemctl poweroff
"""

UNIT = """[Unit]
Description=muqssd boot test: record what the daemon runs, then power off
After=muqssd.service
Wants=muqssd.service

[Service]
Type=oneshot
ExecStart=/bin/sh /etc/muqss-boot-check

[Install]
WantedBy=multi-user.target
"""

DROPIN = """# The boot test's: the bpf sensor, and a scope inside the container.
[tracking]
sensor = bpf
[scope]
mode = cgroup
cgroup = /system.slice
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def options():
    p = subprocess.run(["meson", "introspect", "--buildoptions", BUILD],
                       capture_output=True, text=True, check=True)
    o = {x["name"]: x["value"] for x in json.loads(p.stdout)}
    for k in ("bindir", "sysconfdir"):
        if not o[k].startswith("/"):
            o[k] = os.path.join(o["prefix"], o[k])
    return o


def why_skip(o):
    if os.geteuid() != 0:
        return "needs root"
    if not shutil.which("systemd-nspawn"):
        return "no systemd-nspawn (apt-get install systemd-container)"
    if not os.path.exists(os.path.join(TREE, ".muqss-tree-done")):
        return f"no container tree at {TREE} (tests/boot/make-tree.sh builds it)"
    if o.get("b_sanitize", "none") != "none":
        return "a sanitized build: the container has no sanitizer runtime"
    if cgroup_root(2) is None:
        return "no cgroup2 hierarchy mounted"
    if o.get("bpf") == "disabled":
        return "built with -Dbpf=disabled"
    with open("/proc/filesystems") as f:
        if "overlay" not in f.read():
            return "no overlayfs"
    return None


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def boot(root, cg):
    """Installs this build into root, boots it in cgroup cg, returns the
    check's files."""
    o = options()
    subprocess.run(["timeout", "120", "meson", "install", "-C", BUILD, "--destdir", root,
                    "--no-rebuild", "--quiet"], check=True, stdout=subprocess.DEVNULL)
    write(root + o["sysconfdir"] + "/muqssd/muqssd.conf.d/50-boot-test.conf", DROPIN)
    write(root + "/etc/muqss-boot-check",
          CHECK.replace("@bindir@", o["bindir"]).replace("@out@", OUT), 0o755)
    write(root + "/etc/systemd/system/muqss-boot-check.service", UNIT)
    # libmuqss-client under the prefix: ld.so finds it by the cache.
    subprocess.run(["ldconfig", "-r", root], check=True)
    subprocess.run(["chroot", root, "systemctl", "enable", "--quiet", "muqssd.service",
                    "muqss-boot-check.service"], check=True)
    # TERM: nspawn asks the container's systemd to halt; KILL 10 s later.
    p = run_in_cgroup(cg, ["timeout", "-k", "10", "150", "systemd-nspawn", "-D", root,
                        "--register=no", "--keep-unit", "-q", "-b",
                        "--capability=CAP_BPF,CAP_PERFMON,CAP_IPC_LOCK",
                        "--system-call-filter=bpf"],
                      stdin=subprocess.DEVNULL, capture_output=True, text=True,
                      errors="replace")
    log(f"boot ended with {p.returncode}")
    if p.returncode:
        log(p.stdout[-3000:], p.stderr[-2000:])
    res = {}
    for ext in ("status", "txt"):
        try:
            with open(root + OUT + "." + ext, errors="replace") as f:
                res[ext] = f.read()
        except OSError:
            res[ext] = ""
    return res


def run_in_cgroup(cg, argv, **kw):
    """argv in cgroup cg (and nspawn's container in a child of it), so
    that whatever outlives a killed nspawn can be killed in turn."""
    def enter():
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write("0")
    return subprocess.run(argv, preexec_fn=enter, **kw)


def remove_cgroup(cg):
    """Kills all left in cg's subtree (cgroup.kill, Linux 5.14), then
    removes it, deepest first."""
    try:
        with open(os.path.join(cg, "cgroup.kill"), "w") as f:
            f.write("1")
    except OSError as e:
        log("cgroup.kill:", e)
    for _ in range(100):
        with open(os.path.join(cg, "cgroup.events")) as f:
            if "populated 0" in f.read():
                break
        time.sleep(0.05)
    for d in sorted((d for d, _, _ in os.walk(cg)), key=len, reverse=True):
        try:
            os.rmdir(d)
        except OSError as e:
            log("could not remove cgroup", d, e)


def check(res):
    log(res["txt"])
    if not res["status"]:
        return "the check unit recorded no status (did it run? did muqssd start?)"
    st = json.loads(res["status"])
    sensor = st["tracking"]["sensor"]
    log("tracking.sensor:", sensor)
    if sensor != "bpf":
        return f"under the shipped unit the daemon runs the {sensor} sensor, not bpf"
    kv = dict(w.split("=", 1) for w in res["txt"].split() if "=" in w)
    if kv.get("self_found") != "yes":
        return "the check script, in scope, never showed in muqssctl tasks"
    if kv.get("child_found") != "yes":
        return "a child forked in the container did not show under its pid within 3 s"
    if kv.get("ActiveState") != "active":
        return "muqssd.service is not active"
    return None


def main():
    o = options()
    skip = why_skip(o)
    if skip:
        print("SKIP:", skip)
        return 77
    tmp = tempfile.mkdtemp(prefix="muqss-boot-", dir="/dev/shm")
    root = os.path.join(tmp, "root")
    for d in ("upper", "work", "root"):
        os.mkdir(os.path.join(tmp, d))
    mounted = False
    cg = os.path.join(cgroup_root(2), f"muqss-boot-{os.getpid()}")
    os.mkdir(cg)
    try:
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        f"lowerdir={TREE},upperdir={tmp}/upper,workdir={tmp}/work", root],
                       check=True)
        mounted = True
        error = check(boot(root, cg))
    finally:
        remove_cgroup(cg)
        if mounted:
            subprocess.run(["umount", "-l", root])
        shutil.rmtree(tmp, ignore_errors=True)
    if error:
        log("FAIL:", error)
        return 1
    log("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
