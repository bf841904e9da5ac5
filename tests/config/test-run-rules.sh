#!/usr/bin/env bash
# The README's run command (.ci/setup run: muqssd --config conf/muqssd.conf)
# loads the rules the repository ships, conf/muqssd.rules.d beside that
# config: every rule line of them. Scoped to a sleep of the test's own.
set -euo pipefail
muqssd=$MUQSS_BUILD_ROOT/muqssd/muqssd
src=$MUQSS_SOURCE_ROOT
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
tmp=$(mktemp -d -p /dev/shm muqss-run-rules.XXXXXX)
timeout -s KILL 40 sleep 30 &
scope=$!
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -TERM "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	kill "$scope" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

want=$(cat "$src"/conf/muqssd.rules.d/*.rules | grep -c -v -E '^[[:space:]]*(#|$)')
[ "$want" -gt 0 ]
timeout -s KILL 30 "$muqssd" --config "$src/conf/muqssd.conf" --scope-pid "$scope" \
	--socket "$tmp/control" --state-dir "$tmp/state" >"$tmp/log" 2>&1 &
daemon=$!
line="$want rules loaded from $(realpath "$src/conf")/muqssd.rules.d"
for _ in $(seq 100); do
	grep -qF "$line" "$tmp/log" && { echo "ok: $line"; exit 0; }
	grep -q "running, scope" "$tmp/log" && break
	sleep 0.1
done
echo "expected \"$line\"; the daemon said:"
cat "$tmp/log"
exit 1
