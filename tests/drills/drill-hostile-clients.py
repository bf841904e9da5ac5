#!/usr/bin/env python3
"""Hostile and careless clients, while a frame probe runs among hogs and the
daemon schedules them: 1,000 concurrent connections (256 served, the rest
refused politely), a request flood for 10 s, half headers that stall,
bodies of 64 KiB + 1, invalid UTF-8, JSON nested 10,000 deep, wrong
protocol versions, and clients that hang up mid-reply. Afterwards the
daemon answers, its RSS is back within 10% of the baseline, and the probe
misses no more frames than in a control run without the storm."""

import json
import os
import resource
import shutil
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sched_util import HOG, PROBE, Daemon, Scope, assert_clean, task_sched  # noqa: E402
import wire  # noqa: E402

PROBE_S = 16
FLOOD_S = 10
MAX_CLIENTS = 256


def expect_error(s, what, pattern):
    """The daemon answers ERROR naming the problem, then closes."""
    try:
        _, t, body = wire.read_frame(s)
    except (EOFError, OSError) as e:
        raise AssertionError(f"{what}: no error reply ({e})")
    assert t == wire.ERROR and pattern in body.get("message", ""), f"{what}: got {t} {body}"
    s.settimeout(5)
    try:
        rest = s.recv(1)
    except ConnectionResetError:
        rest = b""  # closed with our bytes unread: the kernel resets
    s.close()
    assert rest == b"", f"{what}: the connection stayed open"
    return body["message"]


def storm_connections(path, n):
    served = refused = other = 0
    socks = []
    for _ in range(n):
        s = wire.connect(path)
        try:
            s.sendall(wire.frame(wire.HELLO, {"client": "drill"}))
        except OSError:
            pass  # refused and closed already; the reason waits unread
        socks.append(s)
    for s in socks:
        try:
            _, t, body = wire.read_frame(s)
        except (EOFError, OSError):
            other += 1
            continue
        if t == wire.HELLO:
            served += 1
        elif t == wire.ERROR and "too many clients" in body.get("message", ""):
            refused += 1
        else:
            other += 1
    for s in socks:
        s.close()
    return served, refused, other


def flood(path, seconds, conns=4, batch=64):
    """Pipelined STATUS requests on a few connections; replies per second."""
    socks = [wire.connect(path) for _ in range(conns)]
    for s in socks:
        wire.hello(s)
    req = wire.frame(wire.STATUS) * batch
    done = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        for s in socks:
            s.sendall(req)
        for s in socks:
            for _ in range(batch):
                _, t, _ = wire.read_frame(s)
                assert t == wire.OK, f"flood: reply type {t}"
                done += 1
    rate = done / (time.monotonic() - t0)
    for s in socks:
        s.close()
    return done, rate


def malformed(path):
    out = {}
    # Bodies of 64 KiB + 1: refused from the header.
    s = wire.connect(path)
    wire.hello(s)
    s.sendall(wire.frame(wire.STATUS, b"", length=wire.MAX_BODY + 1))
    out["64KiB+1"] = expect_error(s, "64 KiB + 1 body", "frame too large")
    s = wire.connect(path)
    try:
        s.sendall(wire.frame(wire.STATUS, b"{" + b" " * (wire.MAX_BODY - 1) + b"}"))
    except OSError:
        pass  # refused from the header: the rest of the body meets a closed socket
    out["64KiB+1 whole"] = expect_error(s, "64 KiB + 1 body sent whole", "frame too large")
    # Invalid UTF-8 (and a control character) in a name the error echoes:
    # the reply must still be valid UTF-8 JSON.
    s = wire.connect(path)
    wire.hello(s)
    s.sendall(wire.frame(wire.GET, b'{"name": "\xff\xfe\xc0\x80\xed\xa0\x80rr\\u001b[2J"}'))
    _, t, length = wire.HEADER.unpack(wire.recv_exact(s, wire.HEADER.size))
    raw = wire.recv_exact(s, length)
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise AssertionError(f"reply to invalid UTF-8 is not UTF-8: {raw!r}")
    assert t == wire.ERROR and "\x1b" not in body["message"], f"utf8: {t} {body}"
    out["utf8"] = body["message"]
    s.close()
    # JSON nested 10,000 deep.
    s = wire.connect(path)
    wire.hello(s)
    s.sendall(wire.frame(wire.STATUS, b"[" * 10000 + b"]" * 10000))
    out["nested"] = expect_error(s, "nested JSON", "malformed")
    s = wire.connect(path)
    wire.hello(s)
    s.sendall(wire.frame(wire.STATUS, b'{"a":' * 10000 + b"1" + b"}" * 10000))
    out["nested objects"] = expect_error(s, "nested objects", "malformed")
    # Wrong protocol versions, in the hello and after it.
    for v in (0, 2, 0xffff):
        s = wire.connect(path)
        s.sendall(wire.frame(wire.HELLO, {"client": "drill"}, version=v))
        out[f"version {v}"] = expect_error(s, f"version {v}", "protocol version mismatch")
    s = wire.connect(path)
    wire.hello(s)
    s.sendall(wire.frame(wire.STATUS, version=2))
    out["version 2 later"] = expect_error(s, "version 2 after hello", "protocol version mismatch")
    # Unknown type, and a request before the hello.
    s = wire.connect(path)
    s.sendall(wire.frame(wire.STATUS))
    out["no hello"] = expect_error(s, "no hello", "hello")
    return out


def hang_ups(path, n=100):
    """Ask for long replies and go away without reading, half with a reset."""
    for i in range(n):
        s = wire.connect(path)
        s.sendall(wire.frame(wire.HELLO, {"client": "drill"}) +
                  (wire.frame(wire.TASKS) + wire.frame(wire.QUEUES)) * 50)
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        s.close()


def run_probe(scope_cmds, tmp, storm):
    scope = Scope(scope_cmds, limit=PROBE_S + 40)
    d = None
    try:
        d = Daemon(scope.root.pid, scope.tmp)
        path = d.sock
        for _ in range(3):  # warm up: every reply kind once
            d.ctl("status"), d.ctl("tasks"), d.ctl("queues")
        if storm:
            # And every path of the storm, on a small scale: the daemon
            # locks its pages as it first touches them (MCL_ONFAULT), so a
            # baseline taken before would count code and a full client
            # table, not what a storm leaves behind.
            storm_connections(path, MAX_CLIENTS + 50)
            flood(path, 1)
            malformed(path)
            hang_ups(path, 10)
            time.sleep(1)
        time.sleep(0.5)
        base_rss = wire.rss_kib(d.pid)
        figures = {"rss_base_kib": base_rss}
        if storm:
            stalled = []
            for _ in range(50):  # half a header, then silence
                s = wire.connect(path)
                s.sendall(wire.frame(wire.HELLO)[:4])
                stalled.append(s)
            # 50 slots taken: the cap is reached sooner.
            t0 = time.monotonic()
            figures["connections"] = storm_connections(path, 1000)
            figures["connections_s"] = round(time.monotonic() - t0, 2)
            figures["flood_replies"], figures["flood_rate"] = flood(path, FLOOD_S)
            figures["malformed"] = malformed(path)
            hang_ups(path)
            figures["rss_peak_kib"] = wire.rss_kib(d.pid)
            # Measured from FIFO, so the hogs' share of the CPU is not counted.
            os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(19))
            try:
                # Right after the hang-ups the daemon still works off their
                # requests (a figure); a second later it must be quick again.
                figures["status_ms_at_once"] = round(wire.status_latency(path) * 1000, 2)
                time.sleep(1)
                lat = sorted(wire.status_latency(path) for _ in range(20))
            finally:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            figures["status_ms_after"] = round(lat[-1] * 1000, 2)
            # Stalled clients go at the idle timeout (10 s).
            end = time.monotonic() + 15
            dropped = 0
            for s in stalled:
                s.settimeout(max(0.1, end - time.monotonic()))
                try:
                    dropped += s.recv(1) == b""
                except OSError:
                    pass
                s.close()
            figures["stalled_dropped"] = dropped
            st = json.loads(d.ctl("--json", "status").stdout)
            figures["clients_after"] = st.get("clients")
            time.sleep(1)
            figures["rss_after_kib"] = wire.rss_kib(d.pid)
            with open(f"/proc/{d.pid}/maps", "rb") as f:
                figures["asan"] = b"libasan" in f.read()
        probe_out = os.path.join(tmp, "probe.json")
        end = time.monotonic() + PROBE_S + 10
        while time.monotonic() < end:
            try:
                with open(probe_out) as f:
                    figures["probe"] = json.load(f)
                break
            except (OSError, json.JSONDecodeError):
                time.sleep(0.2)
        assert "probe" in figures, "the probe printed nothing"
        assert d.proc.poll() is None, "muqssd died"
        d.ctl("status")
        d.kill(signal.SIGTERM)
        d = None
        # The probe has exited by now: a zombie keeps its last policy.
        assert_clean([p for p in scope.pids() if task_sched(p)[0] != "Z"], "after SIGTERM")
        return figures
    finally:
        if d:
            d.kill(signal.SIGTERM)
        scope.close()


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    results = {}
    for name in ("control", "storm"):
        tmp = os.path.join("/tmp", f"muqss-hostile-{os.getpid()}-{name}")
        os.makedirs(tmp, exist_ok=True)
        cmds = [f"{PROBE} -d {PROBE_S} > {tmp}/probe.json", f"{HOG} {PROBE_S} >/dev/null",
                f"{HOG} {PROBE_S} >/dev/null", f"{HOG} {PROBE_S} >/dev/null"]
        try:
            results[name] = run_probe(cmds, tmp, name == "storm")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(name, json.dumps(results[name], indent=1))
    c, s = results["control"], results["storm"]
    served, refused, other = s["connections"]
    assert served + 50 <= MAX_CLIENTS + 1 and refused >= 1000 - MAX_CLIENTS and other == 0, \
        f"1,000 connections: {served} served, {refused} refused, {other} otherwise"
    assert s["stalled_dropped"] == 50, f"only {s['stalled_dropped']} of 50 stalled clients dropped"
    if s["asan"]:
        # ASan keeps freed memory in quarantine and runs several times slower:
        # memory and latency are figures of the plain build only.
        print("ASan build: RSS and latency not asserted")
    else:
        assert s["status_ms_after"] < 100, f"status took {s['status_ms_after']} ms after the storm"
        assert s["rss_after_kib"] <= s["rss_base_kib"] * 1.10, \
            f"RSS {s['rss_after_kib']} KiB, baseline {s['rss_base_kib']} KiB"
    cm, sm = c["probe"]["missed_pct"], s["probe"]["missed_pct"]
    # Noise on a shared 2-CPU machine: a couple of points, or double a tiny
    # rate. Frames are timing, like latency: the plain build's to assert (an
    # ASan daemon serving the flood runs past its tick's bound, and the
    # deadman then drops the probe's boost).
    if not s["asan"]:
        assert sm <= max(cm * 2, cm + 2.0), f"frame misses {sm}% under the storm, {cm}% without"
    print(f"probe missed: control {cm}%, storm {sm}%; flood {s['flood_rate']:.0f} req/s;"
          f" RSS {s['rss_base_kib']} -> peak {s['rss_peak_kib']} -> {s['rss_after_kib']} KiB")
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
