#!/bin/bash
# memprof run --reporter NAME [--reporter-arg ARG]...: the report of the
# capture, the same bytes as the reporter run afterwards; the reporter and
# its arguments checked before the program starts; the program's status kept.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# Pass-through: each --reporter-arg is one argument, in order.
mp run -o a.bin --reporter flamegraph --reporter-arg --leaks --reporter-arg=--inverted "$WORKLOADS/allocs"
expect_rc 0 "run --reporter flamegraph"
expect_out "allocs done"
expect_err "Wrote memprof-flamegraph-a.html"
expect_not_out "Wrote"
grep -q "memprof: next:" err && fail_ "the 'next:' hint with --reporter"
mp flamegraph --leaks --inverted -o after.html a.bin
expect_rc 0 "flamegraph afterwards"
# The report is deterministic: nothing may differ.
cmp memprof-flamegraph-a.html after.html || fail_ "the report differs from 'memprof flamegraph' afterwards"
grep -q '"mode":"leaks","temporary_threshold":0,"inverted":true' after.html || fail_ "the arguments were not passed"

mp run -q -o t.bin --reporter table --reporter-arg -o --reporter-arg t.html \
	--reporter-arg --split-threads "$WORKLOADS/threads"
expect_rc 0 "run --reporter table"
[ ! -s err ] || fail_ "-q: $(cat err)"
mp table --split-threads -o t2.html t.bin
cmp t.html t2.html || fail_ "the table differs from 'memprof table' afterwards"

# Without -o: the capture's default name gives the report's.
mkdir dflt && cd dflt || framework_failure_ "cd"
mp run -q --reporter table "$WORKLOADS/allocs"
expect_rc 0 "run --reporter without -o"
cap=$(ls memprof-allocs.*.bin) || fail_ "no default capture"
[ -s "memprof-table-${cap#memprof-}" ] || [ -s "memprof-table-$(basename "${cap#memprof-}" .bin).html" ] ||
	fail_ "no report for $cap: $(ls)"
cd .. || framework_failure_ "cd .."

# Checked before the program runs: a typo costs no run, nothing is written.
nothing_ran() {
	expect_rc 2 "$1"
	expect_not_out "allocs done"
	[ ! -e never.bin ] || fail_ "$1: the capture was written"
	expect_err "usage: memprof run"
}
mp run -o never.bin --reporter flamegraph --reporter-arg --leakz "$WORKLOADS/allocs"
nothing_ran "a bad --reporter-arg"
expect_err "memprof run: invalid --reporter-arg for 'flamegraph': unknown option '--leakz'"
mp run -o never.bin --reporter flamegraph --reporter-arg --max-memory-records --reporter-arg 1 "$WORKLOADS/allocs"
nothing_ran "a bad --reporter-arg value"
expect_err "invalid --reporter-arg for 'flamegraph': invalid value '1' for --max-memory-records"
mp run -o never.bin --reporter table --reporter-arg --inverted "$WORKLOADS/allocs"
nothing_ran "an option of the other reporter"
expect_err "invalid --reporter-arg for 'table': unknown option '--inverted'"
mp run -o never.bin --reporter flamegraph --reporter-arg --temporal --reporter-arg --temporary-allocations "$WORKLOADS/allocs"
nothing_ran "options that do not go together"
expect_err "options '--temporal' and '--temporary-allocations' cannot be combined"
mp run -o never.bin --reporter flamegraph --reporter-arg other.bin "$WORKLOADS/allocs"
nothing_ran "a capture among the arguments"
expect_err "invalid --reporter-arg for 'flamegraph': unexpected argument 'other.bin'"
mp run -o never.bin --reporter flamegraph --reporter-arg -h "$WORKLOADS/allocs"
nothing_ran "help as an argument"
expect_err "invalid --reporter-arg for 'flamegraph': option '-h' only shows help"
mp run -o never.bin --reporter flamegraf "$WORKLOADS/allocs"
nothing_ran "an unknown reporter"
expect_err "memprof run: unknown reporter 'flamegraf' (flamegraph or table)"
mp run -o never.bin --reporter-arg --leaks "$WORKLOADS/allocs"
nothing_ran "--reporter-arg without --reporter"
expect_err "memprof run: option '--reporter-arg' needs --reporter"
# A report that could not be written: the run does not start either.
cp a.bin keep.bin
mp run -f -o a.bin --reporter flamegraph "$WORKLOADS/allocs"
expect_rc 1 "an existing report"
expect_err "memprof: cannot write the flamegraph report: 'memprof-flamegraph-a.html' already exists (add --reporter-arg -f to overwrite it)"
expect_one_line_err
expect_not_out "allocs done"
cmp -s a.bin keep.bin || fail_ "the capture was overwritten"
mp run -f -o a.bin --reporter flamegraph --reporter-arg -f "$WORKLOADS/allocs"
expect_rc 0 "--reporter-arg -f"
grep -q '"mode":"peak"' memprof-flamegraph-a.html || fail_ "--reporter-arg -f did not overwrite"

# The program's status stays; a failed report turns a 0 into 1 only.
mp run -q -o s.bin --reporter table /bin/sh -c 'exit 3'
expect_rc 3 "a program exiting 3"
[ -s memprof-table-s.html ] || fail_ "no report after exit 3"
mkdir empty
MEMPROF_DATADIR=$T/empty mp run -q -o e.bin --reporter flamegraph "$WORKLOADS/allocs"
expect_rc 1 "a failed report after a successful program"
expect_out "allocs done"
expect_err "memprof: cannot read template '$T/empty/templates/flamegraph.html'"
[ -s e.bin ] || fail_ "the capture of a failed report is gone"
MEMPROF_DATADIR=$T/empty mp run -q -o e3.bin --reporter flamegraph /bin/sh -c 'exit 3'
expect_rc 3 "a failed report after a failed program"
# A program killed by a signal: the report, then memprof dies the same way.
mp run -q -o k.bin --reporter flamegraph /bin/sh -c 'kill -TERM $$'
expect_rc 143 "a program killed by SIGTERM"
grep -q '"exit":"killed by signal 15 (SIGTERM)"' memprof-flamegraph-k.html || fail_ "the report of a killed program"
exit 0
