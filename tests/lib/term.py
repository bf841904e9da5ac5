"""SIGTERM for the test harnesses.

meson's timeout sends SIGTERM to the test's process group, and SIGKILL
0.5 s later. A daemon a test started runs in timeout(1)'s own group and
misses both, so the harness must stop it: as SystemExit, SIGTERM still
runs the test's finally blocks."""
import signal


def _exit(signum, _frame):
    raise SystemExit(128 + signum)


def exit_on_sigterm():
    signal.signal(signal.SIGTERM, _exit)
