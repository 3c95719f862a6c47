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
for l in one two; do
	printf '#include <stdlib.h>\n__attribute__((noinline)) void *lib_%s_alloc(size_t n)\n{\n\tvoid *p = malloc(n);\n\t__asm__ volatile("" ::: "memory");\n\treturn p;\n}\n' $l > lib$l.c
	cc -shared -fPIC -g -O1 -o lib$l.so lib$l.c || framework_failure_ "cc lib$l"
done
cat > churn.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	for (int i = 0; i < 400; i++) {
		const char *lib = i % 2 ? "./libtwo.so" : "./libone.so", *fn = i % 2 ? "lib_two_alloc" : "lib_one_alloc";
		void *h = dlopen(lib, RTLD_NOW), *(*f)(size_t);
		if (!h || !(f = (void *(*)(size_t))dlsym(h, fn)))
			return 1;
		free(f(i % 2 ? 2222 : 1111));
		dlclose(h);
	}
	return 0;
}
C
cc -g -o churn churn.c -ldl || framework_failure_ "cc churn"
for syms in "" --no-symbols; do
	mp run -q -f $syms -o c.bin ./churn
	expect_rc 0 "run churn $syms"
	"$MEMPROF" parse --stacks c.bin > p || fail_ "parse churn $syms"
	if [ -z "$syms" ]; then
		expect_count 200 '^ALLOC .*size=1111 .*frames=\["lib_one_alloc","main"' p
		expect_count 200 '^ALLOC .*size=2222 .*frames=\["lib_two_alloc","main"' p
	fi
	"$MEMPROF" stats --json -o - c.bin > s.json || fail_ "stats churn $syms"
	python3 - "$syms" s.json <<'PY' || fail_ "churn $syms: the allocations' sites"
import json, sys
d = json.load(open(sys.argv[2]))
want = {"lib_one_alloc": 200, "lib_two_alloc": 200} if not sys.argv[1] else {"libone.so": 200, "libtwo.so": 200}
got = {}
for e in d["top_allocations_by_count"] if not sys.argv[1] else d["top_modules_by_allocation_count"]:
    for k in want:
        if k in json.dumps(e):
            got[k] = got.get(k, 0) + e.get("count", e.get("num_allocations"))
if got != want:
    sys.exit("%s: %s, expected %s\n%s" % (sys.argv[1] or "symbolized", got, want, json.dumps(d["top_allocations_by_count"])[:800]))
PY
done
exit 0
