/*
 * Workload: two phases of live memory, apart in time, for the temporal
 * reports. Prints with write(2) only, so stdio allocates nothing.
 *   phase_a   100 x malloc(1000) (100000 bytes), held 100 ms, then freed
 *   (200 ms with no allocation)
 *   phase_b    50 x malloc(4000) (200000 bytes) and keep: malloc(777),
 *             held 100 ms, then the 50 freed
 * Peak: 200777 bytes in phase B (51 blocks); the highest point of phase A
 * is 100000 bytes (100 blocks); leaked: the 777 bytes of keep.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")
void *volatile sink;
static void *blocks[100];

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) static void *phase_a(void)
{
	void *p = malloc(1000); /* SITE:phase_a */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *phase_b(void)
{
	void *p = malloc(4000); /* SITE:phase_b */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *keep(void)
{
	void *p = malloc(777); /* SITE:keep */
	BARRIER();
	return p;
}

int main(void)
{
	for (int i = 0; i < 100; i++)
		blocks[i] = phase_a();
	pause_ms(100);
	for (int i = 0; i < 100; i++)
		free(blocks[i]);
	pause_ms(200);
	for (int i = 0; i < 50; i++)
		blocks[i] = phase_b();
	sink = keep();
	pause_ms(100);
	for (int i = 0; i < 50; i++)
		free(blocks[i]);
	if (write(1, "phases done\n", 12) != 12)
		return 1;
	return 0;
}
