/* Symbolization with libdw: module map, per-file cache, inline chains, demangling. */
#include <config.h>
#include "lib/symbols/symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/hash.h"
#include "lib/util/strbuf.h"
#include "lib/util/strtab.h"
#include "lib/util/xalloc.h"

/* The C++ runtime's demangler (<cxxabi.h>), linked with $(DEMANGLE_LIBS). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The capture format allows 4096 frames per SYMBOL record. */
#define MAX_FRAMES 4096
/* Nesting depth of DIEs walked when indexing a compilation unit. */
#define MAX_DIE_DEPTH 256

/* ---- maps from 64-bit keys to pointers: mp_intmap holding uintptr_t ---- */

static void *ptr_get(const struct mp_intmap *m, uint64_t key)
{
	uint64_t v;
	return mp_intmap_get(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

static void ptr_put(struct mp_intmap *m, uint64_t key, void *val)
{
	mp_intmap_put(m, key, (uintptr_t)val);
}

static void *ptr_take(struct mp_intmap *m, uint64_t key)
{
	uint64_t v;
	return mp_intmap_take(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

/* ---- the shared cache: files and interned strings ---- */

/* One address range of a subprogram of a compilation unit. */
struct fn_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

/* The subprograms of one compilation unit, sorted by lo. */
struct unit_index {
	struct fn_range *fn;
	size_t n, alloc;
};

enum file_state { FILE_NEW, FILE_READY, FILE_UNUSABLE };

/* One file on disk, for one (root, path, build-id); shared by every module mapping it. */
struct sym_file {
	char *path;           /* as recorded */
	const char *root;     /* interned, or NULL */
	uint8_t *build_id;    /* as recorded */
	size_t build_id_len;
	bool pseudo;          /* [vdso] and co: no file, no warning */
	enum file_state state;
	const char *problem;  /* interned warning when the file is not used */
	bool debug_checked;
	const char *debug_problem; /* interned warning about missing debug information */
	char *debuginfo_path; /* for dwfl_standard_find_debuginfo */
	Dwfl_Callbacks callbacks;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct mp_intmap units;  /* CU DIE address -> struct unit_index */
};

struct symcache {
	unsigned refs;
	struct mp_strtab strings;  /* interned strings: their pointers never move */
	const char **demangled;    /* by string id: its demangled form, once computed */
	size_t demangled_alloc;
	struct mp_strtab file_keys; /* "root\npath\nbuild-id" */
	struct sym_file **files;    /* by key id */
	size_t files_alloc;
	size_t files_opened, units_indexed;
};

static const char *intern_len(struct symcache *c, const char *s, size_t len)
{
	return mp_strtab_get(&c->strings, mp_strtab_intern(&c->strings, s, len));
}

static const char *intern(struct symcache *c, const char *s)
{
	return intern_len(c, s, strlen(s));
}

/* Make index id exist in an array indexed by string id, new elements zeroed. */
#define GROW_TO_ID(arr, alloc, id)                                               \
	do {                                                                     \
		size_t old_ = (alloc);                                           \
		ALLOC_GROW(arr, (size_t)(id) + 1, alloc);                        \
		memset((arr) + old_, 0, ((alloc) - old_) * sizeof(*(arr)));     \
	} while (0)

static void unit_index_free(struct unit_index *u)
{
	free(u->fn);
	free(u);
}

static void sym_file_free(struct sym_file *f)
{
	size_t i;
	uint64_t key, val;
	if (f->dwfl)
		dwfl_end(f->dwfl);
	for (i = 0; mp_intmap_next(&f->units, &i, &key, &val);)
		unit_index_free((struct unit_index *)(uintptr_t)val);
	mp_intmap_release(&f->units);
	free(f->debuginfo_path);
	free(f->build_id);
	free(f->path);
	free(f);
}

static void symcache_unref(struct symcache *c)
{
	if (--c->refs)
		return;
	for (size_t i = 0; i < c->files_alloc; i++)
		if (c->files[i])
			sym_file_free(c->files[i]);
	free(c->files);
	mp_strtab_release(&c->file_keys);
	free(c->demangled);
	mp_strtab_release(&c->strings);
	free(c);
}

/* ---- the object ---- */

struct sym_module {
	uint64_t id, base;
	const char *path; /* interned */
	struct sym_file *file;
};

/* base + vaddr .. + memsz of one segment of a module. */
struct range {
	uint64_t lo, hi;
	struct sym_module *m;
};

struct mp_symbols {
	struct symcache *cache;
	const char *root; /* interned, or NULL */
	bool demangle;
	struct mp_intmap modules;    /* id -> struct sym_module */
	struct range *ranges;     /* of every module, sorted by lo */
	size_t nranges, ranges_alloc;
	bool ranges_dirty;
	struct mp_sym_frame *frames;
	size_t frames_alloc;
	Dwarf_Die *chain;         /* scratch: the function DIEs of one lookup */
	size_t chain_alloc;
	const char **warnings;
	size_t nwarnings, warnings_alloc;
	struct mp_intmap warned;     /* interned warnings already listed */
	size_t lookups;
};

struct mp_symbols *mp_symbols_new(const struct mp_symbols_opts *opts)
{
	struct mp_symbols *s = xcalloc(1, sizeof(*s));
	elf_version(EV_CURRENT);
	if (opts && opts->share_with) {
		s->cache = opts->share_with->cache;
		s->cache->refs++;
	} else {
		s->cache = xcalloc(1, sizeof(*s->cache));
		s->cache->refs = 1;
		mp_strtab_init(&s->cache->strings);
		mp_strtab_init(&s->cache->file_keys);
	}
	s->demangle = opts ? opts->demangle : true;
	if (opts && opts->root && *opts->root) {
		/* "/" and "/proc/1/root/" mean the same as without the slash. */
		size_t len = strlen(opts->root);
		while (len > 0 && opts->root[len - 1] == '/')
			len--;
		if (len)
			s->root = intern_len(s->cache, opts->root, len);
	}
	return s;
}

void mp_symbols_free(struct mp_symbols *s)
{
	size_t i;
	uint64_t key, val;
	if (!s)
		return;
	for (i = 0; mp_intmap_next(&s->modules, &i, &key, &val);)
		free((void *)(uintptr_t)val);
	mp_intmap_release(&s->modules);
	mp_intmap_release(&s->warned);
	free(s->ranges);
	free(s->frames);
	free(s->chain);
	free(s->warnings);
	symcache_unref(s->cache);
	free(s);
}

static void add_warning(struct mp_symbols *s, const char *line)
{
	/* Each interned line once. */
	if (!line || !mp_intmap_put(&s->warned, (uintptr_t)line, 1))
		return;
	ALLOC_GROW(s->warnings, s->nwarnings + 1, s->warnings_alloc);
	s->warnings[s->nwarnings++] = line;
}

size_t mp_symbols_warnings(struct mp_symbols *s, const char ***lines)
{
	*lines = s->warnings;
	return s->nwarnings;
}

void mp_symbols_stats(struct mp_symbols *s, struct mp_symbols_stats *st)
{
	st->lookups = s->lookups;
	st->files_opened = s->cache->files_opened;
	st->units_indexed = s->cache->units_indexed;
}

/* Paths with no file behind them: the vdso and other kernel-provided mappings. */
static bool is_pseudo_path(const char *path)
{
	return !*path || *path == '[' || !strncmp(path, "linux-vdso", 10) ||
	       !strcmp(path, "linux-gate.so.1");
}

static void add_hex(struct strbuf *sb, const uint8_t *p, size_t len)
{
	while (len--)
		strbuf_addf(sb, "%02x", *p++);
}

static struct sym_file *get_file(struct mp_symbols *s, const char *path, const uint8_t *build_id,
				 size_t build_id_len)
{
	struct symcache *c = s->cache;
	struct strbuf key = STRBUF_INIT;
	struct sym_file *f;
	uint32_t id;

	strbuf_addf(&key, "%s\n%s\n", s->root ? s->root : "", path);
	add_hex(&key, build_id, build_id_len);
	id = mp_strtab_intern(&c->file_keys, key.buf, key.len);
	strbuf_release(&key);
	GROW_TO_ID(c->files, c->files_alloc, id);
	if (c->files[id])
		return c->files[id];
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	f->root = s->root;
	if (build_id_len) {
		f->build_id = xmemdup(build_id, build_id_len);
		f->build_id_len = build_id_len;
	}
	f->pseudo = is_pseudo_path(path);
	c->files[id] = f;
	return f;
}

int mp_symbols_add_module(struct mp_symbols *s, uint64_t id, uint64_t base, const char *path,
			  const uint8_t *build_id, size_t build_id_len,
			  const struct mp_segment *seg, size_t nseg)
{
	struct sym_module *m;
	size_t i;

	if (ptr_get(&s->modules, id))
		return -1;
	if (!path)
		path = "";
	if (!build_id)
		build_id_len = 0;
	m = xcalloc(1, sizeof(*m));
	m->id = id;
	m->base = base;
	m->path = intern(s->cache, path);
	m->file = get_file(s, path, build_id, build_id_len);
	ptr_put(&s->modules, id, m);

	for (i = 0; i < nseg; i++) {
		uint64_t lo = base + seg[i].vaddr;
		if (!seg[i].memsz || lo + seg[i].memsz < lo)
			continue; /* empty, or wraps around the address space */
		ALLOC_GROW(s->ranges, s->nranges + 1, s->ranges_alloc);
		s->ranges[s->nranges].lo = lo;
		s->ranges[s->nranges].hi = lo + seg[i].memsz;
		s->ranges[s->nranges].m = m;
		s->nranges++;
		s->ranges_dirty = true;
	}
	return 0;
}

void mp_symbols_remove_module(struct mp_symbols *s, uint64_t id)
{
	struct sym_module *m = ptr_take(&s->modules, id);
	size_t i, n = 0;
	if (!m)
		return;
	for (i = 0; i < s->nranges; i++)
		if (s->ranges[i].m != m)
			s->ranges[n++] = s->ranges[i];
	s->nranges = n;
	free(m);
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static struct sym_module *find_module(struct mp_symbols *s, uint64_t addr)
{
	size_t lo = 0, hi, i;
	if (s->ranges_dirty) {
		qsort(s->ranges, s->nranges, sizeof(*s->ranges), range_cmp);
		s->ranges_dirty = false;
	}
	/* The first range with lo > addr; the candidates are before it. */
	hi = s->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of a valid map do not overlap: look at a few, for broken ones. */
	for (i = lo; i > 0 && lo - i < 8; i--)
		if (addr < s->ranges[i - 1].hi)
			return s->ranges[i - 1].m;
	return NULL;
}

/* ---- opening files ---- */

/* Intern a message made by xasprintf() and free it. */
static const char *intern_msg(struct mp_symbols *s, char *msg)
{
	const char *line = intern(s->cache, msg);
	free(msg);
	return line;
}

static void describe_build_id(struct strbuf *sb, const uint8_t *id, size_t len)
{
	if (len) {
		strbuf_addstr(sb, "build-id ");
		add_hex(sb, id, len);
	} else {
		strbuf_addstr(sb, "no build-id");
	}
}

static int no_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	return -1; /* every module is reported with its file already open */
}

/*
 * Check that fd (opened from name) is an ELF file with the recorded build-id
 * and report it to a new Dwfl. On failure, fd is closed and *why says why
 * (interned).
 */
static int report_file(struct mp_symbols *s, struct sym_file *f, int fd, const char *name,
		       const char **why)
{
	struct strbuf sb = STRBUF_INIT;
	const void *id = NULL;
	ssize_t id_len;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		*why = intern_msg(s, xasprintf("'%s' is not an ELF file: no symbols", f->path));
		goto fail;
	}
	id_len = dwelf_elf_gnu_build_id(elf, &id);
	if (id_len < 0)
		id_len = 0;
	if (f->build_id_len &&
	    ((size_t)id_len != f->build_id_len || memcmp(id, f->build_id, id_len))) {
		strbuf_addf(&sb, "'%s' has ", f->path);
		describe_build_id(&sb, id, id_len);
		strbuf_addstr(&sb, ", the capture recorded ");
		describe_build_id(&sb, f->build_id, f->build_id_len);
		strbuf_addstr(&sb, ": not used");
		*why = intern(s->cache, sb.buf);
		goto fail;
	}
	elf_end(elf);
	elf = NULL;

	f->dwfl = dwfl_begin(&f->callbacks);
	if (!f->dwfl)
		goto fail_dwfl;
	dwfl_report_begin(f->dwfl);
	/* At base 0 the module's addresses are the file's: ip - load bias. */
	f->mod = dwfl_report_elf(f->dwfl, f->path, name, fd, 0, true);
	if (dwfl_report_end(f->dwfl, NULL, NULL) || !f->mod) {
		if (!f->mod)
			close(fd);
		fd = -1;
		goto fail_dwfl;
	}
	strbuf_release(&sb);
	return 0;

fail_dwfl:
	*why = intern_msg(s, xasprintf("cannot read '%s': %s: no symbols", f->path,
				       dwfl_errmsg(-1)));
	if (f->dwfl)
		dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	strbuf_release(&sb);
	return -1;
}

/* Try to open and report path; 1 when it does not exist, 0 when used, -1 with *why. */
static int try_file(struct mp_symbols *s, struct sym_file *f, const char *path, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		*why = intern_msg(s, xasprintf("cannot open '%s': %s: no symbols", f->path,
					       strerror(errno)));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		*why = intern_msg(s, xasprintf("'%s' is not a regular file: no symbols", f->path));
		return -1;
	}
	return report_file(s, f, fd, path, why);
}

static void open_file(struct mp_symbols *s, struct sym_file *f)
{
	struct strbuf path = STRBUF_INIT, dbg = STRBUF_INIT;
	const char *why = NULL;
	size_t len = strlen(f->path), pass;
	static const char deleted[] = " (deleted)";
	int r = 1;

	f->state = FILE_UNUSABLE;
	if (f->pseudo)
		return;
	s->cache->files_opened++;

	/* For dwfl_standard_find_debuginfo: next to the file, .debug/, the debug roots. */
	strbuf_addstr(&dbg, ":.debug:");
	if (f->root && !strchr(f->root, ':'))
		strbuf_addf(&dbg, "%s/usr/lib/debug:", f->root);
	strbuf_addstr(&dbg, "/usr/lib/debug");
	f->debuginfo_path = strbuf_detach(&dbg, NULL);
	f->callbacks.find_elf = no_find_elf;
	f->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	f->callbacks.section_address = dwfl_offline_section_address;
	f->callbacks.debuginfo_path = &f->debuginfo_path;

	if (len > sizeof(deleted) - 1 && !strcmp(f->path + len - (sizeof(deleted) - 1), deleted))
		len -= sizeof(deleted) - 1;
	/* The file under the root (when its path is absolute), then as it is. */
	for (pass = f->root && f->path[0] == '/' ? 0 : 1; pass < 2 && r; pass++) {
		const char *w = NULL;
		strbuf_reset(&path);
		if (pass == 0)
			strbuf_addstr(&path, f->root);
		strbuf_add(&path, f->path, len);
		r = try_file(s, f, path.buf, &w);
		if (r < 0 && !why)
			why = w;
	}
	/* Without a usable file, a debug file with the recorded build-id will do. */
	for (pass = f->root ? 0 : 1; r && f->build_id_len && pass < 2; pass++) {
		const char *w = NULL;
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/usr/lib/debug/.build-id/%02x/", pass == 0 ? f->root : "",
			    f->build_id[0]);
		add_hex(&path, f->build_id + 1, f->build_id_len - 1);
		strbuf_addstr(&path, ".debug");
		r = try_file(s, f, path.buf, &w);
	}
	if (!r) {
		f->state = FILE_READY;
	} else {
		if (!why && f->root)
			why = intern_msg(s, xasprintf("cannot find '%s' (in '%s' or outside it): "
						      "no symbols", f->path, f->root));
		else if (!why)
			why = intern_msg(s, xasprintf("cannot find '%s': no symbols", f->path));
		f->problem = why;
	}
	strbuf_release(&path);
}

/* ---- symbolization ---- */

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
	qsort(u->fn, u->n, sizeof(*u->fn), fn_range_cmp);
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

	if (!s->demangle || raw[0] != '_' || raw[1] != 'Z')
		return key;
	GROW_TO_ID(c->demangled, c->demangled_alloc, id);
	if (c->demangled[id])
		return c->demangled[id];
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
	const char *name = dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);
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

static void symbolize(struct mp_symbols *s, struct sym_file *f, Dwarf_Addr addr, struct mp_sym *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cudie = NULL, *sub = NULL;
	Dwfl_Line *line;
	struct mp_sym_frame *fr;
	size_t n = 0, i;

	if (!f->debug_checked) {
		f->debug_checked = true;
		if (!dwfl_module_getdwarf(f->mod, &bias)) {
			bool symtab = dwfl_module_getsymtab(f->mod) > 0;
			f->debug_problem = intern_msg(s, xasprintf(symtab
				? "no debug information for '%s': function names only, no source lines"
				: "no debug information or symbol table for '%s': no symbols", f->path));
		}
	}
	add_warning(s, f->debug_problem);

	if (!f->debug_problem)
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

int mp_symbols_lookup(struct mp_symbols *s, uint64_t ip, bool is_return_address,
		      struct mp_sym *out)
{
	uint64_t addr = ip;
	struct sym_module *m;
	struct sym_file *f;

	s->lookups++;
	memset(out, 0, sizeof(*out));
	out->frames = s->frames;
	if (is_return_address) {
		if (!ip)
			return -1;
		addr = ip - 1;
	}
	m = find_module(s, addr);
	if (!m)
		return -1;
	out->module_id = m->id;
	out->offset = ip - m->base;
	out->module_path = m->path;

	f = m->file;
	if (f->state == FILE_NEW)
		open_file(s, f);
	add_warning(s, f->problem);
	if (f->state == FILE_READY) {
		symbolize(s, f, addr - m->base, out);
		/*
		 * A frame the kernel or makecontext() made returns to the
		 * first instruction of a function no call precedes (a signal
		 * handler to __restore_rt, a context's function to
		 * __start_context): ip - 1 is in no function, ip names it.
		 */
		if (addr != ip && (!out->nframes || !s->frames[0].function) && find_module(s, ip) == m) {
			size_t keep = out->nframes;
			symbolize(s, f, ip - m->base, out);
			if (out->nframes > keep && s->frames[keep].function) {
				memmove(s->frames, s->frames + keep, (out->nframes - keep) * sizeof(*s->frames));
				out->nframes -= keep;
			} else {
				out->nframes = keep;
			}
		}
	}
	out->frames = s->frames;
	return 0;
}
