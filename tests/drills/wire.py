"""The control protocol from the client side, byte for byte, so a drill can
send what muqssctl never would. PROTOCOL.md is the reference."""

import json
import os
import socket
import struct
import time

HEADER = struct.Struct("=HHI")
VERSION = 1
HELLO, OK, ERROR, ITEM, END = 1, 2, 3, 4, 5
STATUS, GET, SET, SET_CLASS, QUEUES, TASKS, RELOAD = 16, 17, 18, 19, 20, 21, 22
MAX_BODY = 64 * 1024


def frame(type_, body=b"{}", version=VERSION, length=None):
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    return HEADER.pack(version, type_, len(body) if length is None else length) + body


def connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError(f"closed after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


def read_frame(s):
    version, type_, length = HEADER.unpack(recv_exact(s, HEADER.size))
    body = recv_exact(s, length) if length else b""
    return version, type_, json.loads(body) if body else {}


def hello(s):
    s.sendall(frame(HELLO, {"client": "drill"}))
    _, t, body = read_frame(s)
    if t != HELLO:
        raise AssertionError(f"hello answered with type {t}: {body}")
    return body


def call(s, type_, body=None):
    """One request; an OK/ERROR reply, or the ITEMs of a list."""
    s.sendall(frame(type_, body if body is not None else {}))
    items = []
    while True:
        _, t, reply = read_frame(s)
        if t == ITEM:
            items.append(reply)
            continue
        if t == END:
            return END, items
        return t, reply


def status_latency(path):
    """Seconds from sending STATUS on a ready connection to its whole reply."""
    with connect(path) as s:
        hello(s)
        t0 = time.monotonic()
        t, _ = call(s, STATUS)
        dt = time.monotonic() - t0
    if t != OK:
        raise AssertionError(f"status answered with type {t}")
    return dt


def rss_kib(pid, field="VmRSS"):
    """pid's resident memory in KiB; field="VmHWM" for its peak."""
    key = field.encode() + b":"
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0
    return int(rest[11]) + int(rest[12])


def tick_hz():
    return os.sysconf("SC_CLK_TCK")
