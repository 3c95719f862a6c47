/*
 * Workload for the oracle tests: a deterministic random mix of malloc,
 * calloc, realloc (never to size 0, never of NULL) and free, using only what
 * memprof, heaptrack and valgrind all see the same way; about a tenth of the
 * blocks stay allocated at exit (leaked). argv[1]: the number of operations
 * (default 20000). Prints nothing.
 */
#include <stdint.h>
#include <stdlib.h>

#define SLOTS 512

static uint64_t state = 88172645463325252ull;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static void *volatile slot[SLOTS];

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 20000;
	for (long i = 0; i < ops; i++) {
		unsigned s = (unsigned)(rnd() % SLOTS);
		size_t size = 1 + rnd() % 5000;
		void *p = slot[s];
		switch (rnd() % 4) {
		case 0:
			free(p);
			slot[s] = malloc(size);
			break;
		case 1:
			free(p);
			slot[s] = calloc(1 + size % 16, 1 + size / 16);
			break;
		case 2:
			if (p) {
				void *q = realloc(p, size);
				if (q)
					slot[s] = q;
			}
			break;
		default:
			free(p);
			slot[s] = NULL;
			break;
		}
	}
	/* Free nine slots in ten; the rest leak. */
	for (unsigned s = 0; s < SLOTS; s++)
		if (s % 10)
			free(slot[s]);
	return 0;
}
