#!/usr/bin/env python3
"""Games with no gamemode, by the shipped conf/muqssd.rules.d/60-games.rules.

Steam: a fake reaper (a script named reaper, so its comm is reaper and its
command line "... reaper SteamLaunch AppId=440 -- ...", as Steam's) runs a
game through sh, and later starts a second one: both are ISO, the one
already running when muqssd starts and the one started after; the reaper
itself, and a bystander beside it, stay normal. AppId=570 has an opt-out
in 90-local.rules (the same key, read later): its game stays normal.

Wine: comm=Game.exe matches a process exec'd through a symlink named
wine64-preloader whose argv[1] is Z:\\games\\Game.exe (its comm is
"wine64-preloade"); the same with Other.exe matches nothing.

muqssctl rules --explain names the rule and the ancestor (pid, comm)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_util import HOG, MUQSSCTL, Daemon, Scope, argv_of, report  # noqa: E402

SRC = os.environ.get("MUQSS_SOURCE_ROOT", ".")

# argv: SteamLaunch AppId=N -- ARG [GATE]. Runs "sleep ARG" through sh,
# then, once GATE exists, "sleep ARG+1" directly.
REAPER = """#!/usr/bin/python3
import os, subprocess, sys, time
i = sys.argv.index("--")
arg = sys.argv[i + 1]
gate = sys.argv[i + 2] if len(sys.argv) > i + 2 else None
kids = [subprocess.Popen(["sh", "-c", "sleep %s; true" % arg])]
if gate:
    while not os.path.exists(gate):
        time.sleep(0.05)
    kids.append(subprocess.Popen(["sleep", str(int(arg) + 1)]))
for k in kids:
    k.wait()
"""


def find(scope, pred):
    for p in scope.pids():
        a = argv_of(p)
        if a and pred(a):
            return p
    return None


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    tmp = tempfile.mkdtemp(prefix="muqss-games-")
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    reaper = os.path.join(bindir, "reaper")
    with open(reaper, "w") as f:
        f.write(REAPER)
    os.chmod(reaper, 0o755)
    wine = os.path.join(bindir, "wine64-preloader")
    os.symlink(os.path.abspath(HOG), wine)
    rules = os.path.join(tmp, "rules.d")
    os.mkdir(rules)
    shutil.copy(os.path.join(SRC, "conf", "muqssd.rules.d", "60-games.rules"), rules)
    with open(os.path.join(rules, "90-local.rules"), "w") as f:
        f.write('ancestor_comm=reaper ancestor_cmdline=" SteamLaunch AppId=570( |$)" '
                "class=normal\n"
                "comm=Game.exe class=batch\n")
    conf = os.path.join(tmp, "muqssd.conf")
    with open(conf, "w") as f:
        f.write(f"[daemon]\nrules_dir = {rules}\n")
    go = os.path.join(tmp, "go")
    later = os.path.join(tmp, "later")
    until = time.clock_gettime(time.CLOCK_MONOTONIC) + 40

    def gated(cmd):
        return f"bash -c 'while [ ! -e {go} ]; do sleep 0.05; done; exec {cmd}'"
    # 440 and the bystander run before muqssd starts; the rest after.
    cmds = [f"{reaper} SteamLaunch AppId=440 -- 40 {later}",
            "sleep 60",
            gated(f"{reaper} SteamLaunch AppId=570 -- 50"),
            gated(f'env HOG_UNTIL={until} {wine} "Z:\\games\\Game.exe"'),
            gated(f'env HOG_UNTIL={until} {wine} "Z:\\games\\Other.exe"')]
    failed = []
    scope = Scope(cmds, limit=60)
    d = None
    try:
        d = Daemon(scope.root.pid, tmp, config=conf)
        open(go, "w").close()
        open(later, "w").close()

        def sleeper(secs):
            return find(scope, lambda a: a[0] == b"sleep" and a[1:] == [secs.encode()])

        def wine_with(exe):
            return find(scope, lambda a: a[0].endswith(b"/wine64-preloader") and
                        a[1:] == [exe.encode()])
        def reaper_of(app):
            return find(scope, lambda a: a[0].endswith(b"python3") and len(a) > 3 and
                        a[1].endswith(b"/reaper") and a[3] == app)
        reaper440 = reaper_of(b"AppId=440")
        want = {"game under AppId=440 (running before muqssd)": (lambda: sleeper("40"), "iso"),
                "game started later under AppId=440": (lambda: sleeper("41"), "iso"),
                "game under AppId=570 (opted out)": (lambda: sleeper("50"), "normal"),
                "reaper itself": (lambda: reaper440, "normal"),
                "bystander": (lambda: sleeper("60"), "normal"),
                "Wine's Game.exe": (lambda: wine_with("Z:\\games\\Game.exe"), "batch"),
                "Wine's Other.exe": (lambda: wine_with("Z:\\games\\Other.exe"), "normal")}

        def classes():
            tasks = json.loads(d.ctl("tasks", "--json").stdout)["tasks"]
            by_tid = {t["tid"]: t["class"] for t in tasks}
            return {what: by_tid.get(pid()) for what, (pid, _) in want.items()}

        end = time.monotonic() + 10
        got = {}
        while time.monotonic() < end:
            got = classes()
            if all(got[w] == c for w, (_, c) in want.items()):
                break
            time.sleep(0.1)
        for what, (pid, cls) in want.items():
            ok = got.get(what) == cls
            print(("ok: " if ok else "FAIL: ") + f"{what} ({pid()}) is {cls}")
            if not ok:
                failed.append(f"{what} ({pid()}) is {got.get(what)}, not {cls}")

        def explain(pid):
            p = subprocess.run([MUQSSCTL, "rules", "--rules-dir", rules, "--explain", str(pid)],
                               capture_output=True, text=True, errors="replace", timeout=10)
            return p.stdout + p.stderr

        checks = [(sleeper("41"), f"its ancestor {reaper440} (reaper, 1 level up)"),
                  (sleeper("40"), f"its ancestor {reaper440} (reaper, 2 levels up)"),
                  (sleeper("50"), "90-local.rules:1 matched"),
                  (wine_with("Z:\\games\\Game.exe"),
                   '"Game.exe" is the Windows program Z:/games/Game.exe that Wine runs')]
        for pid, text in checks:
            out = explain(pid)
            ok = text in out
            print(("ok: " if ok else "FAIL: ") + f"explain {pid} says {text}")
            if not ok:
                failed.append(f"explain {pid}: {out.strip()}")
    finally:
        # Stopped before the scope goes: it restores what it changed.
        if d:
            d.kill(15)
        scope.close()
        shutil.rmtree(tmp, True)
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
