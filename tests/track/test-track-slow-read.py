#!/usr/bin/env python3
"""New tasks' stat reads that take 800 ms each (the MUQSSD_TEST_STAT_DELAY_MS
hook, as a read of a task held mid-exec would) do not hold up the loop:
while 12 forks wait on their reads, the daemon answers STATUS at once and
its tick keeps time; then the reads come back and the table is exact.

The reconciling scan runs every 100 ms meanwhile: it finds the forks in
/proc before their reads are back, and must leave them to those reads, not
read their stat on the loop (it did, until the ninth session). A rule on
the command line makes the reads happen on the bpf sensor too."""
import os
import sys
import time

from trackharness import READS_FORCED_RULES, Scope, log

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "drills"))
import wire  # noqa: E402

DELAY_MS = 800
N = 12


def wait_socket(sock):
    """The control socket comes up after the tracker's start-up line."""
    deadline = time.monotonic() + 10
    while not os.path.exists(sock) and time.monotonic() < deadline:
        time.sleep(0.05)


def status_rtt(sock):
    t0 = time.monotonic()
    with wire.connect(sock) as c:
        wire.hello(c)
        t, body = wire.call(c, wire.STATUS)
    assert t == wire.OK, body
    return time.monotonic() - t0, body


os.environ["MUQSSD_TEST_STAT_DELAY_MS"] = str(DELAY_MS)
s = Scope(conf_text="[tracking]\nreconcile_interval_ms = 100\n", rules_text=READS_FORCED_RULES)
ok = False
try:
    sock = os.path.join(s.tmp, "sock")
    wait_socket(sock)
    _, before = status_rtt(sock)
    t0 = time.monotonic()
    s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "/bin/sh", "-c",
            f"for i in $(seq {N}); do /bin/sleep 30 & done; wait")
    # 2 readers, 800 ms a read: the last of the ~2N reads (each fork,
    # then its exec) is back after several seconds. Meanwhile the loop
    # answers at once.
    rtts = []
    while time.monotonic() - t0 < 2.0:
        rtt, st = status_rtt(sock)
        rtts.append(rtt)
        time.sleep(0.1)
    late_ms = st["tick"]["late_max_us"] / 1000
    log(f"STATUS while reads wait: worst {max(rtts) * 1000:.1f} ms over {len(rtts)}; "
        f"tick late at worst {late_ms:.1f} ms (before the forks "
        f"{before['tick']['late_max_us'] / 1000:.1f} ms); in table {st['tracking']['count']}")
    # Read on the loop, each read would hold it DELAY_MS, one after the
    # other for seconds; a busy machine may slow a reply, never that much.
    ok_loop = max(rtts) < DELAY_MS / 1000 and late_ms < DELAY_MS
    on_loop = st["tracking"]["stat_reads_on_loop"] - before["tracking"]["stat_reads_on_loop"]
    good, d, detail = s.compare(settle=1.0, tries=30)
    sleeps = sum(1 for t in d["tasks"] if t["comm"] == "sleep")
    log(f"table: {detail}; {sleeps} sleeps named so; stat reads on the loop while "
        f"reads were out: {on_loop}")
    ok = ok_loop and good and sleeps == N and on_loop == 0
    if not ok:
        log(s.log_text()[-3000:])
finally:
    s.close()
sys.exit(0 if ok else 1)
