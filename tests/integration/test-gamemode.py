#!/usr/bin/env python3
"""The gamemode bridge with Debian's own client: gamemoderun (libgamemodeauto)
starts a small program under a private session bus where muqss-gamemode
owns com.feralinteractive.GameMode, everything as an unprivileged user.
muqssctl tasks --json shows the program ISO while it is registered, and
normal once it unregisters (gamemode_request_end, as games call it). A
second game killed without unregistering is dropped through its pidfd."""

import atexit
import os
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gamemode_util import GM, UserSession, stop_bridge, wait_for  # noqa: E402
from gamemode_util import all_in as gm_all_in, classes as gm_classes  # noqa: E402
from sched_util import Daemon, Scope  # noqa: E402

GAMEMODERUN = "/usr/games/gamemoderun"

# The game: says its pid, then waits for the test. "end" makes it call
# gamemode_request_end() through libgamemode, as a game linked with
# gamemode_client.h does; then it waits for "exit".
GAME = """
import ctypes, os, sys, time
d = sys.argv[1]
def wait(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.02)
open(os.path.join(d, "game.pid.tmp"), "w").write(str(os.getpid()))
os.rename(os.path.join(d, "game.pid.tmp"), os.path.join(d, "game.pid"))
wait("end")
r = ctypes.CDLL("libgamemode.so.0").real_gamemode_request_end()
open(os.path.join(d, "ended"), "w").write(str(r))
wait("exit")
"""


def main():
    if os.geteuid() != 0:
        print("needs root")
        return 77
    for prog in ("dbus-daemon", "busctl", "setpriv", GAMEMODERUN):
        if not shutil.which(prog):
            print(f"{prog} is not installed (package gamemode, dbus)")
            return 77
    tmp = tempfile.mkdtemp(prefix="muqss-gamemode-")
    atexit.register(shutil.rmtree, tmp, True)
    user = UserSession(tmp)
    user_dir, as_user = user.dir, user.as_user
    busctl, client_count = user.busctl, user.client_count
    with open(os.path.join(tmp, "game.py"), "w") as f:
        f.write(GAME)
    game = f"{as_user} {GAMEMODERUN} /usr/bin/python3 {tmp}/game.py {user_dir}"
    game2 = f"{as_user} {GAMEMODERUN} /usr/bin/sleep 50"
    scope = Scope([f"bash -c 'while [ ! -e {tmp}/go ]; do sleep 0.05; done; exec {game}'",
                   f"bash -c 'while [ ! -e {tmp}/go2 ]; do sleep 0.05; done; exec {game2}'",
                   f"bash -c 'while [ ! -e {tmp}/go3 ]; do sleep 0.05; done; exec {game2}'"],
                  limit=60)
    failed = []
    bridge = None

    def expect(what, cond, detail=""):
        print(("ok: " if cond else "FAIL: ") + what)
        if not cond:
            failed.append(f"{what}: {detail}")

    try:
        d = Daemon(scope.root.pid, tmp)
        blog = open(os.path.join(tmp, "bridge.log"), "w")
        bridge = user.start_bridge(d.sock, blog)

        def classes(pid):
            return gm_classes(d, pid)

        def all_in(pid, cls):
            return gm_all_in(d, pid, cls)

        open(os.path.join(tmp, "go"), "w").close()
        pid_file = os.path.join(user_dir, "game.pid")
        assert wait_for(lambda: os.path.exists(pid_file)), "the game did not start"
        pid = int(open(pid_file).read())
        expect("game is iso while registered", wait_for(lambda: all_in(pid, "iso")),
               classes(pid))
        expect("ClientCount 1", client_count() == "i 1", client_count())
        games = busctl("call", *GM, "ListGames").stdout
        expect("ListGames names it", f" {pid} " in games, games)
        q = busctl("call", *GM, "QueryStatus", "i", str(pid)).stdout.strip()
        expect("QueryStatus 2", q == "i 2", q)

        open(os.path.join(user_dir, "end"), "w").close()
        ended = os.path.join(user_dir, "ended")
        expect("gamemode_request_end returned 0",
               wait_for(lambda: os.path.exists(ended) and open(ended).read() == "0"))
        expect("game is normal after it unregistered", wait_for(lambda: all_in(pid, "normal")),
               classes(pid))
        expect("ClientCount 0", client_count() == "i 0", client_count())
        open(os.path.join(user_dir, "exit"), "w").close()

        # Killed without unregistering: the pidfd tells the bridge.
        open(os.path.join(tmp, "go2"), "w").close()

        def sleeper(but=None):
            for p in scope.pids():
                try:
                    if open(f"/proc/{p}/comm").read().strip() == "sleep" and \
                            os.stat(f"/proc/{p}").st_uid == 65534 and p != but:
                        return p
                except OSError:
                    pass
            return None
        p2 = wait_for(sleeper)
        expect("second game is iso", p2 and wait_for(lambda: all_in(p2, "iso")))
        os.kill(p2, signal.SIGKILL)
        expect("killed game dropped", wait_for(lambda: client_count() == "i 0"), client_count())

        # --mode nice: a nice instead of ISO, the old one back at unregister.
        stuck = stop_bridge(bridge)
        expect("the bridge exits on SIGTERM", stuck is None, stuck)
        bridge = user.start_bridge(d.sock, blog, "--mode", "nice", "--nice", "5")
        open(os.path.join(tmp, "go3"), "w").close()
        p3 = wait_for(lambda: sleeper(but=p2))
        expect("nice mode: game gets nice 5",
               p3 and wait_for(lambda: os.getpriority(os.PRIO_PROCESS, p3) == 5))
        expect("nice mode: game stays normal", p3 and all_in(p3, "normal"), p3 and classes(p3))
        r = busctl("call", *GM, "UnregisterGame", "i", str(p3)).stdout.strip()
        expect("nice mode: unregister", r == "i 0", r)
        # Back from 5 to 0 is a lower nice: muqssd refuses it to a user, as
        # setpriority(2) would; only its admin group gets the old nice back.
        expect("nice mode: a user cannot lower the nice back",
               p3 and os.getpriority(os.PRIO_PROCESS, p3) == 5)
        r = [busctl("call", *GM, m, "ii", str(p3), str(p3)).stdout.strip()
             for m in ("RegisterGameByPID", "RegisterGameByPID", "QueryStatusByPID",
                       "UnregisterGameByPID", "UnregisterGameByPID")]
        expect("ByPID forms answer as gamemoded's", r == ["i 0", "i -1", "i 2", "i 0", "i -1"], r)
        blog.flush()
        expect("nice mode: the bridge says why",
               "needs root" in open(os.path.join(tmp, "bridge.log")).read())
    finally:
        if bridge:
            stuck = stop_bridge(bridge)
            expect("the bridge exits on SIGTERM at the end", stuck is None, stuck)
        scope.close()
    print(f"{0 if failed else 1} passed, {len(failed)} failed")
    for f in failed:
        print("  " + f)
    if failed:
        with open(os.path.join(tmp, "bridge.log"), errors="replace") as f:
            print("bridge log:\n" + f.read())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
