#!/bin/bash
# memprof run --live: the view of the program while it runs, and its last figures (what it
# leaked) once it ended, until q; the program's terminal output goes to a file named at the
# end, its exit status stays memprof's, and a capture is written only with -o.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-live.sh"

# The allocs workload leaks 10 blocks from make_kept (10045 bytes), calloc's 1000 bytes in main
# and strdup's 17 bytes in copy; churn made 1000 allocations, all freed.
view_start r sh -c 'exec "$0" run --live "$1" 2> run.err' "$MEMPROF" "$WORKLOADS/allocs"
wait_screen r has r "  exited with status 0 after [0-9.]+ s$"
pid=$(sed -n 's/^memprof live  pid \([0-9]*\) .*/\1/p' r.screen)
title_is r "memprof live  pid $pid  $WORKLOADS/allocs" || fail_ "the title: $(line r 1)"
row_is r 1 "^ *9\.81 KiB +[0-9.]+% +9\.81 KiB +[0-9.]+% +10 +10  make_kept at allocs\.c *$" ||
	fail_ "row 1: $(line r 5)"
row_is r 2 "^ *0\.98 KiB .* +1 +1  main at allocs\.c *$" || fail_ "row 2: $(line r 6)"
row_is r 3 "^ *17 B .* +1 +1  copy at allocs\.c *$" || fail_ "row 3: $(line r 7)"
has r "^heap 10\.8 KiB in 12 blocks   peak " || fail_ "the figures: $(line r 2)"
keys r a
wait_screen r row_is r 1 "^ *0 B .* +1,000 +0  churn at allocs\.c *$"
keys r q
view_rc r
[ "$rc" -eq 0 ] || fail_ "memprof run --live exited $rc: $(cat run.err)"
pid=$(sed -n "s/^memprof: the output of '.*allocs' is in 'memprof-allocs\.\([0-9]*\)\.out'$/\1/p" run.err)
[ -n "$pid" ] || fail_ "no word of the program's output: $(cat run.err)"
[ "$(cat "memprof-allocs.$pid.out")" = "allocs done" ] || fail_ "the output file: $(cat "memprof-allocs.$pid.out")"
[ "$(ls ./*.bin 2> /dev/null)" = "" ] || fail_ "a capture was written without -o"

# The exit status is the program's; standard error, when it is not the terminal, stays its own.
view_start s sh -c 'exec "$0" run -q --live sh -c "echo to-out; echo to-err >&2; exit 3" 2> s.err' "$MEMPROF"
wait_screen s has s "  exited with status 3 after "
keys s q
view_rc s
[ "$rc" -eq 3 ] || fail_ "memprof run --live of a program that exits 3 exited $rc"
[ "$(cat s.err)" = "to-err" ] || fail_ "the program's standard error: $(cat s.err)"
[ "$(cat memprof-sh.*.out)" = "to-out" ] || fail_ "the program's output: $(cat memprof-sh.*.out)"

# With -o, the capture too.
view_start o sh -c 'exec "$0" run --live -o cap.bin "$1" 2> o.err' "$MEMPROF" "$WORKLOADS/allocs"
wait_screen o has o "  exited with status 0 after "
keys o q
view_rc o
[ "$rc" -eq 0 ] || fail_ "run --live -o exited $rc: $(cat o.err)"
grep -q "^memprof: wrote 'cap.bin': 1023 allocations" o.err || fail_ "no capture written: $(cat o.err)"
mp stats cap.bin
expect_rc 0 "stats of the --live capture"

# q while the program runs: the terminal is back, memprof says so and waits for it, then
# exits as it did. The attachee's output (and so its "ok" lines) goes to its file.
mkfifo cmds || framework_failure_ "mkfifo"
view_start a sh -c 'exec "$0" run --live "$1" "$2" 2> a.err' "$MEMPROF" "$WORKLOADS/attachee" "$T/cmds"
wait_screen a has a "^memprof live  pid [0-9]+ .* running "
pid=$(sed -n 's/^memprof live  pid \([0-9]*\) .*/\1/p' a.screen)
echo "alloc 100 4000" > cmds
wait_screen a row_is a 1 " +100 +100  command_alloc at attachee\.c *$"
keys a q
wait_until 60 grep -q "runs on" a.err
grep -qx "memprof: '.*attachee' (pid $pid) runs on; memprof ends when it does (its output goes to 'memprof-attachee\.$pid\.out')" a.err ||
	fail_ "after q: $(cat a.err)"
[ ! -s a.rc ] || fail_ "memprof ended before the program"
kill -0 "$pid" || fail_ "the program died with the view"
echo "exit 5" > cmds
view_rc a
[ "$rc" -eq 5 ] || fail_ "memprof run --live exited $rc, the program 5"
grep -q "^ok exit 5$" "memprof-attachee.$pid.out" || fail_ "the program's output: $(cat "memprof-attachee.$pid.out")"
exit 0
