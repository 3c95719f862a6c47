/*
 * The real functions our hooks wrap, found with dlsym(RTLD_NEXT); the
 * bootstrap arena that serves allocations made while they are resolved; and
 * where the tracker's own code is.
 */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>

#include "lib/tracker/base.h"

struct mp_real mp_real;
__thread int mp_in_hook MP_IE_TLS;
volatile int mp_state;
uint64_t mp_self_lo, mp_self_hi, mp_self_base;

/* ---- bootstrap arena ---- */

static char boot_arena[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

void *mp_boot_alloc(size_t size, size_t align)
{
	/* A size header before each block lets realloc copy it out. */
	size_t start, *hdr;
	if (align < 16)
		align = 16;
	start = (__atomic_load_n(&boot_used, __ATOMIC_RELAXED) + sizeof(size_t) + align - 1) &
		~(align - 1);
	for (;;) {
		size_t cur = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
		start = (cur + sizeof(size_t) + align - 1) & ~(align - 1);
		if (start + size > sizeof(boot_arena))
			return NULL;
		if (__atomic_compare_exchange_n(&boot_used, &cur, start + size, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	hdr = (size_t *)(boot_arena + start) - 1;
	*hdr = size;
	return boot_arena + start;
}

int mp_is_boot(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof(boot_arena);
}

size_t mp_boot_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* ---- the real functions ---- */

/*
 * The next definition after ours; when the C library was preloaded before us
 * there is none after, and the default one is right unless it is our own.
 */
static void *next_symbol(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	Dl_info a, b;
	if (p)
		return p;
	p = dlsym(RTLD_DEFAULT, name);
	if (p && dladdr(p, &a) && dladdr((void *)&next_symbol, &b) && a.dli_fbase == b.dli_fbase)
		return NULL;
	return p;
}

void *mp_next_symbol(const char *name)
{
	return next_symbol(name);
}

#define RESOLVE(name) (mp_real.name = (__typeof__(mp_real.name))next_symbol(#name))

int mp_resolve_real(void)
{
	RESOLVE(malloc);
	RESOLVE(calloc);
	RESOLVE(realloc);
	RESOLVE(reallocarray);
	RESOLVE(free);
	RESOLVE(free_sized);
	RESOLVE(free_aligned_sized);
	RESOLVE(posix_memalign);
	RESOLVE(aligned_alloc);
	RESOLVE(memalign);
	RESOLVE(valloc);
	RESOLVE(pvalloc);
	RESOLVE(malloc_usable_size);
	RESOLVE(mmap);
	RESOLVE(munmap);
	RESOLVE(mremap);
	RESOLVE(fork);
	RESOLVE(exit);
	RESOLVE(_exit);
	RESOLVE(_Exit);
	RESOLVE(abort);
	RESOLVE(execve);
	RESOLVE(execv);
	RESOLVE(execvp);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	RESOLVE(pthread_setname_np);
	RESOLVE(prctl);
	RESOLVE(close);
	RESOLVE(close_range);
	RESOLVE(closefrom);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(dlclose);
	RESOLVE(mlockall);
	return mp_real.malloc && mp_real.free && mp_real.calloc && mp_real.realloc ? 0 : -1;
}

/* ---- the tracker's own code ---- */

static int self_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t addr = (uint64_t)data;
	uint64_t lo = UINT64_MAX, hi = 0;
	int mine = 0;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		if (addr >= start && addr < end)
			mine = 1;
		if (ph->p_flags & PF_X) {
			if (start < lo)
				lo = start;
			if (end > hi)
				hi = end;
		}
	}
	if (!mine)
		return 0;
	mp_self_lo = lo;
	mp_self_hi = hi;
	mp_self_base = info->dlpi_addr;
	return 1;
}

void mp_find_self(void)
{
	dl_iterate_phdr(self_range_cb, (void *)(uintptr_t)&mp_find_self);
}
