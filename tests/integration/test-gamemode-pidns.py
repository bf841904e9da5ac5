#!/usr/bin/env python3
"""The gamemode bridge and games in a pid namespace of their own, as in
Flatpak (made here with unshare --pid --fork as root, then setpriv to the
user, on a private session bus).

A game that registers itself through Debian's libgamemode (1.7, which
passes pidfds: RegisterGameByPIDFd, as xdg-desktop-portal does) is ISO,
and dropped when it exits.

A game that passes its namespace pid by mistake (RegisterGame and
RegisterGameByPID with its getpid()) gets gamemode's -1. Its namespace
pid is made (ns_last_pid) to be the host pid of a bystander of the same
user: the bystander must stay normal."""

import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbus_util import SETPRIV, missing_for_bus_tests  # noqa: E402
from gamemode_util import GM, UserSession, stop_bridge, wait_for  # noqa: E402
from gamemode_util import all_in, classes  # noqa: E402
from expect import Expect  # noqa: E402
from sched_util import Daemon, Scope, argv_of, task_sched  # noqa: E402

# argv: pidfd|nspid DIR. Writes DIR/MODE.pid (its own pid, as it sees
# it), then DIR/MODE.result, then waits for DIR/MODE.exit.
CLIENT = """
import ctypes, os, subprocess, sys, time
mode, d = sys.argv[1], sys.argv[2]
GM = ["com.feralinteractive.GameMode", "/com/feralinteractive/GameMode",
      "com.feralinteractive.GameMode"]
def put(name, text):
    open(os.path.join(d, name + ".tmp"), "w").write(text)
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
def busctl(method, sig, *args):
    p = subprocess.run(["busctl", "--user", "call", *GM, method, sig, *args],
                       capture_output=True, text=True, timeout=10)
    return (p.stdout + p.stderr).strip()
me = os.getpid()
put(mode + ".pid", str(me))
if mode == "pidfd":
    result = str(ctypes.CDLL("libgamemode.so.0").real_gamemode_request_start())
else:
    result = "%s, %s" % (busctl("RegisterGame", "i", str(me)),
                         busctl("RegisterGameByPID", "ii", str(me), str(me)))
put(mode + ".result", result)
while not os.path.exists(os.path.join(d, mode + ".exit")):
    time.sleep(0.05)
"""


def main():
    skip = missing_for_bus_tests("busctl", "setpriv", "unshare")
    if skip:
        return skip
    tmp = tempfile.mkdtemp(prefix="muqss-gamemode-ns-")
    atexit.register(shutil.rmtree, tmp, True)
    user = UserSession(tmp)
    user_dir, as_user, client_count = user.dir, user.as_user, user.client_count
    client = os.path.join(tmp, "client.py")
    with open(client, "w") as f:
        f.write(CLIENT)
    by_file = os.path.join(tmp, "bystander.pid")
    unshare = "unshare --pid --fork --mount-proc"
    # The mistaken game gets the bystander's host pid as its own: pid 1
    # (bash) sets ns_last_pid and forks it ("; true": no exec in place).
    nspid = (f"{unshare} bash -c \"b=\\$(cat {by_file}); echo \\$((b - 1)) > "
             f"/proc/sys/kernel/ns_last_pid; {as_user} python3 {client} nspid {user_dir}; true\"")
    scope = Scope([f"{' '.join(SETPRIV)} sleep 120",
                   f"bash -c 'while [ ! -e {tmp}/go ]; do sleep 0.05; done; exec {unshare} "
                   f"{as_user} python3 {client} pidfd {user_dir}'",
                   f"bash -c 'while [ ! -e {tmp}/go2 ]; do sleep 0.05; done; exec {nspid}'"],
                  limit=60)
    expect = Expect()
    bridge = None

    def read(name):
        path = os.path.join(user_dir, name)
        return open(path).read() if os.path.exists(path) else None

    def host_pid(mode):
        for p in scope.pids():
            argv = argv_of(p)
            if argv[:1] == [b"python3"] and argv[2:4] == [mode.encode(), user_dir.encode()]:
                return p
        return None

    d = None
    try:
        d = Daemon(scope.root.pid, tmp)
        blog = open(os.path.join(tmp, "bridge.log"), "w")
        bridge = user.start_bridge(d.sock, blog)

        bystander = wait_for(lambda: next((p for p in scope.pids()
                                           if argv_of(p) == [b"sleep", b"120"]), None))
        with open(by_file, "w") as f:
            f.write(str(bystander))

        # libgamemode, by pidfd, from inside the namespace: works.
        open(os.path.join(tmp, "go"), "w").close()
        r = wait_for(lambda: read("pidfd.result"))
        game = host_pid("pidfd")
        expect("libgamemode's request from a pid namespace answers 0", r == "0", r)
        expect("its namespace pid is not its host pid", game and read("pidfd.pid") != str(game),
               (read("pidfd.pid"), game))
        expect("the game is iso", game and wait_for(lambda: all_in(d, game, "iso")),
               game and classes(d, game))
        expect("ClientCount 1", client_count() == "i 1", client_count())

        # By its namespace pid, which is the bystander's host pid: refused.
        open(os.path.join(tmp, "go2"), "w").close()
        r = wait_for(lambda: read("nspid.result"))
        expect("the mistaken game's namespace pid is the bystander's host pid",
               read("nspid.pid") == str(bystander), (read("nspid.pid"), bystander))
        expect("RegisterGame and RegisterGameByPID with a namespace pid answer -1",
               r == "i -1, i -1", r)
        expect("the bystander stays normal", all_in(d, bystander, "normal") and
               task_sched(bystander)[1] == "other",
               (classes(d, bystander), task_sched(bystander)))
        mistaken = host_pid("nspid")
        expect("the mistaken game stays normal", mistaken and all_in(d, mistaken, "normal"),
               mistaken and classes(d, mistaken))
        expect("ClientCount still 1", client_count() == "i 1", client_count())

        # The game exits: the bridge drops it through its pidfd.
        open(os.path.join(user_dir, "pidfd.exit"), "w").close()
        expect("the game that exited is dropped", wait_for(lambda: client_count() == "i 0"),
               client_count())
        q = user.busctl("call", *GM, "QueryStatus", "i", str(game)).stdout.strip()
        expect("its pid is nobody's game any more", q == "i 0", q)
        blog.flush()
        expect("the bridge says why it refused",
               "another pid namespace" in open(os.path.join(tmp, "bridge.log")).read())
    finally:
        if bridge:
            stuck = stop_bridge(bridge)
            expect("the bridge exits on SIGTERM", stuck is None, stuck)
        # Stopped before the scope goes: it restores what it changed.
        if d:
            d.kill(15)
        scope.close()
    if expect.failed:
        with open(os.path.join(tmp, "bridge.log"), errors="replace") as f:
            print("bridge log:\n" + f.read())
    return expect.exit_code()


if __name__ == "__main__":
    sys.exit(main())
