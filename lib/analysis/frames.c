/* The stacks of an analysis: strings, modules, symbols and trace nodes into frame locations. */
#include <config.h>
#include "lib/analysis/analysis-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format/pyframe.h"
#include "lib/util/hash.h"
#include "lib/util/sort.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

#define SYMBUF_MAX 64

/* ---- small helpers ------------------------------------------------------ */

static uint32_t intern(struct mp_analysis *a, const char *s)
{
	return mp_strtab_intern_str(&a->strings, s);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The Python interpreter: the executable (python3.11, python) or its library. */
static bool is_interpreter_module(const char *name)
{
	return !strncmp(name, "libpython3", 10) || !strncmp(name, "python3", 7) ||
	       !strcmp(name, "python");
}

/*
 * Modules whose frames are never an allocation's site: the C runtime, and
 * the Python interpreter, so that a Python program's allocations are placed
 * at the Python line that made them.
 */
static bool is_runtime_module(const char *name)
{
	static const char *const prefixes[] = {
		"libc.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libc++", "libmemprof",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return is_interpreter_module(name);
}

/* ---- locations ---------------------------------------------------------- */

struct loc_probe {
	const struct mp_analysis *a;
	const struct mp_location *want;
};

static bool loc_eq(const void *ctx, uint32_t idx)
{
	const struct loc_probe *p = ctx;
	const struct mp_location *l = &p->a->locs[idx], *w = p->want;
	return l->function == w->function && l->file == w->file && l->line == w->line &&
	       l->module == w->module && (l->flags & MP_LOC_IDENTITY) == w->flags;
}

static uint64_t loc_hash(const struct mp_location *l)
{
	uint64_t h = mp_hash_u64(l->function);
	h = mp_hash_combine(h, l->file);
	h = mp_hash_combine(h, l->line);
	h = mp_hash_combine(h, l->module);
	return mp_hash_combine(h, l->flags);
}

static uint32_t location(struct mp_analysis *a, uint32_t function, uint32_t file, uint32_t line,
			 uint32_t module, uint32_t flags)
{
	struct mp_location want = { function, file, line, module, flags };
	struct loc_probe probe = { a, &want };
	uint64_t h, first;
	uint32_t id;
	if (module != MP_NONE && a->modules[module].runtime)
		want.flags |= MP_LOC_RUNTIME;
	/* A library loaded again (dlclose, dlopen) has the same places as before. */
	if (module != MP_NONE && mp_intmap_get(&a->p->modbypath, a->modules[module].path, &first))
		want.module = (uint32_t)first;
	h = loc_hash(&want);
	id = mp_idxset_find(&a->p->locset, h, loc_eq, &probe);
	if (id != MP_NONE)
		return id;
	ALLOC_GROW(a->locs, a->nlocs + 1, a->locs_alloc);
	id = (uint32_t)a->nlocs++;
	a->locs[id] = want;
	a->locs[id].flags |= mp_frames_classify(a, &want);
	mp_idxset_add(&a->p->locset, h, id);
	/* The first Python frame: folded stacks without one gather at [python interpreter]. */
	if ((a->locs[id].flags & MP_LOC_PYTHON) && a->interpreter_loc == MP_NONE)
		a->interpreter_loc = location(a, intern(a, "[python interpreter]"), 0, 0, MP_NONE,
					      MP_LOC_GROUP);
	return id;
}

void mp_frames_add_no_stack(struct mp_analysis *a)
{
	location(a, intern(a, "<unknown stack>"), 0, 0, MP_NONE, MP_LOC_NO_STACK);
}

/* "libfoo.so.1+0x1234", or "0x7f00deadbeef" outside every module. */
static uint32_t unsymbolized_name(struct mp_analysis *a, uint32_t module, uint64_t ip,
				  uint64_t offset)
{
	char buf[64];
	if (module == MP_NONE) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
		return intern(a, buf);
	} else {
		struct strbuf sb = STRBUF_INIT;
		uint32_t id;
		strbuf_addf(&sb, "%s+0x%llx", mp_analysis_string(a, a->modules[module].name),
			    (unsigned long long)offset);
		id = mp_strtab_intern(&a->strings, sb.buf, sb.len);
		strbuf_release(&sb);
		return id;
	}
}

static void add_frame(struct mp_analysis *a, uint32_t loc)
{
	struct mp_analysis_private *p = a->p;
	ALLOC_GROW(p->frames, p->nframes + 1, p->frames_alloc);
	p->frames[p->nframes++] = loc;
}

static struct ipinfo *new_ipinfo(struct mp_analysis *a, uint64_t ip, uint32_t module,
				 uint64_t offset, uint32_t gen)
{
	struct mp_analysis_private *p = a->p;
	struct ipinfo *info;
	ALLOC_GROW(p->ips, p->nips + 1, p->ips_alloc);
	info = &p->ips[p->nips];
	info->ip = ip;
	info->offset = offset;
	info->module = module;
	info->frames = (uint32_t)p->nframes;
	info->nframes = 0;
	info->gen = gen;
	mp_intmap_put(&p->ipmap, ip, p->nips);
	p->nips++;
	return info;
}

/* ---- modules ------------------------------------------------------------ */

static int segref_cmp(const void *x, const void *y)
{
	const struct segref *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

static uint32_t module_containing(struct mp_analysis *a, uint64_t ip)
{
	struct mp_analysis_private *p = a->p;
	size_t lo = 0, hi;
	if (p->segs_dirty) {
		p->nsegs = 0;
		for (size_t i = 0; i < a->nmodules; i++) {
			const struct mp_module *m = &a->modules[i];
			if (!m->loaded)
				continue;
			for (size_t s = 0; s < m->nseg; s++) {
				ALLOC_GROW(p->segs, p->nsegs + 1, p->segs_alloc);
				p->segs[p->nsegs].start = m->base + m->seg[s].vaddr;
				p->segs[p->nsegs].end = m->base + m->seg[s].vaddr + m->seg[s].memsz;
				p->segs[p->nsegs].module = (uint32_t)i;
				p->nsegs++;
			}
		}
		mp_qsort(p->segs, p->nsegs, sizeof(*p->segs), segref_cmp);
		p->segs_dirty = false;
	}
	/* The last segment starting at or below ip. */
	hi = p->nsegs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->segs[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < p->segs[lo - 1].end)
		return p->segs[lo - 1].module;
	return MP_NONE;
}

static void adopt_orphans(struct mp_analysis *a, const struct mp_module *m);

void mp_frames_on_module(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_module *m;
	char *path = xstrndup(rec->u.module.path, rec->u.module.path_len);
	ALLOC_GROW(a->modules, a->nmodules + 1, a->modules_alloc);
	m = &a->modules[a->nmodules];
	memset(m, 0, sizeof(*m));
	m->id = rec->u.module.id;
	m->base = rec->u.module.base;
	m->path = mp_strtab_intern(&a->strings, rec->u.module.path, rec->u.module.path_len);
	m->name = intern(a, basename_of(path));
	m->runtime = is_runtime_module(basename_of(path));
	m->interpreter = is_interpreter_module(basename_of(path));
	m->program = a->header.exe && !strcmp(path, a->header.exe);
	if (rec->u.module.build_id_len)
		m->build_id = xmemdup(rec->u.module.build_id, rec->u.module.build_id_len);
	m->build_id_len = rec->u.module.build_id_len;
	if (rec->u.module.nseg)
		m->seg = xmemdup(rec->u.module.seg, rec->u.module.nseg * sizeof(*m->seg));
	m->nseg = rec->u.module.nseg;
	m->loaded = true;
	free(path);
	mp_intmap_put(&a->p->modmap, m->id, a->nmodules);
	if (!mp_intmap_get(&a->p->modbypath, m->path, &(uint64_t){ 0 }))
		mp_intmap_put(&a->p->modbypath, m->path, a->nmodules);
	a->nmodules++;
	a->p->segs_dirty = true;
	a->p->modgen++;
	if (a->p->norphans && m->nseg)
		adopt_orphans(a, m);
}

void mp_frames_on_module_unload(struct mp_analysis *a, uint64_t id)
{
	uint64_t idx;
	if (!mp_intmap_take(&a->p->modmap, id, &idx))
		return;
	a->modules[idx].loaded = false;
	a->p->segs_dirty = true;
	a->p->modgen++;
}

static uint32_t loaded_module(struct mp_analysis *a, uint64_t id)
{
	uint64_t idx;
	return id && mp_intmap_get(&a->p->modmap, id, &idx) ? (uint32_t)idx : MP_NONE;
}

/*
 * The module of an interpreter frame: its source file, as a module of no
 * segments (nothing maps there) named by the file's path, so that reports
 * by module name the Python files that allocated.
 */
static uint32_t source_module(struct mp_analysis *a, uint32_t file)
{
	struct mp_module *m;
	uint64_t idx;
	char *path;
	if (mp_intmap_get(&a->p->srcmods, file, &idx))
		return (uint32_t)idx;
	path = xstrdup(mp_analysis_string(a, file)); /* (interning may move the strings) */
	ALLOC_GROW(a->modules, a->nmodules + 1, a->modules_alloc);
	m = &a->modules[a->nmodules];
	memset(m, 0, sizeof(*m));
	m->path = file;
	m->name = intern(a, basename_of(path));
	m->source = true;
	free(path);
	mp_intmap_put(&a->p->srcmods, file, a->nmodules);
	return (uint32_t)a->nmodules++;
}

/* ---- strings, symbols and traces ---------------------------------------- */

static uint32_t our_sid(const struct mp_analysis *a, uint64_t id)
{
	return id && id < a->p->nsid ? a->p->sidmap[id] : 0;
}

void mp_frames_on_string(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint64_t id = rec->u.string.id;
	if (id >= UINT32_MAX)
		return;
	if (id >= p->nsid) {
		size_t n = p->nsid;
		ALLOC_GROW(p->sidmap, id + 1, p->sid_alloc);
		memset(p->sidmap + n, 0, (id + 1 - n) * sizeof(*p->sidmap));
		p->nsid = id + 1;
	}
	p->sidmap[id] = mp_strtab_intern(&a->strings, rec->u.string.text, rec->u.string.len);
}

void mp_frames_on_symbol(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t module = loaded_module(a, rec->u.symbol.module);
	uint64_t ip = rec->u.symbol.ip, idx;
	struct ipinfo *info;
	uint32_t fallback = MP_NONE;

	/* An interpreter's frame (lib/format/pyframe.h): in its source file. */
	if (module == MP_NONE && mp_pyip_is(ip) && rec->u.symbol.nframes == 1 &&
	    our_sid(a, rec->u.symbol.frames[0].file))
		module = source_module(a, our_sid(a, rec->u.symbol.frames[0].file));

	if (mp_intmap_get(&p->ipmap, ip, &idx) && p->ips[idx].gen != MP_NONE) {
		/*
		 * TRACE records used the ip before its SYMBOL record came (the
		 * format allows either order): they get its frames now.
		 */
		info = &p->ips[idx];
		info->module = module;
		info->offset = rec->u.symbol.offset;
		info->frames = (uint32_t)p->nframes;
		info->gen = MP_NONE;
	} else {
		new_ipinfo(a, ip, module, rec->u.symbol.offset, MP_NONE);
		idx = p->nips - 1;
	}

	for (size_t i = 0; i < rec->u.symbol.nframes; i++) {
		const struct mp_frame *f = &rec->u.symbol.frames[i];
		uint32_t fn = our_sid(a, f->function), file = our_sid(a, f->file);
		uint32_t flags = 0;
		if (!fn) {
			/* A frame without a function name is named like an unsymbolized one. */
			if (fallback == MP_NONE)
				fallback = unsymbolized_name(a, module, ip, rec->u.symbol.offset);
			fn = fallback;
			if (!file)
				flags = MP_LOC_UNSYMBOLIZED;
		}
		add_frame(a, location(a, fn, file, f->line, module, flags));
	}
	if (!rec->u.symbol.nframes)
		add_frame(a, location(a, unsymbolized_name(a, module, ip, rec->u.symbol.offset), 0, 0,
				      module, MP_LOC_UNSYMBOLIZED));
	info = &p->ips[idx];
	info->nframes = (uint32_t)(p->nframes - info->frames);
}

/* The frames of ipinfo idx, an ip that had no SYMBOL record: the hook's, else module+offset. */
static void fill_ipinfo(struct mp_analysis *a, uint32_t idx)
{
	struct mp_analysis_private *p = a->p;
	struct ipinfo *info = &p->ips[idx];
	uint64_t ip = info->ip;
	uint32_t module = module_containing(a, ip);
	uint64_t offset = module == MP_NONE ? ip : ip - a->modules[module].base;
	size_t n = 0;

	info->module = module;
	info->offset = offset;
	info->frames = (uint32_t)p->nframes;
	info->gen = p->modgen;

	if (ip == MP_IP_TRUNCATED) {
		add_frame(a, location(a, intern(a, "<stack truncated>"), 0, 0, MP_NONE,
				      MP_LOC_TRUNCATED));
	} else {
		if (a->opts.symbolize) {
			if (!p->symbuf)
				p->symbuf = xcalloc(SYMBUF_MAX, sizeof(*p->symbuf));
			n = a->opts.symbolize(a->opts.symbolize_ctx,
					      module == MP_NONE ? NULL : &a->modules[module], ip,
					      offset, p->symbuf, SYMBUF_MAX);
			if (n > SYMBUF_MAX)
				n = SYMBUF_MAX;
		}
		for (size_t i = 0; i < n; i++) {
			const struct mp_sym_frame *f = &p->symbuf[i];
			uint32_t fn = f->function ? intern(a, f->function)
						  : unsymbolized_name(a, module, ip, offset);
			add_frame(a, location(a, fn, f->file ? intern(a, f->file) : 0, f->line,
					      module, 0));
		}
		if (!n)
			add_frame(a, location(a, unsymbolized_name(a, module, ip, offset), 0, 0, module,
					      MP_LOC_UNSYMBOLIZED));
	}
	info = &p->ips[idx];
	info->nframes = (uint32_t)(p->nframes - info->frames);
}

static uint32_t resolve_ip(struct mp_analysis *a, uint64_t ip)
{
	struct mp_analysis_private *p = a->p;
	uint32_t idx;
	new_ipinfo(a, ip, MP_NONE, ip, p->modgen);
	idx = (uint32_t)(p->nips - 1);
	fill_ipinfo(a, idx);
	if (p->ips[idx].module == MP_NONE && ip != MP_IP_TRUNCATED && !mp_pyip_is(ip)) {
		ALLOC_GROW(p->orphans, p->norphans + 1, p->orphans_alloc);
		p->orphans[p->norphans++] = idx;
	}
	return idx;
}

/*
 * A module came: the ipinfos of its code made before it (a library's first
 * frames can come before its MODULE record) are its own now.
 */
static void adopt_orphans(struct mp_analysis *a, const struct mp_module *m)
{
	struct mp_analysis_private *p = a->p;
	size_t k = 0;
	for (size_t i = 0; i < p->norphans; i++) {
		struct ipinfo *info = &p->ips[p->orphans[i]];
		bool inside = false;
		for (size_t s = 0; s < m->nseg && !inside; s++)
			inside = info->ip >= m->base + m->seg[s].vaddr &&
				 info->ip - (m->base + m->seg[s].vaddr) < m->seg[s].memsz;
		if (info->gen == MP_NONE)
			continue; /* its SYMBOL record came */
		if (inside)
			fill_ipinfo(a, p->orphans[i]);
		else
			p->orphans[k++] = p->orphans[i];
	}
	p->norphans = k;
}

/*
 * Whether a SYMBOL record's frames still describe its ip: not once its
 * module was unloaded, since another may be loaded at the same place (its
 * own SYMBOL record for the ip follows the new node's TRACE record).
 */
static bool symbol_current(const struct mp_analysis *a, const struct ipinfo *info)
{
	return info->module == MP_NONE || a->modules[info->module].loaded ||
	       !a->modules[info->module].nseg;
}

void mp_frames_on_trace(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint64_t node = rec->u.trace.index, idx;
	uint32_t info;
	if (node != a->ntraces + 1 || node >= UINT32_MAX || rec->u.trace.parent >= node)
		return; /* the decoder numbers nodes; anything else is a caller's bug */
	if (mp_intmap_get(&p->ipmap, rec->u.trace.ip, &idx) &&
	    (p->ips[idx].gen == MP_NONE ? symbol_current(a, &p->ips[idx]) : p->ips[idx].gen == p->modgen))
		info = (uint32_t)idx;
	else
		info = resolve_ip(a, rec->u.trace.ip); /* (its SYMBOL record, if any, comes next) */
	ALLOC_GROW(p->traces, node + 1, p->traces_alloc);
	p->traces[node].parent = (uint32_t)rec->u.trace.parent;
	p->traces[node].ipinfo = info;
	a->ntraces = node;
}

uint32_t mp_frames_location(struct mp_analysis *a, uint32_t function, uint32_t file, uint32_t line,
			    uint32_t module, uint32_t flags)
{
	return location(a, function, file, line, module, flags);
}

uint32_t mp_frames_pseudo_ip(struct mp_analysis *a, uint32_t loc)
{
	struct mp_analysis_private *p = a->p;
	/* Not an ip of any process: in no ip map. */
	ALLOC_GROW(p->ips, p->nips + 1, p->ips_alloc);
	p->ips[p->nips] = (struct ipinfo){ 0, 0, MP_NONE, (uint32_t)p->nframes, 1, MP_NONE };
	add_frame(a, loc);
	return (uint32_t)p->nips++;
}

/* ---- lookups ------------------------------------------------------------ */

uint32_t mp_analysis_parent(const struct mp_analysis *a, uint32_t node)
{
	return node && node <= a->ntraces ? a->p->traces[node].parent : 0;
}

size_t mp_analysis_node_frames(const struct mp_analysis *a, uint32_t node, const uint32_t **locs)
{
	static const uint32_t no_stack = MP_LOCATION_NO_STACK;
	const struct ipinfo *info;
	if (!node || node > a->ntraces) {
		*locs = &no_stack;
		return 1;
	}
	info = &a->p->ips[a->p->traces[node].ipinfo];
	*locs = a->p->frames + info->frames;
	return info->nframes;
}

uint32_t mp_analysis_node_ip(const struct mp_analysis *a, uint32_t node, uint64_t *ip,
			     uint32_t *module)
{
	const struct ipinfo *info;
	if (!node || node > a->ntraces) {
		*ip = 0;
		*module = MP_NONE;
		return 0;
	}
	info = &a->p->ips[a->p->traces[node].ipinfo];
	*ip = info->ip;
	*module = info->module;
	return a->p->traces[node].ipinfo + 1;
}

size_t mp_analysis_stack(const struct mp_analysis *a, uint32_t stack, uint32_t **buf,
			 size_t *alloc)
{
	size_t n = 0;
	do {
		const uint32_t *locs;
		size_t k = mp_analysis_node_frames(a, stack, &locs);
		ALLOC_GROW(*buf, n + k, *alloc);
		memcpy(*buf + n, locs, k * sizeof(*locs));
		n += k;
		stack = mp_analysis_parent(a, stack);
	} while (stack);
	return n;
}

void mp_location_format(const struct mp_analysis *a, uint32_t loc, enum mp_location_style style,
			struct strbuf *sb)
{
	const struct mp_location *l = &a->locs[loc];
	const char *file = l->file ? mp_analysis_string(a, l->file) : NULL;
	strbuf_addstr(sb, mp_analysis_string(a, l->function));
	if (!file)
		return;
	strbuf_addstr(sb, style == MP_LOC_STYLE_COLON ? ":" : " at ");
	strbuf_addstr(sb, file);
	if (l->line && style != MP_LOC_STYLE_AT_FILE)
		strbuf_addf(sb, ":%u", l->line);
}

const char *mp_location_module(const struct mp_analysis *a, uint32_t loc)
{
	uint32_t m = a->locs[loc].module;
	return m == MP_NONE ? "<unknown>" : mp_analysis_string(a, a->modules[m].path);
}
