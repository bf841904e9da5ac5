#!/usr/bin/env bash
# Builds the Debian 12 tree that tests/boot boots with systemd-nspawn
# (systemd as its PID 1, as on a user's machine), once: a tree already
# there is reused. The test layers each build's install over it, so the
# tree itself stays as debootstrap left it.
#   make-tree.sh [DIR]    default: $MUQSS_BOOT_TREE or /var/lib/machines/muqssd-test
set -euo pipefail

tree=${1:-${MUQSS_BOOT_TREE:-/var/lib/machines/muqssd-test}}
[ -x "$tree/lib/systemd/systemd" ] && [ -f "$tree/.muqss-tree-done" ] && exit 0
[ "$(id -u)" -eq 0 ] || { echo "make-tree: needs root" >&2; exit 1; }

for p in debootstrap systemd-container; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ -n "${missing[*]:-}" ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The host's own mirror, so a mirror the host cannot reach is not tried.
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
# muqssd's run-time libraries, and systemd to boot; minbase keeps it small.
rm -rf "$tree.part"
mkdir -p "$(dirname "$tree")"
timeout 900 debootstrap --variant=minbase \
	--include=systemd,systemd-sysv,dbus,libnl-3-200,libcgroup2,libhwloc15,libcjson1,libinih1,libbpf1 \
	bookworm "$tree.part" "$mirror"
rm -rf "$tree"
mv "$tree.part" "$tree"
touch "$tree/.muqss-tree-done"
echo "make-tree: $tree ready"
