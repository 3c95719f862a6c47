/* Workload: recurses argv[1] levels deep in recurse(), then allocates 99 bytes (SITE:deep). */
#include <stdlib.h>

void *volatile sink;

__attribute__((noinline)) static void recurse(int n)
{
	if (n > 0)
		recurse(n - 1);
	else
		sink = malloc(99); /* SITE:deep */
	__asm__ volatile("" ::: "memory"); /* no tail call: every level keeps its frame */
}

int main(int argc, char **argv)
{
	recurse(argc > 1 ? atoi(argv[1]) : 10);
	return 0;
}
