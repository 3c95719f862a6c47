/*
 * Several captures read as one analysis: the processes of a process tree
 * (a program and the children it forked), their records in the order of
 * time. Each capture keeps its own state of the pass (its blocks, its
 * address space's modules, its ids of strings, threads and trace nodes),
 * swapped into the analysis while its records are read; what they share
 * (strings, locations, trace nodes, threads, slots, the heap and its time
 * series) is the analysis's.
 */
#include <config.h>
#include "lib/analysis/analysis-private.h"

#include <stdlib.h>
#include <string.h>

#include "lib/format/pyframe.h"
#include "lib/util/strbuf.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

/* A capture's own state of the pass (the fields of struct mp_analysis_private it owns). */
struct saved {
	struct mp_header header;
	struct mp_blocks blocks;
	struct mp_rangemap maps;
	struct origin *origins;
	size_t norigins, origins_alloc;
	uint32_t free_origin;
	struct mp_intmap ipmap, modmap;
	uint32_t *orphans;
	size_t norphans, orphans_alloc;
	uint32_t *sidmap;
	size_t nsid, sid_alloc;
	struct segref *segs;
	size_t nsegs, segs_alloc;
	bool segs_dirty;
	uint32_t modgen;
	uint32_t *thread_of;
	size_t thread_of_alloc;
};

struct source {
	const char *path;
	uint64_t start;                 /* epoch microseconds */
	uint64_t end;                   /* the latest time seen (epoch microseconds) */
	uint64_t now;                   /* its latest tick (epoch microseconds) */
	uint64_t rss;                   /* its latest tick's */
	uint64_t file_size;
	struct mp_reader r;
	bool open, done;
	struct saved st;
	uint32_t *nodes;                /* its trace node -> the analysis's */
	size_t nnodes, nodes_alloc;
	uint32_t no_stack;              /* with split processes: its <unknown stack> node */
	struct mp_record *ev;           /* events waiting for the end of their chunk */
	size_t nev, ev_alloc;
	struct mp_record point;         /* the tick or marker that ends the chunk */
	struct mp_record *win;          /* the reader's latest window, read up to wpos */
	size_t wpos, wn;
	uint64_t key;                   /* when the chunk ends (epoch microseconds) */
	bool have_point, at_end;
	uint32_t *mods;                 /* the modules of its MODULE records */
	bool *mods_loaded;
	size_t nmods, mods_alloc;
};

struct mp_family {
	struct source *src;
	size_t n;
	size_t cur;                     /* the source swapped in, or n */
	uint64_t start;                 /* of process 0 */
	uint64_t last_tick;             /* since start: ticks never go back */
	uint64_t rss;                   /* the sum of the processes' latest */
	uint32_t *node_proc;            /* the analysis's trace node -> its process */
	size_t node_proc_alloc;
};

/* ---- swapping a capture's state in and out ------------------------------ */

#define MOVE(dst, src, field) ((dst)->field = (src)->field)
#define EACH_FIELD(X)                                                                          \
	X(blocks) X(maps) X(origins) X(norigins) X(origins_alloc) X(free_origin) X(ipmap)     \
	X(modmap) X(orphans) X(norphans) X(orphans_alloc) X(sidmap) X(nsid) X(sid_alloc)      \
	X(segs) X(nsegs) X(segs_alloc) X(segs_dirty) X(modgen) X(thread_of) X(thread_of_alloc)

static void saved_init(struct saved *st);

static void swap_out(struct mp_analysis *a)
{
	struct mp_family *f = a->p->family;
	struct saved empty;
	struct source *s;
	if (f->cur == f->n)
		return;
	s = &f->src[f->cur];
#define OUT(field) MOVE(&s->st, a->p, field);
	EACH_FIELD(OUT)
#undef OUT
	/* The pass's own state is none of theirs until the next comes in. */
	saved_init(&empty);
#define EMPTY(field) MOVE(a->p, &empty, field);
	EACH_FIELD(EMPTY)
#undef EMPTY
	s->st.header = a->header;
	memset(&a->header, 0, sizeof(a->header));
	/* Its modules are not loaded in the next one's address space. */
	for (size_t i = 0; i < s->nmods; i++) {
		s->mods_loaded[i] = a->modules[s->mods[i]].loaded;
		a->modules[s->mods[i]].loaded = false;
	}
	f->cur = f->n;
}

static void swap_in(struct mp_analysis *a, size_t i)
{
	struct mp_family *f = a->p->family;
	struct source *s = &f->src[i];
	if (f->cur == i)
		return;
	swap_out(a);
#define IN(field) MOVE(a->p, &s->st, field);
	EACH_FIELD(IN)
#undef IN
	a->header = s->st.header;
	for (size_t k = 0; k < s->nmods; k++)
		a->modules[s->mods[k]].loaded = s->mods_loaded[k];
	f->cur = i;
}

static void saved_init(struct saved *st)
{
	memset(st, 0, sizeof(*st));
	mp_blocks_init(&st->blocks);
	mp_rangemap_init(&st->maps);
	mp_intmap_init(&st->ipmap);
	mp_intmap_init(&st->modmap);
	st->free_origin = MP_NONE;
}

static void saved_release(struct saved *st)
{
	mp_header_release(&st->header);
	mp_blocks_release(&st->blocks);
	mp_rangemap_release(&st->maps);
	free(st->origins);
	mp_intmap_release(&st->ipmap);
	mp_intmap_release(&st->modmap);
	free(st->orphans);
	free(st->sidmap);
	free(st->segs);
	free(st->thread_of);
	memset(st, 0, sizeof(*st));
}

void mp_family_free(struct mp_family *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		struct source *s = &f->src[i];
		if (s->open)
			mp_reader_release(&s->r);
		if (i != f->cur)
			saved_release(&s->st);
		free(s->nodes);
		free(s->ev);
		free(s->win);
		free(s->mods);
		free(s->mods_loaded);
	}
	free(f->src);
	free(f->node_proc);
	free(f);
}

static uint32_t intern_buf(struct mp_analysis *a, const struct strbuf *sb)
{
	return mp_strtab_intern(&a->strings, sb->buf, sb->len);
}

/* Process i's names and place in time, from its header. */
static void set_process(struct mp_analysis *a, size_t i, const struct mp_header *h,
			const char *path, uint64_t start)
{
	struct mp_process *pr = &a->processes[i];
	struct strbuf sb = STRBUF_INIT;
	pr->pid = h->pid;
	pr->parent_pid = h->forked_from ? h->forked_from : h->ppid;
	pr->parent = MP_NONE;
	pr->location = MP_NONE;
	mp_process_command_name(h->argv, h->argc, h->exe, &sb);
	pr->name = intern_buf(a, &sb);
	pr->capture = mp_strtab_intern_str(&a->strings, path);
	pr->start_us = h->start_time_us > start ? h->start_time_us - start : 0;
	pr->sampling_interval = h->sampling_interval;
	mp_analysis_note_sampling(a, h->sampling_interval);
	strbuf_release(&sb);
}

/* Which process each one was forked from, among them. */
static void link_parents(struct mp_analysis *a)
{
	for (size_t i = 0; i < a->nprocesses; i++) {
		struct mp_process *pr = &a->processes[i];
		/* The latest one of that pid that started before it (pids are reused). */
		for (size_t k = 0; k < a->nprocesses; k++)
			if (k != i && a->processes[k].pid == pr->parent_pid &&
			    a->processes[k].start_us <= pr->start_us)
				pr->parent = (uint32_t)k;
	}
}

/* Each process's totals, from its threads. */
static void process_totals(struct mp_analysis *a)
{
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct mp_thread *t = &a->threads[i];
		struct mp_process *pr;
		if (t->process >= a->nprocesses)
			continue;
		pr = &a->processes[t->process];
		pr->n_allocs += t->n_allocs;
		pr->bytes_allocated += t->bytes_allocated;
		pr->n_frees += t->n_frees;
		pr->leaked.bytes += t->live.bytes;
		pr->leaked.count += t->live.count;
	}
}

/* ---- the pass ----------------------------------------------------------- */

#define WINDOW 64

static uint32_t new_node(struct mp_analysis *a, uint32_t parent, uint32_t ipinfo, uint32_t proc)
{
	struct mp_analysis_private *p = a->p;
	struct mp_family *f = p->family;
	size_t node = a->ntraces + 1;
	ALLOC_GROW(p->traces, node + 1, p->traces_alloc);
	p->traces[node].parent = parent;
	p->traces[node].ipinfo = ipinfo;
	a->ntraces = node;
	ALLOC_GROW(f->node_proc, node + 1, f->node_proc_alloc);
	f->node_proc[node] = proc;
	return (uint32_t)node;
}

static uint32_t global_node(const struct source *s, uint64_t local)
{
	return local && local < s->nnodes ? s->nodes[local] : 0;
}

static void on_trace(struct mp_analysis *a, struct source *s, const struct mp_record *rec)
{
	struct mp_family *f = a->p->family;
	struct mp_record t = *rec;
	size_t before = a->ntraces;
	uint64_t local = rec->u.trace.index;
	t.u.trace.index = a->ntraces + 1;
	t.u.trace.parent = global_node(s, rec->u.trace.parent);
	mp_frames_on_trace(a, &t);
	if (a->ntraces == before || local >= UINT32_MAX)
		return;
	ALLOC_GROW(f->node_proc, a->ntraces + 1, f->node_proc_alloc);
	f->node_proc[a->ntraces] = (uint32_t)(s - f->src);
	if (local >= s->nnodes) {
		size_t n = s->nnodes;
		ALLOC_GROW(s->nodes, local + 1, s->nodes_alloc);
		memset(s->nodes + n, 0, (local + 1 - n) * sizeof(*s->nodes));
		s->nnodes = local + 1;
	}
	s->nodes[local] = (uint32_t)a->ntraces;
}

static void on_tick(struct mp_analysis *a, struct source *s, const struct mp_record *rec)
{
	struct mp_family *f = a->p->family;
	struct mp_record t = *rec;
	uint64_t at = s->start + rec->u.tick.time_us;
	s->now = at;
	if (at > s->end)
		s->end = at;
	f->rss = f->rss - s->rss + rec->u.tick.rss;
	s->rss = rec->u.tick.rss;
	t.u.tick.time_us = at > f->start ? at - f->start : 0;
	if (t.u.tick.time_us < f->last_tick)
		t.u.tick.time_us = f->last_tick;
	t.u.tick.delta_us = t.u.tick.time_us - f->last_tick;
	t.u.tick.rss = f->rss;
	f->last_tick = t.u.tick.time_us;
	mp_series_on_tick(a, &t);
}

/* One record of source s (swapped in), as the analysis's. */
static void feed(struct mp_analysis *a, struct source *s, const struct mp_record *rec)
{
	struct mp_family *f = a->p->family;
	size_t nthreads = a->nthreads, nmodules = a->nmodules;
	uint32_t proc = (uint32_t)(s - f->src);
	struct mp_record e;
	switch (rec->type) {
	case MP_REC_TRACE:
		a->n_records++;
		on_trace(a, s, rec);
		return;
	case MP_REC_TICK:
		a->n_records++;
		on_tick(a, s, rec);
		return;
	case MP_REC_ALLOC:
		e = *rec;
		e.u.ev.stack = rec->u.ev.stack ? global_node(s, rec->u.ev.stack) : s->no_stack;
		mp_analysis_record(a, &e);
		break;
	case MP_REC_TRAILER:
		a->n_records++;
		a->processes[proc].trailer = *rec->u.trailer;
		if (rec->u.trailer->end_time_us > s->end)
			s->end = rec->u.trailer->end_time_us;
		return;
	case MP_REC_HEADER:
		return;
	case MP_REC_FORK: {
		size_t nforks = a->nforks;
		a->processes[proc].n_forks++;
		mp_analysis_record(a, rec);
		if (a->nforks > nforks)
			a->forks[nforks].process = proc;
		break;
	}
	case MP_REC_ATTACH: case MP_REC_DETACH: case MP_REC_LOST: case MP_REC_EXIT:
	case MP_REC_MESSAGE: case MP_REC_SNAPSHOT: {
		uint64_t d = a->duration_us;
		if ((rec->u.marker.has & MP_HAS_TIME) && s->start + rec->u.marker.time_us > s->end)
			s->end = s->start + rec->u.marker.time_us;
		mp_analysis_record(a, rec);
		a->duration_us = d; /* (its own clock's: the family's is set at the end) */
		break;
	}
	default:
		mp_analysis_record(a, rec);
		break;
	}
	for (size_t i = nthreads; i < a->nthreads; i++)
		a->threads[i].process = proc;
	for (size_t i = nmodules; i < a->nmodules; i++) {
		if (!a->modules[i].nseg)
			continue; /* a Python source file's: every process's */
		ALLOC_GROW(s->mods, s->nmods + 1, s->mods_alloc);
		s->mods_loaded = xreallocarray(s->mods_loaded, s->mods_alloc, sizeof(*s->mods_loaded));
		s->mods[s->nmods++] = (uint32_t)i;
	}
}

static void grow_exited(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	size_t old = p->exited_alloc;
	if (a->nslots <= old)
		return;
	ALLOC_GROW(p->exited, a->nslots, p->exited_alloc);
	memset(p->exited + old, 0, (p->exited_alloc - old) * sizeof(*p->exited));
}

static void drop_block(void *ctx, const struct mp_block *b)
{
	uint64_t bytes, count;
	mp_estimate_block(ctx, b->size, mp_estimate_key(ctx, b->thread, b->serial), &bytes, &count);
	mp_analysis_drop(ctx, b->slot1 - 1, b->thread, bytes, count, b->event);
}

static void drop_mapping(void *ctx, uint64_t start, uint64_t end, uint64_t value)
{
	struct mp_analysis *a = ctx;
	struct origin *o = &a->p->origins[value];
	uint64_t bytes, count;
	/* The mapping counted once, with its first piece left. */
	mp_estimate_block(a, o->size, mp_estimate_key(a, o->thread, o->serial), &bytes, &count);
	mp_analysis_drop(a, o->slot, o->thread, mp_estimate_piece(a, o, end - start),
			 o->pieces != 0 ? count : 0, o->event);
	o->pieces = 0;
}

/* Source s (swapped in) has ended: its process's memory leaves the heap, as its leaks. */
static void end_source(struct mp_analysis *a, struct source *s)
{
	struct mp_family *f = a->p->family;
	struct mp_analysis_private *p = a->p;
	grow_exited(a);
	mp_blocks_each(&p->blocks, drop_block, a);
	mp_rangemap_each(&p->maps, drop_mapping, a);
	mp_blocks_release(&p->blocks);
	mp_blocks_init(&p->blocks);
	mp_rangemap_release(&p->maps);
	mp_rangemap_init(&p->maps);
	f->rss -= s->rss;
	s->rss = 0;
	s->done = true;
	if (s->open)
		mp_reader_release(&s->r);
	s->open = false;
	a->processes[s - f->src].duration_us = s->end > s->start ? s->end - s->start : 0;
}

static int start_order(const void *x, const void *y)
{
	const struct source *s = x, *t = y;
	if (s->start != t->start)
		return s->start < t->start ? -1 : 1;
	return s < t ? -1 : s > t;
}

/* Open source i: its header, and its <unknown stack> node when processes are split. */
static int open_source(struct mp_analysis *a, size_t i, struct strbuf *err)
{
	struct mp_family *f = a->p->family;
	struct source *s = &f->src[i];
	if (mp_reader_open(&s->r, s->path) < 0) {
		strbuf_addf(err, "%s", s->r.err.buf);
		mp_reader_release(&s->r);
		return -1;
	}
	s->open = true;
	s->win = xcalloc(WINDOW, sizeof(*s->win));
	swap_in(a, i);
	mp_analysis_header(a, mp_reader_header(&s->r));
	if (a->opts.flags & MP_ANALYSIS_SPLIT_PROCESSES)
		s->no_stack = new_node(a, 0, mp_frames_pseudo_ip(a, MP_LOCATION_NO_STACK), (uint32_t)i);
	mp_reader_read_ahead(&s->r);
	return 0;
}

/* Whether a record moves its process on in time: a tick, or a marker with a time. */
static bool time_point(const struct mp_record *rec, uint64_t *t)
{
	switch (rec->type) {
	case MP_REC_TICK:
		*t = rec->u.tick.time_us;
		return true;
	case MP_REC_ATTACH: case MP_REC_DETACH: case MP_REC_LOST: case MP_REC_EXIT:
	case MP_REC_FORK: case MP_REC_MESSAGE: case MP_REC_SNAPSHOT:
		*t = rec->u.marker.time_us;
		return (rec->u.marker.has & MP_HAS_TIME) != 0;
	default:
		return false;
	}
}

static void flush_events(struct mp_analysis *a, struct source *s)
{
	for (size_t k = 0; k < s->nev; k++)
		feed(a, s, &s->ev[k]);
	s->nev = 0;
}

/*
 * Read source i (swapped in) up to its next moment in time: events wait in
 * s->ev, to be analysed at that moment (they came at most a tick before it,
 * for the tracker ticks while its program allocates); what defines ids
 * (traces, strings, symbols, modules) is taken at once. s->key is when the
 * chunk ends; s->point the record there (a tick or marker), unless the
 * capture ended (s->at_end).
 */
static void read_chunk(struct mp_analysis *a, struct source *s)
{
	uint64_t t;
	s->have_point = false;
	while (!s->have_point) {
		/* (What a window holds past a moment waits there for the next chunk.) */
		if (s->wpos == s->wn) {
			s->wpos = 0;
			s->wn = mp_reader_read(&s->r, s->win, WINDOW);
			if (!s->wn)
				break;
		}
		while (s->wpos < s->wn && !s->have_point) {
			const struct mp_record *rec = &s->win[s->wpos++];
			if (rec->type == MP_REC_ALLOC || rec->type == MP_REC_FREE) {
				ALLOC_GROW(s->ev, s->nev + 1, s->ev_alloc);
				s->ev[s->nev++] = *rec;
			} else if (time_point(rec, &t)) {
				s->point = *rec;
				s->point.u.marker.text = NULL; /* (points into the reader) */
				s->point.u.marker.text_len = 0;
				if (rec->type == MP_REC_TICK)
					s->point.u.tick = rec->u.tick;
				s->key = s->start + t;
				s->have_point = true;
			} else {
				/* A thread declared anew takes an index its events may still use. */
				if (rec->type == MP_REC_THREAD)
					flush_events(a, s);
				feed(a, s, rec);
			}
		}
	}
	if (!s->have_point) {
		/*
		 * Its last events, and its end: at its last moment known (its exit,
		 * or a tick), not its trailer's time, which is the collector's.
		 */
		s->at_end = true;
		s->key = s->now;
	}
}

/* The source whose chunk ends first, or that would start first: f->n when all ended. */
static size_t pick(const struct mp_family *f)
{
	size_t best = f->n;
	for (size_t i = 0; i < f->n; i++) {
		const struct source *s = &f->src[i];
		if (!s->done && (best == f->n || s->key < f->src[best].key))
			best = i;
	}
	return best;
}

static int run_family(struct mp_analysis *a, struct strbuf *err)
{
	struct mp_family *f = a->p->family;
	const struct mp_analysis_progress *prog = a->opts.progress;
	uint64_t done_bytes = 0, next_update = 0, records = 0;
	size_t i;
	int ret = 0;

	while ((i = pick(f)) < f->n) {
		struct source *s = &f->src[i];
		if (!s->open) {
			if (open_source(a, i, err) < 0)
				return -1;
			read_chunk(a, s);
			continue;
		}
		swap_in(a, i);
		flush_events(a, s);
		if (!s->at_end) {
			if (s->key > s->now)
				s->now = s->key;
			feed(a, s, &s->point);
			read_chunk(a, s);
			if (prog && prog->update && a->n_records >= next_update) {
				prog->update(prog->ctx, done_bytes + mp_reader_offset(&s->r),
					     records + s->r.n_records);
				next_update = a->n_records + 65536;
			}
			continue;
		}
		if (s->r.status != MP_READ_OK) {
			strbuf_addf(err, "%s%s", err->len ? "\n" : "", s->r.err.buf);
			a->processes[i].cut = true;
			ret = 1;
		}
		done_bytes += s->file_size;
		records += s->r.n_records;
		end_source(a, s);
	}
	if (prog && prog->update)
		prog->update(prog->ctx, done_bytes, records);
	return ret;
}

/* The first reading: each capture's header, for its start time; sources in the order of time. */
static int scan_headers(struct mp_analysis *a, const char *const *paths, size_t n,
			struct strbuf *err, uint64_t *total)
{
	struct mp_family *f = a->p->family;
	*total = 0;
	for (size_t i = 0; i < n; i++) {
		struct source *s = &f->src[i];
		const struct mp_header *h;
		s->path = paths[i];
		if (mp_reader_open(&s->r, paths[i]) < 0) {
			strbuf_addstr(err, s->r.err.buf);
			mp_reader_release(&s->r);
			return -1;
		}
		h = mp_reader_header(&s->r);
		if (h->flags & MP_HF_AGGREGATED) {
			strbuf_addf(err, "'%s' is an aggregated capture (--aggregate), with totals per "
				    "stack and no events: it cannot be read with other captures",
				    paths[i]);
			mp_reader_release(&s->r);
			return -1;
		}
		s->start = s->now = s->end = s->key = h->start_time_us;
		s->file_size = s->r.file_size;
		*total += s->r.file_size;
		mp_reader_release(&s->r);
		memset(&s->r, 0, sizeof(s->r));
		saved_init(&s->st);
	}
	mp_qsort(f->src, n, sizeof(*f->src), start_order);
	f->start = f->src[0].start;
	return 0;
}

/* One capture: as ever, and its one process. */
static int read_one(struct mp_analysis *a, const char *path, struct strbuf *err)
{
	int ret = mp_analysis_read_file(a, path, err);
	if (ret < 0)
		return ret;
	a->processes = xcalloc(1, sizeof(*a->processes));
	a->nprocesses = 1;
	set_process(a, 0, &a->header, path, a->header.start_time_us);
	a->processes[0].trailer = a->trailer;
	a->processes[0].duration_us = a->duration_us;
	a->processes[0].n_forks = a->n_forks;
	a->processes[0].cut = ret > 0;
	if (a->opts.flags & MP_ANALYSIS_SPLIT_PROCESSES) {
		for (size_t i = 0; i < a->nslots; i++)
			a->slots[i].process = 0;
	}
	process_totals(a);
	return ret;
}

int mp_analysis_read_files(struct mp_analysis *a, const char *const *paths, size_t n,
			   struct strbuf *err)
{
	struct mp_family *f;
	struct strbuf msg = STRBUF_INIT;
	uint64_t total;
	int ret;

	if (n == 1)
		return read_one(a, paths[0], err);
	if (err)
		strbuf_reset(err);
	f = a->p->family = xcalloc(1, sizeof(*f));
	f->src = xcalloc(n, sizeof(*f->src));
	f->n = f->cur = n;
	/* Until the first capture comes in: no state of its own. */
	ret = scan_headers(a, paths, n, &msg, &total);
	if (ret == 0) {
		a->processes = xcalloc(n, sizeof(*a->processes));
		a->nprocesses = n;
		if (a->opts.progress && a->opts.progress->start)
			a->opts.progress->start(a->opts.progress->ctx, total);
		ret = run_family(a, &msg);
	}
	if (a->opts.progress && a->opts.progress->done)
		a->opts.progress->done(a->opts.progress->ctx);
	if (ret >= 0) {
		/* Process 0's header and trailer stand for the family's; the time, all of theirs. */
		uint64_t end = f->start;
		swap_out(a);
		for (size_t i = 0; i < n; i++) {
			struct source *s = &f->src[i];
			set_process(a, i, &s->st.header, s->path, f->start);
			a->processes[i].duration_us = s->end > s->start ? s->end - s->start : 0;
			if (s->end > end)
				end = s->end;
		}
		mp_analysis_header(a, &f->src[0].st.header);
		link_parents(a);
		/* (Without a trailer, which would say its own duration.) */
		a->duration_us = end - f->start;
		mp_analysis_finish(a);
		a->duration_us = end - f->start;
		a->trailer = a->processes[0].trailer;
		process_totals(a);
	}
	if (err) {
		strbuf_reset(err);
		strbuf_add(err, msg.buf, msg.len);
	}
	strbuf_release(&msg);
	return ret;
}


const uint32_t *mp_family_node_process(const struct mp_family *f)
{
	return f->node_proc;
}
