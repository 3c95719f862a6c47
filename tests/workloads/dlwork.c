/* A library the dlopen workload loads: dlwork_alloc allocates n bytes. */
#include <stdlib.h>

void *dlwork_alloc(size_t n);

__attribute__((noinline)) void *dlwork_alloc(size_t n)
{
	void *p = malloc(n); /* SITE:dlwork_alloc */
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays */
	return p;
}
