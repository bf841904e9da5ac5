#!/usr/bin/env bash
# Runs every fuzz target for a bounded time on a copy of its committed seed
# corpus, so that the tree is not written to. Any crash, leak, sanitizer
# report or timeout fails the run; the input that did it is kept under
# $MUQSS_FUZZ_ARTIFACTS (default: a temp dir, printed).
#   run-fuzz.sh BUILDDIR [SECONDS_EACH] [TARGET...]
set -euo pipefail

builddir=$1
seconds=${2:-45}
shift $(($# < 2 ? $# : 2))
src=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(wire server config rules procfs state taskstat client)

# UBSan only prints by default; here a report is a crash like any other.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

work=$(mktemp -d /tmp/muqss-fuzz.XXXXXX)
artifacts=${MUQSS_FUZZ_ARTIFACTS:-$work/artifacts}
mkdir -p "$artifacts"
failed=()

for t in "${targets[@]}"; do
	exe=$builddir/tests/fuzz/fuzz-$t
	if [ ! -x "$exe" ]; then
		echo "run-fuzz: $exe missing (configure with -Dfuzz=true and clang)" >&2
		exit 1
	fi
	mkdir -p "$work/$t"
	cp -r "$src/corpus/$t/." "$work/$t/"
	echo "run-fuzz: $t for ${seconds}s"
	# -timeout: one input taking over 10 s is a hang; 64 KiB + a header is
	# the largest frame the server reads whole. A rules line may cost up
	# to ~50 ms to compile by design (rules_regex.c bounds each pattern,
	# not the file), so rules inputs are held to 8 KiB: a longer file of
	# worst-case lines is slow to load, not hung.
	max_len=66000
	[ "$t" != rules ] || max_len=8192
	if ! "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len="$max_len" -print_final_stats=1 \
		-artifact_prefix="$artifacts/$t-" "$work/$t" >"$work/$t.log" 2>&1; then
		failed+=("$t")
		tail -n 60 "$work/$t.log" >&2
	fi
	grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/$t.log" |
		sed "s/^/run-fuzz: $t: /" || true
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "run-fuzz: FAILED: ${failed[*]}; inputs in $artifacts" >&2
	exit 1
fi
rm -rf "$work"
echo "run-fuzz: no crash in ${targets[*]}"
