#!/bin/bash
# An output that would block never hangs memprof with its signals blocked: a FIFO nobody reads
# is waited for, and SIGINT ends the wait with a clear line (the program never ran); one whose
# reader stops reading is given up when memprof is told to stop, and memprof ends as its
# program did. A FIFO with a reader is written as a file is; without -f it is refused.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# gone_within PID SECONDS: whether PID ends within SECONDS (looked at every 0.05 s).
gone_within() {
	for i in $(seq $(($2 * 20))); do kill -0 "$1" 2> /dev/null || return 0; sleep 0.05; done
	return 1
}
mkfifo f || framework_failure_ "mkfifo"

# Without -f, a FIFO is a file that exists.
mp run -o f "$WORKLOADS/allocs"
expect_rc 1 "a FIFO without -f"
expect_one_line_err
[ "$(cat err)" = "memprof: 'f' exists (use -f to overwrite it)" ] || fail_ "without -f: $(cat err)"

# Nobody reads it: memprof waits, saying so, and SIGINT ends the wait at once.
keep_bg "$MEMPROF" run -f -o f "$WORKLOADS/allocs"
pid=$!
wait_until 60 grep -q "FIFO" err
[ "$(cat err)" = "memprof: 'f' is a FIFO: waiting for a process to read it" ] || fail_ "waiting: $(cat err)"
kill -INT $pid
gone_within $pid 20 || fail_ "memprof did not end within 20 s of SIGINT"
reap $pid
expect_rc 1 "interrupted while waiting"
[ "$(tail -1 err)" = "memprof: no process opened 'f' for reading; gave up waiting" ] || fail_ "interrupted: $(cat err)"
[ ! -s out ] || fail_ "the program ran: $(cat out)"
[ -p f ] || fail_ "the FIFO was removed"

# A reader that comes later gets the whole capture.
keep_bg "$MEMPROF" run -f -o f "$WORKLOADS/allocs"
pid=$!
wait_until 60 grep -q "FIFO" err
cat f > c.bin
reap $pid
expect_rc 0 "memprof run with a reader"
"$MEMPROF" parse c.bin > p || fail_ "parse what went through the FIFO"
grep -q "^TRAILER .* end=exit exit_code=0 " p || fail_ "its trailer: $(grep ^TRAILER p)"
expect_count 1 '^ALLOC .*size=17 ' p

# A reader that stops reading: once the pipe is full, SIGTERM still ends memprof (the output
# taking nothing more for a while), with a line saying what was given up, as the program
# SIGTERM killed did.
PY=/usr/bin/python3
[ -x "$PY" ] || skip_ "no $PY for a workload whose capture fills a pipe"
"$PY" -c '
import os, select, time
fd = os.open("f", os.O_RDONLY)
# Full when its write end would not take a page more (what the reader holds never moves).
w = os.open("f", os.O_WRONLY | os.O_NONBLOCK)
p = select.poll()
p.register(w, select.POLLOUT)
while p.poll(0):
    time.sleep(0.05)
open("full", "w").close()
time.sleep(600)' &
reader=$!
keep_bg "$MEMPROF" run --keep-addresses -f -o f "$PY" -c '
import random
while True:
    x = bytearray(random.randrange(1, 100000))'
pid=$!
wait_until 60 [ -e full ]
[ -e full ] || framework_failure_ "the pipe never filled: $(cat err)"
kill -TERM $pid
gone_within $pid 20 || fail_ "memprof did not end within 20 s of SIGTERM, its output full"
reap $pid
kill $reader
expect_rc 143 "SIGTERM with the output full"
expect_err "memprof: warning: gave up writing 'f', which took no more data when memprof was told to stop; the capture is incomplete"
exit 0
