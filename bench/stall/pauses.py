"""Host pauses, for the stall benchmarks: a pause-probe (bench/load) pinned
to each CPU at SCHED_FIFO 50, above everything a bench starts. A wake-up
of it more than PAUSE_MS late means that CPU ran nothing at all, which on
a VM is the host not running that virtual CPU (a CPU silent for 100 ms in
a sched_switch trace; see bench/README). It wakes every 1 ms on each CPU,
in both modes alike."""

import os
import subprocess

PAUSE_MS = 10


class PauseProbes:
    """One pause-probe a CPU, writing to files in rawdir, for limit_s at most."""

    def __init__(self, build, rawdir, limit_s):
        self.paths = [os.path.join(rawdir, f"pauses.{cpu}") for cpu in range(os.cpu_count())]
        self.procs = []
        for cpu, path in enumerate(self.paths):
            with open(path, "w") as f:
                self.procs.append(subprocess.Popen(
                    ["chrt", "-f", "50", "taskset", "-c", str(cpu), "timeout", "-s", "TERM",
                     str(int(limit_s)), f"{build}/bench/load/pause-probe", "-t", str(PAUSE_MS)],
                    stdout=f))

    def between(self, t0, t1):
        """Pauses (ms late) seen between t0 and t1 (CLOCK_MONOTONIC s)."""
        out = []
        for path in self.paths:
            try:
                with open(path) as f:
                    for line in f:
                        t, late = map(float, line.split())
                        if t0 <= t <= t1 + 0.1:
                            out.append(late)
            except (OSError, ValueError):
                pass
        return sorted(out)

    def close(self):
        for p in self.procs:
            p.terminate()
            p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
