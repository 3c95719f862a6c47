/* What DWARF, or else the symbol table, says about an address: functions, inline chains, lines. */
#include <config.h>
#include "lib/symbols/symbols-private.h"

#include <dwarf.h>

#include "lib/util/sort.h"

/* The C++ runtime's demangler (<cxxabi.h>), linked with $(DEMANGLE_LIBS). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
/*
 * Rust's, from libiberty (also in $(DEMANGLE_LIBS)): both its manglings, v0
 * and legacy. Declared here: <libiberty/demangle.h> brings libiberty.h,
 * whose xmemdup and the like clash with lib/util/xalloc.h's.
 */
extern char *rust_demangle(const char *mangled, int options);
#define DMGL_PARAMS (1 << 0) /* as demangle.h has them */
#define DMGL_ANSI (1 << 1)

/* The capture format allows 4096 frames per SYMBOL record. */
#define MAX_FRAMES 4096
/* Nesting depth of DIEs walked when indexing a compilation unit. */
#define MAX_DIE_DEPTH 256

static void index_dies(struct unit_index *u, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die die;
	if (depth >= MAX_DIE_DEPTH || dwarf_child(parent, &die) != 0)
		return;
	do {
		if (dwarf_tag(&die) == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
				if (lo >= hi)
					continue;
				ALLOC_GROW(u->fn, u->n + 1, u->alloc);
				u->fn[u->n].lo = lo;
				u->fn[u->n].hi = hi;
				u->fn[u->n].die = die;
				u->n++;
			}
		}
		/* Functions nest in namespaces, classes and other functions. */
		if (dwarf_haschildren(&die) > 0)
			index_dies(u, &die, depth + 1);
	} while (dwarf_siblingof(&die, &die) == 0);
}

static int fn_range_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Larger first, so that a range inside another one comes after it. */
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	/*
	 * Aliases (gas gives each one a subprogram with the same range): the
	 * first in DIE order comes last, so it is the one found, as with
	 * dwarf_getscopes().
	 */
	if (x->die.addr != y->die.addr)
		return (uintptr_t)x->die.addr > (uintptr_t)y->die.addr ? -1 : 1;
	return 0;
}

static struct unit_index *get_unit(struct mp_symbols *s, struct sym_file *f, Dwarf_Die *cudie)
{
	uint64_t key = (uintptr_t)cudie->addr;
	struct unit_index *u = ptr_get(&f->units, key);
	if (u)
		return u;
	u = xcalloc(1, sizeof(*u));
	index_dies(u, cudie, 0);
	mp_qsort(u->fn, u->n, sizeof(*u->fn), fn_range_cmp);
	ptr_put(&f->units, key, u);
	s->cache->units_indexed++;
	return u;
}

/* The innermost subprogram of the unit whose ranges contain pc, or NULL. */
static Dwarf_Die *find_subprogram(struct unit_index *u, Dwarf_Addr pc)
{
	size_t lo = 0, hi = u->n, i;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->fn[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of distinct functions do not overlap; allow for nesting. */
	for (i = lo; i > 0 && lo - i < 16; i--)
		if (pc < u->fn[i - 1].hi)
			return &u->fn[i - 1].die;
	return NULL;
}

static const char *demangled(struct mp_symbols *s, const char *raw)
{
	struct symcache *c = s->cache;
	uint32_t id = mp_strtab_intern_str(&c->strings, raw);
	const char *key = mp_strtab_get(&c->strings, id), *d;
	char *out;
	int status = -1;

	if (!s->demangle || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return key;
	GROW_TO_ID(c->demangled, c->demangled_alloc, id);
	if (c->demangled[id])
		return c->demangled[id];
	/*
	 * Rust's first: "_R..." (v0), and "_ZN...17h<hash>E" (legacy), which the
	 * C++ demangler would leave with its hash and $LT$-style escapes; it
	 * takes nothing else. Then C++'s.
	 */
	out = rust_demangle(key, DMGL_PARAMS | DMGL_ANSI);
	if (out)
		status = 0;
	else if (raw[1] == 'Z')
		out = __cxa_demangle(key, NULL, NULL, &status);
	d = status == 0 && out ? intern(c, out) : key;
	free(out);
	c->demangled[id] = d;
	return d;
}

/* A DIE's name as eu-addr2line gives it: the linkage name, else the name. */
static const char *die_name(struct mp_symbols *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name && *name ? demangled(s, name) : NULL;
}

static const char *symtab_name(struct mp_symbols *s, struct sym_file *f, Dwarf_Addr addr)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name;
	/* libdw reads the whole table for each address: its answer from an index where it can. */
	if (!f->symindex_tried) {
		f->symindex = mp_symindex_build(f->mod);
		f->symindex_tried = true;
	}
	if (!f->symindex || !mp_symindex_lookup(f->symindex, addr, &name))
		name = dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);
	return name && *name ? demangled(s, name) : NULL;
}

static uint32_t udata(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word val;
	if (dwarf_formudata(dwarf_attr(die, name, &attr), &val) || val > UINT32_MAX)
		return 0;
	return val;
}

static struct mp_sym_frame *push_frame(struct mp_symbols *s, struct mp_sym *out)
{
	struct mp_sym_frame *fr;
	ALLOC_GROW(s->frames, out->nframes + 1, s->frames_alloc);
	fr = &s->frames[out->nframes++];
	memset(fr, 0, sizeof(*fr));
	return fr;
}

/*
 * Collect in s->chain the function DIEs at pc, outermost first: the
 * subprogram, then each inlined subroutine down to the innermost one (the
 * lexical blocks between them are walked through). Returns their number.
 */
static size_t inline_chain(struct mp_symbols *s, Dwarf_Die *subprogram, Dwarf_Addr pc)
{
	Dwarf_Die die = *subprogram, child;
	size_t n = 0;

	ALLOC_GROW(s->chain, 1, s->chain_alloc);
	s->chain[n++] = die;
	while (n < MAX_FRAMES && dwarf_child(&die, &child) == 0) {
		int found = 0;
		do {
			if (dwarf_haspc(&child, pc) == 1) {
				found = 1;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		die = child;
		if (dwarf_tag(&die) == DW_TAG_inlined_subroutine) {
			ALLOC_GROW(s->chain, n + 1, s->chain_alloc);
			s->chain[n++] = die;
		}
	}
	return n;
}

void mp_sym_describe(struct mp_symbols *s, struct sym_file *f, Dwarf_Addr addr, struct mp_sym *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cudie = NULL, *sub = NULL;
	Dwfl_Line *line;
	struct mp_sym_frame *fr;
	size_t n = 0, i;

	if (!f->debug_checked) {
		/* Found by build-id, debuglink, then debuginfod (libdw's standard callback). */
		struct dinfod_scope sc;
		bool found;
		f->debug_checked = true;
		mp_dinfod_enter(s, &sc);
		found = dwfl_module_getdwarf(f->mod, &bias) != NULL;
		mp_dinfod_leave(s, &sc, found);
		if (!found) {
			/*
			 * libdw looks for the debug file again for the symbol
			 * table; then never again for this module (it keeps
			 * both answers), so no later call waits unbounded.
			 */
			mp_dinfod_enter(s, &sc);
			mp_dinfod_leave(s, &sc, dwfl_module_getsymtab(f->mod) > 0);
			struct symcache *c = s->cache;
			f->undebugged = true;
			ALLOC_GROW(c->undebugged, c->nundebugged + 1, c->undebugged_alloc);
			c->undebugged[c->nundebugged++] = f;
		}
	}

	if (!f->undebugged)
		cudie = dwfl_module_addrdie(f->mod, addr, &bias);
	if (cudie)
		sub = find_subprogram(get_unit(s, f, cudie), addr - bias);
	if (sub)
		n = inline_chain(s, sub, addr - bias);

	/* The innermost frame: the line of the ip. */
	fr = push_frame(s, out);
	if (n)
		fr->function = die_name(s, &s->chain[n - 1]);
	if (!fr->function && n <= 1)
		fr->function = symtab_name(s, f, addr);
	line = dwfl_module_getsrc(f->mod, addr);
	if (line) {
		int lineno = 0, col = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL);
		if (file && *file)
			fr->file = intern(s->cache, file);
		fr->line = lineno > 0 ? (uint32_t)lineno : 0;
		fr->column = col > 0 ? (uint32_t)col : 0;
	}

	/* Each outer function, at the call site of the inlined one inside it. */
	if (n > 1) {
		Dwarf_Files *files = NULL;
		size_t nfiles = 0;
		if (dwarf_getsrcfiles(cudie, &files, &nfiles))
			files = NULL;
		for (i = n - 1; i > 0; i--) {
			Dwarf_Die *callee = &s->chain[i];
			uint32_t file_idx = udata(callee, DW_AT_call_file);
			fr = push_frame(s, out);
			fr->function = die_name(s, &s->chain[i - 1]);
			if (i == 1 && !fr->function)
				fr->function = symtab_name(s, f, addr);
			if (files && file_idx < nfiles) {
				const char *file = dwarf_filesrc(files, file_idx, NULL, NULL);
				if (file && *file)
					fr->file = intern(s->cache, file);
			}
			fr->line = udata(callee, DW_AT_call_line);
			fr->column = udata(callee, DW_AT_call_column);
		}
	}
	if (out->nframes == 1 && !fr->function && !fr->file)
		out->nframes = 0;
}
