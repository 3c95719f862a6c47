#!/bin/bash
# A library loaded with dlopen: its module, its symbols, its unload.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
lib=$WORKLOADS/.libs/libdlwork.so

mp run -q -o d.bin "$WORKLOADS/dlopens" "$lib"
expect_rc 0 "run dlopens"
"$MEMPROF" parse --stacks d.bin > p || fail_ "parse"
expect_count 3 '^ALLOC .*size=4444 .*frames=\["dlwork_alloc","main"' p
expect_count 1 '^ALLOC .*size=5555 .*frames=\["main"' p
mod=$(grep -E "^MODULE .*path=\"$lib\"" p)
[ -n "$mod" ] || fail_ "no MODULE record for $lib"
id=$(field id "$mod")
grep -qE '^MODULE .*build_id=[0-9a-f]{40}' <<<"$mod" || fail_ "no build-id: $mod"
expect_count 1 "^MODULE_UNLOAD id=$id\$" p
line=$(site dlwork_alloc "$WORKLOAD_SRC/dlwork.c")
grep -qE "^SYMBOL .*module=$id .*frames=\[\"dlwork_alloc\" \"[^\"]*dlwork.c\":$line:" p ||
	fail_ "dlwork_alloc not symbolized at dlwork.c:$line"
# Only the modules some stack uses are in the capture, each before its first symbol:
# not the tracker's own library, which no stack of the program goes through.
! grep -q '^MODULE .*libmemprof' p || fail_ "the tracker's own library has a MODULE record"
for id in $(grep '^MODULE ' p | sed 's/^MODULE id=\([0-9]*\) .*/\1/'); do
	first=$(grep -n -E "^(MODULE id=$id |SYMBOL .*module=$id )" p | head -1)
	[[ $first == *:MODULE* ]] || fail_ "module $id: no SYMBOL uses it, or one comes before its MODULE"
	grep -q "^SYMBOL .*module=$id " p || fail_ "module $id is in the capture, but no symbol uses it"
done

# Two libraries of the same layout loaded and unloaded in turn (dlopen, one allocation, dlclose):
# the loader often puts one where the other was, at the same addresses. Each allocation is its
# own library's, in every report (the loader unmaps with no call of ours: dlclose is hooked; a
# node made before the unload is not the new library's, and its ip gets a SYMBOL record again).
# The workload's modes (tests/workloads/dlchurn.c) make the tracker's refreshes of its module
# map meet every time, whatever the machine's speed: "held" loads and unloads while another
# thread's refresh waits for the loader's lock that the loading thread holds; "handover" loads
# the second library, often where the first was, while the thread that unloaded the first
# has not refreshed yet (its stderr says how many times it came so).
for l in one two; do
	printf '#include <stdlib.h>\n__attribute__((noinline)) void *lib_%s_alloc(size_t n)\n{\n\tvoid *p = malloc(n);\n\t__asm__ volatile("" ::: "memory");\n\treturn p;\n}\n' $l > lib$l.c
	cc -shared -fPIC -g -O1 -o lib$l.so lib$l.c || framework_failure_ "cc lib$l"
done
for run in "plain 400" "held 100" "handover 200"; do
	set -- $run
	mode=$1 n=$(($2 / 2))
	for syms in "" --no-symbols; do
		what="$mode${syms:+ $syms}"
		mp run -q -f $syms -o c.bin "$WORKLOADS/dlchurn" ./libone.so ./libtwo.so $run
		expect_rc 0 "run dlchurn $what"
		[ ! -s err ] || sed "s/^/  $what: /" err
		"$MEMPROF" parse --stacks c.bin > p || fail_ "parse dlchurn $what"
		if [ -z "$syms" ]; then
			expect_count $n '^ALLOC .*size=1111 .*frames=\["lib_one_alloc",' p
			expect_count $n '^ALLOC .*size=2222 .*frames=\["lib_two_alloc",' p
		fi
		"$MEMPROF" stats --json -o - c.bin > s.json || fail_ "stats dlchurn $what"
		python3 - "$syms" $n s.json <<'PY' || fail_ "dlchurn $what: the allocations' sites"
import json, sys
d = json.load(open(sys.argv[3]))
n = int(sys.argv[2])
want = {"lib_one_alloc": n, "lib_two_alloc": n} if not sys.argv[1] else {"libone.so": n, "libtwo.so": n}
got = {}
for e in d["top_allocations_by_count"] if not sys.argv[1] else d["top_modules_by_allocation_count"]:
    for k in want:
        if k in json.dumps(e):
            got[k] = got.get(k, 0) + e.get("count", e.get("num_allocations"))
if got != want:
    sys.exit("%s: %s, expected %s\n%s" % (sys.argv[1] or "symbolized", got, want, json.dumps(d["top_allocations_by_count"])[:800]))
PY
	done
done

# dlclose where the loader holds a lock (a constructor or destructor, a dl_iterate_phdr callback,
# exit) while the timer refreshes the map: the tracker's refresh after it neither hangs nor
# loses the unload, and each allocation is the inner library's (tests/workloads/dlchurn.c,
# nested).
cat > inner.c <<'C'
#include <stdlib.h>
__attribute__((noinline)) void *inner_alloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}
C
cat > outer.c <<'C'
#include <dlfcn.h>
#include <stdlib.h>
static void inner_round(size_t n)
{
	void *h = dlopen("./libinner.so", RTLD_NOW), *(*f)(size_t);
	if (!h || !(f = (void *(*)(size_t))dlsym(h, "inner_alloc")))
		abort();
	free(f(n));
	dlclose(h);
}
__attribute__((constructor)) static void loaded(void) { inner_round(3333); }
__attribute__((destructor)) static void unloaded(void) { inner_round(4444); }
C
cc -shared -fPIC -g -O1 -o libinner.so inner.c && cc -shared -fPIC -g -O1 -o libouter.so outer.c ||
	framework_failure_ "cc libinner, libouter"
for syms in "" --no-symbols; do
	mp run -q -f $syms -o n.bin "$WORKLOADS/dlchurn" ./libouter.so ./libinner.so nested 100
	expect_rc 0 "run dlchurn nested $syms"
	if [ -z "$syms" ]; then
		"$MEMPROF" parse --stacks n.bin > p || fail_ "parse dlchurn nested"
		for want in 3333:101 4444:101 5555:100 6666:1; do
			expect_count ${want#*:} "^ALLOC .*size=${want%:*} .*frames=\\[\"inner_alloc\"," p
		done
	else
		"$MEMPROF" stats --json -o - n.bin > s.json || fail_ "stats dlchurn nested $syms"
		python3 - s.json <<'PY' || fail_ "dlchurn nested $syms: libinner.so's allocations"
import json, sys
d = json.load(open(sys.argv[1]))
got = sum(e["num_allocations"] for e in d["top_modules_by_allocation_count"] if "libinner.so" in e["module"])
if got != 303:
    sys.exit("libinner.so: %d allocations, expected 303\n%s" % (got, json.dumps(d["top_modules_by_allocation_count"])))
PY
	fi
done
exit 0
