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
# The time limit (tests/tools/time-limit) sends SIGTERM: fail, and clean up as a failure.
trap 'fail_ "stopped by SIGTERM (the time limit?)"' TERM
cd "$T" || framework_failure_ "cd $T"

# keep [-o FILE] [-e FILE] [-n NAME] CMD...: run CMD with its standard output in FILE (-o),
# its standard error in FILE (-e), or both in NAME.out and NAME.err (-n); ./out and ./err
# unless told; FILE - leaves the stream as the caller's (`keep -o - CMD >&-`). Its status is
# in $rc, and the files in $RUN_OUT and $RUN_ERR, which the expect_* helpers below read
# (until the next keep, mp or run). Standard input and the environment are the caller's:
# `VAR=1 keep -n x CMD < IN`.
RUN_OUT=out RUN_ERR=err
keep_files_() {
	RUN_OUT=out RUN_ERR=err KEEP_SHIFT_=0
	while [ $# -gt 0 ]; do
		case $1 in
		-o) RUN_OUT=$2 ;;
		-e) RUN_ERR=$2 ;;
		-n) RUN_OUT=$2.out RUN_ERR=$2.err ;;
		--) KEEP_SHIFT_=$((KEEP_SHIFT_ + 1)); break ;;
		*) break ;;
		esac
		shift 2 || framework_failure_ "keep: $1 needs a value"
		KEEP_SHIFT_=$((KEEP_SHIFT_ + 2))
	done
}
keep_run_() {
	if [ "$RUN_OUT" = - ] && [ "$RUN_ERR" = - ]; then "$@"
	elif [ "$RUN_OUT" = - ]; then "$@" 2>"$RUN_ERR"
	elif [ "$RUN_ERR" = - ]; then "$@" >"$RUN_OUT"
	else "$@" >"$RUN_OUT" 2>"$RUN_ERR"
	fi
}
keep() {
	keep_files_ "$@"
	shift $KEEP_SHIFT_
	[ $# -gt 0 ] || framework_failure_ "keep: no command"
	keep_run_ "$@"
	rc=$?
	keep_none_
}
# (What was not kept, the expect_* helpers find empty.)
keep_none_() { [ "$RUN_OUT" != - ] || RUN_OUT=/dev/null; [ "$RUN_ERR" != - ] || RUN_ERR=/dev/null; }
# keep_bg [-o|-e|-n ...] CMD...: keep CMD in the background, its pid in $!; its files are
# empty when keep_bg returns (a wait for a line in them never sees an earlier command's).
# reap PID: wait for it; its status in $rc, and from then on the expect_* helpers read its
# files.
BG_OUT_=() BG_ERR_=()
keep_bg() {
	local out=$RUN_OUT err=$RUN_ERR f
	keep_files_ "$@"
	shift $KEEP_SHIFT_
	[ $# -gt 0 ] || framework_failure_ "keep_bg: no command"
	for f in "$RUN_OUT" "$RUN_ERR"; do
		[ "$f" = - ] || { [ -e "$f" ] && [ ! -f "$f" ]; } || : > "$f" || framework_failure_ "keep_bg: cannot write '$f'"
	done
	# (Each branch starts CMD itself, so that $! is CMD's pid, not a subshell's.)
	if [ "$RUN_OUT" = - ] && [ "$RUN_ERR" = - ]; then "$@" &
	elif [ "$RUN_OUT" = - ]; then "$@" 2>"$RUN_ERR" &
	elif [ "$RUN_ERR" = - ]; then "$@" >"$RUN_OUT" &
	else "$@" >"$RUN_OUT" 2>"$RUN_ERR" &
	fi
	keep_none_
	BG_OUT_[$!]=$RUN_OUT BG_ERR_[$!]=$RUN_ERR
	RUN_OUT=$out RUN_ERR=$err
}
reap() {
	[ -n "${BG_OUT_[$1]:-}" ] || framework_failure_ "reap: $1 was not started by keep_bg"
	wait "$1"
	rc=$?
	RUN_OUT=${BG_OUT_[$1]} RUN_ERR=${BG_ERR_[$1]}
}
# wait_until SECONDS CMD...: run CMD every 50 ms until it succeeds (status 0), or SECONDS
# have passed (status 1). Waits for another process: a generous limit costs nothing where
# the machine is quick, and a loaded one (or a sanitizer build) needs it.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}
# mp ARGS...: run memprof; stdout in ./out, stderr in ./err, status in $rc.
mp() { keep -- "$MEMPROF" "$@"; }
# run CMD...: the same for any command.
run() { keep -- "$@"; }

expect_rc() {
	[ "$rc" -eq "$1" ] || { show_err_; fail_ "${2:-command}: exit status $rc, expected $1"; }
}
expect_err() {
	grep -qF -- "$1" "$RUN_ERR" || { show_err_; fail_ "stderr lacks '$1'"; }
}
expect_no_err() {
	[ ! -s "$RUN_ERR" ] || { show_err_; fail_ "${1:-command}: unexpected output on stderr"; }
}
expect_out() {
	grep -qF -- "$1" "$RUN_OUT" || { head -50 "$RUN_OUT" | sed 's/^/  stdout: /' >&2; fail_ "stdout lacks '$1'"; }
}
expect_not_out() {
	! grep -qF -- "$1" "$RUN_OUT" || fail_ "stdout has '$1'"
}
# One line on stderr, as every error must be.
expect_one_line_err() {
	n=$(wc -l < "$RUN_ERR")
	[ "$n" -eq 1 ] || { show_err_; fail_ "${1:-error}: $n lines on stderr, expected one"; }
}
show_err_() { sed 's/^/  stderr: /' "$RUN_ERR" >&2; }
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

# share VAR FILE: VAR is the path of a copy of FILE (a program or library of the build) that
# every user may read and run, in $SHARED_BIN. What a test runs as another user must be such
# a copy: the tree may lie in a directory closed to other users (a home, or /root: mode
# 0700). $T/shared, beside it, is a directory every user may write in. The copy of memprof
# finds the tracker's copy with MEMPROF_LIBDIR=$SHARED_BIN.
SHARED_BIN=$T/shared/bin
share() {
	local to=$SHARED_BIN/${2##*/}
	if [ ! -d "$SHARED_BIN" ]; then
		chmod go+x "$T" && mkdir -p -m 1777 "$T/shared" && mkdir -m 755 "$SHARED_BIN" ||
			framework_failure_ "share: cannot make '$SHARED_BIN'"
	fi
	# (Copied once: a copy that runs cannot be written again.)
	[ -e "$to" ] || { cp "$2" "$to" && chmod 755 "$to"; } || framework_failure_ "share: cannot copy '$2'"
	printf -v "$1" %s "$to"
}
