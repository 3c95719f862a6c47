# Sourced by every e2e test: helpers, a scratch directory, the exit protocol
# (0 pass, 1 fail, 77 skip, 99 framework failure).
set -u
ME_=$(basename "$0" .sh)
warn_() { printf >&2 '%s\n' "$*"; }
fail_() { warn_ "$ME_: FAIL: $*"; exit 1; }
skip_() { warn_ "$ME_: SKIP: $*"; exit 77; }
framework_failure_() { warn_ "$ME_: framework failure: $*"; exit 99; }

[ -n "${MEMPROF:-}" ] || framework_failure_ "MEMPROF is not set: run this through 'make check'"
[ -x "$MEMPROF" ] || framework_failure_ "'$MEMPROF' is not built"

T=$(mktemp -d "${TMPDIR:-/tmp}/memprof-$ME_.XXXXXX") || framework_failure_ "mktemp failed"
# Keep the scratch directory of a failed test for inspection; never leave its
# background processes behind (a failed test may not have waited for them).
cleanup_() {
	st=$?
	for j in $(jobs -p); do pkill -KILL -P "$j" 2>/dev/null; kill -KILL "$j" 2>/dev/null; done
	if [ $st -eq 0 ] || [ $st -eq 77 ]; then rm -rf "$T"; else warn_ "$ME_: scratch files kept in $T"; fi
}
trap cleanup_ EXIT
cd "$T" || framework_failure_ "cd $T"

# mp ARGS...: run memprof; stdout in ./out, stderr in ./err, status in $rc.
mp() { "$MEMPROF" "$@" >out 2>err; rc=$?; }
# run CMD...: the same for any command.
run() { "$@" >out 2>err; rc=$?; }

expect_rc() {
	[ "$rc" -eq "$1" ] || { sed 's/^/  stderr: /' err >&2; fail_ "${2:-command}: exit status $rc, expected $1"; }
}
expect_err() {
	grep -qF -- "$1" err || { sed 's/^/  stderr: /' err >&2; fail_ "stderr lacks '$1'"; }
}
expect_no_err() {
	[ ! -s err ] || { sed 's/^/  stderr: /' err >&2; fail_ "${1:-command}: unexpected output on stderr"; }
}
expect_out() {
	grep -qF -- "$1" out || { head -50 out | sed 's/^/  stdout: /' >&2; fail_ "stdout lacks '$1'"; }
}
expect_not_out() {
	! grep -qF -- "$1" out || fail_ "stdout has '$1'"
}
# One line on stderr, as every error must be.
expect_one_line_err() {
	n=$(wc -l < err)
	[ "$n" -eq 1 ] || { sed 's/^/  stderr: /' err >&2; fail_ "${1:-error}: $n lines on stderr, expected one"; }
}
match_diff() { diff -u "$1" "$2" >&2 || fail_ "'$2' differs from '$1'"; }

# site NAME FILE: the line number of the "SITE:NAME" marker in a workload source.
site() {
	n=$(grep -n "SITE:$1\b" "$2" | head -1 | cut -d: -f1)
	[ -n "$n" ] || framework_failure_ "no SITE:$1 in $2"
	echo "$n"
}
# count PATTERN FILE: lines matching the extended regex (0 when none).
count() { grep -cE -- "$1" "$2" || true; }
# expect_count N PATTERN FILE
expect_count() {
	got=$(count "$2" "$3")
	[ "$got" -eq "$1" ] || fail_ "$got lines match '$2' in $3, expected $1"
}
# field NAME LINE: the value of NAME=... in a parse line.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
TRACKER_LIB=$MEMPROF_BUILDDIR/.libs/libmemprof.so
