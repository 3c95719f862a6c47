/* Capture files: the record decoder, the streaming reader and the writer. */
#include <config.h>
#include "lib/format/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/format/fields.h"
#include "lib/util/hash.h"
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

bool mp_kind_is_mapping(unsigned kind)
{
	return kind == MP_KIND_MMAP || kind == MP_KIND_MUNMAP || kind == MP_KIND_MREMAP;
}

/* ---- decoding ---------------------------------------------------------- */

/* A bounds-checked cursor: err is set to SHORT on overrun, BAD on an invalid varint. */
enum { CUR_OK, CUR_SHORT, CUR_BAD };
struct cur {
	const uint8_t *p, *end;
	int err;
};

static uint64_t get_u_slow(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift == 63 && b > 1) {
			c->err = CUR_BAD;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
	}
	if (!c->err)
		c->err = CUR_SHORT;
	return 0;
}

/*
 * Numbers are decoded inline without a bounds check per byte when the
 * record has room for the longest varint, and without a branch on their
 * length (the lengths of sizes, stack deltas and ages vary at random, and
 * a branch per byte mispredicted on most numbers).
 */
static inline __attribute__((always_inline)) uint64_t get_u(struct cur *c)
{
	const uint8_t *p = c->p;
	uint64_t v;
	if (__builtin_expect(c->end - p >= MP_VARINT_MAX, 1)) {
		unsigned n = mp_get_uvarint8(p, &v);
		if (__builtin_expect(n != 0, 1)) {
			c->p = p + n;
			return v;
		}
	} else if (p < c->end && *p < 0x80) {
		c->p = p + 1;
		return *p;
	}
	return get_u_slow(c);
}

static int64_t get_s(struct cur *c)
{
	return mp_unzigzag(get_u(c));
}

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

static uint64_t get_addr(struct cur *c, uint64_t last)
{
	uint64_t v = get_u(c);
	if (!(v & 1))
		return last + ((uint64_t)mp_unzigzag(v >> 1) << 4);
	if ((v >> 1) > 15) {
		c->err = CUR_BAD;
		return 0;
	}
	return last + (((uint64_t)get_s(c) << 4) | (v >> 1));
}

void mp_decoder_init(struct mp_decoder *d)
{
	memset(d, 0, sizeof(*d));
	strbuf_init(&d->err, 0);
	d->nthreads = 1;
	d->threads = xcalloc(1, sizeof(*d->threads));
}

void mp_header_release(struct mp_header *h)
{
	free(h->exe);
	free(h->hostname);
	free(h->cwd);
	free(h->tracker_version);
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
	free(d->seg);
	free(d->frames);
	strbuf_release(&d->err);
	memset(d, 0, sizeof(*d));
}

static ssize_t fail(struct mp_decoder *d, const char *fmt, ...) MP_PRINTF(2, 3);
static ssize_t fail(struct mp_decoder *d, const char *fmt, ...)
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
		return fail(d, "not a memprof capture (unknown file signature)");
	if (len < MP_MAGIC_LEN + 2)
		return 0;
	d->header.major = buf[MP_MAGIC_LEN];
	d->header.minor = buf[MP_MAGIC_LEN + 1];
	if (d->header.major < MP_FORMAT_MAJOR_MIN || d->header.major > MP_FORMAT_MAJOR)
		return fail(d, "capture format %u.%u is not readable by this memprof, which reads formats %d.x to %d.x%s",
			    d->header.major, d->header.minor, MP_FORMAT_MAJOR_MIN, MP_FORMAT_MAJOR,
			    d->header.major > MP_FORMAT_MAJOR ? "; upgrade memprof" : "");
	return MP_MAGIC_LEN + 2;
}

static int grow_threads(struct mp_decoder *d, uint64_t index)
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

static const char *tag_name(unsigned tag)
{
	switch (tag) {
	case MP_TAG_HEADER: return "header";
	case MP_TAG_TRAILER: return "trailer";
	case MP_TAG_THREAD: return "thread";
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

/* Decode an event's fields (after tag and, for extended forms, kind). */
static void decode_event(struct mp_decoder *d, struct cur *c, int cls, struct mp_record *rec,
			 uint64_t *new_addr, uint64_t *new_stack)
{
	struct mp_enc_thread *t = &d->threads[d->cur_thread];
	rec->thread = d->cur_thread;
	rec->u.ev.addr = get_addr(c, t->last_addr);
	*new_addr = rec->u.ev.addr;
	*new_stack = t->last_stack;
	rec->u.ev.size = 0;
	rec->u.ev.stack = 0;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = false;
	if (cls == 1) {
		rec->type = MP_REC_ALLOC;
		rec->u.ev.size = get_u(c);
		rec->u.ev.stack = t->last_stack + (uint64_t)get_s(c);
		*new_stack = rec->u.ev.stack;
	} else {
		rec->type = MP_REC_FREE;
		if (cls == 3) {
			rec->u.ev.ranged = true;
			rec->u.ev.size = get_u(c);
		}
	}
}

static ssize_t check_stack(struct mp_decoder *d, const struct mp_record *rec)
{
	if (rec->type == MP_REC_ALLOC && rec->u.ev.stack > d->n_traces)
		return fail(d, "allocation refers to trace node %llu, but only %llu are defined",
			    (unsigned long long)rec->u.ev.stack, (unsigned long long)d->n_traces);
	return 0;
}

/*
 * ALLOC_SEQ and FREE_SEQ: blocks named by serial number, shown as the
 * addresses MP_SERIAL_ADDR(serial). The state changes only for a whole record.
 */
static ssize_t decode_seq(struct mp_decoder *d, struct cur *c, unsigned tag,
			  struct mp_record *rec)
{
	struct mp_enc_thread *t = &d->threads[d->cur_thread];
	rec->thread = d->cur_thread;
	rec->u.ev.kind = tag & 15;
	rec->u.ev.ranged = false;
	rec->u.ev.serial = true;
	if (tag < MP_TAG_FREE_SEQ) {
		rec->type = MP_REC_ALLOC;
		rec->u.ev.size = get_u(c);
		rec->u.ev.stack = t->last_stack + (uint64_t)get_s(c);
		if (c->err)
			return 0;
		if (check_stack(d, rec))
			return -1;
		rec->u.ev.addr = MP_SERIAL_ADDR(d->n_seq);
		d->n_seq++;
		t->last_stack = rec->u.ev.stack;
	} else {
		uint64_t age = get_u(c);
		rec->type = MP_REC_FREE;
		rec->u.ev.size = 0;
		rec->u.ev.stack = 0;
		if (c->err)
			return 0;
		if (age >= d->n_seq)
			return fail(d, "a deallocation of block age %llu, but only %llu blocks were allocated by number",
				    (unsigned long long)age, (unsigned long long)d->n_seq);
		rec->u.ev.addr = MP_SERIAL_ADDR(d->n_seq - 1 - age);
	}
	return 0;
}

static ssize_t decode_sized(struct mp_decoder *d, unsigned tag, struct cur *c,
			    struct mp_record *rec)
{
	size_t blen;
	const uint8_t *b;

	switch (tag) {
	case MP_TAG_HEADER:
		if (d->seen_header)
			return fail(d, "a second header record");
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
		if (grow_threads(d, index))
			return fail(d, "thread index %llu is out of range", (unsigned long long)index);
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
			return fail(d, "module record claims %llu segments", (unsigned long long)nseg);
		ALLOC_GROW(d->seg, nseg, d->seg_alloc);
		for (uint64_t i = 0; i < nseg; i++) {
			d->seg[i].vaddr = get_u(c);
			d->seg[i].memsz = get_u(c);
			d->seg[i].flags = (uint32_t)get_u(c);
		}
		rec->u.module.nseg = nseg;
		rec->u.module.seg = d->seg;
		break;
	}
	case MP_TAG_MODULE_UNLOAD:
		rec->type = MP_REC_MODULE_UNLOAD;
		rec->u.unload.id = get_u(c);
		break;
	case MP_TAG_STRING:
		rec->type = MP_REC_STRING;
		rec->u.string.id = get_u(c);
		rec->u.string.text = (const char *)get_bytes(c, &rec->u.string.len);
		break;
	case MP_TAG_SYMBOL: {
		uint64_t n;
		rec->type = MP_REC_SYMBOL;
		rec->u.symbol.ip = get_u(c);
		rec->u.symbol.module = get_u(c);
		rec->u.symbol.offset = get_u(c);
		n = get_u(c);
		if (c->err)
			break;
		if (n > MP_MAX_FRAMES || n > (uint64_t)(c->end - c->p) / 4)
			return fail(d, "symbol record claims %llu frames", (unsigned long long)n);
		ALLOC_GROW(d->frames, n, d->frames_alloc);
		for (uint64_t i = 0; i < n; i++) {
			d->frames[i].function = get_u(c);
			d->frames[i].file = get_u(c);
			d->frames[i].line = (uint32_t)get_u(c);
			d->frames[i].column = (uint32_t)get_u(c);
		}
		rec->u.symbol.nframes = n;
		rec->u.symbol.frames = d->frames;
		break;
	}
	case MP_TAG_ATTACH: case MP_TAG_DETACH: case MP_TAG_FORK:
	case MP_TAG_LOST: case MP_TAG_EXIT: case MP_TAG_MESSAGE:
		rec->type = tag == MP_TAG_ATTACH ? MP_REC_ATTACH
			: tag == MP_TAG_DETACH ? MP_REC_DETACH
			: tag == MP_TAG_FORK ? MP_REC_FORK
			: tag == MP_TAG_LOST ? MP_REC_LOST
			: tag == MP_TAG_EXIT ? MP_REC_EXIT : MP_REC_MESSAGE;
		memset(&rec->u.marker, 0, sizeof(rec->u.marker));
		parse_fields(c, marker_field, &rec->u.marker);
		break;
	case MP_TAG_ALLOC_X: case MP_TAG_FREE_X: case MP_TAG_FREE_RANGE_X: {
		uint64_t kind = get_u(c), na, ns;
		int cls = tag == MP_TAG_ALLOC_X ? 1 : tag == MP_TAG_FREE_X ? 2 : 3;
		if (kind > UINT32_MAX)
			c->err = CUR_BAD;
		if (c->err)
			break;
		rec->u.ev.kind = (uint32_t)kind;
		decode_event(d, c, cls, rec, &na, &ns);
		if (c->err)
			break;
		if (check_stack(d, rec))
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
		return fail(d, "%s record is %s", tag_name(tag),
			    c->err == CUR_SHORT ? "shorter than its fields" : "malformed");
	return 0;
}

ssize_t mp_decode(struct mp_decoder *d, const uint8_t *buf, size_t len, struct mp_record *rec)
{
	struct cur c = { buf + 1, buf + len, CUR_OK };
	unsigned tag;

	if (!len)
		return 0;
	tag = buf[0];
	if (tag < MP_TAG_FIRST_SIZED) {
		if (!d->seen_header)
			return fail(d, "the stream does not start with a header record");
		if (tag >= MP_TAG_ALLOC && tag < MP_TAG_FREE_RANGE + 16) {
			uint64_t na, ns;
			rec->u.ev.kind = tag & 15;
			decode_event(d, &c, tag >> 4, rec, &na, &ns);
			if (c.err)
				goto bad;
			if (check_stack(d, rec))
				return -1;
			d->threads[d->cur_thread].last_addr = na;
			d->threads[d->cur_thread].last_stack = ns;
			return c.p - buf;
		}
		if (tag >= MP_TAG_ALLOC_SEQ && tag < MP_TAG_FREE_SEQ + 16) {
			if (decode_seq(d, &c, tag, rec) < 0)
				return -1;
			if (c.err)
				goto bad;
			return c.p - buf;
		}
		switch (tag) {
		case MP_TAG_THREAD_SWITCH: {
			uint64_t index = get_u(&c);
			if (c.err)
				goto bad;
			if (grow_threads(d, index))
				return fail(d, "thread index %llu is out of range",
					    (unsigned long long)index);
			d->cur_thread = (uint32_t)index;
			rec->type = MP_REC_SWITCH;
			rec->thread = (uint32_t)index;
			return c.p - buf;
		}
		case MP_TAG_TRACE: {
			uint64_t back = get_u(&c), index = d->n_traces + 1;
			int64_t delta = get_s(&c);
			if (c.err)
				goto bad;
			if (back == 0 || back > index)
				return fail(d, "trace node %llu has an invalid parent",
					    (unsigned long long)index);
			rec->type = MP_REC_TRACE;
			rec->u.trace.index = index;
			rec->u.trace.parent = index - back;
			rec->u.trace.ip = d->last_ip + (uint64_t)delta;
			d->last_ip = rec->u.trace.ip;
			d->n_traces = index;
			return c.p - buf;
		}
		case MP_TAG_TICK: {
			uint64_t delta = get_u(&c), rss = get_u(&c);
			if (c.err)
				goto bad;
			rec->type = MP_REC_TICK;
			d->time_us += delta;
			rec->u.tick.time_us = d->time_us;
			rec->u.tick.delta_us = delta;
			rec->u.tick.rss = rss;
			return c.p - buf;
		}
		default:
			return fail(d, "unknown record type 0x%02x", tag);
		}
	} else {
		uint64_t plen = get_u(&c);
		size_t hdr;
		if (c.err)
			goto bad;
		if (plen > MP_MAX_RECORD_LEN)
			return fail(d, "%s record length %llu exceeds the limit", tag_name(tag),
				    (unsigned long long)plen);
		hdr = (size_t)(c.p - buf);
		if (plen > len - hdr)
			return 0;
		if (!d->seen_header && tag != MP_TAG_HEADER)
			return fail(d, "the stream does not start with a header record");
		c.end = c.p + plen;
		if (tag == MP_TAG_BLOCK) {
			rec->type = MP_REC_UNKNOWN;
			rec->u.unknown.tag = tag;
			rec->u.unknown.len = (size_t)plen;
			rec->u.unknown.data = c.p;
			return (ssize_t)(hdr + plen);
		}
		if (decode_sized(d, tag, &c, rec))
			return -1;
		return (ssize_t)(hdr + plen);
	}
bad:
	if (c.err == CUR_SHORT)
		return 0;
	return fail(d, "malformed number in a record of type 0x%02x", tag);
}

/*
 * A scratch buffer of at least n bytes whose old contents do not matter
 * (decompression targets, compressed output): freed and allocated anew.
 */
static void scratch(uint8_t **buf, size_t *alloc, size_t n)
{
	if (n > *alloc) {
		free(*buf);
		*buf = xmalloc(n);
		*alloc = n;
	}
}

/* ---- the reader --------------------------------------------------------- */

#define READ_CHUNK (1u << 20)

static int reader_fail(struct mp_reader *r, enum mp_read_status st, const char *fmt, ...)
	MP_PRINTF(3, 4);
static int reader_fail(struct mp_reader *r, enum mp_read_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vsetf(&r->err, fmt, ap);
	va_end(ap);
	r->status = st;
	return -1;
}

/* Read more bytes into the buffer; returns bytes read, 0 at EOF, -1 on error. */
static ssize_t reader_fill(struct mp_reader *r)
{
	ssize_t n;
	if (r->eof)
		return 0;
	if (r->buf_pos && (r->buf_pos == r->buf_len || r->buf_pos > r->buf_alloc / 2)) {
		memmove(r->buf, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
		r->offset += r->buf_pos;
		r->buf_len -= r->buf_pos;
		r->buf_pos = 0;
	}
	if (r->buf_alloc - r->buf_len < READ_CHUNK / 4) {
		size_t want = r->buf_alloc ? r->buf_alloc * 2 : READ_CHUNK;
		if (want > MP_MAX_RECORD_LEN + 2 * READ_CHUNK)
			want = MP_MAX_RECORD_LEN + 2 * READ_CHUNK;
		if (want > r->buf_alloc) {
			r->buf = xrealloc(r->buf, want);
			r->buf_alloc = want;
		}
	}
	do
		n = read(r->fd, r->buf + r->buf_len, r->buf_alloc - r->buf_len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		r->eof = true;
	r->buf_len += (size_t)n;
	return n;
}

static void reader_init(struct mp_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	strbuf_init(&r->err, 0);
	mp_decoder_init(&r->dec);
}

static int reader_start(struct mp_reader *r)
{
	struct mp_record rec;
	ssize_t n;

	/* The preamble. */
	for (;;) {
		n = mp_decode_preamble(&r->dec, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
		if (n > 0)
			break;
		if (n < 0)
			return reader_fail(r, MP_READ_CORRUPT, "'%s' is %s", r->name, r->dec.err.buf);
		if (r->eof) {
			if (!r->buf_len)
				return reader_fail(r, MP_READ_CORRUPT,
						   "'%s' is empty, not a memprof capture", r->name);
			return reader_fail(r, MP_READ_TRUNCATED,
					   "'%s' is truncated inside its header", r->name);
		}
		if (reader_fill(r) < 0)
			return reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name,
					   strerror(errno));
	}
	r->buf_pos += (size_t)n;
	/* The header record, which must come first. */
	for (;;) {
		n = mp_decode(&r->dec, r->buf + r->buf_pos, r->buf_len - r->buf_pos, &rec);
		if (n > 0)
			break;
		if (n < 0)
			return reader_fail(r, MP_READ_CORRUPT, "'%s' has a corrupt header: %s",
					   r->name, r->dec.err.buf);
		if (r->eof)
			return reader_fail(r, MP_READ_TRUNCATED,
					   "'%s' is truncated inside its header", r->name);
		if (reader_fill(r) < 0)
			return reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name,
					   strerror(errno));
	}
	if (rec.type != MP_REC_HEADER)
		return reader_fail(r, MP_READ_CORRUPT, "'%s' has a corrupt header", r->name);
	r->buf_pos += (size_t)n;
	r->n_records = 1;
	return 0;
}

int mp_reader_open_fd(struct mp_reader *r, int fd, const char *name)
{
	struct stat st;
	reader_init(r);
	r->fd = fd;
	r->name = xstrdup(name);
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return reader_fail(r, MP_READ_CORRUPT,
					   "'%s' is a directory, not a capture file", name);
		if (S_ISREG(st.st_mode))
			r->file_size = (uint64_t)st.st_size;
	}
	return reader_start(r);
}

int mp_reader_open(struct mp_reader *r, const char *path)
{
	int fd;
	if (!strcmp(path, "-"))
		return mp_reader_open_fd(r, 0, "standard input");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		reader_init(r);
		r->name = xstrdup(path);
		return reader_fail(r, MP_READ_CORRUPT, "cannot open '%s': %s", path, strerror(err));
	}
	if (mp_reader_open_fd(r, fd, path) < 0) {
		r->own_fd = true;
		return -1;
	}
	r->own_fd = true;
	return 0;
}

void mp_reader_release(struct mp_reader *r)
{
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->name);
	free(r->buf);
	free(r->block);
	free(r->fields);
	if (r->dctx)
		ZSTD_freeDCtx(r->dctx);
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->strings);
	mp_decoder_release(&r->dec);
	strbuf_release(&r->err);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

const char *mp_reader_string(const struct mp_reader *r, uint64_t id)
{
	if (!id || id > r->nstrings)
		return NULL;
	return r->strings[id - 1];
}

/* A block of field streams (codec 2) into r->block: each stream stored or compressed, then joined. */
static int reader_join_fields(struct mp_reader *r, struct cur *c, uint64_t raw, uint64_t at)
{
	uint64_t n[MP_FS_COUNT], st[MP_FS_COUNT], sum = 0, stored = 0;
	const uint8_t *s[MP_FS_COUNT];
	size_t len[MP_FS_COUNT], off = 0;
	const uint8_t *data;
	const char *why = NULL;

	for (int i = 0; i < MP_FS_COUNT; i++) {
		n[i] = get_u(c);
		st[i] = get_u(c);
		if (!c->err && (st[i] > n[i] || (n[i] && !st[i])))
			c->err = CUR_BAD;
		sum += n[i];
		stored += st[i];
	}
	if (c->err || sum != raw || stored != (uint64_t)(c->end - c->p))
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': corrupt field streams in the block at offset %llu", r->name,
				   (unsigned long long)at);
	scratch(&r->fields, &r->fields_alloc, raw);
	data = c->p;
	for (int i = 0; i < MP_FS_COUNT; i++) {
		s[i] = r->fields + off;
		len[i] = (size_t)n[i];
		if (st[i] == n[i]) {
			memcpy(r->fields + off, data, len[i]);
		} else {
			size_t got = ZSTD_decompressDCtx(r->dctx, r->fields + off, len[i], data,
							 (size_t)st[i]);
			if (ZSTD_isError(got) || got != len[i])
				return reader_fail(r, MP_READ_CORRUPT,
						   "'%s': field stream %d of the block at offset %llu does not decompress (%s)",
						   r->name, i, (unsigned long long)at,
						   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
		}
		data += st[i];
		off += len[i];
	}
	if (mp_fields_join(s, len, r->block, (size_t)raw, &why) < 0)
		return reader_fail(r, MP_READ_CORRUPT, "'%s': corrupt block at offset %llu: %s",
				   r->name, (unsigned long long)at, why);
	return 0;
}

static int reader_open_block(struct mp_reader *r, const struct mp_record *rec, uint64_t at)
{
	struct cur c = { rec->u.unknown.data, rec->u.unknown.data + rec->u.unknown.len, CUR_OK };
	uint64_t codec = get_u(&c), raw = get_u(&c);
	if (c.err)
		return reader_fail(r, MP_READ_CORRUPT, "'%s': corrupt block at offset %llu", r->name,
				   (unsigned long long)at);
	if (codec != MP_CODEC_ZSTD && codec != MP_CODEC_ZSTD_FIELDS)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': block at offset %llu uses unknown codec %llu", r->name,
				   (unsigned long long)at, (unsigned long long)codec);
	if (raw > MP_MAX_BLOCK_RAW)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': block at offset %llu claims %llu bytes", r->name,
				   (unsigned long long)at, (unsigned long long)raw);
	if (!r->dctx)
		r->dctx = ZSTD_createDCtx();
	scratch(&r->block, &r->block_alloc, raw);
	if (codec == MP_CODEC_ZSTD_FIELDS) {
		if (reader_join_fields(r, &c, raw, at) < 0)
			return -1;
	} else {
		size_t got = ZSTD_decompressDCtx(r->dctx, r->block, raw, c.p, (size_t)(c.end - c.p));
		if (ZSTD_isError(got) || got != raw)
			return reader_fail(r, MP_READ_CORRUPT,
					   "'%s': block at offset %llu does not decompress (%s)", r->name,
					   (unsigned long long)at,
					   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	}
	r->block_len = raw;
	r->block_pos = 0;
	r->block_offset = at;
	return 0;
}

static int reader_string(struct mp_reader *r, const struct mp_record *rec, uint64_t at)
{
	if (rec->u.string.id != r->nstrings + 1)
		return reader_fail(r, MP_READ_CORRUPT,
				   "'%s': string %llu out of sequence at offset %llu", r->name,
				   (unsigned long long)rec->u.string.id, (unsigned long long)at);
	ALLOC_GROW(r->strings, r->nstrings + 1, r->strings_alloc);
	r->strings[r->nstrings++] = xstrndup(rec->u.string.text, rec->u.string.len);
	return 0;
}

int mp_reader_next(struct mp_reader *r, struct mp_record *rec)
{
	ssize_t n;
	uint64_t at;

	if (r->status != MP_READ_OK || r->fd < 0)
		return 0;
	for (;;) {
		if (r->block_pos < r->block_len) {
			n = mp_decode(&r->dec, r->block + r->block_pos, r->block_len - r->block_pos,
				      rec);
			if (n <= 0) {
				reader_fail(r, MP_READ_CORRUPT,
					    "'%s': corrupt data in the block at offset %llu: %s",
					    r->name, (unsigned long long)r->block_offset,
					    n ? r->dec.err.buf : "record cut at the block's end");
				return 0;
			}
			if (rec->type == MP_REC_UNKNOWN && rec->u.unknown.tag == MP_TAG_BLOCK) {
				reader_fail(r, MP_READ_CORRUPT,
					    "'%s': a block inside the block at offset %llu", r->name,
					    (unsigned long long)r->block_offset);
				return 0;
			}
			r->block_pos += (size_t)n;
			if (rec->type == MP_REC_STRING &&
			    reader_string(r, rec, r->block_offset) < 0)
				return 0;
			r->n_records++;
			return 1;
		}
		at = mp_reader_offset(r);
		n = mp_decode(&r->dec, r->buf + r->buf_pos, r->buf_len - r->buf_pos, rec);
		if (n == 0) {
			ssize_t got;
			if (r->eof) {
				if (r->buf_pos < r->buf_len)
					reader_fail(r, MP_READ_TRUNCATED,
						    "'%s' is truncated: the last record, at offset %llu, is incomplete (%zu bytes)",
						    r->name, (unsigned long long)at,
						    r->buf_len - r->buf_pos);
				return 0;
			}
			got = reader_fill(r);
			if (got < 0) {
				reader_fail(r, MP_READ_CORRUPT, "cannot read '%s': %s", r->name,
					    strerror(errno));
				return 0;
			}
			continue;
		}
		if (n < 0) {
			reader_fail(r, MP_READ_CORRUPT, "'%s' is corrupt at offset %llu: %s", r->name,
				    (unsigned long long)at, r->dec.err.buf);
			return 0;
		}
		r->buf_pos += (size_t)n;
		if (rec->type == MP_REC_UNKNOWN && rec->u.unknown.tag == MP_TAG_BLOCK) {
			if (reader_open_block(r, rec, at) < 0)
				return 0;
			continue;
		}
		if (rec->type == MP_REC_STRING && reader_string(r, rec, at) < 0)
			return 0;
		r->n_records++;
		return 1;
	}
}

/* ---- the writer --------------------------------------------------------- */

#define BLOCK_RAW (1u << 20)
#define ZSTD_LEVEL 1

static void writer_init(struct mp_writer *w, int fd, const char *name, unsigned flags)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->path = xstrdup(name);
	w->flags = flags;
	w->nthreads = 1;
	w->threads = xcalloc(1, sizeof(*w->threads));
}

static void write_all(struct mp_writer *w, const void *buf, size_t len)
{
	const char *p = buf;
	if (w->errnum)
		return;
	while (len) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->errnum = errno;
			return;
		}
		p += n;
		len -= (size_t)n;
		w->bytes_written += (uint64_t)n;
	}
}

int mp_writer_fdopen(struct mp_writer *w, int fd, const char *name, unsigned flags)
{
	uint8_t pre[MP_MAGIC_LEN + 2];
	writer_init(w, fd, name, flags);
	memcpy(pre, MP_MAGIC, MP_MAGIC_LEN);
	pre[MP_MAGIC_LEN] = MP_FORMAT_MAJOR;
	pre[MP_MAGIC_LEN + 1] = MP_FORMAT_MINOR;
	write_all(w, pre, sizeof(pre));
	if (w->errnum) {
		errno = w->errnum;
		return -1;
	}
	return 0;
}

int mp_writer_open(struct mp_writer *w, const char *path, unsigned flags)
{
	int oflags = O_WRONLY | O_CREAT | O_CLOEXEC | ((flags & MP_WRITER_FORCE) ? O_TRUNC : O_EXCL);
	int fd = open(path, oflags, 0644);
	if (fd < 0)
		return -1;
	if (mp_writer_fdopen(w, fd, path, flags) < 0) {
		int err = errno;
		close(fd);
		free(w->path);
		free(w->threads);
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * The block being built is kept as field streams (lib/format/fields.h): events are
 * encoded straight into them, other records are encoded in w->raw and split.
 * A flush writes a BLOCK of field streams (codec 2), each compressed on its
 * own or stored when that does not make it smaller; or, with
 * MP_WRITER_ONE_FRAME or MP_WRITER_NO_COMPRESS, or when that is not smaller
 * than the records, the records joined again, in one zstd frame (codec 1)
 * or as they are.
 */

/* Writes the block as field streams; -1 when that would not be smaller. */
static int flush_fields(struct mp_writer *w, size_t raw_len)
{
	struct mp_fields *f = &w->fields;
	uint8_t head[1 + MP_VARINT_MAX];
	uint8_t payload[(2 + 2 * MP_FS_COUNT) * MP_VARINT_MAX], *p = payload, *h = head, *q;
	size_t bound = 0, stored[MP_FS_COUNT], total;

	for (int i = 0; i < MP_FS_COUNT; i++)
		bound += ZSTD_compressBound(f->len[i]);
	scratch(&w->out, &w->out_alloc, bound);
	q = w->out;
	for (int i = 0; i < MP_FS_COUNT; i++) {
		size_t c = 0;
		if (f->len[i]) {
			c = ZSTD_compressCCtx(w->cctx, q, w->out_alloc - (size_t)(q - w->out), f->p[i],
					      f->len[i], ZSTD_LEVEL);
			if (ZSTD_isError(c) || c >= f->len[i]) {
				memcpy(q, f->p[i], f->len[i]);
				c = f->len[i];
			}
		}
		stored[i] = c;
		q += c;
	}
	total = (size_t)(q - w->out);
	p = mp_put_uvarint(p, MP_CODEC_ZSTD_FIELDS);
	p = mp_put_uvarint(p, raw_len);
	for (int i = 0; i < MP_FS_COUNT; i++) {
		p = mp_put_uvarint(p, f->len[i]);
		p = mp_put_uvarint(p, stored[i]);
	}
	if ((size_t)(p - payload) + total >= raw_len)
		return -1;
	*h++ = MP_TAG_BLOCK;
	h = mp_put_uvarint(h, (uint64_t)(p - payload) + total);
	write_all(w, head, (size_t)(h - head));
	write_all(w, payload, (size_t)(p - payload));
	write_all(w, w->out, total);
	return 0;
}

/* Room for len bytes of scratch in w->raw. */
static void raw_room(struct mp_writer *w, size_t len)
{
	size_t a = w->raw_alloc ? w->raw_alloc : 64 * 1024;
	while (a < len)
		a *= 2;
	scratch(&w->raw, &w->raw_alloc, a);
}

/* Writes the block as one zstd frame (codec 1); -1 when that would not be smaller. */
static int flush_one_frame(struct mp_writer *w, size_t raw_len)
{
	/* BLOCK: tag, length, codec, raw length, zstd frame. */
	uint8_t head[1 + 3 * MP_VARINT_MAX], *h = head, *p;
	uint8_t inner[2 * MP_VARINT_MAX];
	size_t csize;
	scratch(&w->out, &w->out_alloc, ZSTD_compressBound(raw_len));
	csize = ZSTD_compressCCtx(w->cctx, w->out, w->out_alloc, w->raw, raw_len, ZSTD_LEVEL);
	if (ZSTD_isError(csize) || csize >= raw_len)
		return -1;
	p = mp_put_uvarint(inner, MP_CODEC_ZSTD);
	p = mp_put_uvarint(p, raw_len);
	*h++ = MP_TAG_BLOCK;
	h = mp_put_uvarint(h, (uint64_t)(p - inner) + csize);
	memcpy(h, inner, (size_t)(p - inner));
	h += p - inner;
	write_all(w, head, (size_t)(h - head));
	write_all(w, w->out, csize);
	return 0;
}

int mp_writer_flush(struct mp_writer *w)
{
	size_t raw_len = mp_fields_total(&w->fields);
	if (raw_len) {
		const uint8_t *s[MP_FS_COUNT];
		const char *why = NULL;
		if (!(w->flags & MP_WRITER_NO_COMPRESS) && !w->cctx)
			w->cctx = ZSTD_createCCtx();
		if ((w->flags & (MP_WRITER_NO_COMPRESS | MP_WRITER_ONE_FRAME)) ||
		    flush_fields(w, raw_len) < 0) {
			/* The records themselves, joined again from their fields. */
			raw_room(w, raw_len);
			for (int i = 0; i < MP_FS_COUNT; i++)
				s[i] = w->fields.p[i];
			if (mp_fields_join(s, w->fields.len, w->raw, raw_len, &why) < 0)
				BUG("the writer's field streams do not join: %s", why);
			if ((w->flags & MP_WRITER_NO_COMPRESS) || flush_one_frame(w, raw_len) < 0)
				write_all(w, w->raw, raw_len);
		}
		mp_fields_reset(&w->fields);
		w->hot_check = 0;
	}
	if (w->errnum) {
		errno = w->errnum;
		return -1;
	}
	return 0;
}

/* Before adding len bytes of records: a block never grows past BLOCK_RAW but by one record. */
static void block_room(struct mp_writer *w, size_t len)
{
	size_t have = mp_fields_total(&w->fields);
	if (have && have + len > BLOCK_RAW)
		mp_writer_flush(w);
}

/* Scratch room for encoding records of at most len bytes, to be committed. */
static uint8_t *reserve(struct mp_writer *w, size_t len)
{
	block_room(w, len);
	raw_room(w, len);
	return w->raw;
}

static void add_records(struct mp_writer *w, const uint8_t *records, size_t len)
{
	w->hot_check = 0; /* the next hot event sums the streams again */
	if (mp_fields_append(&w->fields, records, len) < 0) {
		/* Not records this writer knows: they go out as they are, in order. */
		mp_writer_flush(w);
		write_all(w, records, len);
		return;
	}
	/* An oversized record goes out at once rather than into a huge block. */
	if (mp_fields_total(&w->fields) > BLOCK_RAW)
		mp_writer_flush(w);
}

/* The record(s) encoded in w->raw up to end join the block. */
static void commit(struct mp_writer *w, const uint8_t *end)
{
	w->n_records++;
	add_records(w, w->raw, (size_t)(end - w->raw));
}

void mp_writer_raw(struct mp_writer *w, const void *records, size_t len)
{
	if (!len)
		return; /* callers pass what lies between records, often nothing */
	block_room(w, len);
	add_records(w, records, len);
}

int mp_writer_close(struct mp_writer *w)
{
	int err;
	mp_writer_flush(w);
	err = w->errnum;
	if (w->fd >= 0 && close(w->fd) < 0 && !err)
		err = errno;
	if (w->cctx)
		ZSTD_freeCCtx(w->cctx);
	mp_fields_release(&w->fields);
	mp_intmap_release(&w->serials);
	free(w->raw);
	free(w->out);
	free(w->threads);
	free(w->path);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* A growable scratch buffer for sized records. */
struct rbuf {
	uint8_t *p;
	size_t len, alloc;
};

static uint8_t *rb_room(struct rbuf *b, size_t n)
{
	ALLOC_GROW(b->p, b->len + n, b->alloc);
	return b->p + b->len;
}
static void rb_u(struct rbuf *b, uint64_t v)
{
	b->len = (size_t)(mp_put_uvarint(rb_room(b, MP_VARINT_MAX), v) - b->p);
}
static void rb_bytes(struct rbuf *b, const void *d, size_t n)
{
	rb_u(b, n);
	if (n)
		memcpy(rb_room(b, n), d, n);
	b->len += n;
}
static void rb_fu(struct rbuf *b, unsigned id, uint64_t v)
{
	rb_u(b, MP_FIELD_KEY((uint64_t)id, MP_FIELD_UINT));
	rb_u(b, v);
}
static void rb_fb(struct rbuf *b, unsigned id, const void *d, size_t n)
{
	rb_u(b, MP_FIELD_KEY((uint64_t)id, MP_FIELD_BYTES));
	rb_bytes(b, d, n);
}

/* Append tag, length and the payload in b, then free b. */
static void put_sized(struct mp_writer *w, unsigned tag, struct rbuf *b)
{
	uint8_t *p = reserve(w, 1 + MP_VARINT_MAX + b->len);
	*p++ = (uint8_t)tag;
	p = mp_put_uvarint(p, b->len);
	if (b->len)
		memcpy(p, b->p, b->len);
	commit(w, p + b->len);
	free(b->p);
}

static void header_payload(struct rbuf *b, const struct mp_header *h)
{
	rb_fu(b, MP_H_PID, h->pid);
	rb_fu(b, MP_H_PPID, h->ppid);
	if (h->argv) {
		struct rbuf a = { 0 };
		for (size_t i = 0; i < h->argc; i++) {
			size_t n = strlen(h->argv[i]) + 1;
			memcpy(rb_room(&a, n), h->argv[i], n);
			a.len += n;
		}
		rb_fb(b, MP_H_ARGV, a.p, a.len);
		free(a.p);
	}
	if (h->exe)
		rb_fb(b, MP_H_EXE, h->exe, strlen(h->exe));
	rb_fu(b, MP_H_START_TIME, h->start_time_us);
	if (h->hostname)
		rb_fb(b, MP_H_HOSTNAME, h->hostname, strlen(h->hostname));
	rb_fu(b, MP_H_PAGE_SIZE, h->page_size);
	rb_fu(b, MP_H_MODE, h->mode);
	rb_fu(b, MP_H_MAX_DEPTH, h->max_depth);
	rb_fu(b, MP_H_INTERVAL_MS, h->interval_ms);
	rb_fu(b, MP_H_FLAGS, h->flags);
	rb_fu(b, MP_H_MAIN_TID, h->main_tid);
	rb_fu(b, MP_H_MACHINE, h->machine);
	rb_fu(b, MP_H_POINTER_SIZE, h->pointer_size);
	if (h->tracker_version)
		rb_fb(b, MP_H_TRACKER_VERSION, h->tracker_version, strlen(h->tracker_version));
	if (h->cwd)
		rb_fb(b, MP_H_CWD, h->cwd, strlen(h->cwd));
	if (h->forked_from)
		rb_fu(b, MP_H_FORKED_FROM, h->forked_from);
}

uint8_t *mp_encode_header(const struct mp_header *h, size_t *len)
{
	struct rbuf b = { 0 }, out = { 0 };
	header_payload(&b, h);
	*rb_room(&out, 1) = MP_TAG_HEADER;
	out.len = 1;
	rb_u(&out, b.len);
	memcpy(rb_room(&out, b.len), b.p, b.len);
	out.len += b.len;
	free(b.p);
	*len = out.len;
	return out.p;
}

void mp_writer_header(struct mp_writer *w, const struct mp_header *h)
{
	unsigned flags = w->flags;
	struct rbuf b = { 0 };
	if (mp_fields_total(&w->fields) || w->n_records)
		BUG("the header must be the first record");
	header_payload(&b, h);
	put_sized(w, MP_TAG_HEADER, &b);
	/* Uncompressed, so a reader can validate a capture before decompressing anything. */
	w->flags |= MP_WRITER_NO_COMPRESS;
	mp_writer_flush(w);
	w->flags = flags;
}

void mp_writer_trailer(struct mp_writer *w, const struct mp_trailer *t)
{
	struct rbuf b = { 0 };
	rb_fu(&b, MP_T_END_TIME, t->end_time_us);
	if (t->duration_us)
		rb_fu(&b, MP_T_DURATION, t->duration_us);
	if (t->end_reason)
		rb_fu(&b, MP_T_END_REASON, t->end_reason);
	if (t->has_exit_code)
		rb_fu(&b, MP_T_EXIT_CODE, (uint64_t)t->exit_code);
	if (t->has_exit_signal)
		rb_fu(&b, MP_T_EXIT_SIGNAL, (uint64_t)t->exit_signal);
	if (t->core_dumped)
		rb_fu(&b, MP_T_CORE_DUMPED, 1);
	rb_fu(&b, MP_T_N_ALLOCS, t->n_allocs);
	rb_fu(&b, MP_T_N_FREES, t->n_frees);
	rb_fu(&b, MP_T_BYTES_ALLOCATED, t->bytes_allocated);
	rb_fu(&b, MP_T_N_TRACES, t->n_traces);
	rb_fu(&b, MP_T_N_SYMBOLS, t->n_symbols);
	rb_fu(&b, MP_T_N_RECORDS, t->n_records);
	if (t->n_lost)
		rb_fu(&b, MP_T_N_LOST, t->n_lost);
	put_sized(w, MP_TAG_TRAILER, &b);
}

static void writer_grow_threads(struct mp_writer *w, uint32_t thread)
{
	if (thread >= w->nthreads) {
		size_t n = w->nthreads;
		while (n <= thread)
			n *= 2;
		w->threads = xreallocarray(w->threads, n, sizeof(*w->threads));
		memset(w->threads + w->nthreads, 0, (n - w->nthreads) * sizeof(*w->threads));
		w->nthreads = n;
	}
}

void mp_writer_thread(struct mp_writer *w, uint32_t index, uint64_t tid, const char *name)
{
	struct rbuf b = { 0 };
	rb_u(&b, index);
	rb_u(&b, tid);
	rb_bytes(&b, name ? name : "", name ? strlen(name) : 0);
	/* A (re)declared index starts from zero deltas, as a reader resets it. */
	writer_grow_threads(w, index);
	memset(&w->threads[index], 0, sizeof(w->threads[index]));
	put_sized(w, MP_TAG_THREAD, &b);
}

/* Heap blocks are named by serial number when the writer was asked to (not mappings). */
static bool by_serial(const struct mp_writer *w, unsigned kind)
{
	return (w->flags & MP_WRITER_SERIALS) && kind < 16 && !mp_kind_is_mapping(kind);
}

/*
 * Events are encoded straight into the field streams, the layout
 * lib/format/fields.c splits records into: the hot ones (ALLOC_SEQ, FREE_SEQ and
 * thread switches) field by field, those with addresses as whole records
 * that are split.
 */
static void put_tag(struct mp_fields *f, unsigned tag)
{
	*mp_fields_room(f, MP_FS_TAGS, 1) = (uint8_t)tag;
	f->len[MP_FS_TAGS]++;
}

static void put_uvarint(struct mp_fields *f, int stream, uint64_t v)
{
	uint8_t *o = mp_fields_room(f, stream, MP_VARINT_MAX);
	f->len[stream] += (size_t)(mp_put_uvarint8(o, v) - o);
}

/* The most a hot event and the switch before it add to a block. */
#define HOT_EVENT_MAX (MP_ENC_MAX_EVENT + 1 + MP_VARINT_MAX)

/* The switch to the event's thread, when needed; the thread's delta state. */
static struct mp_enc_thread *stream_switch(struct mp_writer *w, uint32_t thread)
{
	/*
	 * Summing the streams for every event costs more than the event: after
	 * a sum, the block has room for at least (BLOCK_RAW - sum) / HOT_EVENT_MAX
	 * more hot events, counted on the tag stream.
	 */
	if (w->fields.len[MP_FS_TAGS] >= w->hot_check) {
		size_t have;
		block_room(w, HOT_EVENT_MAX);
		have = mp_fields_total(&w->fields);
		w->hot_check = w->fields.len[MP_FS_TAGS] + (BLOCK_RAW - have) / HOT_EVENT_MAX / 2;
	}
	if (thread >= w->nthreads)
		writer_grow_threads(w, thread);
	if (thread != w->cur_thread) {
		put_tag(&w->fields, MP_TAG_THREAD_SWITCH);
		put_uvarint(&w->fields, MP_FS_OTHER, thread);
		w->cur_thread = thread;
		w->n_records++;
	}
	return &w->threads[thread];
}

uint64_t mp_writer_alloc_seq(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t size,
			     uint64_t stack)
{
	struct mp_enc_thread *t = stream_switch(w, thread);
	put_tag(&w->fields, MP_TAG_ALLOC_SEQ + kind);
	put_uvarint(&w->fields, MP_FS_SIZES, size);
	put_uvarint(&w->fields, MP_FS_STACKS, mp_zigzag((int64_t)(stack - t->last_stack)));
	t->last_stack = stack;
	w->n_records++;
	w->n_allocs++;
	w->bytes_allocated += size;
	return w->n_seq++;
}

void mp_writer_free_seq(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t serial)
{
	stream_switch(w, thread);
	put_tag(&w->fields, MP_TAG_FREE_SEQ + kind);
	put_uvarint(&w->fields, MP_FS_AGES, w->n_seq - 1 - serial);
	w->n_records++;
	w->n_frees++;
}

void mp_writer_alloc(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr,
		     uint64_t size, uint64_t stack)
{
	uint8_t *p;
	struct mp_enc_thread *t;
	if (by_serial(w, kind)) {
		/*
		 * A block at an address still live lost its free (events were lost):
		 * it stays live in the capture, as in one that kept addresses and
		 * saw no free, and the address now names the new block.
		 */
		mp_intmap_put(&w->serials, addr, mp_writer_alloc_seq(w, thread, kind, size, stack));
		return;
	}
	t = stream_switch(w, thread);
	p = reserve(w, 2 * MP_ENC_MAX_EVENT); /* room for the extended form, a sized record */
	commit(w, mp_enc_alloc(p, t, kind, addr, size, stack));
	w->n_allocs++;
	w->bytes_allocated += size;
}

void mp_writer_free(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr)
{
	uint8_t *p;
	struct mp_enc_thread *t;
	uint64_t serial;
	/* A block this writer did not number (allocated before tracking began) keeps its address. */
	if (by_serial(w, kind) && mp_intmap_take(&w->serials, addr, &serial)) {
		mp_writer_free_seq(w, thread, kind, serial);
		return;
	}
	t = stream_switch(w, thread);
	p = reserve(w, 2 * MP_ENC_MAX_EVENT);
	commit(w, mp_enc_free(p, t, kind, addr, 0, 0));
	w->n_frees++;
}

void mp_writer_free_range(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr,
			  uint64_t size)
{
	struct mp_enc_thread *t = stream_switch(w, thread);
	uint8_t *p = reserve(w, 2 * MP_ENC_MAX_EVENT);
	commit(w, mp_enc_free(p, t, kind, addr, 1, size));
	w->n_frees++;
}

uint64_t mp_writer_trace(struct mp_writer *w, uint64_t parent, uint64_t ip)
{
	uint64_t index = w->n_traces + 1;
	uint8_t *p = reserve(w, MP_ENC_MAX_EVENT);
	if (parent >= index)
		BUG("trace parent %llu is not an earlier node", (unsigned long long)parent);
	commit(w, mp_enc_trace(p, index, parent, ip, &w->last_ip));
	w->n_traces = index;
	return index;
}

void mp_writer_tick(struct mp_writer *w, uint64_t time_us, uint64_t rss)
{
	uint8_t *p = reserve(w, MP_ENC_MAX_EVENT);
	if (time_us < w->last_tick_us)
		time_us = w->last_tick_us;
	commit(w, mp_enc_tick(p, time_us - w->last_tick_us, rss));
	w->last_tick_us = time_us;
}

void mp_writer_module(struct mp_writer *w, uint64_t id, uint64_t base, const char *path,
		      const uint8_t *build_id, size_t build_id_len,
		      const struct mp_segment *seg, size_t nseg)
{
	struct rbuf b = { 0 };
	rb_u(&b, id);
	rb_u(&b, base);
	rb_bytes(&b, path, strlen(path));
	rb_bytes(&b, build_id, build_id_len);
	rb_u(&b, nseg);
	for (size_t i = 0; i < nseg; i++) {
		rb_u(&b, seg[i].vaddr);
		rb_u(&b, seg[i].memsz);
		rb_u(&b, seg[i].flags);
	}
	put_sized(w, MP_TAG_MODULE, &b);
}

void mp_writer_module_unload(struct mp_writer *w, uint64_t id)
{
	struct rbuf b = { 0 };
	rb_u(&b, id);
	put_sized(w, MP_TAG_MODULE_UNLOAD, &b);
}

uint64_t mp_writer_string(struct mp_writer *w, const char *s, size_t len)
{
	struct rbuf b = { 0 };
	rb_u(&b, ++w->n_strings);
	rb_bytes(&b, s, len);
	put_sized(w, MP_TAG_STRING, &b);
	return w->n_strings;
}

void mp_writer_symbol(struct mp_writer *w, uint64_t ip, uint64_t module, uint64_t offset,
		      const struct mp_frame *frames, size_t nframes)
{
	struct rbuf b = { 0 };
	rb_u(&b, ip);
	rb_u(&b, module);
	rb_u(&b, offset);
	rb_u(&b, nframes);
	for (size_t i = 0; i < nframes; i++) {
		rb_u(&b, frames[i].function);
		rb_u(&b, frames[i].file);
		rb_u(&b, frames[i].line);
		rb_u(&b, frames[i].column);
	}
	put_sized(w, MP_TAG_SYMBOL, &b);
	w->n_symbols++;
}

uint8_t *mp_encode_marker(uint8_t *buf, unsigned tag, const struct mp_marker *m)
{
	uint8_t *p = mp_enc_sized_begin(buf, tag);
	if (m->has & MP_HAS_TIME)
		p = mp_enc_field_uint(p, MP_M_TIME, m->time_us);
	if (m->has & MP_HAS_RSS)
		p = mp_enc_field_uint(p, MP_M_RSS, m->rss);
	if (m->has & MP_HAS_HEAP_ARENA)
		p = mp_enc_field_uint(p, MP_M_HEAP_ARENA, m->heap_arena);
	if (m->has & MP_HAS_HEAP_IN_USE)
		p = mp_enc_field_uint(p, MP_M_HEAP_IN_USE, m->heap_in_use);
	if (m->has & MP_HAS_CHILD_PID)
		p = mp_enc_field_uint(p, MP_M_CHILD_PID, m->child_pid);
	if (m->has & MP_HAS_COUNT)
		p = mp_enc_field_uint(p, MP_M_COUNT, m->count);
	if (m->has & MP_HAS_STATUS)
		p = mp_enc_field_sint(p, MP_M_STATUS, m->status);
	if (m->has & MP_HAS_LEVEL)
		p = mp_enc_field_uint(p, MP_M_LEVEL, m->level);
	if (m->has & MP_HAS_TEXT)
		p = mp_enc_field_bytes(p, MP_M_TEXT, m->text, m->text_len);
	return mp_enc_sized_end(buf, p);
}

void mp_writer_marker(struct mp_writer *w, unsigned tag, const struct mp_marker *m)
{
	size_t room = 16 * MP_VARINT_MAX * 2 + ((m->has & MP_HAS_TEXT) ? m->text_len : 0);
	uint8_t *p = reserve(w, room);
	commit(w, mp_encode_marker(p, tag, m));
}
