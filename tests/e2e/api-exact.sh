#!/bin/bash
# The in-process API (memprof.h): a program that loads the tracker with dlopen (no
# LD_PRELOAD, no ptrace), one linked with -lmemprof, and one the tracker was preloaded
# into paused, each allocating before, during and between two start/stop pairs (see
# tests/workloads/inproc.c): each capture holds exactly the allocations made while it
# was started, is complete (trailer, duration) the moment memprof_stop returns, frees
# of blocks from before its start are counted apart, and every refusal has its errno.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# After each stop the program runs this on the capture while it lives on.
cat > after.sh <<EOF
"$MEMPROF" parse "\$1" > "\$1.at-stop" 2>&1
EOF
export INPROC_AFTER_STOP="bash $T/after.sh"

# sizes FILE: "countxsize kind" of every ALLOC, sorted.
sizes() { "$MEMPROF" parse "$1" | sed -n 's/^ALLOC .* kind=\([a-z]*\) .* size=\([0-9]*\) .*/\2 \1/p' | sort | uniq -c | awk '{print $1 "x" $2 "-" $3}' | tr '\n' ' '; }

expected_out='snapshot stopped: ENOENT
stop stopped: ENOENT
stop again: ENOENT
start existing: EEXIST
start bad interval: EINVAL
start newer: E2BIG
start again: EBUSY
snapshot existing: EEXIST
status: recording=1 by=1 captures=3 path=b
status: recording=0 by=0 captures=3 path=b'

check() {
	local how=$1 d=$T/$1
	[ "$(cat "$d.out")" = "$expected_out" ] || { diff <(echo "$expected_out") "$d.out" >&2; fail_ "$how: the program's output"; }
	[ ! -s "$d.err" ] || fail_ "$how: the program wrote on stderr: $(head -3 "$d.err")"
	# Exactly the allocations made while started.
	[ "$(sizes "$d/a.bin")" = "3x1111-malloc " ] || fail_ "$how: a.bin holds $(sizes "$d/a.bin")"
	[ "$(sizes "$d/b.bin")" = "4x6666-malloc 1x6667-calloc " ] || fail_ "$how: b.bin holds $(sizes "$d/b.bin")"
	[ "$(sizes "$d/b.snap")" = "4x6666-malloc 1x6667-calloc " ] || fail_ "$how: b.snap holds $(sizes "$d/b.snap")"
	for f in a.bin b.bin; do
		"$MEMPROF" parse "$d/$f" > "$d/$f.now" || fail_ "$how: parse $f"
		# Complete when memprof_stop returned: what was read then is the whole file.
		cmp -s "$d/$f.at-stop" "$d/$f.now" || fail_ "$how: $f read right after the stop differs from $f now"
		t=$(grep ^TRAILER "$d/$f.now")
		[ "$(field end "$t")" = detach ] || fail_ "$how: $f's trailer: $t"
		dur=$(field duration_us "$t")
		last=$(grep -o 'time_us=[0-9]*' "$d/$f.now" | tail -1 | cut -d= -f2)
		[ "$dur" -ge "$last" ] && [ "$dur" -gt 0 ] || fail_ "$how: $f lasted $dur us, its last record is at $last us"
		grep -q '^ATTACH ' "$d/$f.now" || fail_ "$how: $f has no ATTACH record (the heap before the start)"
	done
	[ "$(field end "$(grep ^TRAILER "$d/b.snap.now" 2>/dev/null || "$MEMPROF" parse "$d/b.snap" | grep ^TRAILER)")" = snapshot ] ||
		fail_ "$how: the snapshot's trailer"
	[ "$(field max_depth "$(grep ^HEADER "$d/b.bin.now")")" = 4 ] || fail_ "$how: b.bin's max_depth"
	# Frees of blocks from before the start: a.bin frees 2 of them, b.bin 4 (a 1111 of a.bin's).
	[ "$(grep -c '^FREE' "$d/a.bin.now")" = 2 ] || fail_ "$how: a.bin's frees"
	[ "$(grep -c '^FREE' "$d/b.bin.now")" = 5 ] || fail_ "$how: b.bin's frees"
	"$MEMPROF" stats "$d/a.bin" > "$d/a.stats" 2>&1 || fail_ "$how: stats a.bin: $(cat "$d/a.stats")"
	grep -A1 '^Unknown frees:' "$d/a.stats" | grep -q '^[[:space:]]2 (' ||
		fail_ "$how: stats does not count the 2 frees from before the start: $(cat "$d/a.stats")"
	# The reporters symbolize the capture from its module paths: the allocating functions.
	"$MEMPROF" summary --leaks "$d/a.bin" > "$d/a.summary" 2> "$d/a.summary.err" || fail_ "$how: summary a.bin"
	grep -q 'in_first' "$d/a.summary" || fail_ "$how: a.bin's leaks are not in in_first: $(cat "$d/a.summary")"
	"$MEMPROF" summary "$d/b.bin" > "$d/b.summary" 2> /dev/null || fail_ "$how: summary b.bin"
	grep -q 'in_second' "$d/b.summary" || fail_ "$how: b.bin's peak is not in in_second: $(cat "$d/b.summary")"
	! ls "$d" | grep -q partial || fail_ "$how: a partial file was left: $(ls "$d")"
}

# dlopen: the tracker loaded at run time, no LD_PRELOAD.
mkdir dlopen
env -u LD_PRELOAD "$WORKLOADS/inproc" exact "$TRACKER_LIB" "$T/dlopen" > dlopen.out 2> dlopen.err ||
	fail_ "dlopen: the program failed: $(cat dlopen.out dlopen.err)"
check dlopen
[ "$(field mode "$(grep ^HEADER dlopen/a.bin.now)")" = preload ] || fail_ "the capture's mode"

# Linked with -lmemprof: the hooks are interposed from the start, no GOT to patch.
mkdir linked
"$WORKLOADS/inproc-linked" exact unused "$T/linked" > linked.out 2> linked.err ||
	fail_ "linked: the program failed: $(cat linked.out linked.err)"
check linked

# Preloaded and paused, as a service is: the API's paths win over MEMPROF_OUTPUT's.
mkdir paused
env LD_PRELOAD="$TRACKER_LIB" MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/paused/env.%n.bin" \
	"$WORKLOADS/inproc" exact "$TRACKER_LIB" "$T/paused" > paused.out 2> paused.err ||
	fail_ "paused: the program failed: $(cat paused.out paused.err)"
check paused
! ls paused | grep -q '^env' || fail_ "paused: MEMPROF_OUTPUT's capture was written: $(ls paused)"
exit 0
