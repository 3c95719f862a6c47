/* A library the dlopen workload loads: dlwork_alloc allocates n bytes. */
#include <stdlib.h>

void *dlwork_alloc(size_t n);

__attribute__((noinline)) void *dlwork_alloc(size_t n)
{
	return malloc(n); /* SITE:dlwork_alloc */
}
