/*
 * A module's symbols sorted by address (symindex.h). dwfl_module_addrinfo()
 * looks at the symbols at or below the address that pass its filter, globals
 * first (locals only when no global answers), and of those whose range holds
 * the address takes, in table order, the closest start, a stronger binding,
 * and at an equal start the shorter or stronger one. Symbols without a size
 * stand in when nothing holds the address, by rules that depend on table
 * order and sections: those cases are left to libdw. A label libdw cannot
 * take, one outside the address's section (libdw's same_section(): the
 * loaded sections of the main file, by address), is no such case: C++
 * libraries have thousands of addresses (static constructors at the start of
 * .text) with only _init's label, in .init, below them, and libdw reads
 * the whole table of 45,000 symbols for each (17 s for one `ar` that loads
 * libLLVM through its plugin).
 */
#include <config.h>
#include "lib/symbols/symindex.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

struct entry {
	uint64_t value, end;  /* [value, end) for a sized symbol; end == value without a size */
	const char *name;     /* libelf's, valid while the module is */
	uint32_t index;       /* in the symbol table (libdw's order) */
	uint8_t bind;         /* higher is stronger, as libdw ranks bindings */
	bool sized, first;    /* first: among the symbols searched first (the globals) */
};

struct mp_symindex {
	struct entry *e;      /* by value, then index */
	size_t n;
	uint64_t *reach;      /* the highest end among e[0..i] */
	uint64_t *reach_first; /* the same among the first-searched ones (0: none) */
	uint64_t *labels;     /* values of the symbols without a size, sorted */
	size_t nlabels;
	uint64_t *first_labels; /* the same among the first-searched ones */
	size_t nfirst_labels;
	bool locals_after;    /* the locals are searched when no global answers */
	struct section *sec;  /* the main file's loaded sections, by start */
	size_t nsec;
};

/* A loaded section: [start, end), biased; clean: no other loaded section meets it. */
struct section {
	uint64_t start, end;
	bool clean;
};

/* The most candidates holding one address looked at here (aliases, nested ranges). */
#define MAX_HOLDERS 64

static uint8_t bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static int by_value(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int by_start(const void *a, const void *b)
{
	const struct section *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The loaded (SHF_ALLOC) sections of elf, as libdw's find_section() sees
 * them. A section is clean when no other one overlaps it or lies within it
 * (an empty one at its start or inside): an address inside a clean section
 * is in it for libdw, whatever the order of its search.
 */
static void sections(struct mp_symindex *x, Elf *elf, GElf_Addr bias)
{
	size_t alloc = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		ALLOC_GROW(x->sec, x->nsec + 1, alloc);
		x->sec[x->nsec].start = sh.sh_addr + bias;
		x->sec[x->nsec].end = sh.sh_addr + bias + sh.sh_size;
		x->sec[x->nsec].clean = true;
		x->nsec++;
	}
	if (x->nsec)
		mp_qsort(x->sec, x->nsec, sizeof(*x->sec), by_start);
	/* (Every pair: a module has some 30 loaded sections.) */
	for (size_t i = 0; i < x->nsec; i++) {
		struct section *a = &x->sec[i];
		for (size_t j = 0; j < x->nsec; j++) {
			const struct section *b = &x->sec[j];
			/* b overlaps a, or b is empty and at a's start or inside it. */
			if (j != i && b->start < a->end && (b->end > a->start || b->start == a->start))
				a->clean = false;
		}
	}
}

/* The start of addr's section when it is a clean one (sections()); else 0. */
static uint64_t clean_section_start(const struct mp_symindex *x, uint64_t addr)
{
	size_t lo = 0, hi = x->nsec;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->sec[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= x->sec[lo - 1].end || !x->sec[lo - 1].clean)
		return 0;
	return x->sec[lo - 1].start;
}

static int by_index(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;
	return (*x)->index < (*y)->index ? -1 : (*x)->index > (*y)->index;
}

struct mp_symindex *mp_symindex_build(Dwfl_Module *mod)
{
	int nsyms = dwfl_module_getsymtab(mod), first = dwfl_module_getsymtab_first_global(mod);
	struct mp_symindex *x;
	GElf_Addr bias;
	GElf_Ehdr ehdr;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (nsyms <= 1 || first < 0 || !elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_machine == EM_PPC64)
		return NULL;
	x = xcalloc(1, sizeof(*x));
	x->e = xmalloc((size_t)nsyms * sizeof(*x->e));
	x->locals_after = first > 1;
	/* (Entry 0 is the null symbol, never looked at.) */
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		struct entry *e;
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		e = &x->e[x->n++];
		e->value = value;
		e->sized = sym.st_size != 0;
		e->end = value + sym.st_size < value ? UINT64_MAX : value + sym.st_size;
		e->name = name;
		e->index = (uint32_t)i;
		e->bind = bind_rank(&sym);
		e->first = first == 0 || i >= first;
	}
	mp_qsort(x->e, x->n, sizeof(*x->e), by_value);
	x->reach = xmalloc((x->n + 1) * sizeof(*x->reach));
	x->reach_first = xmalloc((x->n + 1) * sizeof(*x->reach_first));
	x->labels = xmalloc((x->n + 1) * sizeof(*x->labels));
	x->first_labels = xmalloc((x->n + 1) * sizeof(*x->first_labels));
	for (size_t i = 0; i < x->n; i++) {
		const struct entry *e = &x->e[i];
		uint64_t prev = i ? x->reach[i - 1] : 0, prev_first = i ? x->reach_first[i - 1] : 0;
		x->reach[i] = e->end > prev ? e->end : prev;
		x->reach_first[i] = e->first && e->end > prev_first ? e->end : prev_first;
		if (!e->sized) {
			x->labels[x->nlabels++] = e->value;
			if (e->first)
				x->first_labels[x->nfirst_labels++] = e->value;
		}
	}
	/* (labels and first_labels are in order already, as the entries are.) */
	sections(x, elf, bias);
	return x;
}

/* How many of the n sorted values are <= v. */
static size_t count_upto(const uint64_t *v, size_t n, uint64_t at)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether one of the n sorted values lies in [lo, hi]. */
static bool any_within(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t k = count_upto(v, n, hi);
	return k > 0 && v[k - 1] >= lo;
}

/* libdw's choice among sized symbols holding the address, visited in table order. */
static const char *choose(const struct entry **c, size_t n)
{
	const struct entry *best = NULL;
	mp_qsort(c, n, sizeof(*c), by_index);
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = c[i];
		uint64_t bsize, esize;
		if (!best || best->value < e->value || best->bind < e->bind) {
			best = e;
			continue;
		}
		bsize = best->end - best->value;
		esize = e->end - e->value;
		if (best->value == e->value && ((bsize > esize && best->bind <= e->bind) ||
						(bsize >= esize && best->bind < e->bind)))
			best = e;
	}
	return best ? best->name : NULL;
}

int mp_symindex_lookup(const struct mp_symindex *x, Dwarf_Addr addr, const char **name)
{
	const struct entry *first[MAX_HOLDERS], *rest[MAX_HOLDERS];
	size_t nfirst = 0, nrest = 0, upto = 0, lo = 0, hi = x->n;
	uint64_t from, start;
	*name = NULL;
	/* The symbols at or below addr: e[0..upto). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->e[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	upto = lo;
	if (!upto)
		return 1;
	/* Those whose range holds addr: back from the last while something reaches past it. */
	for (size_t j = upto; j-- > 0 && x->reach[j] > addr;) {
		const struct entry *e = &x->e[j];
		if (!e->sized || e->end <= addr)
			continue;
		if (e->first ? nfirst == MAX_HOLDERS : nrest == MAX_HOLDERS)
			return 0;
		if (e->first)
			first[nfirst++] = e;
		else
			rest[nrest++] = e;
	}
	if (nfirst) {
		*name = choose(first, nfirst);
		return 1;
	}
	if (x->locals_after) {
		/* A global label exactly at addr may keep the locals unsearched. */
		if (any_within(x->first_labels, x->nfirst_labels, addr, addr))
			return 0;
		if (nrest) {
			*name = choose(rest, nrest);
			return 1;
		}
	}
	/*
	 * Nothing holds addr: a label may stand in, if none of the symbols
	 * searched first ends past it (the locals' ends can only add to that),
	 * and if it is in addr's section, when that is known.
	 */
	from = x->reach_first[upto - 1];
	start = clean_section_start(x, addr);
	if (start > from)
		from = start;
	if (any_within(x->labels, x->nlabels, from, addr))
		return 0;
	return 1;
}

void mp_symindex_free(struct mp_symindex *x)
{
	if (!x)
		return;
	free(x->e);
	free(x->reach);
	free(x->reach_first);
	free(x->labels);
	free(x->first_labels);
	free(x->sec);
	free(x);
}
