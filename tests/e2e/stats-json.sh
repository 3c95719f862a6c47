#!/bin/bash
# stats --json: the file's name and place, no overwriting without -f, and
# every value (read back with python3).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"
command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"

mkdir sub
mkcap sub/app.mprof "$TESTDATA/app.txt"
mp stats --json sub/app.mprof
expect_rc 0 "stats --json"
expect_no_err "stats --json"
[ "$(cat out)" = "Wrote sub/memprof-stats-app.mprof.json" ] || fail_ "unexpected output: $(cat out)"
python3 -m json.tool sub/memprof-stats-app.mprof.json > /dev/null || fail_ "the JSON does not parse"

python3 - sub/memprof-stats-app.mprof.json <<'PY' || fail_ "JSON values differ"
import json, sys
d = json.load(open(sys.argv[1]))
def eq(key, got, want):
    if got != want:
        sys.exit(f"{key}: {got!r}, expected {want!r}")
eq("total_num_allocations", d["total_num_allocations"], 8)
eq("total_bytes_allocated", d["total_bytes_allocated"], 4198764)
eq("total_num_frees", d["total_num_frees"], 5)
eq("peak_memory_bytes", d["peak_memory_bytes"], 4198700)
eq("peak_memory_blocks", d["peak_memory_blocks"], 7)
eq("peak_time_us", d["peak_time_us"], 10000)
eq("leaked_bytes", d["leaked_bytes"], 1573064)
eq("leaked_blocks", d["leaked_blocks"], 4)
eq("unknown_frees", d["unknown_frees"], 1)
eq("exit_status", d["exit_status"], 0)
eq("exit_signal", "exit_signal" in d, False)
eq("since_attach", d["since_attach"], False)
eq("truncated", d["truncated"], False)
eq("histogram", d["allocation_size_histogram"][0], {"min_bytes": 64, "max_bytes": 127, "count": 4})
eq("histogram length", len(d["allocation_size_histogram"]), 16)
eq("histogram 4 KiB", d["allocation_size_histogram"][6], {"min_bytes": 4096, "max_bytes": 8191, "count": 1})
eq("histogram last", d["allocation_size_histogram"][-1], {"min_bytes": 2097152, "max_bytes": 4194303, "count": 1})
eq("histogram total", sum(b["count"] for b in d["allocation_size_histogram"]), 8)
eq("allocator_type_distribution", d["allocator_type_distribution"], {"MALLOC": 6, "CALLOC": 1, "MMAP": 1})
eq("top by size", [(e["location"], e["size"]) for e in d["top_allocations_by_size"]],
   [("worker_main:/src/app.c:70", 2097152), ("build_index:/src/app.c:30", 1048576),
    ("libparse.so.1+0x2000", 1048576), ("load_config:/src/app.c:20", 4160),
    ("parse_token:/src/parse.c:12", 300)])
eq("top by count", [(e["location"], e["count"]) for e in d["top_allocations_by_count"]],
   [("parse_token:/src/parse.c:12", 3), ("load_config:/src/app.c:20", 2),
    ("worker_main:/src/app.c:70", 1), ("build_index:/src/app.c:30", 1),
    ("libparse.so.1+0x2000", 1)])
eq("top site fields", d["top_allocations_by_count"][0],
   {"location": "parse_token:/src/parse.c:12", "count": 3, "size": 300, "function": "parse_token",
    "file": "/src/parse.c", "line": 12, "module": "/usr/lib/libparse.so.1"})
eq("modules by size", d["top_modules_by_allocation_size"],
   [{"module": "/usr/bin/app", "num_allocations": 4, "total_bytes": 3149888},
    {"module": "/usr/lib/libparse.so.1", "num_allocations": 4, "total_bytes": 1048876}])
eq("modules by count", d["top_modules_by_allocation_count"], d["top_modules_by_allocation_size"])
eq("threads", [(t["tid"], t["name"], t["num_allocations"], t["total_bytes"], t["num_frees"], t["leaked_bytes"])
               for t in d["threads"]],
   [(5000, "app", 6, 1053036, 3, 1048776), (5001, "worker", 2, 3145728, 2, 524288)])
m = d["metadata"]
eq("start_time", m["start_time"], "2026-11-22T08:00:00.000000Z")
eq("end_time", m["end_time"], "2026-11-22T08:00:00.035000Z")
eq("duration_us", m["duration_us"], 35000)
eq("command_line", m["command_line"], "/usr/bin/app --size 3 MB")
eq("argv", m["argv"], ["/usr/bin/app", "--size", "3 MB"])
eq("pid", m["pid"], 5000)
eq("main_thread_id", m["main_thread_id"], 5000)
eq("peak_memory", m["peak_memory"], 4198700)
eq("total_allocations", m["total_allocations"], 8)
eq("total_frames", m["total_frames"], 7)
eq("exe", m["exe"], "/usr/bin/app")
PY

# An existing file is kept unless -f.
echo keep > sub/memprof-stats-app.mprof.json
mp stats --json sub/app.mprof
expect_rc 1 "stats --json over an existing file"
expect_err "memprof: 'sub/memprof-stats-app.mprof.json' already exists (use -f to overwrite it)"
expect_one_line_err
[ "$(cat sub/memprof-stats-app.mprof.json)" = keep ] || fail_ "the existing file was changed"
mp stats --json -f sub/app.mprof
expect_rc 0 "stats --json -f"
python3 -m json.tool sub/memprof-stats-app.mprof.json > /dev/null || fail_ "-f did not rewrite the file"

# -o names the file; -n shortens the lists.
mp stats --json -o mine.json -n 1 sub/app.mprof
expect_rc 0 "stats --json -o"
[ "$(cat out)" = "Wrote mine.json" ] || fail_ "unexpected output: $(cat out)"
python3 -c '
import json, sys
d = json.load(open("mine.json"))
assert [e["location"] for e in d["top_allocations_by_size"]] == ["worker_main:/src/app.c:70"], d["top_allocations_by_size"]
assert len(d["top_modules_by_allocation_count"]) == 1
' || fail_ "-n 1 in the JSON"

# -o and -f only go with --json.
mp stats -o x.json sub/app.mprof
expect_rc 2 "stats -o without --json"
expect_err "memprof stats: option '--output' needs --json"
[ ! -e x.json ] || fail_ "-o without --json wrote a file"

# An unwritable place fails with the reason.
mp stats --json -o nodir/x.json sub/app.mprof
expect_rc 1 "stats --json into a missing directory"
expect_err "memprof: cannot create 'nodir/x.json': No such file or directory"
expect_one_line_err
exit 0
