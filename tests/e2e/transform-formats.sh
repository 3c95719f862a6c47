#!/bin/bash
# transform: the folded, csv and speedscope exports of tests/data/app.txt,
# exactly, for the peak, the leaks, temporary allocations, --no-mmap and
# --split-threads; the speedscope file passes the format's schema check and
# every format sums to the view's totals (tests/data/README).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
check_speedscope() { python3 "$MEMPROF_SRCDIR/tests/e2e/speedscope_check.py" "$@"; }
# folded_total FILE: the sum of a folded file's counts.
folded_total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

# Default names: memprof-FORMAT-NAME.SUFFIX next to the capture.
for f in folded:folded csv:csv speedscope:speedscope.json pprof:pb.gz; do
	mp transform "${f%%:*}" app.mprof
	expect_rc 0 "transform ${f%%:*}"
	expect_no_err "transform ${f%%:*}"
	[ "$(cat out)" = "Wrote memprof-${f%%:*}-app.${f#*:}" ] || fail_ "transform ${f%%:*}: $(cat out)"
done

cat > expected <<'OUT'
main;build_index 1048576
main;load_config 4096
main;load_config;parse_token;strdup 300
worker_main 2097152
worker_main;libparse.so.1+0x2000 1048576
OUT
match_diff expected memprof-folded-app.folded
[ "$(folded_total memprof-folded-app.folded)" = 4198700 ] || fail_ "folded: not the peak's 4198700 B"

cat > expected <<'OUT'
allocator,num_allocations,size,tid,thread_name,stack_trace
MALLOC,1,1048576,0,merged thread,build_index;/src/app.c;30|main;/src/app.c;50
MALLOC,1,4096,0,merged thread,load_config;/src/app.c;20|main;/src/app.c;50
MALLOC,3,300,0,merged thread,strdup;/lib/x86_64-linux-gnu/libc.so.6;0|parse_token;/src/parse.c;12|load_config;/src/app.c;20|main;/src/app.c;50
MALLOC,1,2097152,0,merged thread,worker_main;/src/app.c;70
MMAP,1,1048576,0,merged thread,libparse.so.1+0x2000;/usr/lib/libparse.so.1;0|worker_main;/src/app.c;70
OUT
match_diff expected memprof-csv-app.csv

run check_speedscope memprof-speedscope-app.speedscope.json
expect_rc 0 "the speedscope schema check"
cat > expected <<'OUT'
sampled bytes 4198700 Memory
sampled none 7 Allocations
OUT
match_diff expected out
python3 - memprof-speedscope-app.speedscope.json > out <<'PY' || fail_ "speedscope: unreadable"
import json, sys
d = json.load(open(sys.argv[1]))
print(d["name"], "|", d["exporter"])
print(" ".join(f"{f['name']}@{f.get('file', '-')}:{f.get('line', 0)}" for f in d["shared"]["frames"]))
for p in d["profiles"]:
    print(p["name"], [[d["shared"]["frames"][i]["name"] for i in s] for s in p["samples"]], p["weights"])
PY
cat > expected <<'OUT'
/usr/bin/app --size 3 MB (peak memory) | memprof@0.1.0
main@/src/app.c:50 build_index@/src/app.c:30 load_config@/src/app.c:20 parse_token@/src/parse.c:12 strdup@/lib/x86_64-linux-gnu/libc.so.6:0 worker_main@/src/app.c:70 libparse.so.1+0x2000@/usr/lib/libparse.so.1:0
Memory [['main', 'build_index'], ['main', 'load_config'], ['main', 'load_config', 'parse_token', 'strdup'], ['worker_main'], ['worker_main', 'libparse.so.1+0x2000']] [1048576, 4096, 300, 2097152, 1048576]
Allocations [['main', 'build_index'], ['main', 'load_config'], ['main', 'load_config', 'parse_token', 'strdup'], ['worker_main'], ['worker_main', 'libparse.so.1+0x2000']] [1, 1, 3, 1, 1]
OUT
sed -i "s/memprof@0.1.0/memprof@$("$MEMPROF" --version | cut -d' ' -f2)/" expected
match_diff expected out
gzip -t memprof-pprof-app.pb.gz || fail_ "pprof: not a gzip file"

# The leaks: 1573064 B in 4 blocks.
mp transform --leaks -o - folded app.mprof
expect_rc 0 "folded --leaks"
cat > expected <<'OUT'
main;build_index 1048576
main;load_config;parse_token;strdup 200
worker_main;libparse.so.1+0x2000 524288
OUT
match_diff expected out
mp transform --leaks -o leaks.json speedscope app.mprof
run check_speedscope leaks.json
expect_rc 0 "speedscope --leaks check"
[ "$(head -2 out | cut -d' ' -f3 | tr '\n' ' ')" = "1573064 4 " ] || fail_ "speedscope --leaks totals: $(cat out)"
mp transform --leaks -o - csv app.mprof
[ "$(awk -F, 'NR > 1 { b += $3; n += $2 } END { print b, n }' out)" = "1573064 4" ] ||
	fail_ "csv --leaks totals: $(cat out)"

# Temporary allocations (threshold 1): the 2 MiB and the 64 of calloc.
mp transform --temporary-allocations -o - csv app.mprof
cat > expected <<'OUT'
allocator,num_allocations,size,tid,thread_name,stack_trace
MALLOC,1,2097152,0,merged thread,worker_main;/src/app.c;70
CALLOC,1,64,0,merged thread,load_config;/src/app.c;20|main;/src/app.c;50
OUT
match_diff expected out
mp transform --temporary-allocation-threshold 0 -o - folded app.mprof
[ "$(cat out)" = "main;load_config 64" ] || fail_ "threshold 0: $(cat out)"

# --no-mmap: the mapping is gone.
mp transform --no-mmap -o - folded app.mprof
[ "$(folded_total out)" = 3150124 ] || fail_ "--no-mmap total: $(folded_total out)"
expect_not_out "libparse.so.1+0x2000"

# --split-threads: the thread is the first frame, the tid and name a column,
# one speedscope profile of each kind per thread.
mp transform --split-threads -o - folded app.mprof
cat > expected <<'OUT'
5000 (app);main;build_index 1048576
5000 (app);main;load_config 4096
5000 (app);main;load_config;parse_token;strdup 300
5001 (worker);worker_main 2097152
5001 (worker);worker_main;libparse.so.1+0x2000 1048576
OUT
match_diff expected out
mp transform --split-threads --leaks -o - csv app.mprof
expect_out "MMAP,1,524288,5001,5001 (worker),libparse.so.1+0x2000;/usr/lib/libparse.so.1;0|worker_main;/src/app.c;70"
mp transform --split-threads -o threads.json speedscope app.mprof
run check_speedscope threads.json
expect_rc 0 "speedscope --split-threads check"
cat > expected <<'OUT'
sampled bytes 1052972 Memory: 5000 (app)
sampled bytes 3145728 Memory: 5001 (worker)
sampled none 5 Allocations: 5000 (app)
sampled none 2 Allocations: 5001 (worker)
OUT
match_diff expected out

# A view with nothing in it: still a valid, empty export.
"$MKCAPTURE" -f -o empty.mprof <<'CAP' || framework_failure_ "mkcapture"
HEADER format=1.0 pid=1 ppid=0 main_tid=1 mode=run start_time=2026-11-22T08:00:00.000000Z flags=symbolized exe="/bin/true" argv=["/bin/true"]
TRAILER end_time=2026-11-22T08:00:00.001000Z duration_us=1000 end=exit exit_code=0
CAP
for f in folded csv speedscope pprof; do
	mp transform -o "empty.$f" "$f" empty.mprof
	expect_rc 0 "transform $f of an empty capture"
done
[ ! -s empty.folded ] || fail_ "folded of nothing is not empty"
[ "$(cat empty.csv)" = "allocator,num_allocations,size,tid,thread_name,stack_trace" ] || fail_ "csv of nothing"
run check_speedscope empty.speedscope
expect_rc 0 "speedscope of nothing"
[ "$(cut -d' ' -f3 out | tr '\n' ' ')" = "0 0 " ] || fail_ "speedscope of nothing: $(cat out)"
gzip -t empty.pprof || fail_ "pprof of nothing: not gzip"
exit 0
