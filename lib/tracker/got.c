/*
 * GOT patching, for a tracker loaded into a running process (attach.c): a
 * library loaded that late does not interpose anything, so the hooks are
 * installed by patching the global offset tables of every loaded module: the
 * JUMP_SLOT and GLOB_DAT relocations of the hooked functions (glibc itself
 * calls malloc and free through GLOB_DAT slots, in strdup and the like).
 * Unpatching puts every slot back.
 */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/tracker/got.h"
#include "lib/tracker/hooks.h"
#include "lib/tracker/signals.h"

struct patched {
	uint64_t *slot;
	uint64_t orig, hook, base;
};

static struct patched *patched;
static size_t npatched, patched_cap;

/* Hooked name -> our function (hooks.c), or NULL. */
static void *hook_for(const char *name)
{
	for (const struct mp_hook *h = mp_hooks; h->name; h++)
		if (!strcmp(h->name, name))
			return h->fn;
	return NULL;
}

static int already(uint64_t *slot)
{
	for (size_t i = 0; i < npatched; i++)
		if (patched[i].slot == slot)
			return 1;
	return 0;
}

static int remember(uint64_t *slot, uint64_t orig, uint64_t hook, uint64_t base)
{
	if (mp_pages_grow((void **)&patched, &patched_cap, npatched + 1, sizeof(*patched), 512))
		return -1;
	patched[npatched++] = (struct patched){ slot, orig, hook, base };
	return 0;
}

/* Write a slot, making a read-only (RELRO) page writable for the moment. */
static int write_slot(uint64_t *slot, uint64_t value, int relro)
{
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(4096 - 1);
	if (relro && mprotect((void *)page, 4096, PROT_READ | PROT_WRITE))
		return -1;
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)page, 4096, PROT_READ);
	return 0;
}

struct dynamic {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *jmprel, *rela;
	size_t jmprel_size, rela_size;
	uint64_t relro_lo, relro_hi;
	uint64_t text_lo, text_hi;
};

static int skip_object(const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return info->dlpi_addr == mp_self_base || !strncmp(base, "ld-linux", 8) ||
	       !strncmp(base, "ld-musl", 7) || !strncmp(base, "linux-vdso", 10) ||
	       !strncmp(base, "linux-gate", 10);
}

static int read_dynamic(const struct dl_phdr_info *info, struct dynamic *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uint64_t b = info->dlpi_addr;
	memset(d, 0, sizeof(*d));
	d->text_lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(b + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			d->relro_lo = b + ph->p_vaddr;
			d->relro_hi = b + ph->p_vaddr + ph->p_memsz;
		} else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			if (b + ph->p_vaddr < d->text_lo)
				d->text_lo = b + ph->p_vaddr;
			if (b + ph->p_vaddr + ph->p_memsz > d->text_hi)
				d->text_hi = b + ph->p_vaddr + ph->p_memsz;
		}
	}
	if (!dyn)
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		/* glibc relocates these addresses; a loader that does not leaves them below the base. */
		uint64_t p = dyn->d_un.d_ptr;
		if (p < b)
			p += b;
		switch (dyn->d_tag) {
		case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: d->strtab = (const char *)p; break;
		case DT_JMPREL: d->jmprel = (const ElfW(Rela) *)p; break;
		case DT_PLTRELSZ: d->jmprel_size = dyn->d_un.d_val; break;
		case DT_RELA: d->rela = (const ElfW(Rela) *)p; break;
		case DT_RELASZ: d->rela_size = dyn->d_un.d_val; break;
		case DT_PLTREL:
			if (dyn->d_un.d_val != DT_RELA)
				return -1; /* x86_64 and aarch64 use RELA */
			break;
		}
	}
	return d->symtab && d->strtab ? 0 : -1;
}

static void patch_relocs(const struct dl_phdr_info *info, const struct dynamic *d,
			 const ElfW(Rela) *r, size_t size)
{
	for (size_t i = 0; r && i < size / sizeof(*r); i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
		const ElfW(Sym) *sym;
		uint64_t *slot, cur;
		void *hook;
		const char *name;
#if defined(__x86_64__)
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
#elif defined(__aarch64__)
		if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT)
			continue;
#endif
		sym = &d->symtab[ELF64_R_SYM(r[i].r_info)];
		name = d->strtab + sym->st_name;
		hook = hook_for(name);
		if (!hook)
			continue;
		slot = (uint64_t *)(info->dlpi_addr + r[i].r_offset);
		cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (cur == (uint64_t)hook || already(slot))
			continue;
		/*
		 * Only slots bound to the C library's function (or not bound yet: a lazy
		 * slot still points into this module's PLT): a module that defines its
		 * own allocator keeps calling it.
		 */
		if (cur != (uint64_t)mp_real_for(name) && !(cur >= d->text_lo && cur < d->text_hi))
			continue;
		if (remember(slot, cur, (uint64_t)hook, info->dlpi_addr))
			return;
		if (write_slot(slot, (uint64_t)hook,
			       (uint64_t)slot >= d->relro_lo && (uint64_t)slot < d->relro_hi))
			npatched--;
	}
}

static int patch_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dynamic d;
	(void)size;
	(void)data;
	if (skip_object(info) || read_dynamic(info, &d))
		return 0;
	patch_relocs(info, &d, d.jmprel, d.jmprel_size);
	patch_relocs(info, &d, d.rela, d.rela_size);
	return 0;
}

int mp_got_patch(void)
{
	dl_iterate_phdr(patch_cb, NULL);
	/* The handlers installed so far, now that the program's next ones come through our hooks. */
	mp_signals_wrap();
	return (int)npatched;
}

static int unpatch_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dynamic d;
	(void)size;
	(void)data;
	if (skip_object(info) || read_dynamic(info, &d))
		return 0;
	/* Slots of modules unloaded since are gone with them: only live modules' are restored. */
	for (size_t i = 0; i < npatched; i++) {
		struct patched *p = &patched[i];
		if (p->base != info->dlpi_addr || !p->slot)
			continue;
		if (__atomic_load_n(p->slot, __ATOMIC_ACQUIRE) == p->hook)
			write_slot(p->slot, p->orig,
				   (uint64_t)p->slot >= d.relro_lo && (uint64_t)p->slot < d.relro_hi);
		p->slot = NULL;
	}
	return 0;
}

void mp_got_unpatch(void)
{
	/* First: the program's sigaction calls no longer come through our hooks after. */
	mp_signals_unwrap();
	dl_iterate_phdr(unpatch_cb, NULL);
	npatched = 0;
}
