#!/bin/bash
# summary: memray's table of functions, exactly, for the peak, the leaks and
# temporary allocations; sorting, row limits and --no-mmap.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
mp summary app.mprof
expect_rc 0 "summary"
expect_no_err "summary"
cat > expected <<'OUT'
Peak memory: 4.004 MiB in 7 allocations, at 10.000 ms
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┓
┃ Location                                       ┃ <Total Memory> ┃ Total Memory % ┃ Own Memory ┃ Own Memory % ┃ Allocation Count ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━┩
│ worker_main at /src/app.c                      │      3.000 MiB │        74.92 % │  2.000 MiB │      49.95 % │                2 │
│ main at /src/app.c                             │      1.004 MiB │        25.08 % │        0 B │       0.00 % │                5 │
│ build_index at /src/app.c                      │      1.000 MiB │        24.97 % │  1.000 MiB │      24.97 % │                1 │
│ libparse.so.1+0x2000 at /usr/lib/libparse.so.1 │      1.000 MiB │        24.97 % │  1.000 MiB │      24.97 % │                1 │
│ load_config at /src/app.c                      │      4.293 KiB │         0.10 % │  4.000 KiB │       0.10 % │                4 │
│ parse_token at /src/parse.c                    │          300 B │         0.01 % │      300 B │       0.01 % │                3 │
│ strdup at /lib/x86_64-linux-gnu/libc.so.6      │          300 B │         0.01 % │        0 B │       0.00 % │                3 │
└────────────────────────────────────────────────┴────────────────┴────────────────┴────────────┴──────────────┴──────────────────┘
OUT
match_diff expected out

# Sorted by own memory: the marker moves, main (no own memory) goes down.
# (Own memory is the site's: parse_token's, not libc's strdup's.)
mp summary -s 3 app.mprof
expect_rc 0 "summary -s 3"
cat > expected <<'OUT'
Peak memory: 4.004 MiB in 7 allocations, at 10.000 ms
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┓
┃ Location                                       ┃ Total Memory ┃ Total Memory % ┃ <Own Memory> ┃ Own Memory % ┃ Allocation Count ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━┩
│ worker_main at /src/app.c                      │    3.000 MiB │        74.92 % │    2.000 MiB │      49.95 % │                2 │
│ build_index at /src/app.c                      │    1.000 MiB │        24.97 % │    1.000 MiB │      24.97 % │                1 │
│ libparse.so.1+0x2000 at /usr/lib/libparse.so.1 │    1.000 MiB │        24.97 % │    1.000 MiB │      24.97 % │                1 │
│ load_config at /src/app.c                      │    4.293 KiB │         0.10 % │    4.000 KiB │       0.10 % │                4 │
│ parse_token at /src/parse.c                    │        300 B │         0.01 % │        300 B │       0.01 % │                3 │
│ main at /src/app.c                             │    1.004 MiB │        25.08 % │          0 B │       0.00 % │                5 │
│ strdup at /lib/x86_64-linux-gnu/libc.so.6      │        300 B │         0.01 % │          0 B │       0.00 % │                3 │
└────────────────────────────────────────────────┴──────────────┴────────────────┴──────────────┴──────────────┴──────────────────┘
OUT
match_diff expected out

# rows: the first column of the table's body, in order.
rows() { sed -n 's/^│ \([^ ]*\) at .*/\1/p' out | tr '\n' ' '; }

mp summary -s 4 app.mprof
[ "$(rows)" = "worker_main build_index libparse.so.1+0x2000 load_config parse_token main strdup " ] ||
	fail_ "-s 4 order: $(rows)"
expect_out "┃ Location                                       ┃ Total Memory ┃ Total Memory % ┃ Own Memory ┃ <Own Memory %> ┃ Allocation Count ┃"
mp summary --sort-column=5 app.mprof
[ "$(rows)" = "main load_config parse_token strdup worker_main build_index libparse.so.1+0x2000 " ] ||
	fail_ "-s 5 order: $(rows)"
mp summary -s 2 app.mprof
[ "$(rows)" = "worker_main main build_index libparse.so.1+0x2000 load_config parse_token strdup " ] ||
	fail_ "-s 2 order: $(rows)"

# -r caps the rows and says how many were left out.
mp summary -s 5 -r 3 app.mprof
expect_rc 0 "summary -r 3"
[ "$(rows)" = "main load_config parse_token " ] || fail_ "-r 3 rows: $(rows)"
[ "$(tail -1 out)" = "4 more locations (-r 7 shows them all)" ] || fail_ "-r 3 footer: $(tail -1 out)"
mp summary --max-rows 7 app.mprof
expect_not_out "more location"

mp summary --leaks app.mprof
expect_rc 0 "summary --leaks"
cat > expected <<'OUT'
Leaked memory (still allocated at the end): 1.500 MiB in 4 allocations
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┓
┃ Location                                       ┃ <Total Memory> ┃ Total Memory % ┃  Own Memory ┃ Own Memory % ┃ Allocation Count ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━┩
│ main at /src/app.c                             │      1.000 MiB │        66.67 % │         0 B │       0.00 % │                3 │
│ build_index at /src/app.c                      │      1.000 MiB │        66.66 % │   1.000 MiB │      66.66 % │                1 │
│ libparse.so.1+0x2000 at /usr/lib/libparse.so.1 │    512.000 KiB │        33.33 % │ 512.000 KiB │      33.33 % │                1 │
│ worker_main at /src/app.c                      │    512.000 KiB │        33.33 % │         0 B │       0.00 % │                1 │
│ parse_token at /src/parse.c                    │          200 B │         0.01 % │       200 B │       0.01 % │                2 │
│ load_config at /src/app.c                      │          200 B │         0.01 % │         0 B │       0.00 % │                2 │
│ strdup at /lib/x86_64-linux-gnu/libc.so.6      │          200 B │         0.01 % │         0 B │       0.00 % │                2 │
└────────────────────────────────────────────────┴────────────────┴────────────────┴─────────────┴──────────────┴──────────────────┘
OUT
match_diff expected out

# Temporary: freed by their own thread within the threshold.
mp summary --temporary-allocations app.mprof
expect_rc 0 "summary --temporary-allocations"
[ "$(head -1 out)" = "Temporary allocations (freed by their thread within 1 other allocation): 2.000 MiB in 2 allocations" ] ||
	fail_ "temporary title: $(head -1 out)"
[ "$(rows)" = "worker_main load_config main " ] || fail_ "temporary rows: $(rows)"
expect_out "│ worker_main at /src/app.c │      2.000 MiB │       100.00 % │  2.000 MiB │     100.00 % │                1 │"
mp summary --temporary-allocation-threshold 0 app.mprof
[ "$(head -1 out)" = "Temporary allocations (freed by their thread within 0 other allocations): 64 B in 1 allocation" ] ||
	fail_ "threshold 0 title: $(head -1 out)"
mp summary --temporary-allocation-threshold 3 app.mprof
[ "$(head -1 out)" = "Temporary allocations (freed by their thread within 3 other allocations): 2.004 MiB in 4 allocations" ] ||
	fail_ "threshold 3 title: $(head -1 out)"

# --no-mmap: the mapping is gone, percentages are of 3.004 MiB.
mp summary --no-mmap app.mprof
expect_rc 0 "summary --no-mmap"
[ "$(head -1 out)" = "Peak memory: 3.004 MiB in 6 allocations, at 10.000 ms (mappings left out)" ] ||
	fail_ "--no-mmap title: $(head -1 out)"
expect_not_out "libparse.so.1+0x2000"
expect_out "│ worker_main at /src/app.c                 │      2.000 MiB │        66.57 % │  2.000 MiB │      66.57 % │                1 │"
exit 0
