#!/bin/bash
# tree: the call tree of the biggest stacks, exactly; folding below -b,
# --leaks, temporary allocations, --no-mmap, and collapsed chains.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
mp tree app.mprof
expect_rc 0 "tree"
expect_no_err "tree"
cat > expected <<'OUT'
Peak memory: 4.004 MiB in 7 allocations, at 10.000 ms
4.004 MiB (100.00 %) <ROOT>
├── 3.000 MiB (74.92 %) worker_main  /src/app.c:70
│   └── 1.000 MiB (24.97 %) libparse.so.1+0x2000
└── 1.004 MiB (25.08 %) main  /src/app.c:50
    ├── 1.000 MiB (24.97 %) build_index  /src/app.c:30
    └── 4.293 KiB (0.10 %) load_config  /src/app.c:20
        └── 300 B (0.01 %) parse_token → strdup  (libc.so.6)
OUT
match_diff expected out

# Only the two biggest stacks; the other three fold into one line.
mp tree -b 2 app.mprof
expect_rc 0 "tree -b 2"
cat > expected <<'OUT'
Peak memory: 4.004 MiB in 7 allocations, at 10.000 ms
4.004 MiB (100.00 %) <ROOT>
├── 2.000 MiB (49.95 %) worker_main  /src/app.c:70
├── 1.000 MiB (24.97 %) main → build_index  /src/app.c:30
└── 1.004 MiB (25.08 %) 5 allocations from 3 locations below the threshold
OUT
match_diff expected out

# What leaked: half of the mapping is still there, under the stack that mapped it.
mp tree --leaks app.mprof
expect_rc 0 "tree --leaks"
cat > expected <<'OUT'
Leaked memory (still allocated at the end): 1.500 MiB in 4 allocations
1.500 MiB (100.00 %) <ROOT>
├── 1.000 MiB (66.67 %) main  /src/app.c:50
│   ├── 1.000 MiB (66.66 %) build_index  /src/app.c:30
│   └── 200 B (0.01 %) load_config → parse_token → strdup  (libc.so.6)
└── 512.000 KiB (33.33 %) worker_main → libparse.so.1+0x2000
OUT
match_diff expected out

mp tree --temporary-allocations app.mprof
expect_rc 0 "tree --temporary-allocations"
cat > expected <<'OUT'
Temporary allocations (freed by their thread within 1 other allocation): 2.000 MiB in 2 allocations
2.000 MiB (100.00 %) <ROOT>
├── 2.000 MiB (100.00 %) worker_main  /src/app.c:70
└── 64 B (0.00 %) main → load_config  /src/app.c:20
OUT
match_diff expected out

mp tree --no-mmap app.mprof
expect_rc 0 "tree --no-mmap"
cat > expected <<'OUT'
Peak memory: 3.004 MiB in 6 allocations, at 10.000 ms (mappings left out)
3.004 MiB (100.00 %) <ROOT>
├── 2.000 MiB (66.57 %) worker_main  /src/app.c:70
└── 1.004 MiB (33.43 %) main  /src/app.c:50
    ├── 1.000 MiB (33.29 %) build_index  /src/app.c:30
    └── 4.293 KiB (0.14 %) load_config  /src/app.c:20
        └── 300 B (0.01 %) parse_token → strdup  (libc.so.6)
OUT
match_diff expected out

# Chains: f1 -> ... -> f6 (six frames, f6 allocates and calls g) is one line
# with the middle elided; h1 -> h2 -> h3 -> h4 (h2 and h3 from one address,
# h3 inlined into h2) is four frames, all shown.
mkcap chain.mprof <<'CAP'
HEADER format=1.0 pid=1 main_tid=1 mode=run flags=symbolized argv=["/bin/chain"]
MODULE id=1 base=0x400000 path="/bin/chain" build_id=- segments=[0x1000+0x1000:r-x]
STRING id=1 "/src/c.c"
STRING id=2 "f1"
STRING id=3 "f2"
STRING id=4 "f3"
STRING id=5 "f4"
STRING id=6 "f5"
STRING id=7 "f6"
STRING id=8 "g"
STRING id=9 "h1"
STRING id=10 "h2"
STRING id=11 "h3"
STRING id=12 "h4"
SYMBOL ip=0x401001 module=1 offset=0x1001 frames=[#2 #1:1:0]
SYMBOL ip=0x401002 module=1 offset=0x1002 frames=[#3 #1:2:0]
SYMBOL ip=0x401003 module=1 offset=0x1003 frames=[#4 #1:3:0]
SYMBOL ip=0x401004 module=1 offset=0x1004 frames=[#5 #1:4:0]
SYMBOL ip=0x401005 module=1 offset=0x1005 frames=[#6 #1:5:0]
SYMBOL ip=0x401006 module=1 offset=0x1006 frames=[#7 #1:6:0]
SYMBOL ip=0x401007 module=1 offset=0x1007 frames=[#8 #1:7:0]
SYMBOL ip=0x401011 module=1 offset=0x1011 frames=[#9 #1:11:0]
SYMBOL ip=0x401012 module=1 offset=0x1012 frames=[#11 #1:13:0, #10 #1:12:0]
SYMBOL ip=0x401014 module=1 offset=0x1014 frames=[#12 #1:14:0]
TRACE node=1 parent=0 ip=0x401001
TRACE node=2 parent=1 ip=0x401002
TRACE node=3 parent=2 ip=0x401003
TRACE node=4 parent=3 ip=0x401004
TRACE node=5 parent=4 ip=0x401005
TRACE node=6 parent=5 ip=0x401006
TRACE node=7 parent=6 ip=0x401007
TRACE node=8 parent=0 ip=0x401011
TRACE node=9 parent=8 ip=0x401012
TRACE node=10 parent=9 ip=0x401014
ALLOC thread=0 kind=malloc addr=0x1000 size=100 stack=6
ALLOC thread=0 kind=malloc addr=0x2000 size=50 stack=7
ALLOC thread=0 kind=malloc addr=0x3000 size=10 stack=10
TRAILER duration_us=10 end=exit exit_code=0
CAP
mp tree chain.mprof
expect_rc 0 "tree of chains"
cat > expected <<'OUT'
Peak memory: 160 B in 3 allocations, before the first sample
160 B (100.00 %) <ROOT>
├── 150 B (93.75 %) f1 → … 3 more … → f5 → f6  /src/c.c:6
│   └── 50 B (31.25 %) g  /src/c.c:7
└── 10 B (6.25 %) h1 → h2 → h3 → h4  /src/c.c:14
OUT
match_diff expected out
exit 0
