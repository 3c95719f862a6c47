#!/bin/bash
# memprof's own stack walker gives exactly the stacks libunwind gives.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

stacks() { # capture -> the allocations' kinds, sizes and frames, in order (no sizes with SIZES=no)
	"$MEMPROF" parse --stacks "$1" | grep '^ALLOC' | sed 's/addr=[^ ]* //; s/stack=[0-9]* //' |
		if [ "${SIZES:-}" = no ]; then sed 's/size=[0-9]* //'; else cat; fi
}
same() { # name, program...
	local name=$1; shift
	keep -n walker "$MEMPROF" run -q -f -o walker.bin "$@"
	expect_rc 0 "$name: run"
	keep -n libunwind env MEMPROF_UNWIND=libunwind "$MEMPROF" run -q -f -o libunwind.bin "$@"
	expect_rc 0 "$name: run with libunwind"
	stacks walker.bin > a
	stacks libunwind.bin > b
	[ -s a ] || fail_ "$name: no allocations"
	cmp -s a b || { diff a b | head -5 >&2; fail_ "$name: the stacks differ from libunwind's"; }
}
same allocs "$WORKLOADS/allocs"
same cxx "$WORKLOADS/cxx"
same dlopens "$WORKLOADS/dlopens" "$WORKLOADS/.libs/libdlwork.so"
same "deep 50" "$WORKLOADS/deep" 50
same "deep 300 (cut at --max-depth)" "$WORKLOADS/deep" 300
same "deep 2000 (deeper than the walker keeps)" "$WORKLOADS/deep" 2000
# Frame-pointer code (CFA from rbp) and optimized code mixed in one stack.
cat > fp.c <<'C'
#include <stdlib.h>
void *volatile sink;
__attribute__((noinline, optimize("O0", "no-omit-frame-pointer"))) void fp(int n);
__attribute__((noinline, optimize("O2", "omit-frame-pointer"))) void opt(int n)
{
	if (n > 0)
		fp(n - 1);
	else
		for (int i = 0; i < 1000; i++)
			free(sink = malloc(16 + i % 7));
	__asm__ volatile("" ::: "memory");
}
void fp(int n)
{
	char buf[n % 5 + 1]; /* a variable-length array: the CFA must come from rbp */
	buf[0] = (char)n;
	sink = buf;
	opt(n - 1);
	__asm__ volatile("" ::: "memory");
}
int main(void)
{
	for (int i = 0; i < 20; i++)
		opt(i);
	return 0;
}
C
cc -g -O2 -o fp fp.c || framework_failure_ "cc"
same "frame pointers and VLAs" ./fp
# Random paths through functions of one frame size (steps.h: each step takes two
# bits of the path to choose the next, and leaf allocates), for the two cases below.
cat > steps.h <<'C'
#include <stdlib.h>
void *volatile sink;
typedef void step_fn(unsigned, int);
static step_fn s0, s1, s2, s3;
static step_fn *const steps[4] = { s0, s1, s2, s3 };
static unsigned long long seed = SEED;
static unsigned rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(seed >> 33);
}
__attribute__((noipa)) static void leaf(unsigned path)
{
	sink = malloc(16 + path % 64);
	free(sink);
}
#define STEP(name) \
	__attribute__((noipa)) static void name(unsigned path, int d) \
	{ \
		if (d == 0) \
			leaf(path); \
		else \
			steps[path & 3](path >> 2, d - 1); \
		__asm__ volatile("" ::: "memory"); \
	}
STEP(s0) STEP(s1) STEP(s2) STEP(s3)
C
# Random paths through functions of one frame size, so that consecutive
# stacks have frames at the same places with the same return addresses while
# an older frame differs: the walker may reuse only what it proved unchanged.
cat > paths.c <<'C'
#define SEED 12345
#include "steps.h"
__attribute__((noipa)) static void outer_a(unsigned path, int d) { steps[path & 3](path >> 2, d); __asm__ volatile("" ::: "memory"); }
__attribute__((noipa)) static void outer_b(unsigned path, int d) { steps[path & 3](path >> 2, d); __asm__ volatile("" ::: "memory"); }
int main(void)
{
	for (int i = 0; i < 5000; i++) {
		unsigned path = rnd();
		int d = (int)(rnd() % 12);
		/* The same path from two callers: every frame alike but the outermost step's. */
		outer_a(path, d);
		outer_b(path, d);
		if (rnd() % 4 == 0)
			outer_b(path ^ 1u << (rnd() % 20), d);
	}
	return 0;
}
C
cc -g -O2 -o paths paths.c || framework_failure_ "cc"
same "random paths through frames alike" ./paths
# Stacks deeper than --max-depth, their depths and innermost paths random: the
# walker stops where a stack is cut, and a cut stack is known by the hash of
# the frames it keeps (at any depth), or built the first time. Every one must
# be cut as libunwind's is, with the default depth and with a cut inside the
# random frames.
cat > deeppaths.c <<'C'
#define SEED 777
#include "steps.h"
__attribute__((noipa)) static void down(int n, unsigned path, int d)
{
	if (n > 0)
		down(n - 1, path, d);
	else
		steps[path & 3](path >> 2, d);
	__asm__ volatile("" ::: "memory");
}
int main(void)
{
	for (int i = 0; i < 4000; i++) {
#ifdef REPEAT /* few stacks, each again and again: known by their words, cut or not */
		int n = 20 + 40 * (int)(rnd() % 8), d = (int)(rnd() % 4);
		down(n, rnd() % 8, d);
#else
		int n = 60 + (int)(rnd() % 300), d = (int)(rnd() % 12);
		down(n, rnd(), d);
#endif
	}
	return 0;
}
C
cc -g -O2 -o deeppaths deeppaths.c || framework_failure_ "cc deeppaths"
cc -g -O2 -DREPEAT -o deeprepeat deeppaths.c || framework_failure_ "cc deeprepeat"
same "random paths under recursions deeper than --max-depth" ./deeppaths
same "the same, cut at --max-depth 8" --max-depth 8 ./deeppaths
same "a few deep stacks over and over" ./deeprepeat
same "the same, cut at --max-depth 30" --max-depth 30 ./deeprepeat
# More places to return to than the walker's first cache of descriptors holds (2,048, in sets
# of 4): 3,000 functions, each called from a call site of its own, each allocating from a
# place of its own, in rounds. The cache misses until it has grown (doubled twice, as cc1's
# does), and every stack before, during and after must be libunwind's.
awk 'BEGIN {
	print "#include <stdlib.h>"
	print "void *volatile sink;"
	for (i = 0; i < 3000; i++)
		printf "__attribute__((noipa)) void f%d(void) { sink = malloc(%d); free(sink); __asm__ volatile(\"\" ::: \"memory\"); }\n", i, 16 + i % 64
	print "int main(void)"
	print "{"
	print "\tfor (int r = 0; r < 6; r++) {"
	for (i = 0; i < 3000; i++)
		printf "\t\tf%d();\n", (i * 7) % 3000
	print "\t}"
	print "\treturn 0;"
	print "}"
}' > many.c
cc -g -O1 -o many many.c || framework_failure_ "cc many"
same "more return addresses than the first descriptor cache holds" ./many
# The same frame at the same place with the same return address, but an
# older frame that finds its CFA from rbp elsewhere: leaf's frame is put at
# one address under callers of two sizes, whose pads keep the old return
# address slot's value. Reusing the previous walk there would show the
# other caller; the walker must see that rbp changed (it fails when the
# rbp checks are left out).
cat > rbp.c <<'C'
#include <alloca.h>
#include <stdint.h>
#include <stdlib.h>
void *volatile sink;
static uintptr_t target;
__attribute__((noipa)) static void leaf(void)
{
	sink = malloc(32);
	free(sink);
}
/* A frame-pointer function (alloca): the walk from leaf on reads its rbp. Its
   alloca puts leaf's frame at the same address whatever the callers above. */
__attribute__((noipa)) static void fp_fn(void)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	char *p;
	if (!target)
		target = fp - 1024;
	p = alloca(fp - target);
	__asm__ volatile("" : : "r"(p) : "memory");
	leaf();
	__asm__ volatile("" ::: "memory");
}
/* Two callers of different frame sizes that leave their pads unwritten. */
__attribute__((noipa)) static void small_caller(void)
{
	char pad[32];
	__asm__ volatile("" : : "r"(pad) : "memory");
	fp_fn();
	__asm__ volatile("" ::: "memory");
}
__attribute__((noipa)) static void big_caller(void)
{
	char pad[288];
	__asm__ volatile("" : : "r"(pad) : "memory");
	fp_fn();
	__asm__ volatile("" ::: "memory");
}
static void (*const callers[2])(void) = { small_caller, big_caller };
int main(void)
{
	for (int i = 0; i < 2000; i++)
		callers[i & 1](); /* one call site: the callers' return address is the same */
	return 0;
}
C
cc -g -O2 -o rbp rbp.c || framework_failure_ "cc"
same "a frame alike under a frame-pointer function that moved" ./rbp
# Stacks the kernel and makecontext() made: allocations in signal handlers
# (on the thread's stack and on an alternate one) return through the
# kernel's signal frame to __restore_rt, and coroutines on stacks from
# malloc() return to __start_context. Neither is preceded by a call: the
# address before a return to it is in no function, and the frame is named
# by the return address itself.
cat > ctx.c <<'C'
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>
void *volatile sink;
static ucontext_t main_ctx, co_ctx[3];
__attribute__((noipa)) static void in_handler(int sig)
{
	sink = malloc(40 + sig);
	free(sink);
}
static void handler(int sig)
{
	in_handler(sig);
	__asm__ volatile("" ::: "memory");
}
__attribute__((noipa)) static void co_alloc(int id, int depth)
{
	if (depth > 0)
		co_alloc(id, depth - 1);
	else
		free(sink = malloc(200 + id));
	__asm__ volatile("" ::: "memory");
}
static void co_body(int id)
{
	for (int i = 0; i < 50; i++) {
		co_alloc(id, id + i % 3);
		swapcontext(&co_ctx[id], &main_ctx);
	}
}
int main(void)
{
	struct sigaction sa = { .sa_handler = handler };
	stack_t alt = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	sigaltstack(&alt, NULL);
	for (int i = 0; i < 20; i++) {
		raise(SIGUSR1);
		raise(SIGUSR2);
	}
	for (int id = 0; id < 3; id++) {
		getcontext(&co_ctx[id]);
		co_ctx[id].uc_stack.ss_sp = malloc(1 << 16);
		co_ctx[id].uc_stack.ss_size = 1 << 16;
		co_ctx[id].uc_link = &main_ctx;
		makecontext(&co_ctx[id], (void (*)(void))co_body, 1, id);
	}
	for (int r = 0; r < 51; r++)
		for (int id = 0; id < 3; id++)
			swapcontext(&main_ctx, &co_ctx[id]);
	return 0;
}
C
cc -g -O2 -o ctx ctx.c || framework_failure_ "cc"
same "signal handlers and coroutines" ./ctx
grep -c '"in_handler","handler","__restore_rt",' a > n || true
[ "$(cat n)" = 40 ] || { grep in_handler a | head -3 >&2; fail_ "handlers: $(cat n) of 40 stacks through __restore_rt"; }
grep -c '"co_body","__start_context"\]' a > n || true
[ "$(cat n)" = 150 ] || { grep co_alloc a | head -3 >&2; fail_ "coroutines: $(cat n) of 150 stacks from __start_context"; }
# C++: operator new, new[], std::allocator, std::string, strdup and realloc
# called from functions with exception-handling data (a personality
# routine in their CIE, reached through the GOT: an indirect pointer) are
# the walker's, not libunwind's. The capture's trailer counts the stacks
# libunwind walked: what is left (the C++ library's own start-up, in a
# constructor the loader calls from code without call-frame information)
# must not grow with the program's allocations.
if command -v c++ > /dev/null; then
	cat > paths.cc <<'C'
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>
void *volatile sink;
__attribute__((noinline)) static void entries(int i)
{
	try {
		int *a = new int(i);
		long *b = new long[4 + i % 8];
		std::vector<int> v;
		for (int k = 0; k < 5 + i % 40; k++)
			v.push_back(k); /* std::allocator, growing */
		std::string s(40 + i % 60, 'x');
		char *d = strdup(s.c_str());
		d = static_cast<char *>(realloc(d, 200 + i % 100));
		sink = d;
		if (i < 0)
			throw std::runtime_error("never");
		free(d);
		delete[] b;
		delete a;
	} catch (const std::exception &) {
		sink = nullptr;
	}
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < n; i++)
		entries(i);
	return 0;
}
C
	c++ -g -O2 -o paths-cxx paths.cc || framework_failure_ "c++"
	same "C++ entries" ./paths-cxx 300
	libunwind() { # capture -> the trailer's count of stacks walked by libunwind
		"$MEMPROF" parse "$1" | sed -n 's/^TRAILER .* libunwind=\([0-9]*\).*/\1/p' | grep . || echo 0
	}
	"$MEMPROF" run -q -f -o few.bin ./paths-cxx 10 > /dev/null 2>&1 || fail_ "C++ entries, 10: run failed"
	"$MEMPROF" run -q -f -o many.bin ./paths-cxx 3000 > /dev/null 2>&1 || fail_ "C++ entries, 3000: run failed"
	few=$(libunwind few.bin) many=$(libunwind many.bin)
	[ "$many" -eq "$few" ] && [ "$few" -le 2 ] ||
		fail_ "C++ entries: libunwind walked $few stacks for 10 rounds, $many for 3000"
	MEMPROF_UNWIND=libunwind "$MEMPROF" run -q -f -o all.bin ./paths-cxx 10 > /dev/null 2>&1 ||
		fail_ "C++ entries with libunwind: run failed"
	allocs=$("$MEMPROF" parse all.bin | sed -n 's/^TRAILER .* allocs=\([0-9]*\).*/\1/p')
	[ "$(libunwind all.bin)" -eq "$allocs" ] || fail_ "with libunwind only: $(libunwind all.bin) of $allocs counted"
fi
if command -v sqlite3 > /dev/null; then
	same sqlite3 sqlite3 :memory: "create table t(a, b); insert into t values (1, 'x'), (2, 'y'); select b, count(*) from t group by b;"
fi
# bash's allocations hold its parent's pid as text: their sizes differ from one run to the next.
SIZES=no same "bash pipeline" bash -c 'for i in 1 2 3; do x=$(echo $i | tr 1 2); done'
exit 0
