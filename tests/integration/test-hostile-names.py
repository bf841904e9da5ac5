#!/usr/bin/env python3
"""A process in scope names itself a"<newline><ESC>[31mX<ff><fe>Z (its exe
path carries the same bytes, and a thread is named with a C1 CSI and an
OSC). Every view must show it harmlessly (issue 16):
  - `tasks --json` is valid UTF-8 and strict JSON, the bytes that are not
    UTF-8 sent as '?' (PROTOCOL.md);
  - `tasks`, `queues` and `top` print no control character: the name is
    escaped (\\x0a, \\x1b) on its own row;
  - muqssd's log lines carry it escaped, with no raw ESC or newline;"""

import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import BUILD, MUQSSCTL, Daemon, Scope  # noqa: E402

HOSTILE_BIN = os.path.join(BUILD, "tests", "hostile", "hostile-name")
NAME = b'a"\n\x1b[31mX\xff\xfeZ'
ON_WIRE = 'a"\n\x1b[31mX??Z'           # PROTOCOL.md: a byte that starts no UTF-8 sequence is '?'
SHOWN = b'a"\\x0a\\x1b[31mX??Z'        # muqssctl's tables, from what the wire carried
LOGGED = b'a"\\x0a\\x1b[31mX\\xff\\xfeZ'  # the log, from the bytes in /proc
CONTROLS = [bytes([c]) for c in range(0x20) if c != 0x0a] + [b"\x7f", b"\xc2\x9b"]


def ctl(d, *args):
    p = subprocess.run([MUQSSCTL, "--socket", d.sock, *args], capture_output=True, timeout=10)
    assert p.returncode == 0, f"muqssctl {args}: {p.stderr!r}"
    return p.stdout


def no_controls(what, out):
    """Only newlines between rows; nothing a terminal would obey."""
    bad = [c for c in CONTROLS if c in out]
    assert not bad, f"{what}: raw control bytes {bad} in {out!r}"


def hostile_pid(scope):
    for p in scope.pids():
        try:
            with open(f"/proc/{p}/comm", "rb") as f:
                if f.read().rstrip(b"\n") == NAME:
                    return p
        except OSError:
            pass
    return None


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    # Exec'd after the daemon is up, so that its exec is logged.
    scope = Scope([f"bash -c 'sleep 1.5; exec {HOSTILE_BIN} --be 25 spin'"], limit=30)
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp, extra=["--log-level", "debug"])
        deadline = time.monotonic() + 10
        pid, mine, queued = None, [], b""
        while time.monotonic() < deadline:
            pid = pid or hostile_pid(scope)
            raw = ctl(d, "tasks", "--json")
            text = raw.decode("utf-8")  # strict: raises on what is not UTF-8
            mine = [t for t in json.loads(text)["tasks"] if pid and t["tgid"] == pid]
            queued = ctl(d, "queues")
            if len(mine) == 2 and SHOWN in queued:
                break
            time.sleep(0.3)
        assert pid, "the hostile process did not start"
        print(f"hostile process {pid}: {len(mine)} threads in the table")

        # JSON: valid UTF-8, the name as the wire carries it, exe too.
        main_t = next(t for t in mine if t["tid"] == pid)
        assert main_t["comm"] == ON_WIRE, f"comm {main_t['comm']!r}"
        assert main_t["exe"] and ON_WIRE in main_t["exe"], f"exe {main_t['exe']!r}"
        other = [t["comm"] for t in mine if t["tid"] != pid]
        assert other == ["t\x9b2J\x1b]0;x\x07"], f"thread comm {other!r}"
        print("tasks --json: valid UTF-8, comm", json.dumps(main_t["comm"]),
              "exe", json.dumps(main_t["exe"]))

        # Human views: escaped, one row each.
        out = ctl(d, "tasks")
        no_controls("tasks", out)
        rows = [ln for ln in out.split(b"\n") if ln.split()[:1] == [str(pid).encode()]]
        assert len(rows) == 1 and rows[0].endswith(SHOWN), f"tasks rows {rows!r}"
        assert b"t\\xc2\\x9b2J\\x1b]0;x\\x07" in out, "thread name not escaped in tasks"
        print("tasks:", rows[0].decode())
        no_controls("queues", queued)
        assert SHOWN in queued, f"not queued, or not escaped: {queued!r}"
        rows = [ln for ln in queued.split(b"\n") if SHOWN in ln]
        print("queues:", rows[0].decode())
        out = ctl(d, "top", "-n", "1")
        no_controls("top", out)
        print("top: no control bytes,", "row shown" if SHOWN in out else "not in the first rows")
        no_controls("status", ctl(d, "status"))

        # The log: escaped, never raw.
        d.log.flush()
        with open(d.log.name, "rb") as f:
            log = f.read()
        no_controls("muqssd.log", log)
        assert b"\n" + NAME[2:] not in log, "a raw newline split a log line"
        assert LOGGED in log, "no log line names the hostile process"
        print("log:", next(ln for ln in log.split(b"\n") if LOGGED in ln).decode())
        print("1 passed")
        return 0
    finally:
        if d:
            d.kill(15)
        scope.close()


if __name__ == "__main__":
    sys.exit(main())
