#!/bin/bash
# Order keys when threads take turns and when they allocate at once: the
# counter's owner changes hands (lib/transport/ring.h, enum mp_keys), then,
# past MP_OWNER_HANDOFFS changes, is shared for good. Either way every free
# of a block comes before the allocation that gets its address again.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

cat > turns.c <<'C'
/* Two threads take turns: each frees the block the other allocated, then
   allocates the next, which the kernel maps where the freed one was. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define SZ (256 << 10)
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, rounds, reused;
static char *cur;
static void *prev_addr;
static void *player(void *arg)
{
	int me = (int)(long)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (turn != me && turn >= 0)
			pthread_cond_wait(&cv, &mu);
		if (turn < 0)
			break;
		free(cur);
		cur = malloc(SZ);
		cur[0] = 1;
		reused += (void *)cur == prev_addr;
		prev_addr = cur;
		turn = --rounds > 0 ? !me : -1;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t[2];
	int n;
	mallopt(M_MMAP_THRESHOLD, 64 << 10); /* every block its own mapping */
	n = rounds = atoi(argv[1]);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, player, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("rounds=%d reused=%d\n", n, reused);
	return 0;
}
C
cc -O2 -pthread -o turns turns.c || framework_failure_ "cc"

json() { # capture key -> the value of key in stats --json
	"$MEMPROF" stats --json -f -o s.json "$1" > /dev/null || fail_ "stats $1"
	python3 -c 'import json, sys; print(json.load(open("s.json"))[sys.argv[1]])' "$2"
}

# 40 turns: the owner changes at each (under MP_OWNER_HANDOFFS); 300: shared after 64.
for rounds in 40 300; do
	mp run -q -f -o t.bin ./turns $rounds
	expect_rc 0 "turns $rounds"
	expect_no_err "turns $rounds"
	reused=$(sed -n 's/.*reused=\([0-9]*\).*/\1/p' out)
	[ "$reused" -ge $((rounds / 2)) ] ||
		skip_ "the kernel mapped only $reused of $rounds blocks where the last one was"
	# One 256 KiB block at a time: a free merged after the next allocation would show two.
	peak=$(json t.bin peak_memory_bytes)
	[ "$peak" -lt $((2 * 262144)) ] || fail_ "turns $rounds: peak $peak B holds two blocks at once"
	[ "$(json t.bin total_num_frees)" -ge $((rounds - 1)) ] || fail_ "turns $rounds: frees missing"
	[ "$(json t.bin unknown_frees)" -eq 0 ] || fail_ "turns $rounds: frees of unknown blocks"
	"$MEMPROF" parse t.bin > p || fail_ "parse"
	expect_count "$rounds" '^ALLOC .*size=262144 ' p
done

# Threads that allocate at once and free each other's blocks, while the
# owner changes and then for good: a free merged before its block's
# allocation would be a free of an unknown block, and a leak.
cat > swap.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define THREADS 4
#define N 20000
static void *slot[64];
static void *worker(void *arg)
{
	unsigned r = (unsigned)(long)arg * 7919u + 1;
	for (int i = 0; i < N; i++) {
		r = r * 1103515245u + 12345u;
		char *p = malloc(1000 + (r >> 8) % 1000); /* sizes only these blocks have */
		p[0] = 1;
		/* Another thread's block, handed over: its free follows its allocation. */
		free(__atomic_exchange_n(&slot[(r >> 20) % 64], p, __ATOMIC_ACQ_REL));
	}
	return NULL;
}
int main(void)
{
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 64; i++)
		free(slot[i]);
	puts("swapped");
	return 0;
}
C
cc -O2 -pthread -o swap swap.c || framework_failure_ "cc"
for i in 1 2 3; do
	mp run -q -f -o s.bin ./swap
	expect_rc 0 "swap, run $i"
	expect_no_err "swap, run $i"
	"$MEMPROF" parse s.bin > p || fail_ "parse"
	expect_count 80000 '^ALLOC .*size=1[0-9][0-9][0-9] ' p
	[ "$(json s.bin unknown_frees)" -eq 0 ] || fail_ "swap, run $i: frees of unknown blocks"
	"$MEMPROF" stats s.bin > st || fail_ "stats"
	grep -A1 '^Leaked' st | grep -qE '^\s+([0-9.]+ (B|KiB) in [0-9] blocks?|0 B)' ||
		{ cat st >&2; fail_ "swap, run $i: the swapped blocks leak"; }
done
exit 0
