/* Symbolization with libdw: module map, per-file cache, the lookups (describe.c: what DWARF says). */
#include <config.h>
#include "lib/symbols/symbols-private.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/sort.h"
#include "lib/util/strbuf.h"

static void unit_index_free(struct unit_index *u)
{
	free(u->fn);
	free(u);
}

static void sym_file_free(struct sym_file *f)
{
	size_t i;
	uint64_t key, val;
	mp_symindex_free(f->symindex);
	if (f->dwfl)
		dwfl_end(f->dwfl);
	for (i = 0; mp_intmap_next(&f->units, &i, &key, &val);)
		unit_index_free((struct unit_index *)(uintptr_t)val);
	mp_intmap_release(&f->units);
	mp_intmap_release(&f->described);
	free(f->memo);
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
	free(c->undebugged);
	free(c->debug_dirs);
	mp_debugcache_release(&c->dcache);
	mp_dinfod_release(&c->dinfod);
	mp_strtab_release(&c->file_keys);
	free(c->demangled);
	mp_strtab_release(&c->strings);
	free(c);
}

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
		if (getenv("MEMPROF_DEBUGINFO_PATH") && *getenv("MEMPROF_DEBUGINFO_PATH"))
			s->cache->debug_dirs = xstrdup(getenv("MEMPROF_DEBUGINFO_PATH"));
		mp_debugcache_init(&s->cache->dcache);
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


size_t mp_symbols_warnings(struct mp_symbols *s, const char ***lines)
{
	*lines = s->warnings;
	return s->nwarnings;
}

/* How many module names the hint lists before "and N more". */
#define HINT_NAMES 4

char *mp_symbols_hint(struct mp_symbols *s)
{
	struct symcache *c = s->cache;
	struct strbuf sb = STRBUF_INIT;
	size_t n = c->nundebugged, listed = 0, unnamed = 0;
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!n)
		return NULL;
	for (size_t i = 0; i < n; i++)
		unnamed += c->undebugged[i]->unnamed;
	strbuf_addf(&sb, "no debug information for %zu module%s (", n, n == 1 ? "" : "s");
	/* Those with frames that have no name first: they matter most. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n && listed < HINT_NAMES; i++) {
			const char *path = c->undebugged[i]->path, *base = strrchr(path, '/');
			if (c->undebugged[i]->unnamed != !pass)
				continue;
			strbuf_addf(&sb, "%s%s", listed++ ? ", " : "", base ? base + 1 : path);
		}
	if (n > listed)
		strbuf_addf(&sb, " and %zu more", n - listed);
	strbuf_addstr(&sb, unnamed ? "): some frames show module+offset instead of a function, "
				     "none has a source line"
				   : "): function names but no source lines");
	strbuf_addstr(&sb, "; to get them, install their debug symbols (Debian's -dbgsym packages)");
	if (!urls || !*urls)
		strbuf_addstr(&sb, " or set DEBUGINFOD_URLS to a debuginfod server");
	else if (c->dinfod.stalled)
		strbuf_addstr(&sb, ": the servers in DEBUGINFOD_URLS did not answer in time");
	else
		strbuf_addstr(&sb, ": the servers in DEBUGINFOD_URLS have none");
	return strbuf_detach(&sb, NULL);
}

void mp_symbols_stats(struct mp_symbols *s, struct mp_symbols_stats *st)
{
	st->lookups = s->lookups;
	st->files_opened = s->cache->files_opened;
	st->units_indexed = s->cache->units_indexed;
	st->debug_cache_hits = s->cache->dcache.hits;
	st->debug_cache_written = s->cache->dcache.written;
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
	f->cache = c;
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

bool mp_symbols_has_module(struct mp_symbols *s, uint64_t id)
{
	return ptr_get(&s->modules, id) != NULL;
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
		mp_qsort(s->ranges, s->nranges, sizeof(*s->ranges), range_cmp);
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
	/* A file whose own DWARF is compressed: its decompressed copy. */
	fd = mp_debugcache_swap(&s->cache->dcache, fd, "elf", NULL, 0);

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
	{
		/* For find_debuginfo(): the module's file. */
		void **userdata = NULL;
		dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
		if (userdata)
			*userdata = f;
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

/*
 * The debug file named by f's recorded build-id in each debug directory,
 * one per call (*at from 0; false after the last): DIR/.build-id/xx/yyyy.debug
 * for each absolute DIR of f->debuginfo_path ($MEMPROF_DEBUGINFO_PATH,
 * <root>/usr/lib/debug and /usr/lib/debug, in that order: open_file()).
 */
static bool build_id_candidate(const struct sym_file *f, size_t *at, struct strbuf *path)
{
	const char *dirs = f->debuginfo_path;
	size_t len = dirs ? strlen(dirs) : 0;
	while (f->build_id_len && *at <= len) {
		const char *dir = dirs + *at, *end = strchr(dir, ':');
		size_t n = end ? (size_t)(end - dir) : strlen(dir);
		*at += n + 1;
		if (n && (*dir == '+' || *dir == '-')) { /* libdw's CRC-check markers */
			dir++;
			n--;
		}
		if (!n || *dir != '/')
			continue;
		strbuf_reset(path);
		strbuf_addf(path, "%.*s/.build-id/%02x/", (int)n, dir, f->build_id[0]);
		add_hex(path, f->build_id + 1, f->build_id_len - 1);
		strbuf_addstr(path, ".debug");
		return true;
	}
	return false;
}

/*
 * libdw's search for a module's debug file, through the cache of debug
 * files kept decompressed (debugcache.h): the module's copy when the cache
 * has one; else its debug file by build-id, decompressed into the cache
 * when it has compressed sections; else the standard search (a
 * .gnu_debuglink, debuginfod), whose file is decompressed the same way.
 * (The debug file the standard search finds by build-id is one libdw has
 * already opened for itself and keeps: that is why that one is looked for
 * here first.) A second ask for the same module is for its dwz file, which
 * libdw also keeps open: it gets the standard search alone.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	struct sym_file *f = *userdata;
	struct strbuf path = STRBUF_INIT;
	int fd = -1;
	if (!f || f->debug_asked)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc, debuginfo_file_name);
	f->debug_asked = true;
	fd = mp_debugcache_find(&f->cache->dcache, f->build_id, f->build_id_len, "debug",
				debuginfo_file_name);
	for (size_t at = 0; fd < 0 && build_id_candidate(f, &at, &path);) {
		int got = open(path.buf, O_RDONLY | O_CLOEXEC);
		if (got < 0)
			continue;
		fd = mp_debugcache_swap(&f->cache->dcache, got, "debug", f->build_id, f->build_id_len);
		if (fd == got) {
			/* Nothing to decompress (or not its build-id): the standard search, as ever. */
			close(got);
			fd = -1;
			break;
		}
		*debuginfo_file_name = strbuf_detach(&path, NULL);
	}
	strbuf_release(&path);
	if (fd >= 0)
		return fd;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	return mp_debugcache_swap(&f->cache->dcache, fd, "debug", NULL, 0);
}

/*
 * A debug file with f's recorded build-id, for a file that is not here (or
 * not the one that ran): in the debug directories (build_id_candidate()),
 * then debuginfod. Returns 0 when one is used, else 1.
 */
static int open_debug_file(struct mp_symbols *s, struct sym_file *f)
{
	struct strbuf path = STRBUF_INIT;
	const char *w = NULL;
	char *fetched = NULL;
	int r = 1, fd;

	for (size_t at = 0; r && build_id_candidate(f, &at, &path);)
		r = try_file(s, f, path.buf, &w) ? 1 : 0;
	if (r && (fd = mp_dinfod_find_debuginfo(s, f, &fetched)) >= 0)
		r = report_file(s, f, fd, fetched, &w) ? 1 : 0;
	free(fetched);
	strbuf_release(&path);
	return r;
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

	/*
	 * For dwfl_standard_find_debuginfo: the user's directories
	 * ($MEMPROF_DEBUGINFO_PATH), next to the file, .debug/, the debug roots.
	 */
	if (s->cache->debug_dirs)
		strbuf_addf(&dbg, "%s:", s->cache->debug_dirs);
	strbuf_addstr(&dbg, ":.debug:");
	if (f->root && !strchr(f->root, ':'))
		strbuf_addf(&dbg, "%s/usr/lib/debug:", f->root);
	strbuf_addstr(&dbg, "/usr/lib/debug");
	f->debuginfo_path = strbuf_detach(&dbg, NULL);
	f->callbacks.find_elf = no_find_elf;
	f->callbacks.find_debuginfo = find_debuginfo;
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
	if (r && f->build_id_len)
		r = open_debug_file(s, f);
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

/* The frames a lookup of this key in f found before, into s->frames and *out. */
static bool recall(struct mp_symbols *s, struct sym_file *f, uint64_t key, struct mp_sym *out)
{
	uint64_t v;
	size_t first, n;
	if (!mp_intmap_get(&f->described, key, &v))
		return false;
	first = (size_t)(v & 0xffffffffu) - 1;
	n = (size_t)(v >> 32);
	ALLOC_GROW(s->frames, n ? n : 1, s->frames_alloc);
	memcpy(s->frames, f->memo + first, n * sizeof(*s->frames));
	out->nframes = n;
	out->frames = s->frames;
	return true;
}

/* Keep what a lookup of this key in f found (its strings are the shared cache's). */
static void remember(struct mp_symbols *s, struct sym_file *f, uint64_t key, const struct mp_sym *out)
{
	size_t n = out->nframes;
	if (f->nmemo + n >= UINT32_MAX)
		return;
	ALLOC_GROW(f->memo, f->nmemo + n, f->memo_alloc);
	if (n) /* (no frames: memo may still be NULL) */
		memcpy(f->memo + f->nmemo, s->frames, n * sizeof(*f->memo));
	mp_intmap_put(&f->described, key, (uint64_t)n << 32 | (f->nmemo + 1));
	f->nmemo += n;
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
	if (f->state == FILE_READY && recall(s, f, (ip - m->base) << 1 | is_return_address, out))
		return 0;
	if (f->state == FILE_READY) {
		mp_sym_describe(s, f, addr - m->base, out);
		/*
		 * A frame the kernel or makecontext() made returns to the
		 * first instruction of a function no call precedes (a signal
		 * handler to __restore_rt, a context's function to
		 * __start_context): ip - 1 is in no function, ip names it.
		 */
		if (addr != ip && (!out->nframes || !s->frames[0].function) && find_module(s, ip) == m) {
			size_t keep = out->nframes;
			mp_sym_describe(s, f, ip - m->base, out);
			if (out->nframes > keep && s->frames[keep].function) {
				memmove(s->frames, s->frames + keep, (out->nframes - keep) * sizeof(*s->frames));
				out->nframes -= keep;
			} else {
				out->nframes = keep;
			}
		}
		if (f->undebugged && (!out->nframes || !s->frames[0].function))
			f->unnamed = true;
		remember(s, f, (ip - m->base) << 1 | is_return_address, out);
	}
	out->frames = s->frames;
	return 0;
}
