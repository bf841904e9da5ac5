#!/usr/bin/env python3
"""In a PID namespace of its own (unshare --pid --fork --mount-proc), the
kernel acks no proc connector listener and sends it no events: muqssd must
see that at start and poll /proc, so a task started 1.5 s after it is
managed (muqssctl iso on it works). Everything runs inside the namespace,
whose end kills whatever is left in it."""
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("MUQSS_BUILD_ROOT", "")
MUQSSD = os.path.join(BUILD, "muqssd", "muqssd")
MUQSSCTL = os.path.join(BUILD, "muqssctl", "muqssctl")
SENSOR = os.environ.get("MUQSS_TEST_SENSOR", "")

INNER = r"""
set -u
tmp=$1 muqssd=$2 muqssctl=$3 sensor=$4
# The scope: a root that starts a sleeper once the daemon runs.
bash -c "sleep 1.5; sleep 30 & echo \$! > $tmp/late.pid; wait" &
root=$!
timeout -s TERM 40 "$muqssd" --scope-pid "$root" --state-dir "$tmp/state" \
	--socket "$tmp/sock" --config "$tmp/empty.conf" ${sensor:+--sensor "$sensor"} \
	> "$tmp/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 150); do [ -s "$tmp/late.pid" ] && [ -S "$tmp/sock" ] && break; sleep 0.1; done
late=$(cat "$tmp/late.pid" 2>/dev/null)
[ -n "$late" ] || { echo "the late task never started"; exit 1; }
# Polling finds it within 250 ms (the default interval).
sleep 0.6
timeout 10 "$muqssctl" --socket "$tmp/sock" iso "$late"
rc=$?
kill -TERM "$daemon"; wait "$daemon"
exit $rc
"""


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    if not shutil.which("unshare"):
        print("no unshare(1)")
        return 77
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix="muqss-pidns-", dir=shm)
    try:
        open(os.path.join(tmp, "empty.conf"), "w").close()
        p = subprocess.run(["timeout", "-s", "KILL", "60", "unshare", "--pid", "--fork",
                            "--mount-proc", "bash", "-c", INNER, "inner", tmp, MUQSSD,
                            MUQSSCTL, SENSOR], capture_output=True, text=True)
        with open(os.path.join(tmp, "daemon.log")) as f:
            log = f.read()
        print(p.stdout + p.stderr)
        print(log)
        assert "proc connector delivers no events" in log, \
            "muqssd did not notice that its connector is silent"
        if SENSOR == "bpf":
            # Its programs would name tasks by the initial namespace's pids.
            assert "bpf sensor unavailable (muqssd runs in a PID namespace" in log, \
                "the bpf sensor did not refuse a PID namespace"
        assert p.returncode == 0, f"muqssctl iso on the late task failed ({p.returncode})"
        print("1 passed, 0 failed")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
