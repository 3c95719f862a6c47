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

char mp_boot_arena[MP_BOOT_ARENA_SIZE] __attribute__((aligned(64)));
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
		if (start + size > sizeof(mp_boot_arena))
			return NULL;
		if (__atomic_compare_exchange_n(&boot_used, &cur, start + size, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	hdr = (size_t *)(mp_boot_arena + start) - 1;
	*hdr = size;
	return mp_boot_arena + start;
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

/* The executable range of the module containing addr (dl_iterate_phdr's data). */
struct code_range {
	uint64_t addr, lo, hi, base;
};

static int code_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct code_range *r = data;
	uint64_t addr = r->addr;
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
	r->lo = lo;
	r->hi = hi;
	r->base = info->dlpi_addr;
	return 1;
}

static struct code_range code_of(const void *addr)
{
	struct code_range r = { (uint64_t)(uintptr_t)addr, 0, 0, 0 };
	if (addr)
		dl_iterate_phdr(code_range_cb, &r);
	return r;
}

/* The code of the C library, the loader and libunwind: what the tracker itself calls. */
static struct code_range system_code[3];

void mp_find_self(void)
{
	struct code_range self = code_of((const void *)&mp_find_self);
	mp_self_lo = self.lo;
	mp_self_hi = self.hi;
	mp_self_base = self.base;
	system_code[0] = code_of((const void *)mp_real.malloc);
	system_code[1] = code_of(dlsym(RTLD_DEFAULT, "__tls_get_addr"));
	system_code[2] = code_of(dlsym(RTLD_DEFAULT, "_ULx86_64_init_local"));
}

/* ---- calls the hooks cannot record ---- */

__thread unsigned long mp_nested_lost MP_IE_TLS;
__thread uintptr_t mp_hook_sp MP_IE_TLS;

void mp_note_nested(uint64_t caller, unsigned events)
{
	if (mp_state != MP_STATE_ON || (caller >= mp_self_lo && caller < mp_self_hi))
		return;
	for (int i = 0; i < 3; i++)
		if (caller >= system_code[i].lo && caller < system_code[i].hi)
			return; /* the C library's, for the tracker or for its caller: not told apart */
	__atomic_add_fetch(&mp_nested_lost, events, __ATOMIC_RELAXED);
}
