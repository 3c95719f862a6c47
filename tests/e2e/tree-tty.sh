#!/bin/bash
# tree colours sizes, functions and files on a terminal only, never with NO_COLOR.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
mp tree app.mprof
grep -q $'\033' out && fail_ "colours in a pipe"

command -v script >/dev/null || skip_ "script (util-linux) is needed for a terminal"
tty() {
	env -u NO_COLOR TERM=xterm "$@" script -qec "exec '$MEMPROF' tree app.mprof" /dev/null > raw 2>&1
	rc=$?
	tr -d '\r' < raw > out
}
tty
expect_rc 0 "tree on a terminal"
# 74.92 % is red, 24.97 % yellow, 0.10 % bright green; functions magenta, files cyan.
grep -qF $'├── \033[31m3.000 MiB (74.92 %)\033[0m \033[35mworker_main\033[0m  \033[36m/src/app.c:70\033[0m' out ||
	fail_ "worker_main's line is not coloured"
grep -qF $'\033[33m1.000 MiB (24.97 %)\033[0m' out || fail_ "no yellow 24.97 %"
grep -qF $'\033[92m4.293 KiB (0.10 %)\033[0m' out || fail_ "no bright green 0.10 %"
tty NO_COLOR=1
expect_rc 0 "tree with NO_COLOR"
grep -q $'\033' out && fail_ "colours despite NO_COLOR"
expect_out "├── 3.000 MiB (74.92 %) worker_main  /src/app.c:70"
exit 0
