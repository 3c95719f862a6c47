#!/bin/bash
# The in-process API under threads: two threads that call memprof_start at once get one
# capture and one EBUSY, 50 times; 4 threads allocating while another starts, snapshots and
# stops 100 captures: no crash, no deadlock, every capture complete and readable.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mkdir race stress
timeout 300 env -u LD_PRELOAD "$WORKLOADS/inproc" race "$TRACKER_LIB" "$T/race" 50 > race.out 2> race.err
rc=$?
[ $rc -ne 124 ] || fail_ "race: deadlocked (no end within 300 s)"
[ $rc -eq 0 ] && [ "$(cat race.out)" = "race ok 50" ] || fail_ "race: status $rc: $(cat race.out race.err)"
[ ! -s race.err ] || fail_ "race: stderr: $(cat race.err)"
[ "$(ls race | wc -l)" -eq 50 ] || fail_ "race: $(ls race | wc -l) captures, expected 50"

timeout 600 env -u LD_PRELOAD "$WORKLOADS/inproc" stress "$TRACKER_LIB" "$T/stress" 100 > stress.out 2> stress.err
rc=$?
[ $rc -ne 124 ] || fail_ "stress: deadlocked (no end within 600 s)"
[ $rc -eq 0 ] && [ "$(cat stress.out)" = "stress ok 100" ] || fail_ "stress: status $rc: $(cat stress.out stress.err)"
[ ! -s stress.err ] || fail_ "stress: stderr: $(cat stress.err)"
n=0
for f in race/*.bin stress/*.bin stress/*.snap.*; do
	"$MEMPROF" parse "$f" > p 2> perr || fail_ "'$f' cannot be read: $(cat perr)"
	[ ! -s perr ] || fail_ "'$f' is not whole: $(cat perr)"
	grep -q '^TRAILER' p || fail_ "'$f' has no trailer"
	n=$((n + 1))
done
# 50 + 100 captures, and a snapshot every 10th.
[ $n -eq 160 ] || fail_ "$n captures and snapshots, expected 160"
exit 0
