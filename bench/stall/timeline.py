"""The frame probe's timeline (frame-probe -t), for the stall benchmarks."""

import os
import time


def read_timeline(path, wait_s=5.0):
    """Its frames as (due us, late us, overran), once the probe has put the
    file in place (it writes it aside and renames it); FileNotFoundError if
    it has not within wait_s."""
    deadline = time.monotonic() + wait_s
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    with open(path) as f:
        return [(float(a), float(b), int(c)) for a, b, c in (line.split() for line in f)]
