/*
 * The pprof export: a gzipped perftools.profiles.Profile (profile.proto),
 * encoded by protobuf-c.
 *
 * Streaming: a protobuf message followed by another of the same type parses
 * as one message with the repeated fields of both, in order. So the profile
 * is written as a header message (sample types, mappings, fixed strings),
 * then one message per slot holding its sample and only the strings,
 * functions and locations that sample uses for the first time. A string's
 * index is the number of strings written before it, whichever message held
 * them. Memory grows with the functions and locations, never the events.
 */
#include <config.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "lib/export/export-private.h"
#include "lib/export/profile.pb-c.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/util/hash.h"
#include "lib/util/xalloc.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

/* The values of each sample, in this order (pprof shows the last by default). */
enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_VIEW_OBJECTS, V_VIEW_SPACE, NVALUES };

/* A ProtobufCBuffer that appends what protobuf-c packs to the sink. */
struct sink_buffer {
	ProtobufCBuffer base;
	struct mp_sink *sink;
};

struct pprof {
	const struct mp_analysis *a;
	struct sink_buffer buf;
	int64_t nstrings;               /* strings written (or pending) so far */
	struct mp_intmap strmap;        /* analysis string id -> index */
	struct mp_intmap kindmap;       /* allocator kind -> string index */
	struct mp_intmap locmap;        /* node ip number (mp_analysis_node_ip) -> location id */
	uint64_t nlocs;
	struct mp_idxset fnset;         /* (name, file) -> function id - 1 */
	uint32_t *fn_key;               /* name, file string ids of function id - 1, pairs */
	size_t nfns, fn_alloc;
	int64_t *thread_str;            /* a->threads index -> string index of its label, 0: none yet */
	uint64_t *mapping_of;           /* a->modules index -> mapping id (the program's is 1) */
	uint64_t group_loc;             /* the location id of [python interpreter], 0: none yet */
	bool folds;                     /* mp_analysis_folds() */
	/* The message being built: what the next pack writes. */
	char **strings;
	size_t nstr, str_alloc;
	char **owned;                   /* strings of this message to free after packing */
	size_t nowned, owned_alloc;
	PbFunction *fns;
	size_t npfns, pfns_alloc;
	PbLocation *locs;
	size_t nplocs, plocs_alloc;
	size_t *loc_first;              /* first line of each pending location in lines */
	size_t loc_first_alloc;
	PbLine *lines;
	size_t nlines, lines_alloc;
	uint64_t *ids;                  /* the sample's location ids */
	size_t ids_alloc;
	struct strbuf tmp;
};

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	mp_sink_write(((struct sink_buffer *)b)->sink, data, len);
}

/*
 * Add a string to the message; returns its index. Strings from the capture
 * are untrusted: control characters and invalid UTF-8 become \xNN (proto3
 * strings must be UTF-8). Without copy, s must live until the next pack().
 */
static int64_t add_string(struct pprof *p, const char *s, bool copy)
{
	const unsigned char *u = (const unsigned char *)s;
	bool plain = true;
	for (size_t i = 0; u[i] && plain; i++)
		plain = u[i] >= 0x20 && u[i] < 0x7f;
	ALLOC_GROW(p->strings, p->nstr + 1, p->str_alloc);
	if (plain && !copy) {
		p->strings[p->nstr++] = (char *)s;
	} else {
		struct strbuf safe = STRBUF_INIT;
		mp_text_addstr_safe(&safe, s);
		ALLOC_GROW(p->owned, p->nowned + 1, p->owned_alloc);
		p->owned[p->nowned++] = strbuf_detach(&safe, NULL);
		p->strings[p->nstr++] = p->owned[p->nowned - 1];
	}
	return p->nstrings++;
}

/* The index of an analysis string, added to the message the first time. */
static int64_t string_index(struct pprof *p, uint32_t id)
{
	uint64_t idx;
	if (!id)
		return 0; /* string 0 is "" in both tables */
	if (mp_intmap_get(&p->strmap, id, &idx))
		return (int64_t)idx;
	idx = (uint64_t)add_string(p, mp_analysis_string(p->a, id), false);
	mp_intmap_put(&p->strmap, id, idx);
	return (int64_t)idx;
}

struct fn_probe {
	const struct pprof *p;
	uint32_t name, file;
};

static bool fn_eq(const void *ctx, uint32_t idx)
{
	const struct fn_probe *q = ctx;
	return q->p->fn_key[2 * idx] == q->name && q->p->fn_key[2 * idx + 1] == q->file;
}

/* The function of a location: one per (name, source file). */
static uint64_t function_id(struct pprof *p, uint32_t loc)
{
	const struct mp_location *l = mp_analysis_location(p->a, loc);
	struct fn_probe probe = { p, l->function, l->file };
	uint64_t h = mp_hash_combine(mp_hash_u64(l->function), l->file);
	uint32_t idx = mp_idxset_find(&p->fnset, h, fn_eq, &probe);
	PbFunction *f;
	if (idx != MP_NONE)
		return (uint64_t)idx + 1;
	idx = (uint32_t)p->nfns++;
	ALLOC_GROW(p->fn_key, 2 * p->nfns, p->fn_alloc);
	p->fn_key[2 * idx] = l->function;
	p->fn_key[2 * idx + 1] = l->file;
	mp_idxset_add(&p->fnset, h, idx);
	ALLOC_GROW(p->fns, p->npfns + 1, p->pfns_alloc);
	f = &p->fns[p->npfns++];
	*f = (PbFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
	f->id = (uint64_t)idx + 1;
	f->name = string_index(p, l->function);
	/*
	 * The capture keeps demangled names only. pprof simplifies a name equal
	 * to its system name as C++ (no arguments, no templates: -symbolize=
	 * demangle=full keeps them); a Python function's has none, or pprof
	 * would make "<module>" "<unknown>".
	 */
	f->system_name = l->flags & (MP_LOC_PYTHON | MP_LOC_GROUP) ? 0 : f->name;
	f->filename = string_index(p, l->file);
	return f->id;
}

/* A new location (id) and its lines to come; returns it. */
static PbLocation *new_location(struct pprof *p, uint64_t id)
{
	PbLocation *l;
	ALLOC_GROW(p->locs, p->nplocs + 1, p->plocs_alloc);
	ALLOC_GROW(p->loc_first, p->nplocs + 1, p->loc_first_alloc);
	l = &p->locs[p->nplocs];
	p->loc_first[p->nplocs++] = p->nlines;
	*l = (PbLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
	l->id = id;
	return l;
}

static void add_line(struct pprof *p, PbLocation *l, uint32_t loc)
{
	PbLine *line;
	uint64_t fn = function_id(p, loc);
	ALLOC_GROW(p->lines, p->nlines + 1, p->lines_alloc);
	line = &p->lines[p->nlines++];
	*line = (PbLine)PERFTOOLS__PROFILES__LINE__INIT;
	line->function_id = fn;
	line->line = mp_analysis_location(p->a, loc)->line;
	l->n_line++;
}

/* Whether a frame is shown: folded stacks (mp_analysis_view_stack()) leave some out. */
static bool frame_shown(const struct pprof *p, uint32_t loc)
{
	return !p->folds || !mp_location_folded(mp_analysis_location(p->a, loc));
}

/*
 * The location of a trace node's instruction pointer, its inlined frames
 * from the first-th on (those inside it being cut at the site) as lines,
 * less the folded ones: one per (ip, first). 0 when no frame is left.
 */
static uint64_t location_id(struct pprof *p, uint32_t node, size_t first)
{
	const uint32_t *frames;
	uint64_t ip, id, key;
	uint32_t module, number = mp_analysis_node_ip(p->a, node, &ip, &module);
	size_t n, k = 0;
	PbLocation *l;
	key = (uint64_t)number | (uint64_t)first << 32;
	if (mp_intmap_get(&p->locmap, key, &id))
		return id;
	n = mp_analysis_node_frames(p->a, node, &frames);
	for (size_t i = first; i < n; i++)
		k += frame_shown(p, frames[i]);
	if (!k) {
		mp_intmap_put(&p->locmap, key, 0); /* every frame folded: no location */
		return 0;
	}
	id = ++p->nlocs;
	mp_intmap_put(&p->locmap, key, id);
	l = new_location(p, id);
	/* (a Python source file is a module of no segments, and maps no address) */
	l->mapping_id = module == MP_NONE || !p->a->modules[module].nseg ? 0 : p->mapping_of[module];
	/* A return address: ip - 1 is inside the call, where the symbols were looked up. */
	l->address = ip ? ip - 1 : 0;
	for (size_t i = first; i < n; i++)
		if (frame_shown(p, frames[i]))
			add_line(p, l, frames[i]);
	return id;
}

/* The location of [python interpreter], where folded stacks without Python frames gather. */
static uint64_t group_location(struct pprof *p)
{
	if (!p->group_loc) {
		p->group_loc = ++p->nlocs;
		add_line(p, new_location(p, p->group_loc), p->a->interpreter_loc);
	}
	return p->group_loc;
}

/* Pack msg with the pending strings, functions and locations, then forget them. */
static void pack(struct pprof *p, PbProfile *msg)
{
	PbFunction **fns = xcalloc(p->npfns + 1, sizeof(*fns));
	PbLocation **locs = xcalloc(p->nplocs + 1, sizeof(*locs));
	PbLine **lines = xcalloc(p->nlines + 1, sizeof(*lines));
	for (size_t i = 0; i < p->npfns; i++)
		fns[i] = &p->fns[i];
	for (size_t i = 0; i < p->nlines; i++)
		lines[i] = &p->lines[i];
	for (size_t i = 0; i < p->nplocs; i++) {
		locs[i] = &p->locs[i];
		locs[i]->line = lines + p->loc_first[i];
	}
	msg->n_string_table = p->nstr;
	msg->string_table = p->strings;
	msg->n_function = p->npfns;
	msg->function = fns;
	msg->n_location = p->nplocs;
	msg->location = locs;
	perftools__profiles__profile__pack_to_buffer(msg, &p->buf.base);
	free(fns);
	free(locs);
	free(lines);
	for (size_t i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	p->nowned = p->nstr = p->npfns = p->nplocs = p->nlines = 0;
}

static void hex_build_id(struct strbuf *sb, const struct mp_module *m)
{
	for (size_t i = 0; i < m->build_id_len; i++)
		strbuf_addf(sb, "%02x", m->build_id[i]);
}

/*
 * The modules as mappings: the program first (pprof names the profile
 * after mapping[0]: "File: prog"), then the others in the capture's order.
 * A module is mapped from its lowest segment, page-aligned, which is file
 * offset 0 in an ordinary ELF file.
 */
static void mappings(struct pprof *p, PbProfile *msg)
{
	const struct mp_analysis *a = p->a;
	PbMapping *maps = xcalloc(a->nmodules + 1, sizeof(*maps));
	PbMapping **ptrs = xcalloc(a->nmodules + 1, sizeof(*ptrs));
	uint32_t *order = xcalloc(a->nmodules + 1, sizeof(*order));
	uint64_t page = a->header.page_size ? a->header.page_size : 4096;
	size_t n = 0;
	for (size_t i = 0; i < a->nmodules; i++)
		if (a->modules[i].program)
			order[n++] = (uint32_t)i;
	for (size_t i = 0; i < a->nmodules; i++)
		if (!a->modules[i].program)
			order[n++] = (uint32_t)i;
	for (size_t i = 0; i < a->nmodules; i++) {
		const struct mp_module *m = &a->modules[order[i]];
		uint64_t lo = UINT64_MAX, hi = 0;
		maps[i] = (PbMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		for (size_t k = 0; k < m->nseg; k++) {
			if (m->seg[k].vaddr < lo)
				lo = m->seg[k].vaddr;
			if (m->seg[k].vaddr + m->seg[k].memsz > hi)
				hi = m->seg[k].vaddr + m->seg[k].memsz;
		}
		if (lo > hi)
			lo = hi = 0;
		maps[i].id = i + 1;
		p->mapping_of[order[i]] = i + 1;
		maps[i].memory_start = m->base + (lo & ~(page - 1));
		maps[i].memory_limit = m->base + hi;
		maps[i].filename = string_index(p, m->path);
		if (m->build_id_len) {
			strbuf_reset(&p->tmp);
			hex_build_id(&p->tmp, m);
			maps[i].build_id = add_string(p, p->tmp.buf, true);
		}
		maps[i].has_functions = maps[i].has_filenames = true;
		maps[i].has_line_numbers = maps[i].has_inline_frames = true;
		ptrs[i] = &maps[i];
	}
	msg->n_mapping = a->nmodules;
	msg->mapping = ptrs;
	pack(p, msg);
	free(maps);
	free(ptrs);
	free(order);
}

/* Microseconds as pprof's nanoseconds, saturating (a damaged capture may say anything). */
static int64_t nanos(uint64_t us)
{
	return mp_count_i64(us > UINT64_MAX / 1000 ? UINT64_MAX : us * 1000);
}

/* The header message: sample types, period, times, comments and mappings. */
static void header(struct pprof *p, enum mp_view view)
{
	const struct mp_analysis *a = p->a;
	PbProfile msg = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType types[NVALUES], period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PbValueType *tptrs[NVALUES];
	static const char *const names[NVALUES][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	int64_t comments[2], count, bytes;
	struct strbuf sb = STRBUF_INIT;

	add_string(p, "", false);
	count = add_string(p, "count", false);
	bytes = add_string(p, "bytes", false);
	for (int v = 0; v < NVALUES; v++) {
		const char *name = names[v][0];
		if (view == MP_VIEW_TEMPORARY && v == V_VIEW_OBJECTS)
			name = "temporary_objects";
		else if (view == MP_VIEW_TEMPORARY && v == V_VIEW_SPACE)
			name = "temporary_space";
		types[v] = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		types[v].type = add_string(p, name, false);
		types[v].unit = names[v][1][0] == 'c' ? count : bytes;
		tptrs[v] = &types[v];
	}
	msg.n_sample_type = NVALUES;
	msg.sample_type = tptrs;
	msg.default_sample_type = types[V_VIEW_SPACE].type;
	/*
	 * Every allocation is recorded: a period of one byte, nothing to scale.
	 * A sampled capture's period is its interval, and its values are
	 * estimates already (each block weighed as the analysis does), as Go's
	 * heap profiles are.
	 */
	period.type = add_string(p, "space", false);
	period.unit = bytes;
	msg.period_type = &period;
	msg.period = a->sampling_interval ? mp_count_i64(a->sampling_interval) : 1;
	msg.time_nanos = nanos(a->header.start_time_us);
	msg.duration_nanos = nanos(a->duration_us);
	strbuf_addf(&sb, "memprof %s: %s", PACKAGE_VERSION, mp_export_view_words(view));
	if (mp_analysis_estimated(a)) {
		strbuf_addstr(&sb, ", ");
		mp_report_estimated(a, &sb);
	}
	comments[0] = add_string(p, sb.buf, true);
	strbuf_reset(&sb);
	for (size_t i = 0; i < a->header.argc; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", a->header.argv[i]);
	comments[1] = add_string(p, sb.buf, true);
	msg.n_comment = 2;
	msg.comment = comments;
	mappings(p, &msg);
	strbuf_release(&sb);
}

/* The string index of a thread's label. */
static int64_t thread_string(struct pprof *p, uint32_t thread)
{
	if (!p->thread_str[thread]) {
		strbuf_reset(&p->tmp);
		mp_analysis_thread_label(p->a, thread, &p->tmp);
		p->thread_str[thread] = add_string(p, p->tmp.buf, true);
	}
	return p->thread_str[thread];
}

/* The string index of an allocator kind's name ("malloc"). */
static int64_t kind_string(struct pprof *p, uint32_t kind)
{
	uint64_t idx;
	if (!mp_intmap_get(&p->kindmap, kind, &idx)) {
		idx = (uint64_t)add_string(p, mp_kind_name(kind), true);
		mp_intmap_put(&p->kindmap, kind, idx);
	}
	return (int64_t)idx;
}

/* One message per slot: its sample and what the sample refers to for the first time. */
static void sample(struct pprof *p, const struct mp_slot *s, struct mp_counts shown,
		   int64_t key_allocator, int64_t key_thread)
{
	PbProfile msg = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbSample smp = PERFTOOLS__PROFILES__SAMPLE__INIT, *sptr = &smp;
	PbLabel labels[2], *lptrs[2];
	int64_t values[NVALUES];
	size_t n = 0;
	uint32_t node = s->stack, site_node = MP_NONE;
	size_t site_first = 0;
	bool python = false, interpreter = false, group = false;
	/*
	 * The sample starts at the stack's site (the flat row pprof shows is
	 * where the program allocated, as stats says), unless --raw-leaf: the
	 * frames inside it, allocator plumbing and runtime, are left out.
	 */
	if (!(p->a->opts.flags & MP_ANALYSIS_RAW_LEAF) && s->stack) {
		group = s->site == p->a->interpreter_loc;
		for (uint32_t k = s->stack; k && site_node == MP_NONE && !group; k = mp_analysis_parent(p->a, k)) {
			const uint32_t *frames;
			size_t nf = mp_analysis_node_frames(p->a, k, &frames);
			for (size_t i = 0; i < nf && site_node == MP_NONE; i++)
				if (frames[i] == s->site && frame_shown(p, frames[i])) {
					site_node = k;
					site_first = i;
				}
		}
	}
	do {
		size_t first = 0;
		uint64_t id = 0;
		if (p->folds) {
			/* Whether the stack goes under [python interpreter]. */
			const uint32_t *frames;
			size_t nf = mp_analysis_node_frames(p->a, node, &frames);
			for (size_t i = 0; i < nf; i++) {
				uint32_t flags = mp_analysis_location(p->a, frames[i])->flags;
				python |= (flags & MP_LOC_PYTHON) != 0;
				interpreter |= (flags & MP_LOC_INTERPRETER) != 0;
			}
		}
		if (node == site_node) {
			/* At the site: every frame from here on. */
			first = site_first;
			site_node = MP_NONE;
		}
		if (site_node == MP_NONE && !group)
			id = location_id(p, node, first);
		if (id) {
			ALLOC_GROW(p->ids, n + 1, p->ids_alloc);
			p->ids[n++] = id;
		}
		node = mp_analysis_parent(p->a, node);
	} while (node);
	if (p->folds && !python && interpreter) {
		ALLOC_GROW(p->ids, n + 1, p->ids_alloc);
		p->ids[n++] = group_location(p);
	}
	values[V_ALLOC_OBJECTS] = mp_count_i64(s->allocated.count);
	values[V_ALLOC_SPACE] = mp_count_i64(s->allocated.bytes);
	values[V_VIEW_OBJECTS] = mp_count_i64(shown.count);
	values[V_VIEW_SPACE] = mp_count_i64(shown.bytes);
	smp.n_location_id = n;
	smp.location_id = p->ids;
	smp.n_value = NVALUES;
	smp.value = values;
	labels[0] = (PbLabel)PERFTOOLS__PROFILES__LABEL__INIT;
	labels[0].key = key_allocator;
	labels[0].str = kind_string(p, s->kind);
	lptrs[0] = &labels[0];
	smp.n_label = 1;
	if (s->thread != MP_THREAD_MERGED) {
		labels[1] = (PbLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		labels[1].key = key_thread;
		labels[1].str = thread_string(p, s->thread);
		lptrs[1] = &labels[1];
		smp.n_label = 2;
	}
	smp.label = lptrs;
	msg.n_sample = 1;
	msg.sample = &sptr;
	pack(p, &msg);
}

int mp_export_pprof(const struct mp_analysis *a, const struct mp_export_opts *o,
		    struct mp_sink *out)
{
	struct pprof p;
	int64_t key_allocator, key_thread;

	memset(&p, 0, sizeof(p));
	p.a = a;
	p.buf.base.append = sink_append;
	p.buf.sink = out;
	mp_intmap_init(&p.strmap);
	mp_intmap_init(&p.locmap);
	mp_intmap_init(&p.kindmap);
	mp_idxset_init(&p.fnset);
	strbuf_init(&p.tmp, 0);
	p.thread_str = xcalloc(a->nthreads + 1, sizeof(*p.thread_str));
	p.mapping_of = xcalloc(a->nmodules + 1, sizeof(*p.mapping_of));
	p.folds = mp_analysis_folds(a);

	header(&p, o->view);
	key_allocator = add_string(&p, "allocator", false);
	key_thread = add_string(&p, "thread", false);
	for (size_t i = 0; i < a->nslots && !mp_sink_failed(out); i++) {
		const struct mp_slot *s = &a->slots[i];
		struct mp_counts shown = mp_slot_counts(s, o->view);
		if (!s->allocated.count && !shown.count)
			continue;
		sample(&p, s, shown, key_allocator, key_thread);
	}

	mp_intmap_release(&p.strmap);
	mp_intmap_release(&p.locmap);
	mp_intmap_release(&p.kindmap);
	mp_idxset_release(&p.fnset);
	strbuf_release(&p.tmp);
	free(p.thread_str);
	free(p.mapping_of);
	free(p.fn_key);
	free(p.strings);
	free(p.owned);
	free(p.fns);
	free(p.locs);
	free(p.loc_first);
	free(p.lines);
	free(p.ids);
	return mp_sink_failed(out) ? -1 : 0;
}
