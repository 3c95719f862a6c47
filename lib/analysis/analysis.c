/* The analysis pass: live blocks, mappings and per-slot counters, one record at a time. */
#include <config.h>
#include "lib/analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/blocks.h"
#include "lib/util/hash.h"
#include "lib/analysis/rangemap.h"
#include "lib/format/readahead.h"
#include "lib/util/xalloc.h"

/* One mapping allocation; munmap may cut it into several pieces in the range map. */
struct origin {
	uint64_t size, serial;
	uint64_t event;         /* of the allocation (temporal intervals) */
	uint32_t slot, thread;
	uint32_t pieces;        /* 0: free (next free origin in serial) */
};

/* What an instruction pointer stands for: its module and its frames' locations. */
struct ipinfo {
	uint64_t ip, offset;
	uint32_t module;        /* index into a->modules, or MP_NONE */
	uint32_t frames, nframes; /* into p->frames */
	uint32_t gen;           /* module generation it was resolved in; MP_NONE for SYMBOL records */
};

struct trace {
	uint32_t parent, ipinfo;
};

struct segref {
	uint64_t start, end;
	uint32_t module;
};

struct mp_analysis_private {
	struct mp_blocks blocks;         /* live heap blocks (any non-mapping kind) */
	struct mp_intmap block_events;  /* MP_ANALYSIS_TEMPORAL: address -> event of allocation */
	struct mp_rangemap maps;
	struct origin *origins;
	size_t norigins, origins_alloc;
	uint32_t free_origin;           /* head of the free list, MP_NONE when empty */
	struct mp_idxset slotset;       /* (stack, thread, kind) -> slot */
	uint32_t *stack_slot;           /* by stack: the slot it used last, + 1 */
	size_t stack_slot_alloc;
	struct trace *traces;           /* by node; [0] is the root */
	size_t traces_alloc;
	struct ipinfo *ips;
	size_t nips, ips_alloc;
	struct mp_intmap ipmap;         /* ip -> latest ipinfo */
	uint32_t *frames;               /* location ids of the ipinfos */
	size_t nframes, frames_alloc;
	struct mp_idxset locset;
	uint32_t *sidmap;               /* the capture's string ids -> ours */
	size_t nsid, sid_alloc;
	struct mp_intmap modmap;        /* loaded module id -> index */
	struct segref *segs;
	size_t nsegs, segs_alloc;
	bool segs_dirty;
	uint32_t modgen;
	uint32_t *thread_of;            /* capture thread index -> a->threads, MP_NONE */
	size_t thread_of_alloc;
	uint32_t kind_index[32];        /* kind -> a->kinds + 1, for kinds below 32 */
	/* The heap and its peak. */
	uint64_t heap, live_count, epoch;
	/* The time series. */
	uint64_t last_time_us, last_rss;
	uint64_t tick_max;              /* highest heap since the last tick */
	bool events_since_tick;
	struct mp_sample pending;       /* ticks merged into the next point */
	uint64_t pending_ticks;
	/*
	 * Time buckets, one per sample: the event count at each one's start and
	 * at its high-water mark (its start when the heap only fell in it).
	 */
	uint64_t *ev_start, *ev_hwm;
	size_t ev_alloc;
	/* The current bucket, the future sample a->nsamples: the same so far. */
	uint64_t cur_start, cur_hwm, cur_max, cur_hwm_time;
	/* Temporal intervals. */
	struct mp_idxset ivset;
	size_t intervals_alloc;
	/*
	 * Blocks freed in the current bucket after its high-water mark so far,
	 * by (slot, alloc half): their free half is 2b if the heap rises higher
	 * later in the bucket, else 2b + 1.
	 */
	struct mp_interval *pend;
	size_t npend, pend_alloc;
	struct mp_idxset pendset;
	/* Allocation sites: first non-runtime location on the path to the root, by node. */
	uint32_t *site_memo;
	struct mp_sym_frame *symbuf;
};

#define SYMBUF_MAX 64

/* ---- small helpers ------------------------------------------------------ */

uint64_t mp_hist_bucket_min(unsigned k)
{
	return k == 0 ? 0 : (uint64_t)1 << (k - 1);
}

uint64_t mp_hist_bucket_max(unsigned k)
{
	if (k == 0)
		return 0;
	return k >= 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1;
}

static unsigned hist_bucket(uint64_t size)
{
	return size ? 64 - (unsigned)__builtin_clzll(size) : 0;
}

static uint32_t intern(struct mp_analysis *a, const char *s)
{
	return mp_strtab_intern_str(&a->strings, s);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool is_runtime_module(const char *name)
{
	static const char *const prefixes[] = {
		"libc.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libc++", "libmemprof",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
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
	       l->module == w->module && l->flags == w->flags;
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
	uint64_t h;
	uint32_t id;
	if (module != MP_NONE && a->modules[module].runtime)
		want.flags |= MP_LOC_RUNTIME;
	h = loc_hash(&want);
	id = mp_idxset_find(&a->p->locset, h, loc_eq, &probe);
	if (id != MP_NONE)
		return id;
	ALLOC_GROW(a->locs, a->nlocs + 1, a->locs_alloc);
	id = (uint32_t)a->nlocs++;
	a->locs[id] = want;
	mp_idxset_add(&a->p->locset, h, id);
	return id;
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
		qsort(p->segs, p->nsegs, sizeof(*p->segs), segref_cmp);
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

static void on_module(struct mp_analysis *a, const struct mp_record *rec)
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
	if (rec->u.module.build_id_len)
		m->build_id = xmemdup(rec->u.module.build_id, rec->u.module.build_id_len);
	m->build_id_len = rec->u.module.build_id_len;
	if (rec->u.module.nseg)
		m->seg = xmemdup(rec->u.module.seg, rec->u.module.nseg * sizeof(*m->seg));
	m->nseg = rec->u.module.nseg;
	m->loaded = true;
	free(path);
	mp_intmap_put(&a->p->modmap, m->id, a->nmodules);
	a->nmodules++;
	a->p->segs_dirty = true;
	a->p->modgen++;
}

static void on_module_unload(struct mp_analysis *a, uint64_t id)
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

/* ---- strings, symbols and traces ---------------------------------------- */

static uint32_t our_sid(const struct mp_analysis *a, uint64_t id)
{
	return id && id < a->p->nsid ? a->p->sidmap[id] : 0;
}

static void on_string(struct mp_analysis *a, const struct mp_record *rec)
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

static void on_symbol(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t module = loaded_module(a, rec->u.symbol.module);
	uint64_t ip = rec->u.symbol.ip, idx;
	struct ipinfo *info;
	uint32_t fallback = MP_NONE;

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

/* The ipinfo of an ip that had no SYMBOL record: the hook, else module+offset. */
static uint32_t resolve_ip(struct mp_analysis *a, uint64_t ip)
{
	struct mp_analysis_private *p = a->p;
	uint32_t module = module_containing(a, ip);
	uint64_t offset = module == MP_NONE ? ip : ip - a->modules[module].base;
	struct ipinfo *info = new_ipinfo(a, ip, module, offset, p->modgen);
	uint32_t idx = (uint32_t)(p->nips - 1);
	size_t n = 0;

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
	return idx;
}

static void on_trace(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint64_t node = rec->u.trace.index, idx;
	uint32_t info;
	if (node != a->ntraces + 1 || node >= UINT32_MAX || rec->u.trace.parent >= node)
		return; /* the decoder numbers nodes; anything else is a caller's bug */
	if (mp_intmap_get(&p->ipmap, rec->u.trace.ip, &idx) &&
	    (p->ips[idx].gen == MP_NONE || p->ips[idx].gen == p->modgen))
		info = (uint32_t)idx;
	else
		info = resolve_ip(a, rec->u.trace.ip);
	ALLOC_GROW(p->traces, node + 1, p->traces_alloc);
	p->traces[node].parent = (uint32_t)rec->u.trace.parent;
	p->traces[node].ipinfo = info;
	a->ntraces = node;
}

/* ---- threads and kinds -------------------------------------------------- */

static uint32_t new_thread(struct mp_analysis *a, uint32_t index, uint64_t tid)
{
	struct mp_thread *t;
	ALLOC_GROW(a->threads, a->nthreads + 1, a->threads_alloc);
	t = &a->threads[a->nthreads];
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->tid = tid;
	return (uint32_t)a->nthreads++;
}

static void set_thread_of(struct mp_analysis *a, uint32_t index, uint32_t thread)
{
	struct mp_analysis_private *p = a->p;
	if (index >= p->thread_of_alloc) {
		size_t old = p->thread_of_alloc, n = old ? old : 8;
		while (n <= index)
			n *= 2;
		p->thread_of = xreallocarray(p->thread_of, n, sizeof(*p->thread_of));
		for (size_t i = old; i < n; i++)
			p->thread_of[i] = MP_NONE;
		p->thread_of_alloc = n;
	}
	p->thread_of[index] = thread;
}

/* The analysis thread of a capture thread index, declaring it when events come first. */
static inline uint32_t thread_of(struct mp_analysis *a, uint32_t index)
{
	struct mp_analysis_private *p = a->p;
	uint32_t t;
	if (index < p->thread_of_alloc && p->thread_of[index] != MP_NONE)
		return p->thread_of[index];
	t = new_thread(a, index, index == 0 ? a->header.main_tid : 0);
	set_thread_of(a, index, t);
	return t;
}

static void on_thread(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t index = rec->u.thread.index, t = MP_NONE;
	if (index < p->thread_of_alloc)
		t = p->thread_of[index];
	/*
	 * The same tid (or a thread only known from its events so far) is a
	 * rename; another tid is a new thread reusing the index.
	 */
	if (t == MP_NONE || (a->threads[t].tid && a->threads[t].tid != rec->u.thread.tid)) {
		t = new_thread(a, index, rec->u.thread.tid);
		set_thread_of(a, index, t);
	}
	a->threads[t].tid = rec->u.thread.tid;
	a->threads[t].name = mp_strtab_intern(&a->strings, rec->u.thread.name,
					      rec->u.thread.name_len);
}

static inline struct mp_kind_totals *kind_totals(struct mp_analysis *a, uint32_t kind)
{
	struct mp_analysis_private *p = a->p;
	struct mp_kind_totals *k;
	if (kind < 32 && p->kind_index[kind])
		return &a->kinds[p->kind_index[kind] - 1];
	if (kind >= 32)
		for (size_t i = 0; i < a->nkinds; i++)
			if (a->kinds[i].kind == kind)
				return &a->kinds[i];
	ALLOC_GROW(a->kinds, a->nkinds + 1, a->kinds_alloc);
	k = &a->kinds[a->nkinds++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	if (kind < 32)
		p->kind_index[kind] = (uint32_t)a->nkinds;
	return k;
}

/* ---- slots and the peak ------------------------------------------------- */

struct slot_probe {
	const struct mp_analysis *a;
	uint32_t stack, thread, kind;
};

static bool slot_eq(const void *ctx, uint32_t idx)
{
	const struct slot_probe *p = ctx;
	const struct mp_slot *s = &p->a->slots[idx];
	return s->stack == p->stack && s->thread == p->thread && s->kind == p->kind;
}

static void remember_slot(struct mp_analysis_private *p, uint32_t stack, uint32_t idx)
{
	if (stack >= p->stack_slot_alloc) {
		size_t old = p->stack_slot_alloc, n = old ? old : 1024;
		while (n <= stack)
			n *= 2;
		p->stack_slot = xreallocarray(p->stack_slot, n, sizeof(*p->stack_slot));
		memset(p->stack_slot + old, 0, (n - old) * sizeof(*p->stack_slot));
		p->stack_slot_alloc = n;
	}
	p->stack_slot[stack] = idx + 1;
}

static uint32_t get_slot(struct mp_analysis *a, uint32_t stack, uint32_t thread, uint32_t kind)
{
	struct mp_analysis_private *p = a->p;
	struct slot_probe probe = { a, stack, thread, kind };
	uint64_t h;
	uint32_t idx;
	struct mp_slot *s;
	/* A stack mostly allocates with one function in one thread: try its last slot. */
	if (stack < p->stack_slot_alloc && p->stack_slot[stack]) {
		idx = p->stack_slot[stack] - 1;
		s = &a->slots[idx];
		if (s->thread == thread && s->kind == kind)
			return idx;
	}
	h = mp_hash_u64(((uint64_t)thread << 32 | stack) ^ ((uint64_t)kind << 56));
	idx = mp_idxset_find(&p->slotset, h, slot_eq, &probe);
	if (idx != MP_NONE) {
		remember_slot(p, stack, idx);
		return idx;
	}
	ALLOC_GROW(a->slots, a->nslots + 1, a->slots_alloc);
	idx = (uint32_t)a->nslots++;
	s = &a->slots[idx];
	memset(s, 0, sizeof(*s));
	s->stack = stack;
	s->thread = thread;
	s->kind = kind;
	s->site = MP_NONE;
	/* It did not exist at the last peak: its value there was zero. */
	s->epoch_ = a->p->epoch;
	mp_idxset_add(&p->slotset, h, idx);
	remember_slot(p, stack, idx);
	return idx;
}

/*
 * Change a slot's live counts. The first change after a new peak saves the
 * value the slot had at that peak; a slot not changed since the last peak
 * still holds it. So the peak snapshot costs O(1) per event.
 */
static void slot_change(struct mp_analysis *a, uint32_t slot, int64_t bytes, int64_t count)
{
	struct mp_slot *s = &a->slots[slot];
	if (s->epoch_ != a->p->epoch) {
		s->at_peak_ = s->leaked;
		s->epoch_ = a->p->epoch;
	}
	s->leaked.bytes += (uint64_t)bytes;
	s->leaked.count += (uint64_t)count;
}

/* ---- time series -------------------------------------------------------- */

struct iv_probe {
	const struct mp_interval *ivs;
	uint32_t slot, ah, fh;
};

static bool iv_eq(const void *ctx, uint32_t idx)
{
	const struct iv_probe *p = ctx;
	const struct mp_interval *iv = &p->ivs[idx];
	return iv->slot == p->slot && iv->alloc == p->ah && iv->free == p->fh;
}

static uint64_t iv_hash(uint32_t slot, uint32_t ah, uint32_t fh)
{
	return mp_hash_combine(mp_hash_u64((uint64_t)ah << 32 | fh), slot);
}

/* Add to the interval (slot, ah, fh) of a set; returns its index. */
static void iv_add(struct mp_interval **ivs, size_t *n, size_t *alloc, struct mp_idxset *set,
		   uint32_t slot, uint32_t ah, uint32_t fh, uint64_t bytes, uint64_t count)
{
	struct iv_probe probe = { *ivs, slot, ah, fh };
	uint64_t h = iv_hash(slot, ah, fh);
	uint32_t idx = mp_idxset_find(set, h, iv_eq, &probe);
	if (idx == MP_NONE) {
		ALLOC_GROW(*ivs, *n + 1, *alloc);
		idx = (uint32_t)(*n)++;
		(*ivs)[idx] = (struct mp_interval){ slot, ah, fh, { 0, 0 } };
		mp_idxset_add(set, h, idx);
	}
	(*ivs)[idx].c.bytes += bytes;
	(*ivs)[idx].c.count += count;
}

static void add_interval(struct mp_analysis *a, uint32_t slot, uint32_t ah, uint32_t fh,
			 uint64_t bytes, uint64_t count)
{
	if (ah == fh)
		return; /* never live at a high-water mark */
	iv_add(&a->intervals, &a->nintervals, &a->p->intervals_alloc, &a->p->ivset, slot, ah, fh,
	       bytes, count);
}

/* The current bucket's pending frees all get the free half fh. */
static void flush_pending(struct mp_analysis *a, uint32_t fh)
{
	struct mp_analysis_private *p = a->p;
	if (!p->npend)
		return;
	for (size_t i = 0; i < p->npend; i++)
		add_interval(a, p->pend[i].slot, p->pend[i].alloc, fh, p->pend[i].c.bytes,
			     p->pend[i].c.count);
	p->npend = 0;
	mp_idxset_release(&p->pendset);
}

/*
 * The half of an event (2b at or before bucket b's high-water mark, 2b + 1
 * after), or MP_NONE for an event of the current bucket after its
 * high-water mark so far, whose half is not known yet.
 */
static uint32_t half_of(const struct mp_analysis *a, uint64_t event)
{
	const struct mp_analysis_private *p = a->p;
	size_t lo = 0, hi = a->nsamples;
	if (event > p->cur_start)
		return event <= p->cur_hwm ? 2 * (uint32_t)a->nsamples : MP_NONE;
	/* The last completed bucket that started before the event. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->ev_start[mid] < event)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo = lo ? lo - 1 : 0;
	return 2 * (uint32_t)lo + (event > p->ev_hwm[lo]);
}

/*
 * Buckets 2i and 2i + 1 merged into bucket i: its high-water mark is the
 * higher of theirs (the first on a tie), x_wins[i] when that is 2i's.
 */
static uint32_t merged_half(uint32_t h, const bool *x_wins)
{
	uint32_t old = h / 2, i = old / 2;
	if (h == MP_NONE)
		return h;
	if (!(old & 1))
		return x_wins[i] ? 2 * i + (h & 1) : 2 * i;
	return x_wins[i] ? 2 * i + 1 : 2 * i + (h & 1);
}

/* After the buckets were merged in pairs: renumber every interval's halves and merge equal ones. */
static void rebucket_intervals(struct mp_analysis *a, const bool *x_wins)
{
	struct mp_interval *old = a->intervals;
	size_t n = a->nintervals;
	a->intervals = NULL;
	a->nintervals = 0;
	a->p->intervals_alloc = 0;
	mp_idxset_release(&a->p->ivset);
	for (size_t i = 0; i < n; i++)
		add_interval(a, old[i].slot, merged_half(old[i].alloc, x_wins),
			     merged_half(old[i].free, x_wins), old[i].c.bytes, old[i].c.count);
	free(old);
}

static void push_sample(struct mp_analysis *a, const struct mp_sample *s)
{
	struct mp_analysis_private *p = a->p;
	size_t cap = a->opts.max_memory_records;
	bool *x_wins;
	ALLOC_GROW(a->samples, a->nsamples + 1, a->samples_alloc);
	if (p->ev_alloc < a->samples_alloc) {
		p->ev_start = xreallocarray(p->ev_start, a->samples_alloc, sizeof(*p->ev_start));
		p->ev_hwm = xreallocarray(p->ev_hwm, a->samples_alloc, sizeof(*p->ev_hwm));
		p->ev_alloc = a->samples_alloc;
	}
	p->ev_start[a->nsamples] = p->cur_start;
	p->ev_hwm[a->nsamples] = p->cur_hwm;
	a->samples[a->nsamples++] = *s;
	if (a->nsamples < cap)
		return;
	/* Full (cap is even): merge neighbours, keeping the maxima, and double the stride. */
	x_wins = xcalloc(a->nsamples / 2, sizeof(*x_wins));
	for (size_t i = 0; i < a->nsamples / 2; i++) {
		const struct mp_sample *x = &a->samples[2 * i], *y = &a->samples[2 * i + 1];
		struct mp_sample m = *y;
		x_wins[i] = x->heap_max >= y->heap_max;
		m.rss = x->rss > y->rss ? x->rss : y->rss;
		m.heap_max = x_wins[i] ? x->heap_max : y->heap_max;
		m.hwm_time_us = x_wins[i] ? x->hwm_time_us : y->hwm_time_us;
		p->ev_start[i] = p->ev_start[2 * i];
		p->ev_hwm[i] = x_wins[i] ? p->ev_hwm[2 * i] : p->ev_hwm[2 * i + 1];
		a->samples[i] = m;
	}
	a->nsamples /= 2;
	a->ticks_per_sample *= 2;
	if (a->opts.flags & MP_ANALYSIS_TEMPORAL)
		rebucket_intervals(a, x_wins);
	free(x_wins);
}

/* The current bucket is complete as sample s: push it and start the next one. */
static void end_bucket(struct mp_analysis *a, struct mp_sample *s)
{
	struct mp_analysis_private *p = a->p;
	flush_pending(a, 2 * (uint32_t)a->nsamples + 1);
	s->hwm_time_us = p->cur_hwm_time;
	push_sample(a, s);
	p->cur_start = p->cur_hwm = a->n_events;
	p->cur_max = p->heap;
	p->cur_hwm_time = p->last_time_us;
}

static void merge_pending(struct mp_analysis *a, uint64_t time_us, uint64_t rss)
{
	struct mp_analysis_private *p = a->p;
	struct mp_sample *s = &p->pending;
	if (!p->pending_ticks) {
		s->rss = rss;
		s->heap_max = p->tick_max;
	} else {
		if (rss > s->rss)
			s->rss = rss;
		if (p->tick_max > s->heap_max)
			s->heap_max = p->tick_max;
	}
	s->time_us = time_us;
	s->heap = p->heap;
}

static void on_tick(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	merge_pending(a, rec->u.tick.time_us, rec->u.tick.rss);
	p->pending_ticks++;
	p->last_time_us = rec->u.tick.time_us;
	p->last_rss = rec->u.tick.rss;
	p->tick_max = p->heap;
	p->events_since_tick = false;
	a->n_ticks++;
	if (p->pending_ticks == a->ticks_per_sample) {
		struct mp_sample s = p->pending;
		p->pending_ticks = 0;
		end_bucket(a, &s);
	}
}

/* ---- allocations and frees ---------------------------------------------- */

/* The event of a heap block's allocation (0 unless temporal), forgotten as it goes. */
static uint64_t take_block_event(struct mp_analysis *a, uint64_t addr)
{
	uint64_t event = 0;
	if (!(a->opts.flags & MP_ANALYSIS_TEMPORAL))
		return 0;
	mp_intmap_take(&a->p->block_events, addr, &event);
	return event;
}

/* What an allocation leaves behind when it is freed (in whole or, for mappings, in part). */
struct release {
	uint32_t slot, thread;
	uint64_t event, serial, size;
};

/*
 * An allocation is gone: count it temporary when the thread that made it
 * frees it within the threshold. Implicit releases (an address reused
 * without a free) are not.
 */
static void allocation_gone(struct mp_analysis *a, const struct release *r, uint32_t freer,
			    bool explicit)
{
	const struct mp_thread *t = &a->threads[r->thread];
	if (explicit && freer == r->thread && t->n_allocs - r->serial <= a->opts.temporary_threshold) {
		a->slots[r->slot].temporary.bytes += r->size;
		a->slots[r->slot].temporary.count++;
		a->totals.temporary_bytes += r->size;
		a->totals.temporary_count++;
	}
}

/*
 * Take bytes (and, when count, one block) of an allocation made at event
 * `event` off the heap: all of a block, or a piece of a mapping.
 */
static void heap_release(struct mp_analysis *a, uint32_t slot, uint32_t thread, uint64_t bytes,
			 bool count, uint64_t event)
{
	struct mp_analysis_private *p = a->p;
	if (a->opts.flags & MP_ANALYSIS_TEMPORAL) {
		/*
		 * Freed now, so after the current bucket's high-water mark so far:
		 * pending until the bucket ends or the heap rises higher. Allocated
		 * in this bucket after that mark too, the bytes have both halves
		 * equal whatever comes: live at no mark.
		 */
		uint32_t ah = half_of(a, event);
		if (ah != MP_NONE)
			iv_add(&p->pend, &p->npend, &p->pend_alloc, &p->pendset, slot, ah, MP_NONE,
			       bytes, count ? 1 : 0);
	}
	slot_change(a, slot, -(int64_t)bytes, count ? -1 : 0);
	p->heap -= bytes;
	a->threads[thread].live.bytes -= bytes;
	if (count) {
		p->live_count--;
		a->threads[thread].live.count--;
	}
}

struct unmap_ctx {
	struct mp_analysis *a;
	uint32_t freer;
	bool explicit;
};

static void on_unmap_piece(void *ctx, uint64_t value, uint64_t bytes, int pieces)
{
	struct unmap_ctx *u = ctx;
	struct mp_analysis *a = u->a;
	struct origin *o = &a->p->origins[value];
	o->pieces += (uint32_t)pieces;
	heap_release(a, o->slot, o->thread, bytes, o->pieces == 0, o->event);
	if (!o->pieces) {
		struct release r = { o->slot, o->thread, o->event, o->serial, o->size };
		allocation_gone(a, &r, u->freer, u->explicit);
		o->serial = a->p->free_origin;
		a->p->free_origin = (uint32_t)value;
	}
}

static uint64_t range_end(uint64_t addr, uint64_t size)
{
	return addr + size < addr ? UINT64_MAX : addr + size;
}

static void on_alloc(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t kind = rec->u.ev.kind, th, slot, stack;
	uint64_t addr = rec->u.ev.addr, size = rec->u.ev.size, serial;
	bool mapping = mp_kind_is_mapping(kind);
	struct mp_kind_totals *k;
	struct mp_thread *t;

	if (mapping && (a->opts.flags & MP_ANALYSIS_NO_MMAP)) {
		a->totals.n_ignored++;
		return;
	}
	th = thread_of(a, rec->thread);
	stack = rec->u.ev.stack <= a->ntraces ? (uint32_t)rec->u.ev.stack : 0;
	slot = get_slot(a, stack, (a->opts.flags & MP_ANALYSIS_SPLIT_THREADS) ? th : MP_THREAD_MERGED,
			kind);
	a->totals.n_allocs++;
	a->totals.bytes_allocated += size;
	a->totals.hist[hist_bucket(size)]++;
	if (a->totals.n_allocs == 1 || size < a->totals.min_size)
		a->totals.min_size = size;
	if (size > a->totals.max_size)
		a->totals.max_size = size;
	k = kind_totals(a, kind);
	k->n_allocs++;
	k->bytes_allocated += size;
	t = &a->threads[th];
	t->n_allocs++;
	t->bytes_allocated += size;
	serial = t->n_allocs;
	a->slots[slot].allocated.bytes += size;
	a->slots[slot].allocated.count++;

	if (mapping) {
		struct unmap_ctx u = { a, th, false };
		uint64_t end = range_end(addr, size);
		uint32_t o;
		if (!size)
			return; /* nothing mapped, nothing live */
		/* A mapping replaces whatever was mapped there (MAP_FIXED, mremap). */
		mp_rangemap_remove(&p->maps, addr, end, on_unmap_piece, &u);
		if (p->free_origin != MP_NONE) {
			o = p->free_origin;
			p->free_origin = (uint32_t)p->origins[o].serial;
		} else {
			ALLOC_GROW(p->origins, p->norigins + 1, p->origins_alloc);
			o = (uint32_t)p->norigins++;
		}
		p->origins[o] = (struct origin){ size, serial, a->n_events, slot, th, 1 };
		mp_rangemap_insert(&p->maps, addr, end, o);
	} else {
		struct mp_block *b = mp_blocks_find(&p->blocks, addr);
		if (b) {
			/* A second allocation at a live address: the free was not seen. */
			struct release r = { b->slot1 - 1, b->thread, take_block_event(a, addr),
					     b->serial, b->size };
			heap_release(a, r.slot, r.thread, r.size, true, r.event);
			mp_blocks_delete(&p->blocks, b);
			allocation_gone(a, &r, th, false);
		}
		b = mp_blocks_insert(&p->blocks, addr);
		b->size = size;
		b->serial = serial;
		b->slot1 = slot + 1;
		b->thread = th;
		if (a->opts.flags & MP_ANALYSIS_TEMPORAL)
			mp_intmap_put(&p->block_events, addr, a->n_events);
	}
	slot_change(a, slot, (int64_t)size, 1);
	p->heap += size;
	p->live_count++;
	t = &a->threads[th];
	t->live.bytes += size;
	t->live.count++;
	if (p->heap > a->totals.peak_bytes) {
		/* A new peak: every slot's current value is its value at the peak. */
		p->epoch++;
		a->totals.peak_bytes = p->heap;
		a->totals.peak_count = p->live_count;
		a->totals.peak_time_us = p->last_time_us;
		a->totals.peak_ticks = a->n_ticks;
		a->totals.peak_event = a->n_events;
	}
	if (p->heap > p->tick_max)
		p->tick_max = p->heap;
	if (p->heap > p->cur_max) {
		/* A new high-water mark of the bucket: what was freed so far came before it. */
		p->cur_max = p->heap;
		p->cur_hwm = a->n_events;
		p->cur_hwm_time = p->last_time_us;
		if (a->opts.flags & MP_ANALYSIS_TEMPORAL)
			flush_pending(a, 2 * (uint32_t)a->nsamples);
	}
}

static void on_free(struct mp_analysis *a, const struct mp_record *rec)
{
	struct mp_analysis_private *p = a->p;
	uint32_t kind = rec->u.ev.kind, th;
	uint64_t addr = rec->u.ev.addr;

	if (mp_kind_is_mapping(kind) && (a->opts.flags & MP_ANALYSIS_NO_MMAP)) {
		a->totals.n_ignored++;
		return;
	}
	if (!rec->u.ev.ranged && !addr) {
		a->totals.n_null_frees++;
		return;
	}
	th = thread_of(a, rec->thread);
	if (rec->u.ev.ranged) {
		struct unmap_ctx u = { a, th, true };
		if (!mp_rangemap_remove(&p->maps, addr, range_end(addr, rec->u.ev.size),
					on_unmap_piece, &u)) {
			a->totals.n_unknown_frees++;
			return;
		}
	} else {
		struct mp_block *b = mp_blocks_find(&p->blocks, addr);
		struct release r;
		if (!b) {
			a->totals.n_unknown_frees++;
			return;
		}
		r = (struct release){ b->slot1 - 1, b->thread, take_block_event(a, addr), b->serial,
				      b->size };
		mp_blocks_delete(&p->blocks, b);
		heap_release(a, r.slot, r.thread, r.size, true, r.event);
		allocation_gone(a, &r, th, true);
	}
	a->totals.n_frees++;
	kind_totals(a, kind)->n_frees++;
	a->threads[th].n_frees++;
}

/* ---- the pass ----------------------------------------------------------- */

void mp_analysis_init(struct mp_analysis *a, const struct mp_analysis_opts *opts)
{
	struct mp_analysis_private *p;
	memset(a, 0, sizeof(*a));
	if (opts)
		a->opts = *opts;
	else
		a->opts = (struct mp_analysis_opts)MP_ANALYSIS_OPTS_INIT;
	if (!a->opts.max_memory_records)
		a->opts.max_memory_records = MP_DEFAULT_MAX_MEMORY_RECORDS;
	if (a->opts.max_memory_records < 2)
		a->opts.max_memory_records = 2;
	/* Full series merge in pairs. */
	a->opts.max_memory_records &= ~(size_t)1;
	a->ticks_per_sample = 1;
	mp_strtab_init(&a->strings);
	p = a->p = xcalloc(1, sizeof(*p));
	mp_blocks_init(&p->blocks);
	mp_rangemap_init(&p->maps);
	mp_intmap_init(&p->block_events);
	mp_idxset_init(&p->pendset);
	p->free_origin = MP_NONE;
	mp_idxset_init(&p->slotset);
	mp_idxset_init(&p->locset);
	mp_idxset_init(&p->ivset);
	mp_intmap_init(&p->ipmap);
	mp_intmap_init(&p->modmap);
	p->traces = xcalloc(1, sizeof(*p->traces));
	p->traces_alloc = 1;
	/* Location 0 is the single frame of allocations without a stack. */
	location(a, intern(a, "<unknown stack>"), 0, 0, MP_NONE, MP_LOC_NO_STACK);
}

/* The pass's working state, not needed once it is finished. */
static void release_pass_state(struct mp_analysis_private *p)
{
	mp_blocks_release(&p->blocks);
	mp_rangemap_release(&p->maps);
	mp_intmap_release(&p->block_events);
	mp_idxset_release(&p->pendset);
	free(p->pend);
	p->pend = NULL;
	p->npend = p->pend_alloc = 0;
	free(p->ev_start);
	free(p->ev_hwm);
	p->ev_start = p->ev_hwm = NULL;
	p->ev_alloc = 0;
	free(p->origins);
	p->origins = NULL;
	p->norigins = p->origins_alloc = 0;
	mp_idxset_release(&p->slotset);
	free(p->stack_slot);
	p->stack_slot = NULL;
	p->stack_slot_alloc = 0;
	mp_idxset_release(&p->ivset);
	mp_intmap_release(&p->ipmap);
	mp_intmap_release(&p->modmap);
	free(p->segs);
	p->segs = NULL;
	free(p->sidmap);
	p->sidmap = NULL;
	p->nsid = p->sid_alloc = 0;
	free(p->thread_of);
	p->thread_of = NULL;
	p->thread_of_alloc = 0;
	free(p->symbuf);
	p->symbuf = NULL;
}

void mp_analysis_release(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	if (p) {
		release_pass_state(p);
		mp_idxset_release(&p->locset);
		free(p->traces);
		free(p->ips);
		free(p->frames);
		free(p->site_memo);
		free(p);
	}
	for (size_t i = 0; i < a->nmodules; i++) {
		free(a->modules[i].build_id);
		free(a->modules[i].seg);
	}
	free(a->modules);
	mp_header_release(&a->header);
	mp_strtab_release(&a->strings);
	free(a->locs);
	free(a->threads);
	free(a->slots);
	free(a->kinds);
	free(a->samples);
	free(a->intervals);
	memset(a, 0, sizeof(*a));
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void mp_analysis_header(struct mp_analysis *a, const struct mp_header *h)
{
	mp_header_release(&a->header);
	a->header = *h;
	a->header.exe = dup_or_null(h->exe);
	a->header.hostname = dup_or_null(h->hostname);
	a->header.cwd = dup_or_null(h->cwd);
	a->header.tracker_version = dup_or_null(h->tracker_version);
	if (h->argv) {
		a->header.argv = xcalloc(h->argc + 1, sizeof(char *));
		for (size_t i = 0; i < h->argc; i++)
			a->header.argv[i] = xstrdup(h->argv[i]);
	}
	if (h->mode == MP_MODE_ATTACH)
		a->attached = true;
}

static void seen_time(struct mp_analysis *a, const struct mp_marker *m)
{
	if ((m->has & MP_HAS_TIME) && m->time_us > a->duration_us)
		a->duration_us = m->time_us;
}

void mp_analysis_record(struct mp_analysis *a, const struct mp_record *rec)
{
	if (a->finished)
		return;
	a->n_records++;
	switch (rec->type) {
	case MP_REC_ALLOC:
		a->n_events++;
		a->p->events_since_tick = true;
		on_alloc(a, rec);
		break;
	case MP_REC_FREE:
		a->n_events++;
		a->p->events_since_tick = true;
		on_free(a, rec);
		break;
	case MP_REC_TRACE:
		on_trace(a, rec);
		break;
	case MP_REC_TICK:
		on_tick(a, rec);
		break;
	case MP_REC_THREAD:
		on_thread(a, rec);
		break;
	case MP_REC_MODULE:
		on_module(a, rec);
		break;
	case MP_REC_MODULE_UNLOAD:
		on_module_unload(a, rec->u.unload.id);
		break;
	case MP_REC_STRING:
		on_string(a, rec);
		break;
	case MP_REC_SYMBOL:
		on_symbol(a, rec);
		break;
	case MP_REC_HEADER:
		mp_analysis_header(a, rec->u.header);
		break;
	case MP_REC_TRAILER:
		a->trailer = *rec->u.trailer;
		break;
	case MP_REC_ATTACH:
		a->attached = true;
		a->attach_time_us = rec->u.marker.time_us;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_DETACH:
		a->detached = true;
		a->detach_time_us = rec->u.marker.time_us;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_LOST:
		a->totals.n_lost += rec->u.marker.count;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_EXIT:
		if (rec->u.marker.has & MP_HAS_STATUS) {
			a->has_exit_marker = true;
			a->exit_marker_status = rec->u.marker.status;
		}
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_FORK:
		a->n_forks++;
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_MESSAGE:
		seen_time(a, &rec->u.marker);
		break;
	case MP_REC_SWITCH:
	case MP_REC_UNKNOWN:
		break;
	}
}

static int kind_cmp(const void *x, const void *y)
{
	const struct mp_kind_totals *a = x, *b = y;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static void compute_sites(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	p->site_memo = xreallocarray(NULL, a->ntraces + 1, sizeof(*p->site_memo));
	p->site_memo[0] = MP_NONE;
	/* Parents have lower numbers than their children: one forward sweep. */
	for (size_t n = 1; n <= a->ntraces; n++) {
		const uint32_t *locs;
		size_t k = mp_analysis_node_frames(a, (uint32_t)n, &locs);
		uint32_t site = MP_NONE;
		for (size_t i = 0; i < k && site == MP_NONE; i++)
			if (!(a->locs[locs[i]].flags & (MP_LOC_RUNTIME | MP_LOC_TRUNCATED)))
				site = locs[i];
		p->site_memo[n] = site != MP_NONE ? site : p->site_memo[p->traces[n].parent];
	}
}

static void live_block_interval(struct mp_analysis *a, uint32_t slot, uint64_t event,
				uint64_t size, uint64_t count)
{
	add_interval(a, slot, half_of(a, event), MP_NONE, size, count);
}

static void live_block(void *ctx, const struct mp_block *b)
{
	struct mp_analysis *a = ctx;
	live_block_interval(a, b->slot1 - 1, take_block_event(a, b->key), b->size, 1);
}

static void live_mapping_interval(void *ctx, uint64_t start, uint64_t end, uint64_t value)
{
	struct mp_analysis *a = ctx;
	struct origin *o = &a->p->origins[value];
	/* The bytes of every piece left; the mapping counted once (pieces 0 once counted). */
	live_block_interval(a, o->slot, o->event, end - start, o->pieces ? 1 : 0);
	o->pieces = 0;
}

void mp_analysis_finish(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	if (a->finished)
		return;
	a->finished = true;
	/* The trailer knows; without one, the last time any record gave. */
	if (p->last_time_us > a->duration_us)
		a->duration_us = p->last_time_us;
	if (a->trailer.present && a->trailer.duration_us)
		a->duration_us = a->trailer.duration_us;
	if (a->trailer.present && a->trailer.n_lost > a->totals.n_lost)
		a->totals.n_lost = a->trailer.n_lost;
	/* The last point: the end of the capture, when events followed the last tick. */
	if (p->pending_ticks || p->events_since_tick) {
		uint64_t end = a->duration_us > p->last_time_us ? a->duration_us : p->last_time_us;
		merge_pending(a, p->events_since_tick ? end : p->last_time_us,
			      p->pending_ticks ? p->pending.rss : p->last_rss);
		end_bucket(a, &p->pending);
	}
	for (size_t i = 0; i < a->nslots; i++) {
		struct mp_slot *s = &a->slots[i];
		s->peak = s->epoch_ == p->epoch ? s->at_peak_ : s->leaked;
		a->totals.leaked_bytes += s->leaked.bytes;
		a->totals.leaked_count += s->leaked.count;
	}
	compute_sites(a);
	for (size_t i = 0; i < a->nslots; i++)
		a->slots[i].site = mp_analysis_site(a, a->slots[i].stack);
	if (a->opts.flags & MP_ANALYSIS_TEMPORAL) {
		mp_blocks_each(&p->blocks, live_block, a);
		mp_rangemap_each(&p->maps, live_mapping_interval, a);
	}
	qsort(a->kinds, a->nkinds, sizeof(*a->kinds), kind_cmp);
	release_pass_state(p);
}

/*
 * Records come in batches from a thread that reads ahead, so decoding and
 * decompressing overlap the analysis; within a batch, the table entries an
 * event will touch (its block, its stack's slot) are prefetched a few events
 * ahead, because on large captures those lookups miss the cache.
 *
 * prefetch_event must be inlined: as a function of its own, GCC finds it has
 * no side effects (a prefetch is none) and drops every call to it.
 */
#define PREFETCH_AHEAD 8

static inline __attribute__((always_inline)) void prefetch_event(const struct mp_analysis *a,
								  const struct mp_record *rec)
{
	const struct mp_analysis_private *p = a->p;
	if (rec->type != MP_REC_ALLOC && rec->type != MP_REC_FREE)
		return;
	mp_blocks_prefetch(&p->blocks, rec->u.ev.addr);
	if (rec->type == MP_REC_ALLOC && rec->u.ev.stack < p->stack_slot_alloc) {
		uint32_t s = p->stack_slot[rec->u.ev.stack];
		if (s)
			__builtin_prefetch(&a->slots[s - 1]);
	}
}

static void run_batch(struct mp_analysis *a, const struct mp_record *recs, size_t n)
{
	for (size_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
		prefetch_event(a, &recs[i]);
	for (size_t i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			prefetch_event(a, &recs[i + PREFETCH_AHEAD]);
		mp_analysis_record(a, &recs[i]);
	}
}

int mp_analysis_read(struct mp_analysis *a, struct mp_reader *r, struct strbuf *warn)
{
	const struct mp_analysis_progress *prog = a->opts.progress;
	struct mp_readahead *ra;
	struct mp_record rec;
	int ret = 0;

	mp_analysis_header(a, mp_reader_header(r));
	ra = mp_readahead_start(r);
	if (ra) {
		struct mp_batch_view v;
		while (mp_readahead_next(ra, &v)) {
			run_batch(a, v.recs, v.n);
			if (prog && prog->update)
				prog->update(prog->ctx, v.offset, v.n_records);
		}
		mp_readahead_finish(ra);
	} else {
		while (mp_reader_next(r, &rec)) {
			mp_analysis_record(a, &rec);
			if (prog && prog->update && !(a->n_records & 0xfff))
				prog->update(prog->ctx, mp_reader_offset(r), r->n_records);
		}
	}
	if (prog && prog->done)
		prog->done(prog->ctx);
	if (r->status != MP_READ_OK) {
		if (warn) {
			strbuf_reset(warn);
			strbuf_addstr(warn, r->err.buf);
		}
		ret = 1;
	}
	mp_analysis_finish(a);
	return ret;
}

int mp_analysis_read_file(struct mp_analysis *a, const char *path, struct strbuf *err)
{
	struct mp_reader r;
	int ret;
	if (mp_reader_open(&r, path) < 0) {
		if (err) {
			strbuf_reset(err);
			strbuf_addstr(err, r.err.buf);
		}
		mp_reader_release(&r);
		return -1;
	}
	if (a->opts.progress && a->opts.progress->start)
		a->opts.progress->start(a->opts.progress->ctx, r.file_size);
	ret = mp_analysis_read(a, &r, err);
	mp_reader_release(&r);
	return ret;
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

uint32_t mp_analysis_site(const struct mp_analysis *a, uint32_t stack)
{
	const uint32_t *locs;
	if (!stack || stack > a->ntraces)
		return MP_LOCATION_NO_STACK;
	if (a->p->site_memo && a->p->site_memo[stack] != MP_NONE)
		return a->p->site_memo[stack];
	/* Every frame is in a runtime library: the innermost one. */
	mp_analysis_node_frames(a, stack, &locs);
	return locs[0];
}

void mp_analysis_thread_label(const struct mp_analysis *a, uint32_t thread, struct strbuf *sb)
{
	const struct mp_thread *t;
	if (thread == MP_THREAD_MERGED || thread >= a->nthreads) {
		strbuf_addstr(sb, "merged thread");
		return;
	}
	t = &a->threads[thread];
	strbuf_addf(sb, "%llu", (unsigned long long)t->tid);
	if (t->name)
		strbuf_addf(sb, " (%s)", mp_analysis_string(a, t->name));
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

const struct mp_kind_totals *mp_analysis_kind(const struct mp_analysis *a, uint32_t kind)
{
	for (size_t i = 0; i < a->nkinds; i++)
		if (a->kinds[i].kind == kind)
			return &a->kinds[i];
	return NULL;
}

struct mp_counts mp_analysis_view_total(const struct mp_analysis *a, enum mp_view view)
{
	struct mp_counts t = { 0, 0 };
	for (size_t i = 0; i < a->nslots; i++) {
		struct mp_counts c = mp_slot_counts(&a->slots[i], view);
		t.bytes += c.bytes;
		t.count += c.count;
	}
	return t;
}

/* ---- flat aggregations -------------------------------------------------- */

struct group_probe {
	const struct mp_group_row *rows;
	const struct mp_group_row *want;
};

static bool group_eq(const void *ctx, uint32_t idx)
{
	const struct group_probe *p = ctx;
	const struct mp_group_row *r = &p->rows[idx], *w = p->want;
	return r->stack == w->stack && r->site == w->site && r->module == w->module &&
	       r->kind == w->kind && r->thread == w->thread;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return x < y ? -1 : x > y;
}

static int row_cmp(const struct mp_group_row *x, const struct mp_group_row *y,
		   enum mp_sort_key key)
{
	uint64_t x1 = key == MP_SORT_BYTES ? x->c.bytes : x->c.count;
	uint64_t y1 = key == MP_SORT_BYTES ? y->c.bytes : y->c.count;
	uint64_t x2 = key == MP_SORT_BYTES ? x->c.count : x->c.bytes;
	uint64_t y2 = key == MP_SORT_BYTES ? y->c.count : y->c.bytes;
	int c;
	if (x1 != y1)
		return x1 > y1 ? -1 : 1;
	if (x2 != y2)
		return x2 > y2 ? -1 : 1;
	if ((c = cmp_u32(x->site, y->site)) || (c = cmp_u32(x->module, y->module)) ||
	    (c = cmp_u32(x->stack, y->stack)) || (c = cmp_u32(x->kind, y->kind)))
		return c;
	return cmp_u32(x->thread, y->thread);
}

static int row_cmp_bytes(const void *x, const void *y)
{
	return row_cmp(x, y, MP_SORT_BYTES);
}

static int row_cmp_count(const void *x, const void *y)
{
	return row_cmp(x, y, MP_SORT_COUNT);
}

void mp_group_sort(struct mp_group_row *rows, size_t n, enum mp_sort_key key)
{
	qsort(rows, n, sizeof(*rows), key == MP_SORT_BYTES ? row_cmp_bytes : row_cmp_count);
}

size_t mp_analysis_group(const struct mp_analysis *a, enum mp_view view, unsigned by,
			 enum mp_sort_key key, struct mp_group_row **rows)
{
	struct mp_idxset set;
	struct mp_group_row *out = NULL;
	size_t n = 0, alloc = 0;

	mp_idxset_init(&set);
	for (size_t i = 0; i < a->nslots; i++) {
		const struct mp_slot *s = &a->slots[i];
		struct mp_counts c = mp_slot_counts(s, view);
		struct mp_group_row want;
		struct group_probe probe = { NULL, &want };
		uint64_t h;
		uint32_t idx;
		if (!c.count)
			continue;
		want.stack = (by & MP_BY_STACK) ? s->stack : MP_NONE;
		want.site = (by & MP_BY_SITE) ? s->site : MP_NONE;
		want.module = (by & MP_BY_MODULE) ? a->locs[s->site].module : MP_NONE;
		want.kind = (by & MP_BY_KIND) ? s->kind : MP_NONE;
		want.thread = (by & MP_BY_THREAD) ? s->thread : MP_NONE;
		h = mp_hash_u64(want.stack);
		h = mp_hash_combine(h, want.site);
		h = mp_hash_combine(h, want.module);
		h = mp_hash_combine(h, want.kind);
		h = mp_hash_combine(h, want.thread);
		probe.rows = out;
		idx = mp_idxset_find(&set, h, group_eq, &probe);
		if (idx == MP_NONE) {
			ALLOC_GROW(out, n + 1, alloc);
			idx = (uint32_t)n++;
			want.c.bytes = want.c.count = 0;
			out[idx] = want;
			mp_idxset_add(&set, h, idx);
		}
		out[idx].c.bytes += c.bytes;
		out[idx].c.count += c.count;
	}
	mp_idxset_release(&set);
	mp_group_sort(out, n, key);
	*rows = out;
	return n;
}
