#!/bin/bash
# Options of memprof run.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# --max-depth keeps the innermost frames and marks the cut.
mp run -q --max-depth 10 -o d.bin "$WORKLOADS/deep" 50
expect_rc 0 "--max-depth 10"
"$MEMPROF" parse --stacks d.bin > p
line=$(grep -E '^ALLOC .*size=99 ' p)
frames=$(sed 's/.*frames=//' <<<"$line")
[ "$(grep -o '","' <<<"$frames" | wc -l)" -eq 10 ] || fail_ "expected 10 frames and the cut: $frames"
grep -q '^\["recurse","recurse",' <<<"$frames" || fail_ "innermost frames: $frames"
grep -q '"<stack truncated>"\]$' <<<"$frames" || fail_ "no truncation mark: $frames"
grep -q 'max_depth=10 ' p || fail_ "max_depth not in the header"
# The default depth (128) holds 50 levels.
mp run -q -f -o d.bin "$WORKLOADS/deep" 50
"$MEMPROF" parse --stacks d.bin | grep -E '^ALLOC .*size=99 ' > line
grep -q truncated line && fail_ "a 55-frame stack truncated at the default depth"
[ "$(grep -o '"recurse"' line | wc -l)" -eq 51 ] || fail_ "expected 51 recurse frames: $(cat line)"

# --memory-interval-ms: a sample each interval while the program runs. Not
# counted in a span of time (a loaded machine runs the sampler late): the
# program waits until the thread that samples it (memprof run's drain of its
# rings) has slept 20 times, each sleep ending at a sample's time; and samples
# are never closer than the interval.
spacing() { # interval in ms: every sample but the last (at exit) that far after the one before
	grep '^TICK' p | sed 's/.*time_us=\([0-9]*\).*/\1/' > times
	head -n -1 times | awk -v us="$(($1 * 1000))" 'NR > 1 && $1 - prev < us { bad = 1 } { prev = $1 } END { exit bad }' ||
		fail_ "samples closer than $1 ms: $(tr '\n' ' ' < times)"
}
mp run -q -f --memory-interval-ms 5 -o t.bin "$WORKLOADS/crash" ticks 20
expect_rc 0 "--memory-interval-ms 5"
"$MEMPROF" parse t.bin > p
grep -q 'interval_ms=5 ' p || fail_ "interval not in the header"
spacing 5
n5=$(grep -c '^TICK' p)
# Its sleeps end at samples (a few wait for a lock, or a record in flight): at least half do.
[ "$n5" -ge 11 ] || fail_ "$n5 samples at 5 ms, after the timer slept 20 times"
mp run -q -f --memory-interval-ms 1000 -o t.bin "$WORKLOADS/crash"
"$MEMPROF" parse t.bin > p
grep -q 'interval_ms=1000 ' p || fail_ "interval not in the header"
spacing 1000
awk '/^TICK/ { split($3, a, "="); if (a[2] < 1000000) exit 1 }' p || fail_ "an RSS below 1 MB"

# memprof run samples the process from its collector: the program has no
# thread of the tracker's for it, and its resident set is sampled while it
# makes no event (48 MiB written into a block it holds while the sampler
# sleeps 3 times: a sample in between sees them).
"$MEMPROF" run -q -f -o r.bin "$WORKLOADS/crash" names > names || fail_ "crash names failed"
grep -qx "crash" names || fail_ "the program's own thread is not listed: $(tr '\n' ' ' < names)"
grep -q "memprof-timer" names && fail_ "a timer thread in a program memprof run samples: $(tr '\n' ' ' < names)"
# --no-control: no control socket, and no thread of the tracker's at all:
# glibc still takes the program for one of a single thread. It does not go
# with --paused, which needs the socket.
"$MEMPROF" run -q -f --no-control -o r.bin "$WORKLOADS/crash" names > names || fail_ "--no-control crash names failed"
[ "$(cat names)" = crash ] || fail_ "threads under --no-control: $(tr '\n' ' ' < names)"
"$MEMPROF" run -q -f --no-control --follow-fork -o f.bin sh -c "\"$WORKLOADS/crash\" single" > single ||
	fail_ "--no-control crash single failed"
[ "$(cat single)" = single_threaded=1 ] || fail_ "under --no-control --follow-fork: $(cat single)"
"$MEMPROF" parse r.bin | grep -q '^ALLOC .*size=77 ' || fail_ "--no-control recorded nothing"
# ... and memprof ctl says so rather than that nothing tracks it.
keep_bg -o w.out -e w.err "$MEMPROF" run -q -f --no-control -o w.bin "$WORKLOADS/crash" wait
runpid=$!
wait_until 60 grep -q waiting w.out || fail_ "crash wait under --no-control did not start: $(cat w.err)"
target=$(pgrep -P "$runpid" -x crash) || fail_ "no crash child of memprof run $runpid"
mp ctl "$target" status
expect_rc 1 "ctl status under --no-control"
expect_one_line_err
expect_err "process $target has no memprof tracker listening (its libmemprof.so has no control socket: started with 'memprof run --no-control' or MEMPROF_CONTROL=0, or detached)"
kill "$target"
reap "$runpid"
[ -s w.bin ] || fail_ "no capture of crash wait under --no-control"
mp run --no-control --paused -o p.bin "$WORKLOADS/crash"
expect_rc 2 "--no-control --paused"
expect_err "options '--no-control' and '--paused' do not go together"
mp run -q -f -o r.bin "$WORKLOADS/crash" touch 48
expect_rc 0 "crash touch 48"
"$MEMPROF" parse r.bin > p
awk -v size=$((48 << 20)) '
	$1 == "ALLOC" && $5 == "size=" size { block = $4 }
	$1 == "FREE" && block != "" && $4 == block { block = ""; freed = 1 }
	$1 == "TICK" && block != "" { split($3, r, "="); if (r[2] >= size) seen = 1 }
	END { exit !(freed && seen) }' p || fail_ "no sample of the 48 MiB while the block was held: $(grep '^TICK' p | tr '\n' ' ')"

# --no-symbols: no SYMBOL records, flags raw; stacks show module+offset.
mp run -q -f --no-symbols -o n.bin "$WORKLOADS/allocs"
expect_rc 0 "--no-symbols"
"$MEMPROF" parse --stacks n.bin > p
expect_count 0 '^SYMBOL ' p
grep -q 'flags=raw' p || fail_ "flags not raw"
expect_count 1000 '^ALLOC .*size=32 .*frames=\["allocs\+0x[0-9a-f]+","allocs\+0x' p

# The default name: memprof-<program>.<pid>.bin in the current directory.
mp run "$WORKLOADS/allocs"
expect_rc 0 "default output"
f=$(ls memprof-allocs.*.bin) || fail_ "no memprof-allocs.<pid>.bin"
pid=$(field pid "$("$MEMPROF" parse "$f" | grep ^HEADER)")
[ "$f" = "memprof-allocs.$pid.bin" ] || fail_ "name $f, pid $pid"
expect_err "memprof: tracking '$WORKLOADS/allocs' into '$f'"

# Never overwrite without -f, and refuse before the program runs.
mp run -o "$f" "$WORKLOADS/allocs"
expect_rc 1 "existing output"
expect_err "memprof: '$f' exists (use -f to overwrite it)"
expect_one_line_err
expect_not_out "allocs done"
mp run -q -f -o "$f" "$WORKLOADS/allocs"
expect_rc 0 "-f"

# Bad option values are usage errors.
for args in "--max-depth 0" "--max-depth 2000" "--max-depth x" "--memory-interval-ms 0" "--memory-interval-ms -5" "--bogus"; do
	mp run $args "$WORKLOADS/allocs"
	expect_rc 2 "run $args"
	expect_not_out "allocs done"
done
mp run
expect_rc 2 "run without a program"
expect_err "memprof run: missing argument"
# Options after the program belong to the program.
mp run -q -f -o o.bin "$WORKLOADS/io" 7 --max-depth 0
expect_rc 7 "program options"
exit 0
