#!/usr/bin/env bash
# Drives muqssctl against a real muqssd on a temporary socket, scoped to a
# process tree this script starts.    test-control-integration.sh CASE
#   root | nobody | no-daemon | flood | run-iso | queues | hidepid
set -euo pipefail

CASE=$1
B=${MUQSS_BUILD_ROOT:?}
MUQSSD=$B/muqssd/muqssd
CTL=$B/muqssctl/muqssctl
FLOOD=$B/tests/control/control-flood

T=$(mktemp -d /tmp/muqss-control.XXXXXX)
chmod 755 "$T" # nobody must reach the socket
SOCK=$T/run/control
PIDS=()
DAEMON=

# Children first, by pid, so nothing the test started outlives it.
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do
		kill_tree "$c"
	done
	kill -CONT "$1" 2>/dev/null
	kill -KILL "$1" 2>/dev/null
}

cleanup() {
	set +e
	[ -n "$DAEMON" ] && kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
	for p in "${PIDS[@]}"; do
		kill_tree "$p"
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	[ -f "$T/daemon.log" ] && tail -20 "$T/daemon.log" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

ctl() {
	"$CTL" --socket "$SOCK" "$@"
}

# ctl_expect CODE 'exact stderr' ARGS...: the exit code and the message.
ctl_expect() {
	local want=$1 msg=$2 rc=0
	shift 2
	"$@" 2>"$T/err" >"$T/out" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, wanted $want: $(cat "$T/err")"
	[ -z "$msg" ] || grep -qxF -- "$msg" "$T/err" || fail "$*: wanted '$msg', got '$(cat "$T/err")'"
}

# The scope: a shell the test owns, whose children are root's and
# nobody's sleepers. Extra commands for it come through $T/go.
start_scope() {
	mkfifo "$T/go"
	bash -c '
		sleep 300 & echo $! > "$1/root.pid"
		setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 300 & echo $! > "$1/nobody.pid"
		read -r cmd < "$1/go"
		eval "$cmd"
		wait' _ "$T" &
	SCOPE=$!
	PIDS+=("$SCOPE")
	for _ in $(seq 50); do [ -s "$T/nobody.pid" ] && break; sleep 0.1; done
	ROOT_PID=$(cat "$T/root.pid")
	NOBODY_PID=$(cat "$T/nobody.pid")
}

# start_daemon [WRAPPER...]: muqssd, run through WRAPPER when given.
start_daemon() {
	timeout 120 "$@" "$MUQSSD" --socket "$SOCK" --state-dir "$T/state" --scope-pid "$SCOPE" \
		--config "$T/muqssd.conf" >"$T/daemon.log" 2>&1 &
	DAEMON=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		kill -0 "$DAEMON" 2>/dev/null || fail "muqssd exited early"
		sleep 0.1
	done
	fail "no control socket after 10 s"
}

# Scheduling lands separately: until daemon_set_class works, the tests that
# need it skip and say why.
need_set_class() {
	local rc=0
	ctl normal "$ROOT_PID" 2>"$T/err" || rc=$?
	if grep -q "not implemented" "$T/err"; then
		skip "the daemon does not set classes yet: $(cat "$T/err")"
	fi
	[ "$rc" -eq 0 ] || fail "normal $ROOT_PID: $(cat "$T/err")"
}

json_check() { # python expression over `d`, then the JSON on stdin
	python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"
}

# proc_options PID: the super options of the proc mount at /proc that PID sees.
proc_options() {
	awk '$5 == "/proc" { o = $NF } END { print o }' "/proc/$1/mountinfo"
}

kernel_at_least() { # MAJOR MINOR
	local maj min
	IFS=. read -r maj min _ <<<"$(uname -r)"
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}

# remount_daemon_proc OPTIONS: remounts the daemon's own /proc, never ours.
remount_daemon_proc() {
	[ "$(readlink "/proc/$MPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
		fail "muqssd ($MPID) shares our mount namespace: not remounting /proc"
	nsenter --target "$MPID" --mount mount -o "remount,$1" /proc ||
		fail "cannot remount the daemon's /proc with $1"
	[ "$(proc_options self)" = "$HOST_OPTS" ] || fail "the host's /proc changed: $(proc_options self)"
	ctl_expect 0 "" ctl reload
}

: >"$T/muqssd.conf"

case $CASE in
root)
	start_scope
	start_daemon
	ctl status | grep -q "^muqssd " || fail "status"
	ctl status --json | json_check 'd["protocol"] == 1 and "rr_interval" in d["tunables"]' ||
		fail "status --json"
	[ "$(ctl get rr_interval)" = 6 ] || fail "get rr_interval"
	ctl_expect 6 "muqssctl: rr_interval must be 1..1000 ms" ctl set rr_interval 0
	ctl_expect 6 "muqssctl: rr_interval must be 1..1000 ms" ctl set rr_interval 1001
	ctl_expect 6 "muqssctl: iso_cpu must be 0..100 %" ctl set iso_cpu 101
	ctl_expect 6 "muqssctl: iso_reading must be machine or per-cpu" ctl set iso_reading x
	ctl_expect 0 "" ctl set rr_interval 10
	[ "$(ctl get rr_interval)" = 10 ] || fail "rr_interval did not change"
	ctl_expect 0 "" ctl set iso_reading per-cpu
	ctl --json get | json_check 'd["iso_reading"] == "per-cpu" and d["rr_interval"] == 10' ||
		fail "get --json"
	ctl tasks --json | json_check 'isinstance(d["tasks"], list) and d["version"] == 1' ||
		fail "tasks --json"
	ctl queues --json | json_check 'isinstance(d["cpus"], list) and d["version"] == 1' ||
		fail "queues --json"
	ctl_expect 0 "" ctl reload
	ctl_expect 5 "muqssctl: no such process: 4194304" ctl iso 4194000 4194304 || true
	ctl_expect 2 "" ctl iso notapid
	ctl_expect 2 "" ctl frobnicate
	ctl top -n 2 -d 0.2 >"$T/top.out" || fail "top exited $?"
	grep -q "CPU share" "$T/top.out" || fail "top printed no share line"
	;;
nobody)
	start_scope
	start_daemon
	as_nobody "$CTL" --socket "$SOCK" status >/dev/null || fail "nobody cannot read status"
	# Own process: authorization passes; the scheduler may still say no.
	rc=0
	as_nobody "$CTL" --socket "$SOCK" iso "$NOBODY_PID" 2>"$T/err" || rc=$?
	grep -q "permission denied" "$T/err" && fail "nobody refused on own process: $(cat "$T/err")"
	[ "$rc" -ne 4 ] || fail "nobody got exit 4 on own process"
	echo "nobody iso own process: exit $rc $(cat "$T/err")"
	ctl_expect 4 "muqssctl: permission denied: pid $ROOT_PID belongs to uid 0" \
		as_nobody "$CTL" --socket "$SOCK" iso "$ROOT_PID"
	ctl_expect 4 "muqssctl: permission denied: changing tunables needs root" \
		as_nobody "$CTL" --socket "$SOCK" set rr_interval 10
	ctl_expect 4 "muqssctl: permission denied: reload needs root" \
		as_nobody "$CTL" --socket "$SOCK" reload
	# Into IDLEPRIO is free; out of it needs root, as in MuQSS.
	if as_nobody "$CTL" --socket "$SOCK" idleprio "$NOBODY_PID" 2>"$T/err"; then
		ctl_expect 4 "muqssctl: permission denied: leaving idleprio needs root (pid $NOBODY_PID)" \
			as_nobody "$CTL" --socket "$SOCK" iso "$NOBODY_PID"
		ctl_expect 0 "" ctl normal "$NOBODY_PID"
	else
		echo "idleprio not applied ($(cat "$T/err")); leaving-idleprio check not run"
	fi
	;;
no-daemon)
	ctl_expect 3 "muqssctl: cannot connect to $T/none: No such file or directory; is muqssd running? (systemctl start muqssd)" \
		"$CTL" --socket "$T/none" status
	MUQSS_SOCKET=$T/none ctl_expect 3 "" "$CTL" iso 1
	;;
flood)
	start_scope
	start_daemon
	"$FLOOD" "$SOCK" 200 || fail "flood"
	ctl status >/dev/null || fail "daemon unusable after the flood"
	;;
run-iso)
	start_scope
	start_daemon
	need_set_class
	# muqssctl runs inside the scope, so the program is managed.
	echo "\"$CTL\" --socket \"$SOCK\" run -I -- sh -c 'echo \$\$ > \"$T/prog.pid\"; i=0; while [ \$i -lt 4000000 ]; do i=\$((i+1)); done; exit 3' > \"$T/run.out\" 2>&1; echo \$? > \"$T/run.rc\"" >"$T/go"
	for _ in $(seq 50); do [ -s "$T/prog.pid" ] && break; sleep 0.1; done
	[ -s "$T/prog.pid" ] || fail "run did not start the program: $(cat "$T/run.out" 2>/dev/null)"
	PROG=$(cat "$T/prog.pid")
	seen=
	for _ in $(seq 50); do
		if ctl queues --json | json_check "any(e['tid'] == $PROG and e['class'] == 'iso' for c in d['cpus'] for e in c['queue'])"; then
			seen=1
			break
		fi
		sleep 0.1
	done
	[ -n "$seen" ] || fail "the program never showed up as iso in queues"
	for _ in $(seq 300); do [ -s "$T/run.rc" ] && break; sleep 0.1; done
	[ "$(cat "$T/run.rc")" = 3 ] || fail "run did not return the program's status"
	;;
queues)
	start_scope
	start_daemon
	need_set_class
	# Busy loops that end by themselves (a few seconds each).
	LOOP="i=0; while [ \$i -lt 6000000 ]; do i=\$((i+1)); done"
	echo "sh -c '$LOOP' & echo \$! > \"$T/a.pid\"; sh -c '$LOOP' & echo \$! > \"$T/b.pid\"" >"$T/go"
	for _ in $(seq 50); do [ -s "$T/b.pid" ] && break; sleep 0.1; done
	A=$(cat "$T/a.pid")
	B=$(cat "$T/b.pid")
	sleep 0.5 # let the tracker see them
	ctl iso "$A" 2>"$T/err" || fail "iso $A: $(cat "$T/err")"
	ok=
	for _ in $(seq 50); do
		ctl queues --json >"$T/q.json"
		if json_check "
(lambda es: all(set(e) >= {'tid','comm','class','key','deadline_rel_ns','slice_left_ns','nice'} for e in es)
 and any(e['tid'] == $A and e['class'] == 'iso' for e in es)
 and any(e['tid'] == $B and e['class'] == 'normal' for e in es))
([e for c in d['cpus'] for e in c['queue']])" <"$T/q.json"; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ -n "$ok" ] || fail "queues --json never matched the test's tasks: $(cat "$T/q.json")"
	ctl queues --cpu 0 --json | json_check 'all(c["cpu"] == 0 for c in d["cpus"])' ||
		fail "queues --cpu 0"
	;;
hidepid)
	# Before 5.8 the proc mounts of a pid namespace share one superblock:
	# mounting one with hidepid= would change the host's /proc as well.
	kernel_at_least 5 8 || skip "a procfs instance with options of its own needs Linux 5.8"
	HOST_OPTS=$(proc_options self)
	NOBODY_UID=$(id -u nobody)
	start_scope
	# muqssd sees a /proc of its own, mounted hidepid=invisible.
	start_daemon unshare --mount --propagation private \
		sh -c 'mount -t proc -o hidepid=invisible proc /proc && exec "$@"' sh
	MPID=$(pgrep -P "$DAEMON")
	[ "$(readlink "/proc/$MPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
		fail "muqssd ($MPID) shares our mount namespace"
	case $(proc_options "$MPID") in
	*hidepid=invisible*) ;;
	*) fail "the daemon's /proc is mounted $(proc_options "$MPID")" ;;
	esac
	[ "$(proc_options self)" = "$HOST_OPTS" ] || fail "the host's /proc changed: $(proc_options self)"
	echo "bash -c 'while [ \$SECONDS -lt 60 ]; do :; done' & echo \$! > \"$T/rloop.pid\"; setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c 'while [ \$SECONDS -lt 60 ]; do :; done' & echo \$! > \"$T/nloop.pid\"" >"$T/go"
	for _ in $(seq 50); do [ -s "$T/nloop.pid" ] && break; sleep 0.1; done
	RLOOP=$(cat "$T/rloop.pid")
	NLOOP=$(cat "$T/nloop.pid")
	# nobody's view never holds a task of root's; it holds nobody's own,
	# and root's view holds both, once the tracker and queues have them.
	ok=
	for _ in $(seq 100); do
		as_nobody "$CTL" --socket "$SOCK" tasks --json >"$T/nt.json" || fail "nobody: tasks"
		as_nobody "$CTL" --socket "$SOCK" queues --json >"$T/nq.json" || fail "nobody: queues"
		json_check "all(t['uid'] == $NOBODY_UID and t['tid'] in ($NOBODY_PID, $NLOOP) for t in d['tasks'])" <"$T/nt.json" ||
			fail "nobody sees others' tasks under hidepid=invisible: $(cat "$T/nt.json")"
		json_check "all(e['tid'] in ($NOBODY_PID, $NLOOP) for c in d['cpus'] for e in c['queue'])" <"$T/nq.json" ||
			fail "nobody sees others' queued tasks under hidepid=invisible: $(cat "$T/nq.json")"
		ctl tasks --json >"$T/rt.json"
		ctl queues --json >"$T/rq.json"
		if json_check "{$NOBODY_PID, $NLOOP} <= {t['tid'] for t in d['tasks']}" <"$T/nt.json" &&
			json_check "$NLOOP in [e['tid'] for c in d['cpus'] for e in c['queue']]" <"$T/nq.json" &&
			json_check "{$ROOT_PID, $RLOOP, $NOBODY_PID} <= {t['tid'] for t in d['tasks']}" <"$T/rt.json" &&
			json_check "$RLOOP in [e['tid'] for c in d['cpus'] for e in c['queue']]" <"$T/rq.json"; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ -n "$ok" ] || fail "nobody's own or root's tasks never showed: nobody $(cat "$T/nt.json") $(cat "$T/nq.json"); root $(cat "$T/rt.json") $(cat "$T/rq.json")"
	# A class change of a task /proc hides is answered as for a task that
	# does not exist: neither its owner nor that it exists is told.
	sleep 0 & GONE=$!
	wait "$GONE"
	[ ! -e "/proc/$GONE" ] || fail "pid $GONE came back"
	ctl_expect 5 "muqssctl: no such process: $GONE" as_nobody "$CTL" --socket "$SOCK" iso "$GONE"
	ctl_expect 5 "muqssctl: no such process: $ROOT_PID" as_nobody "$CTL" --socket "$SOCK" iso "$ROOT_PID"
	ctl_expect 5 "muqssctl: no such process: $ROOT_PID" \
		as_nobody "$CTL" --socket "$SOCK" iso "$ROOT_PID" "$ROOT_PID"
	ctl_expect 0 "" as_nobody "$CTL" --socket "$SOCK" iso "$NOBODY_PID"
	# Read again at reload: a member of the mount's gid= sees everything,
	# and so does anyone with hidepid=off.
	remount_daemon_proc "hidepid=invisible,gid=$(getent group nogroup | cut -d: -f3)"
	as_nobody "$CTL" --socket "$SOCK" tasks --json | json_check "$ROOT_PID in [t['tid'] for t in d['tasks']]" ||
		fail "nobody, in the mount's gid=, does not see root's task"
	remount_daemon_proc "hidepid=invisible,gid=0"
	as_nobody "$CTL" --socket "$SOCK" tasks --json | json_check "$ROOT_PID not in [t['tid'] for t in d['tasks']]" ||
		fail "nobody sees root's task again after gid=0"
	remount_daemon_proc "hidepid=off"
	as_nobody "$CTL" --socket "$SOCK" tasks --json |
		json_check "any(t['tid'] == $ROOT_PID and t['uid'] == 0 and t['comm'] == 'sleep' for t in d['tasks'])" ||
		fail "nobody does not see root's task with hidepid=off"
	ctl_expect 4 "muqssctl: permission denied: pid $ROOT_PID belongs to uid 0" \
		as_nobody "$CTL" --socket "$SOCK" iso "$ROOT_PID"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "PASS: $CASE"
