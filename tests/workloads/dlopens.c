/*
 * Workload: dlopen()s the library named by argv[1] (libdlwork.so), calls its
 * dlwork_alloc(4444) three times (two blocks freed, one kept), dlclose()s it,
 * then allocates 5555 bytes in main (after_close).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile sink;

int main(int argc, char **argv)
{
	void *h, *(*fn)(size_t);
	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW)))
		return 2;
	fn = (void *(*)(size_t))dlsym(h, "dlwork_alloc");
	if (!fn)
		return 3;
	free(fn(4444));
	free(fn(4444));
	sink = fn(4444);
	dlclose(h);
	sink = malloc(5555); /* SITE:after_close */
	return 0;
}
