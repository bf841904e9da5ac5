#!/usr/bin/env bash
# meson install into a DESTDIR puts everything where systemd looks: the
# service can be enabled there, the units pass systemd-analyze verify, and
# tmpfiles.d and sysusers.d take our entries. Nothing outside DESTDIR.
set -euo pipefail
build=$MUQSS_BUILD_ROOT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

opt() { # the value of a meson option of this build
	meson introspect --buildoptions "$build" |
		python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]==sys.argv[1]))' "$1"
}
prefix=$(opt prefix)
sysconfdir=$(opt sysconfdir)
sbindir=$(opt sbindir)
bindir=$(opt bindir)
mandir=$(opt mandir)
libexecdir=$(opt libexecdir)
datadir=$(opt datadir)
case $libexecdir in /*) ;; *) libexecdir=$prefix/$libexecdir ;; esac
case $datadir in /*) ;; *) datadir=$prefix/$datadir ;; esac
case $sysconfdir in /*) ;; *) sysconfdir=$prefix/$sysconfdir ;; esac
case $sbindir in /*) ;; *) sbindir=$prefix/$sbindir ;; esac
case $bindir in /*) ;; *) bindir=$prefix/$bindir ;; esac
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac

timeout 120 meson install -C "$build" --destdir "$tmp" --no-rebuild --quiet >/dev/null

root_has() { [ -e "$tmp$1" ] || fail "not installed: $1"; }
root_has "$sbindir/muqssd"
root_has "$libexecdir/muqss-gamemode"
root_has "$datadir/dbus-1/system.d/muqssd-rtkit.conf"
root_has "$sysconfdir/muqssd/muqssd.conf"
root_has "$sysconfdir/muqssd/muqssd.conf.d"
root_has "$sysconfdir/muqssd/muqssd.rules.d"
ls "$tmp$sysconfdir/muqssd/muqssd.rules.d/"*.rules >/dev/null || fail "no default rules installed"
root_has "$mandir/man8/muqssd.8"
root_has "$mandir/man5/muqssd.conf.5"
root_has "$mandir/man5/muqssd.rules.5"
for page in "$tmp$mandir"/man8/muqssd.8 "$tmp$mandir"/man5/muqssd*.5; do
	# man -l parses the page; warnings from groff mean broken markup.
	out=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "man $page"
	[ -z "$out" ] || fail "man $page: $out"
done
unit=$(cd "$tmp" && find . -path '*/systemd/system/muqssd.service' | sed 's/^\.//')
[ -n "$unit" ] || fail "muqssd.service not installed"
unitdir=$(dirname "$unit")
root_has "$unitdir/muqssd.socket"
grep -qx "ExecStart=$sbindir/muqssd" "$tmp$unit" || fail "ExecStart does not point at $sbindir/muqssd"
grep -qx "ExecStopPost=$sbindir/muqssd --restore" "$tmp$unit" || fail "ExecStopPost"
user_unit=$(cd "$tmp" && find . -path '*/systemd/user/muqss-gamemode.service' | sed 's/^\.//')
[ -n "$user_unit" ] || fail "muqss-gamemode.service (user unit) not installed"
grep -qx "ExecStart=$libexecdir/muqss-gamemode" "$tmp$user_unit" || fail "user unit ExecStart"
grep -qx "ExecReload=$bindir/muqssctl reload" "$tmp$unit" || fail "ExecReload"

# Every program a unit runs is one we install: a minimal system (debootstrap
# --variant=minbase) has no /bin/kill, no procps, nothing to rely on.
for f in "$tmp$unitdir"/muqssd.*; do
	{ grep -E '^Exec[A-Za-z]*=' "$f" || true; } | sed -E 's/^[^=]*=[-@:+!]*//; s/ .*//' |
	while read -r prog; do
		case $prog in
		/*) [ -x "$tmp$prog" ] || fail "$(basename "$f") runs $prog, which is not installed" ;;
		*) fail "$(basename "$f") runs $prog by name, not path" ;;
		esac
	done
done

# The installed config is valid as shipped.
"$tmp$sbindir/muqssd" --check-config "$tmp$sysconfdir/muqssd/muqssd.conf" >/dev/null

# enable: the wants links, pointing at the unit path without DESTDIR.
timeout 30 systemctl --root="$tmp" enable muqssd.service >/dev/null 2>&1 ||
	fail "systemctl --root enable"
link=$tmp/etc/systemd/system/multi-user.target.wants/muqssd.service
[ -L "$link" ] || fail "no multi-user.target.wants link"
[ "$(readlink "$link")" = "$unit" ] || fail "wants link points at $(readlink "$link"), not $unit"
sock=$tmp/etc/systemd/system/sockets.target.wants/muqssd.socket
[ "$(readlink "$sock")" = "$unitdir/muqssd.socket" ] || fail "Also=muqssd.socket was not enabled"

# verify resolves dependencies and commands inside --root, so give the root
# what any systemd OS has: the distribution's units, and nothing else.
mkdir -p "$tmp/usr/lib/systemd"
cp -a /lib/systemd/system "$tmp/usr/lib/systemd/"
# verify exits 0 on "unknown key, ignoring", so any output is a failure.
out=$(timeout 60 systemd-analyze verify --man=no --root="$tmp" muqssd.service muqssd.socket 2>&1) ||
	fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify warned: $out"

# tmpfiles.d and sysusers.d entries are found and valid.
timeout 30 systemd-tmpfiles --root="$tmp" --create muqssd.conf
[ "$(stat -c '%a %U %G' "$tmp/run/muqssd")" = "755 root root" ] || fail "tmpfiles: /run/muqssd"
timeout 30 systemd-sysusers --root="$tmp" muqssd.conf 2>/dev/null
grep -q '^muqss-admin:' "$tmp/etc/group" || fail "sysusers: no muqss-admin group"
echo ok
