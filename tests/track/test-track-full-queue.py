#!/usr/bin/env python3
"""More new tasks than the stat reader's queue holds (128), each read slowed
to 40 ms (the MUQSSD_TEST_STAT_DELAY_MS hook, as reads of tasks held
mid-exec would be): the reads that do not fit wait for room, none is taken
on the loop thread, where it would wait with its task, and none is lost:
once they are back the table is exact. A rule on the command line, which
only a read gives, makes each new process's read happen on the bpf sensor
too, whose events tell the rest of a stat."""
import os
import sys
import time

from trackharness import READS_FORCED_RULES, Scope, log

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "drills"))
import wire  # noqa: E402

DELAY_MS = 40
N = 160  # forks, then as many execs: 320 reads, 2 readers, ~6.4 s


def status(sock):
    with wire.connect(sock) as c:
        wire.hello(c)
        t, body = wire.call(c, wire.STATUS)
    assert t == wire.OK, body
    return body


os.environ["MUQSSD_TEST_STAT_DELAY_MS"] = str(DELAY_MS)
s = Scope(rules_text=READS_FORCED_RULES)
ok = False
try:
    sock = os.path.join(s.tmp, "sock")
    deadline = time.monotonic() + 10
    while not os.path.exists(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    before = status(sock)["tracking"]
    s.spawn("/usr/bin/timeout", "-s", "KILL", "60", "/bin/sh", "-c",
            f"for i in $(seq {N}); do /bin/sleep 40 & done; wait")
    good, d, detail = s.compare(settle=1.0, tries=40)
    after = status(sock)["tracking"]
    sleeps = sum(1 for t in d["tasks"] if t["comm"] == "sleep")
    on_loop = after["stat_reads_on_loop"] - before["stat_reads_on_loop"]
    deferred = after["stat_reads_deferred"] - before["stat_reads_deferred"]
    log(f"table: {detail}; {sleeps} of {N} sleeps named so; reads deferred {deferred}, "
        f"read on the loop {on_loop}")
    # Deferred, or the test did not fill the queue and shows nothing.
    ok = good and sleeps == N and on_loop == 0 and deferred > 0
    if not ok:
        log(s.log_text()[-3000:])
finally:
    s.close()
sys.exit(0 if ok else 1)
