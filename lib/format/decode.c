/*
 * Capture records: the decoder of sized records (header, trailer, modules,
 * strings, symbols, markers...), its state, allocator kind names
 * (lib/format/decode.h). The event records and mp_decode() are in
 * decode-events.c.
 */
#include <config.h>
#include "lib/format/decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format/decode-private.h"
#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

static const char *const kind_names[MP_KIND_COUNT] = {
	[MP_KIND_MALLOC] = "malloc",
	[MP_KIND_CALLOC] = "calloc",
	[MP_KIND_REALLOC] = "realloc",
	[MP_KIND_FREE] = "free",
	[MP_KIND_POSIX_MEMALIGN] = "posix_memalign",
	[MP_KIND_ALIGNED_ALLOC] = "aligned_alloc",
	[MP_KIND_MEMALIGN] = "memalign",
	[MP_KIND_VALLOC] = "valloc",
	[MP_KIND_PVALLOC] = "pvalloc",
	[MP_KIND_MMAP] = "mmap",
	[MP_KIND_MUNMAP] = "munmap",
	[MP_KIND_MREMAP] = "mremap",
	[MP_KIND_REALLOCARRAY] = "reallocarray",
	[MP_KIND_FREE_SIZED] = "free_sized",
	[MP_KIND_FREE_ALIGNED_SIZED] = "free_aligned_sized",
};

const char *mp_kind_name(unsigned kind)
{
	static __thread char buf[24];
	if (kind < MP_KIND_COUNT)
		return kind_names[kind];
	snprintf(buf, sizeof(buf), "kind#%u", kind);
	return buf;
}

int mp_kind_from_name(const char *name)
{
	for (int i = 0; i < MP_KIND_COUNT; i++)
		if (!strcmp(kind_names[i], name))
			return i;
	return -1;
}

/* ---- decoding ---------------------------------------------------------- */

static const uint8_t *get_bytes(struct cur *c, size_t *len)
{
	uint64_t n = get_u(c);
	const uint8_t *p = c->p;
	if (c->err)
		return NULL;
	if (n > (uint64_t)(c->end - c->p)) {
		c->err = CUR_SHORT;
		return NULL;
	}
	c->p += n;
	*len = (size_t)n;
	return p;
}

void mp_decoder_init(struct mp_decoder *d)
{
	memset(d, 0, sizeof(*d));
	strbuf_init(&d->err, 0);
	mp_intmap_init(&d->module_base);
	d->nthreads = 1;
	d->threads = xcalloc(1, sizeof(*d->threads));
}

void mp_header_release(struct mp_header *h)
{
	free(h->exe);
	free(h->hostname);
	free(h->cwd);
	free(h->tracker_version);
	free(h->parent_capture);
	if (h->argv)
		for (size_t i = 0; i < h->argc; i++)
			free(h->argv[i]);
	free(h->argv);
	memset(h, 0, sizeof(*h));
}

void mp_decoder_release(struct mp_decoder *d)
{
	mp_header_release(&d->header);
	free(d->threads);
	free(d->classes);
	mp_intmap_release(&d->module_base);
	free(d->seg);
	free(d->frames);
	strbuf_release(&d->err);
	memset(d, 0, sizeof(*d));
}

ssize_t mp_decode_fail(struct mp_decoder *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vsetf(&d->err, fmt, ap);
	va_end(ap);
	return -1;
}

ssize_t mp_decode_preamble(struct mp_decoder *d, const uint8_t *buf, size_t len)
{
	size_t n = len < MP_MAGIC_LEN ? len : MP_MAGIC_LEN;
	if (n && memcmp(buf, MP_MAGIC, n))
		return mp_decode_fail(d, "not a memprof capture (unknown file signature)");
	if (len < MP_MAGIC_LEN + 2)
		return 0;
	d->header.major = buf[MP_MAGIC_LEN];
	d->header.minor = buf[MP_MAGIC_LEN + 1];
	if (d->header.major < MP_FORMAT_MAJOR_MIN || d->header.major > MP_FORMAT_MAJOR)
		return mp_decode_fail(d, "capture format %u.%u is not readable by this memprof, which reads formats %d.x to %d.x%s",
			    d->header.major, d->header.minor, MP_FORMAT_MAJOR_MIN, MP_FORMAT_MAJOR,
			    d->header.major > MP_FORMAT_MAJOR ? "; upgrade memprof" : "");
	return MP_MAGIC_LEN + 2;
}

int mp_decode_grow_threads(struct mp_decoder *d, uint64_t index)
{
	if (index >= MP_MAX_THREADS)
		return -1;
	if (index >= d->nthreads) {
		size_t n = d->nthreads;
		while (n <= index)
			n *= 2;
		d->threads = xreallocarray(d->threads, n, sizeof(*d->threads));
		memset(d->threads + d->nthreads, 0, (n - d->nthreads) * sizeof(*d->threads));
		d->nthreads = n;
	}
	return 0;
}

static char *dup_bytes(const uint8_t *p, size_t len)
{
	return xstrndup((const char *)p, len);
}

typedef void (*field_fn)(void *ctx, unsigned id, unsigned type, uint64_t u, const uint8_t *b,
			 size_t blen);

/* Walk key/value fields; unknown keys are the callback's business. */
static int parse_fields(struct cur *c, field_fn fn, void *ctx)
{
	while (c->p < c->end && !c->err) {
		uint64_t key = get_u(c);
		unsigned type = (unsigned)(key & 7);
		uint64_t id = key >> 3;
		uint64_t u = 0;
		const uint8_t *b = NULL;
		size_t blen = 0;
		switch (type) {
		case MP_FIELD_UINT:
		case MP_FIELD_SINT:
			u = get_u(c);
			break;
		case MP_FIELD_BYTES:
			b = get_bytes(c, &blen);
			break;
		default:
			c->err = CUR_BAD;
			return -1;
		}
		if (c->err)
			return -1;
		if (id <= 0xffff)
			fn(ctx, (unsigned)id, type, u, b, blen);
	}
	return c->err ? -1 : 0;
}

static void header_field(void *ctx, unsigned id, unsigned type, uint64_t u, const uint8_t *b,
			 size_t blen)
{
	struct mp_header *h = ctx;
	if (type == MP_FIELD_BYTES) {
		char **slot = NULL;
		switch (id) {
		case MP_H_EXE: slot = &h->exe; break;
		case MP_H_HOSTNAME: slot = &h->hostname; break;
		case MP_H_CWD: slot = &h->cwd; break;
		case MP_H_TRACKER_VERSION: slot = &h->tracker_version; break;
		case MP_H_PARENT_CAPTURE: slot = &h->parent_capture; break;
		case MP_H_ARGV: {
			size_t n = 0, start = 0;
			for (size_t i = 0; i < blen; i++)
				n += !b[i];
			if (blen && b[blen - 1])
				n++;
			if (h->argv) {
				for (size_t i = 0; i < h->argc; i++)
					free(h->argv[i]);
				free(h->argv);
			}
			h->argv = xcalloc(n + 1, sizeof(char *));
			h->argc = 0;
			for (size_t i = 0; i <= blen; i++) {
				if (i == blen || !b[i]) {
					if (i > start || i < blen)
						h->argv[h->argc++] = dup_bytes(b + start, i - start);
					start = i + 1;
				}
			}
			return;
		}
		default: return;
		}
		free(*slot);
		*slot = dup_bytes(b, blen);
		return;
	}
	switch (id) {
	case MP_H_PID: h->pid = u; break;
	case MP_H_PPID: h->ppid = u; break;
	case MP_H_START_TIME: h->start_time_us = u; break;
	case MP_H_PAGE_SIZE: h->page_size = u; break;
	case MP_H_MODE: h->mode = u; break;
	case MP_H_MAX_DEPTH: h->max_depth = u; break;
	case MP_H_INTERVAL_MS: h->interval_ms = u; break;
	case MP_H_FLAGS: h->flags = u; break;
	case MP_H_MAIN_TID: h->main_tid = u; break;
	case MP_H_MACHINE: h->machine = u; break;
	case MP_H_POINTER_SIZE: h->pointer_size = u; break;
	case MP_H_FORKED_FROM: h->forked_from = u; break;
	case MP_H_FAMILY: h->family = u; break;
	case MP_H_SAMPLING_INTERVAL: h->sampling_interval = u; break;
	}
}

static void trailer_field(void *ctx, unsigned id, unsigned type, uint64_t u, const uint8_t *b,
			  size_t blen)
{
	struct mp_trailer *t = ctx;
	if (type == MP_FIELD_BYTES)
		return;
	switch (id) {
	case MP_T_END_TIME: t->end_time_us = u; break;
	case MP_T_EXIT_CODE: t->has_exit_code = true; t->exit_code = (int)u; break;
	case MP_T_EXIT_SIGNAL: t->has_exit_signal = true; t->exit_signal = (int)u; break;
	case MP_T_CORE_DUMPED: t->core_dumped = (int)u; break;
	case MP_T_N_ALLOCS: t->n_allocs = u; break;
	case MP_T_N_FREES: t->n_frees = u; break;
	case MP_T_BYTES_ALLOCATED: t->bytes_allocated = u; break;
	case MP_T_N_TRACES: t->n_traces = u; break;
	case MP_T_N_SYMBOLS: t->n_symbols = u; break;
	case MP_T_N_RECORDS: t->n_records = u; break;
	case MP_T_N_LOST: t->n_lost = u; break;
	case MP_T_DURATION: t->duration_us = u; break;
	case MP_T_END_REASON: t->end_reason = u; break;
	case MP_T_N_LIBUNWIND: t->n_libunwind = u; break;
	}
}

static void marker_field(void *ctx, unsigned id, unsigned type, uint64_t u, const uint8_t *b,
			 size_t blen)
{
	struct mp_marker *m = ctx;
	if (type == MP_FIELD_BYTES) {
		if (id == MP_M_TEXT) {
			m->has |= MP_HAS_TEXT;
			m->text = (const char *)b;
			m->text_len = blen;
		}
		return;
	}
	switch (id) {
	case MP_M_TIME: m->has |= MP_HAS_TIME; m->time_us = u; break;
	case MP_M_RSS: m->has |= MP_HAS_RSS; m->rss = u; break;
	case MP_M_HEAP_ARENA: m->has |= MP_HAS_HEAP_ARENA; m->heap_arena = u; break;
	case MP_M_HEAP_IN_USE: m->has |= MP_HAS_HEAP_IN_USE; m->heap_in_use = u; break;
	case MP_M_CHILD_PID: m->has |= MP_HAS_CHILD_PID; m->child_pid = u; break;
	case MP_M_COUNT: m->has |= MP_HAS_COUNT; m->count = u; break;
	case MP_M_STATUS:
		m->has |= MP_HAS_STATUS;
		m->status = type == MP_FIELD_SINT ? mp_unzigzag(u) : (int64_t)u;
		break;
	case MP_M_LEVEL: m->has |= MP_HAS_LEVEL; m->level = u; break;
	}
}

const char *mp_decode_tag_name(unsigned tag)
{
	switch (tag) {
	case MP_TAG_HEADER: return "header";
	case MP_TAG_TRAILER: return "trailer";
	case MP_TAG_THREAD: return "thread";
	case MP_TAG_SNAPSHOT: return "snapshot";
	case MP_TAG_MODULE: return "module";
	case MP_TAG_MODULE_UNLOAD: return "module-unload";
	case MP_TAG_STRING: return "string";
	case MP_TAG_SYMBOL: return "symbol";
	case MP_TAG_BLOCK: return "block";
	case MP_TAG_ALLOC_X: return "alloc";
	case MP_TAG_FREE_X: case MP_TAG_FREE_RANGE_X: return "free";
	default: return "marker";
	}
}

/*
 * A string reference of a 3.0 SYMBOL: 0 for none, else 1 + zigzag(d - 1) for
 * the string with id (strings so far + 1 - d): 1 is the latest string. An id
 * below 1 is malformed; one above the strings so far names a later string.
 */
static uint64_t get_string_ref(struct mp_decoder *d, struct cur *c)
{
	uint64_t ref = get_u(c), id;
	if (!ref)
		return 0;
	id = d->n_strings - (uint64_t)mp_unzigzag(ref - 1);
	if (!c->err && (id == 0 || (int64_t)id < 0))
		c->err = CUR_BAD;
	return id;
}

/*
 * SYMBOL. In 1.0 and 2.0: ip, module, offset, frames naming their strings by
 * id. In 3.0: module, the ip as its difference (zigzag) to the latest
 * TRACE's, the offset as its difference to ip minus the base of the
 * module's MODULE record (0 when there is none), so that a symbol written
 * after the TRACE of its ip spells out neither; frames name their strings
 * backwards from the latest.
 */
static ssize_t decode_symbol(struct mp_decoder *d, struct cur *c, struct mp_record *rec, bool v3)
{
	uint64_t base = 0, n;
	rec->type = MP_REC_SYMBOL;
	if (!v3)
		rec->u.symbol.ip = get_u(c);
	rec->u.symbol.module = get_u(c);
	if (v3) {
		mp_intmap_get(&d->module_base, rec->u.symbol.module, &base);
		rec->u.symbol.ip = d->last_ip + (uint64_t)mp_unzigzag(get_u(c));
		rec->u.symbol.offset = rec->u.symbol.ip - base + (uint64_t)mp_unzigzag(get_u(c));
	} else {
		rec->u.symbol.offset = get_u(c);
	}
	n = get_u(c);
	if (c->err)
		goto bad;
	if (n > MP_MAX_FRAMES || n > (uint64_t)(c->end - c->p) / 4)
		return mp_decode_fail(d, "symbol record claims %llu frames", (unsigned long long)n);
	ALLOC_GROW(d->frames, n, d->frames_alloc);
	for (uint64_t i = 0; i < n; i++) {
		d->frames[i].function = v3 ? get_string_ref(d, c) : get_u(c);
		d->frames[i].file = v3 ? get_string_ref(d, c) : get_u(c);
		d->frames[i].line = (uint32_t)get_u(c);
		d->frames[i].column = (uint32_t)get_u(c);
	}
	if (c->err)
		goto bad;
	rec->u.symbol.nframes = n;
	rec->u.symbol.frames = d->frames;
	return 0;
bad:
	return mp_decode_fail(d, "symbol record is %s", c->err == CUR_SHORT ? "shorter than its fields" : "malformed");
}

ssize_t mp_decode_sized(struct mp_decoder *d, unsigned tag, struct cur *c, struct mp_record *rec)
{
	size_t blen;
	const uint8_t *b;

	switch (tag) {
	case MP_TAG_HEADER:
		if (d->seen_header)
			return mp_decode_fail(d, "a second header record");
		rec->type = MP_REC_HEADER;
		if (parse_fields(c, header_field, &d->header))
			break;
		d->seen_header = true;
		rec->u.header = &d->header;
		return 0;
	case MP_TAG_TRAILER:
		rec->type = MP_REC_TRAILER;
		memset(&d->trailer, 0, sizeof(d->trailer));
		if (parse_fields(c, trailer_field, &d->trailer))
			break;
		d->trailer.present = true;
		rec->u.trailer = &d->trailer;
		return 0;
	case MP_TAG_THREAD: {
		uint64_t index = get_u(c);
		rec->type = MP_REC_THREAD;
		rec->u.thread.tid = get_u(c);
		b = get_bytes(c, &blen);
		if (c->err)
			break;
		if (mp_decode_grow_threads(d, index))
			return mp_decode_fail(d, "thread index %llu is out of range", (unsigned long long)index);
		rec->u.thread.index = (uint32_t)index;
		rec->u.thread.name = (const char *)b;
		rec->u.thread.name_len = blen;
		/* A (re)declared index starts a new thread: reset its deltas. */
		memset(&d->threads[index], 0, sizeof(d->threads[index]));
		return 0;
	}
	case MP_TAG_MODULE: {
		uint64_t nseg;
		rec->type = MP_REC_MODULE;
		rec->u.module.id = get_u(c);
		rec->u.module.base = get_u(c);
		rec->u.module.path = (const char *)get_bytes(c, &rec->u.module.path_len);
		rec->u.module.build_id = get_bytes(c, &rec->u.module.build_id_len);
		nseg = get_u(c);
		if (c->err)
			break;
		if (nseg > (uint64_t)(c->end - c->p) / 3)
			return mp_decode_fail(d, "module record claims %llu segments", (unsigned long long)nseg);
		ALLOC_GROW(d->seg, nseg, d->seg_alloc);
		for (uint64_t i = 0; i < nseg; i++) {
			d->seg[i].vaddr = get_u(c);
			d->seg[i].memsz = get_u(c);
			d->seg[i].flags = (uint32_t)get_u(c);
		}
		rec->u.module.nseg = nseg;
		rec->u.module.seg = d->seg;
		/* 3.0 SYMBOLs give offsets against it (the map keeps any value but UINT64_MAX). */
		if (d->header.major >= 3 && rec->u.module.base != UINT64_MAX)
			mp_intmap_put(&d->module_base, rec->u.module.id, rec->u.module.base);
		break;
	}
	case MP_TAG_MODULE_UNLOAD:
		rec->type = MP_REC_MODULE_UNLOAD;
		rec->u.unload.id = get_u(c);
		break;
	case MP_TAG_STRING:
		rec->type = MP_REC_STRING;
		if (d->header.major >= 3) {
			/* 3.0: the payload is the text; strings are numbered 1, 2, ... */
			rec->u.string.id = d->n_strings + 1;
			rec->u.string.text = (const char *)c->p;
			rec->u.string.len = (size_t)(c->end - c->p);
			c->p = c->end;
		} else {
			rec->u.string.id = get_u(c);
			rec->u.string.text = (const char *)get_bytes(c, &rec->u.string.len);
			if (c->err)
				break;
		}
		d->n_strings = rec->u.string.id;
		return 0;
	case MP_TAG_SYMBOL:
		return decode_symbol(d, c, rec, d->header.major >= 3);
	case MP_TAG_ATTACH: case MP_TAG_DETACH: case MP_TAG_FORK:
	case MP_TAG_LOST: case MP_TAG_EXIT: case MP_TAG_MESSAGE: case MP_TAG_SNAPSHOT:
	case MP_TAG_UNWIND:
		rec->type = tag == MP_TAG_ATTACH ? MP_REC_ATTACH
			: tag == MP_TAG_DETACH ? MP_REC_DETACH
			: tag == MP_TAG_FORK ? MP_REC_FORK
			: tag == MP_TAG_LOST ? MP_REC_LOST
			: tag == MP_TAG_EXIT ? MP_REC_EXIT
			: tag == MP_TAG_SNAPSHOT ? MP_REC_SNAPSHOT
			: tag == MP_TAG_UNWIND ? MP_REC_UNWIND : MP_REC_MESSAGE;
		memset(&rec->u.marker, 0, sizeof(rec->u.marker));
		parse_fields(c, marker_field, &rec->u.marker);
		break;
	case MP_TAG_TICK_AT: {
		/* A sample at a time rather than after one: as a TICK, never before the last one. */
		struct mp_marker m;
		memset(&m, 0, sizeof(m));
		parse_fields(c, marker_field, &m);
		if (c->err)
			break;
		if ((m.has & (MP_HAS_TIME | MP_HAS_RSS)) != (MP_HAS_TIME | MP_HAS_RSS))
			return mp_decode_fail(d, "TICK_AT record without its time and RSS");
		mp_decode_tick(d, rec, m.time_us > d->time_us ? m.time_us - d->time_us : 0, m.rss, true);
		return 0;
	}
	case MP_TAG_ALLOC_X: case MP_TAG_FREE_X: case MP_TAG_FREE_RANGE_X: {
		uint64_t kind = get_u(c), na, ns;
		int cls = tag == MP_TAG_ALLOC_X ? 1 : tag == MP_TAG_FREE_X ? 2 : 3;
		if (kind > UINT32_MAX)
			c->err = CUR_BAD;
		if (c->err)
			break;
		rec->u.ev.kind = (uint32_t)kind;
		mp_decode_event(d, c, cls, rec, &na, &ns);
		if (c->err)
			break;
		if (mp_decode_check_stack(d, rec))
			return -1;
		d->threads[d->cur_thread].last_addr = na;
		d->threads[d->cur_thread].last_stack = ns;
		return 0;
	}
	default:
		rec->type = MP_REC_UNKNOWN;
		rec->u.unknown.tag = tag;
		rec->u.unknown.len = (size_t)(c->end - c->p);
		rec->u.unknown.data = c->p;
		return 0;
	}
	if (c->err)
		return mp_decode_fail(d, "%s record is %s", mp_decode_tag_name(tag),
			    c->err == CUR_SHORT ? "shorter than its fields" : "malformed");
	return 0;
}
