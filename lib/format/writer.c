/* The writer of capture files (lib/format/writer.h). */
#include <config.h>
#include "lib/format/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/format/decode-private.h"
#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/writer-private.h"
#include "lib/util/hash.h"
#include "lib/util/publish.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

static void writer_init(struct mp_writer *w, int fd, const char *name, unsigned flags)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->path = xstrdup(name);
	w->flags = flags;
	w->cancel_fd = -1;
	w->nthreads = 1;
	w->threads = xcalloc(1, sizeof(*w->threads));
	mp_fields_init(&w->fields);
	w->fields.tick_deltas = true;
	w->fields.vplanes = !(flags & MP_WRITER_FORMAT3);
}

/*
 * An output that takes nothing now (a FIFO, a device: opened non-blocking):
 * wait until it does; once w->cancel_fd is readable (a stop was asked),
 * MP_WRITER_STALL_MS more at most, then give up (ECANCELED). 0, or -1
 * with errno.
 */
static int wait_output(struct mp_writer *w)
{
	struct pollfd p[2] = { { .fd = w->fd, .events = POLLOUT }, { .fd = w->cancel_fd, .events = POLLIN } };
	int r;
	do
		r = poll(p, w->cancel_fd >= 0 ? 2 : 1, -1);
	while (r < 0 && errno == EINTR);
	if (r < 0 || p[0].revents)
		return r < 0 ? -1 : 0; /* (what write() finds, it says) */
	do
		r = poll(p, 1, MP_WRITER_STALL_MS);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ECANCELED;
	return r > 0 ? 0 : -1;
}

void mp_writer_write(struct mp_writer *w, const void *buf, size_t len)
{
	const char *p = buf;
	if (w->errnum)
		return;
	while (len) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0) {
			if (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_output(w) == 0))
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
	pre[MP_MAGIC_LEN] = (flags & MP_WRITER_FORMAT3) ? 3 : MP_FORMAT_MAJOR;
	pre[MP_MAGIC_LEN + 1] = (flags & MP_WRITER_FORMAT3) ? 0 : MP_FORMAT_MINOR;
	mp_writer_write(w, pre, sizeof(pre));
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

void mp_writer_block_room(struct mp_writer *w, size_t len)
{
	size_t have = mp_fields_total(&w->fields);
	if (have && have + len > MP_WRITER_BLOCK_RAW)
		mp_writer_block(w);
}

uint8_t *mp_writer_reserve(struct mp_writer *w, size_t len)
{
	mp_writer_block_room(w, len);
	mp_writer_raw_room(w, len);
	return w->raw;
}

static void add_records(struct mp_writer *w, const uint8_t *records, size_t len)
{
	w->hot_check = 0; /* the next hot event sums the streams again */
	if (mp_fields_append(&w->fields, records, len) < 0) {
		/* Not records this writer knows: they go out as they are, in order. */
		mp_writer_block(w);
		mp_writer_write(w, records, len);
		w->fields.tick_known = false; /* there may be ticks among them */
		return;
	}
	/* An oversized record goes out at once rather than into a huge block. */
	if (mp_fields_total(&w->fields) > MP_WRITER_BLOCK_RAW)
		mp_writer_block(w);
}

void mp_writer_commit(struct mp_writer *w, const uint8_t *end)
{
	w->n_records++;
	add_records(w, w->raw, (size_t)(end - w->raw));
}

void mp_writer_raw(struct mp_writer *w, const void *records, size_t len)
{
	if (!len)
		return; /* callers pass what lies between records, often nothing */
	mp_writer_block_room(w, len);
	add_records(w, records, len);
}

int mp_writer_close(struct mp_writer *w)
{
	int err;
	mp_writer_block(w);
	err = w->errnum;
	if (w->fd >= 0 && close(w->fd) < 0 && !err)
		err = errno;
	if (w->cctx)
		ZSTD_freeCCtx(w->cctx);
	for (int i = 0; i < MP_FS_COUNT; i++)
		mp_writer_put_cctx(i, w->scctx[i]);
	mp_fields_release(&w->fields);
	free(w->class_slots);
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
	uint8_t *p = mp_writer_reserve(w, 1 + MP_VARINT_MAX + b->len);
	*p++ = (uint8_t)tag;
	p = mp_put_uvarint(p, b->len);
	if (b->len)
		memcpy(p, b->p, b->len);
	mp_writer_commit(w, p + b->len);
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
	if (h->family)
		rb_fu(b, MP_H_FAMILY, h->family);
	if (h->parent_capture)
		rb_fb(b, MP_H_PARENT_CAPTURE, h->parent_capture, strlen(h->parent_capture));
	/* Only in a sampled capture: an exact one is as it always was. */
	if (h->sampling_interval)
		rb_fu(b, MP_H_SAMPLING_INTERVAL, h->sampling_interval);
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
	mp_writer_block(w);
	w->flags = flags;
}

static void trailer_payload(struct rbuf *b, const struct mp_trailer *t);

void mp_writer_trailer(struct mp_writer *w, const struct mp_trailer *t)
{
	struct rbuf b = { 0 };
	trailer_payload(&b, t);
	put_sized(w, MP_TAG_TRAILER, &b);
}

int mp_writer_snapshot(struct mp_writer *w, const char *path, const uint8_t *extra,
		       size_t extra_len, const struct mp_trailer *t)
{
	struct rbuf b = { 0 };
	uint8_t head[1 + MP_VARINT_MAX], *p = head;
	char buf[64 << 10], tmp[4096];
	uint64_t off = 0;
	int in, out, e = 0;
	e = mp_writer_block(w);
	if (e < 0)
		return -1;
	in = open(w->path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	/* Written aside, then renamed: whoever waits for path never reads part of it. */
	out = mp_publish_open(path, tmp, sizeof(tmp));
	if (out < 0) {
		e = errno;
		close(in);
		errno = e;
		return -1;
	}
	/* Every whole block written so far, then a trailer: a capture of its own. */
	while (!e && off < w->bytes_written) {
		size_t want = w->bytes_written - off < sizeof(buf) ? (size_t)(w->bytes_written - off)
								    : sizeof(buf);
		ssize_t n = pread(in, buf, want, (off_t)off);
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			break;
		}
		for (ssize_t done = 0, k; !e && done < n; done += k)
			if ((k = write(out, buf + done, (size_t)(n - done))) < 0)
				e = errno;
		off += (uint64_t)n;
	}
	for (size_t done = 0; !e && done < extra_len;) {
		ssize_t k = write(out, extra + done, extra_len - done);
		if (k < 0)
			e = errno;
		else
			done += (size_t)k;
	}
	if (!e) {
		trailer_payload(&b, t);
		*p++ = MP_TAG_TRAILER;
		p = mp_put_uvarint(p, b.len);
		if (write(out, head, (size_t)(p - head)) != p - head ||
		    (b.len && write(out, b.p, b.len) != (ssize_t)b.len))
			e = errno ? errno : EIO;
		free(b.p);
	}
	close(in);
	e = mp_publish_close(out, tmp, path, e);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

static void trailer_payload(struct rbuf *b_, const struct mp_trailer *t)
{
	struct rbuf b = *b_;
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
	if (t->n_libunwind)
		rb_fu(&b, MP_T_N_LIBUNWIND, t->n_libunwind);
	*b_ = b;
}

void mp_writer_grow_threads(struct mp_writer *w, uint32_t thread)
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
	mp_writer_grow_threads(w, index);
	memset(&w->threads[index], 0, sizeof(w->threads[index]));
	put_sized(w, MP_TAG_THREAD, &b);
}

uint64_t mp_writer_trace(struct mp_writer *w, uint64_t parent, uint64_t ip)
{
	uint64_t index = w->n_traces + 1;
	uint8_t *p = mp_writer_reserve(w, MP_ENC_MAX_EVENT);
	if (parent >= index)
		BUG("trace parent %llu is not an earlier node", (unsigned long long)parent);
	mp_writer_commit(w, mp_enc_trace(p, index, parent, ip, &w->last_ip));
	w->n_traces = index;
	return index;
}

void mp_writer_tick(struct mp_writer *w, uint64_t time_us, uint64_t rss)
{
	uint8_t *p = mp_writer_reserve(w, MP_ENC_MAX_EVENT);
	if (time_us < w->last_tick_us)
		time_us = w->last_tick_us;
	mp_writer_commit(w, mp_enc_tick(p, time_us - w->last_tick_us, rss));
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

/* 3.0: a STRING is its text, numbered by its place among the strings. */
uint64_t mp_writer_string(struct mp_writer *w, const char *s, size_t len)
{
	struct rbuf b = { 0 };
	if (len)
		memcpy(rb_room(&b, len), s, len);
	b.len = len;
	put_sized(w, MP_TAG_STRING, &b);
	return ++w->n_strings;
}

/*
 * A string id as 3.0 SYMBOL records name it: 0 for none, else 1 + zigzag(d - 1)
 * where d = (strings written + 1 - id): 1 for the latest string, 3 for the
 * one before; a string not written yet has d <= 0.
 */
static uint64_t string_ref(const struct mp_writer *w, uint64_t id)
{
	return id ? 1 + mp_zigzag((int64_t)(w->n_strings - id)) : 0;
}

/*
 * 3.0: module, the ip as its difference to the latest TRACE's, the offset as
 * its difference to ip minus the base of the module's MODULE record.
 */
void mp_writer_symbol(struct mp_writer *w, uint64_t ip, uint64_t module, uint64_t offset,
		      const struct mp_frame *frames, size_t nframes)
{
	struct rbuf b = { 0 };
	uint64_t base = 0;
	/*
	 * The collector writes most symbols right after the TRACE of their ip,
	 * and their offset is the ip minus their module's load bias: two zeros
	 * where 3.0 at first spelled out a 2 to 3 byte offset, and a module's
	 * base at its first symbol (a tenth of the capture of xz or sort).
	 * Records that reached the file unsplit, after add_records() failed,
	 * are not followed; a reader cannot read past them either.
	 */
	mp_intmap_get(&w->fields.module_base, module, &base);
	rb_u(&b, module);
	rb_u(&b, mp_zigzag((int64_t)(ip - w->fields.trace_ip)));
	rb_u(&b, mp_zigzag((int64_t)(offset - (ip - base))));
	rb_u(&b, nframes);
	for (size_t i = 0; i < nframes; i++) {
		rb_u(&b, string_ref(w, frames[i].function));
		rb_u(&b, string_ref(w, frames[i].file));
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
	uint8_t *p = mp_writer_reserve(w, room);
	mp_writer_commit(w, mp_encode_marker(p, tag, m));
}
