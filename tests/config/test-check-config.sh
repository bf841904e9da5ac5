#!/usr/bin/env bash
# muqssd --check-config on the shipped file passes; a bad file fails and
# names file, line, key and range.
set -euo pipefail
muqssd=$MUQSS_BUILD_ROOT/muqssd/muqssd
src=$MUQSS_SOURCE_ROOT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$(timeout 10 "$muqssd" --check-config "$src/conf/muqssd.conf" 2>&1)
[ "$out" = "$src/conf/muqssd.conf: OK" ] || { echo "unexpected: $out"; exit 1; }

# The shipped file with every commented key uncommented must pass too:
# the documented defaults are valid values.
sed -E 's/^#([a-z_]+ = .+)$/\1/' "$src/conf/muqssd.conf" >"$tmp/uncommented.conf"
grep -q '^rr_interval = 6$' "$tmp/uncommented.conf"
timeout 10 "$muqssd" --check-config "$tmp/uncommented.conf"

printf '[scheduler]\n# comment\n\niso_cpu = 50\nrr_interval = 0\n' >"$tmp/bad.conf"
if out=$(timeout 10 "$muqssd" --check-config "$tmp/bad.conf" 2>&1); then
	echo "a bad file passed: $out"; exit 1
fi
echo "$out" | grep -qF "$tmp/bad.conf:5: rr_interval: 0 is out of range 1..1000 ms" ||
	{ echo "unexpected message: $out"; exit 1; }

# A named file that does not exist is an error; drop-ins are checked too.
if timeout 10 "$muqssd" --check-config "$tmp/none.conf" 2>/dev/null; then
	echo "a missing file passed"; exit 1
fi
mkdir "$tmp/uncommented.conf.d"
printf '[tracking]\npoll_interval_ms = 5\n' >"$tmp/uncommented.conf.d/10-poll.conf"
out=$(timeout 10 "$muqssd" --check-config "$tmp/uncommented.conf" 2>&1) && exit 1
echo "$out" | grep -qF "10-poll.conf:2: poll_interval_ms: 5 is out of range 10..60000 ms" ||
	{ echo "unexpected message: $out"; exit 1; }
# Only a regular file, owned by root, writable by nobody else: a FIFO does
# not hang the check, and a user's file is refused, naming why.
mkfifo "$tmp/fifo.conf"
out=$(timeout 10 "$muqssd" --check-config "$tmp/fifo.conf" 2>&1) && { echo "a FIFO passed"; exit 1; }
echo "$out" | grep -qF "$tmp/fifo.conf: not a regular file, refusing it" ||
	{ echo "unexpected message: $out"; exit 1; }
if [ "$(id -u)" = 0 ]; then
	cp "$tmp/uncommented.conf" "$tmp/user.conf"
	chown 65534:65534 "$tmp/user.conf"
	out=$(timeout 10 "$muqssd" --check-config "$tmp/user.conf" 2>&1) &&
		{ echo "a file owned by uid 65534 passed"; exit 1; }
	echo "$out" | grep -qF "$tmp/user.conf: owned by uid 65534, not root, refusing it" ||
		{ echo "unexpected message: $out"; exit 1; }
fi
cp "$tmp/uncommented.conf" "$tmp/open.conf"
chmod 0666 "$tmp/open.conf"
out=$(timeout 10 "$muqssd" --check-config "$tmp/open.conf" 2>&1) && { echo "a mode 0666 file passed"; exit 1; }
echo "$out" | grep -qF "$tmp/open.conf: writable by group or others (mode 0666), refusing it" ||
	{ echo "unexpected message: $out"; exit 1; }
echo ok
