/*
 * trace_python_allocators in a running interpreter. memprof run gets it with
 * PYTHONMALLOC=malloc before the interpreter starts; here pymalloc already
 * holds the program's objects, so the memory and object domains are wrapped
 * (PyMem_SetAllocator, with the GIL held, as the API allows after start-up):
 * a new block is a PyMem_RawMalloc (so a malloc the hooks record with its
 * Python stack, never counted twice), and every free and realloc goes to
 * pymalloc's own functions, which hand a block that is not theirs to the raw
 * domain. pymalloc's arenas then grow no more. A pymalloc block made before
 * the start and grown by realloc stays pymalloc's, unrecorded, as a block
 * allocated before any start is.
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "lib/tracker/pyalloc.h"

/* CPython's allocator interface (Include/cpython/pymem.h), stable since 3.5. */
struct py_alloc {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
};
enum { PY_DOMAIN_RAW = 0, PY_DOMAIN_MEM = 1, PY_DOMAIN_OBJ = 2 };

static struct {
	void (*get)(int domain, struct py_alloc *a);
	void (*set)(int domain, struct py_alloc *a);
	int (*gil)(void);
	const char *(*name)(void);
	void *(*raw_malloc)(size_t);
	void *(*raw_calloc)(size_t, size_t);
	int found;
} py;

/* The domains' allocators we replaced (MEM, OBJ), and whether ours are in. */
static struct py_alloc orig[2];
static int installed;

static int find(void)
{
	if (py.found)
		return py.found > 0 ? 0 : -1;
	py.get = (void (*)(int, struct py_alloc *))dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
	py.set = (void (*)(int, struct py_alloc *))dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
	py.gil = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Check");
	py.name = (const char *(*)(void))dlsym(RTLD_DEFAULT, "_PyMem_GetCurrentAllocatorName");
	py.raw_malloc = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "PyMem_RawMalloc");
	py.raw_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_DEFAULT, "PyMem_RawCalloc");
	/* (A lookup that failed left an error with the C library: taken now, unrecorded.) */
	dlerror();
	dlerror();
	py.found = py.get && py.set && py.gil && py.name && py.raw_malloc && py.raw_calloc ? 1 : -1;
	return py.found > 0 ? 0 : -1;
}

static void *wrap_malloc(void *ctx, size_t size)
{
	(void)ctx;
	return py.raw_malloc(size);
}

static void *wrap_calloc(void *ctx, size_t nelem, size_t elsize)
{
	(void)ctx;
	return py.raw_calloc(nelem, elsize);
}

static void *wrap_realloc(void *ctx, void *ptr, size_t size)
{
	const struct py_alloc *o = ctx;
	if (!ptr)
		return py.raw_malloc(size);
	return o->realloc(o->ctx, ptr, size);
}

static void wrap_free(void *ctx, void *ptr)
{
	const struct py_alloc *o = ctx;
	o->free(o->ctx, ptr);
}

int mp_pyalloc_check(void)
{
	const char *name;
	if (find())
		return -ENOTSUP;
	if (!py.gil())
		return -EPERM;
	name = py.name();
	/* The debug hooks put headers around blocks: a raw block freed through them would break. */
	if (!name || (strcmp(name, "pymalloc") && strcmp(name, "malloc")))
		return -ENOTSUP;
	return 0;
}

int mp_pyalloc_install(void)
{
	const char *name;
	if (installed)
		return 0; /* (left in at the last stop, by a thread without the GIL) */
	if (find() || !py.gil())
		return -1;
	name = py.name();
	/* Already malloc (PYTHONMALLOC=malloc): every object reaches the hooks as it is. */
	if (name && !strcmp(name, "malloc"))
		return 0;
	for (int d = 0; d < 2; d++) {
		struct py_alloc a = { &orig[d], wrap_malloc, wrap_calloc, wrap_realloc, wrap_free };
		py.get(PY_DOMAIN_MEM + d, &orig[d]);
		py.set(PY_DOMAIN_MEM + d, &a);
	}
	installed = 1;
	return 0;
}

void mp_pyalloc_remove(void)
{
	if (!installed || !py.gil())
		return;
	for (int d = 0; d < 2; d++)
		py.set(PY_DOMAIN_MEM + d, &orig[d]);
	installed = 0;
}
