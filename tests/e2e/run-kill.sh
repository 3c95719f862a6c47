#!/bin/bash
# SIGKILL from outside at a random moment, while 4 threads allocate: the capture
# holds every allocation the program had seen return (each thread reports its
# count on standard output after each allocation returns).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

killed() { # the environment of the run
	: > rep
	keep_bg -o rep env "$@" "$MEMPROF" run -q -f -o k.bin "$WORKLOADS/dies" kill 4
	mpid=$!
	# Not a time: the kill comes once the threads have made 4000 allocations, then at random.
	wait_until 60 eval '[ "$(wc -l < rep)" -ge 4000 ]'
	[ "$(wc -l < rep)" -ge 4000 ] || fail_ "$*: the program did not get going: $(cat err)"
	sleep "0.0$((RANDOM % 10))"
	child=$(pgrep -P $mpid) || fail_ "$*: no child of memprof"
	kill -KILL "$child"
	reap $mpid
	expect_rc 137 "$*: memprof run"
	keep -o p -e perr "$MEMPROF" parse --stacks k.bin
	expect_rc 0 "$*: parse"
	expect_no_err "$*: parse"
	[ "$(field exit_signal "$(grep ^TRAILER p)")" = 9 ] || fail_ "$*: trailer $(grep ^TRAILER p)"
	# The last count each thread reported, and what the capture holds for it.
	# (Whole lines only: a SIGKILL may cut a write short where it crosses a page of the file.)
	head -n "$(wc -l < rep)" rep | awk '{ last[$1] = $2 } END { for (t in last) print t, last[t] }' |
		sort > reported
	awk '/^THREAD / { for (i = 1; i <= NF; i++) { if ($i ~ /^index=/) idx = substr($i, 7);
				if ($i ~ /^name=/) name[idx] = substr($i, 6) } }
	     /^ALLOC .*frames=\["dies_alloc",/ { split($2, t, "="); n[t[2]]++ }
	     END { for (i in n) { gsub(/"/, "", name[i]); print name[i], n[i] } }' p | sort > captured
	[ "$(wc -l < reported)" -eq 4 ] || fail_ "$*: $(wc -l < reported) threads reported"
	join reported captured > both
	[ "$(wc -l < both)" -eq 4 ] || fail_ "$*: threads missing from the capture: $(cat reported captured)"
	while read -r name said held; do
		[ "$held" -ge "$said" ] ||
			fail_ "$*: $name had seen $said allocations return, the capture holds $held"
	done < both
}

killed
killed MEMPROF_RING_KB=4
killed MEMPROF_CLOCK=counter
killed MEMPROF_CLOCK=tsc
exit 0
