#!/bin/bash
# How make check runs a fuzz target (tests/fuzz/README.md), given its program:
#   run.sh [--libfuzzer] TARGET
# First each seed once: the golden captures (tests/data/*.mprof), the capture
# texts of tests/data compiled by mkcapture (compressed, and raw by serial
# number), tests/fuzz/corpus and the inputs of past findings
# (tests/fuzz/findings). Any crash, sanitizer report, failed invariant or hang
# fails the test. Then, when TARGET is built with libFuzzer and FUZZ_SECONDS
# (default 60) is not 0, fuzzing from the seeds for that long, leaks
# included; a finding fails the test, its input printed in base64 and kept in
# tests/fuzz/TARGET.findings/ of the build tree. FUZZ_CORPUS=DIR keeps what
# the fuzzer found in DIR (and starts from it), FUZZ_ARGS adds libFuzzer flags.
set -u
shopt -s nullglob
engine=replay
if [ "${1:-}" = --libfuzzer ]; then
	engine=libfuzzer
	shift
fi
target=${1:?usage: run.sh [--libfuzzer] TARGET}
name=$(basename "$target" .fuzz)
: "${MEMPROF_SRCDIR:?MEMPROF_SRCDIR is not set: run this through make check}"
: "${MKCAPTURE:?MKCAPTURE is not set: run this through make check}"
src=$MEMPROF_SRCDIR/tests/fuzz
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-fuzz-$name.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
mkdir "$work/seeds" "$work/corpus" "$work/artifacts"
cp "$MEMPROF_SRCDIR"/tests/data/*.mprof "$work/seeds/"
for t in "$MEMPROF_SRCDIR"/tests/data/*.txt; do
	base=$work/seeds/$(basename "$t" .txt)-text
	"$MKCAPTURE" -o "$base.mprof" "$t" && "$MKCAPTURE" -r -s -o "$base-raw.mprof" "$t" ||
		{ echo "fuzz: $name: cannot compile $t (tests/data's texts are captures)" >&2; exit 99; }
done
inputs=("$work"/seeds/* "$src"/corpus/*.mprof "$src"/findings/*.mprof)

echo "fuzz: $name: replaying ${#inputs[@]} inputs (seeds and past findings)"
"$target" "${inputs[@]}" || { echo "fuzz: $name: FAIL: a seed or a past finding" >&2; exit 1; }

seconds=${FUZZ_SECONDS:-60}
[ "$engine" = libfuzzer ] && [ "$seconds" != 0 ] || exit 0
corpus=${FUZZ_CORPUS:-$work/corpus}
mkdir -p "$corpus" || exit 99
echo "fuzz: $name: fuzzing for $seconds s"
# Leaks are findings here (tests/sanitizer-run leaves them out of the other tests).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
"$target" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/artifacts/" ${FUZZ_ARGS:-} \
	"$corpus" "$work/seeds" "$src/corpus" "$src/findings" 2> "$work/log"
status=$?
grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "$work/log"
found=$(ls "$work/artifacts")
if [ "$status" -ne 0 ] || [ -n "$found" ]; then
	tail -60 "$work/log"
	keep=tests/fuzz/$name.findings
	mkdir -p "$keep"
	for f in "$work"/artifacts/*; do
		[ -f "$f" ] || continue
		cp "$f" "$keep/"
		echo "fuzz: $name: finding $(basename "$f") ($(stat -c %s "$f") bytes), kept in $keep/, base64:"
		base64 -w 76 "$f"
	done
	echo "fuzz: $name: FAIL: libFuzzer exited with status $status" >&2
	exit 1
fi
echo "fuzz: $name: no finding; corpus: $(ls "$corpus" | wc -l) inputs, $(du -sk "$corpus" | cut -f1) KiB"
exit 0
