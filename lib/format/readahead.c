/*
 * The reader's reading thread (reader-private.h): a ring of NSEG chunks
 * between it and the reader. The thread walks the file's records by their
 * lengths alone (mp_record_length(), no decoder state), copies records
 * outside blocks into a chunk, opens each BLOCK into a chunk of its own,
 * and ends with the file's last bytes when they are no whole record (a cut
 * file), or with the reason it stopped. The reader holds one chunk at a time.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format/decode-private.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/format/reader-private.h"
#include "lib/format/reader.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

#define NSEG 4
/* Records outside blocks are handed over this many bytes at a time (uncompressed captures). */
#define RAW_SEGMENT (256u * 1024)

struct slot {
	uint8_t *buf;
	size_t alloc;
	struct mp_chunk seg;
	struct strbuf error;
};

struct mp_readahead {
	struct mp_reader *r;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slot slots[NSEG];
	size_t head, filled;  /* the oldest filled slot; how many are filled */
	bool held;            /* the caller holds slots[head] */
	bool done, stop;
};

/* Wait for an empty slot; NULL when told to stop. */
static struct slot *take_empty(struct mp_readahead *ra)
{
	struct slot *s = NULL;
	pthread_mutex_lock(&ra->lock);
	while (ra->filled == NSEG && !ra->stop)
		pthread_cond_wait(&ra->cond, &ra->lock);
	if (!ra->stop)
		s = &ra->slots[(ra->head + ra->filled) % NSEG];
	pthread_mutex_unlock(&ra->lock);
	if (s) {
		memset(&s->seg, 0, sizeof(s->seg));
		strbuf_reset(&s->error);
	}
	return s;
}

static void publish(struct mp_readahead *ra, struct slot *s)
{
	s->seg.p = s->buf;
	if (s->seg.end && s->error.len)
		s->seg.error = s->error.buf;
	pthread_mutex_lock(&ra->lock);
	ra->filled++;
	pthread_cond_broadcast(&ra->cond);
	pthread_mutex_unlock(&ra->lock);
}

static uint64_t file_offset(const struct mp_reader *r)
{
	return r->offset + r->buf_pos;
}

/* Append n bytes at the reader's position to a segment of records as they are. */
static void take_raw(struct mp_reader *r, struct slot *s, size_t n)
{
	if (!s->seg.len)
		s->seg.offset = file_offset(r);
	ALLOC_GROW(s->buf, s->seg.len + n, s->alloc);
	memcpy(s->buf + s->seg.len, r->buf + r->buf_pos, n);
	s->seg.len += n;
	r->buf_pos += n;
	s->seg.end_offset = file_offset(r);
}

/*
 * The next segment into s (and, for a block after records as they are, the
 * records first): returns s, or another slot taken on the way, to publish;
 * NULL when told to stop.
 */
static struct slot *fill(struct mp_readahead *ra, struct slot *s)
{
	struct mp_reader *r = ra->r;
	for (;;) {
		const uint8_t *p = r->buf + r->buf_pos;
		size_t left = r->buf_len - r->buf_pos;
		ssize_t n = mp_record_length(p, left);
		if (n == 0) {
			ssize_t got;
			if (s->seg.len >= RAW_SEGMENT)
				return s;
			if (r->eof) {
				/* The end: a cut last record goes as it is, for the caller to find it cut. */
				if (left)
					take_raw(r, s, left);
				if (s->seg.len)
					return s;
				s->seg.end = true;
				return s;
			}
			got = mp_reader_fill(r);
			if (got < 0) {
				if (s->seg.len)
					return s; /* the records first; the error comes after them */
				s->seg.end = true;
				strbuf_addf(&s->error, "cannot read '%s': %s", r->name, strerror(errno));
				return s;
			}
			continue;
		}
		if (n < 0) {
			/* No record: what is there goes as it is, and the caller's decoder says why. */
			take_raw(r, s, left);
			r->eof = true;
			r->buf_pos = r->buf_len;
			return s;
		}
		if (p[0] != MP_TAG_BLOCK) {
			take_raw(r, s, (size_t)n);
			if (s->seg.len >= RAW_SEGMENT)
				return s;
			continue;
		}
		if (s->seg.len)
			return s; /* the records before the block first */
		{
			struct cur c = { p + 1, p + n, CUR_OK };
			uint64_t plen = get_u(&c), at = file_offset(r);
			size_t raw;
			(void)plen;
			r->buf_pos += (size_t)n;
			if (mp_reader_open_block(r, c.p, (size_t)(c.end - c.p), at, &s->buf, &s->alloc, &raw,
						 &s->error) < 0) {
				s->seg.end = true;
				return s;
			}
			s->seg.block = true;
			s->seg.len = raw;
			s->seg.offset = at;
			s->seg.end_offset = file_offset(r);
			return s;
		}
	}
}

static void *reading(void *arg)
{
	struct mp_readahead *ra = arg;
	for (;;) {
		struct slot *s = take_empty(ra);
		bool end;
		if (!s)
			break;
		s = fill(ra, s);
		end = s->seg.end;
		publish(ra, s);
		if (end)
			break;
	}
	pthread_mutex_lock(&ra->lock);
	ra->done = true;
	pthread_cond_broadcast(&ra->cond);
	pthread_mutex_unlock(&ra->lock);
	return NULL;
}

struct mp_readahead *mp_readahead_start(struct mp_reader *r)
{
	struct mp_readahead *ra = xcalloc(1, sizeof(*ra));
	int err;
	ra->r = r;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->cond, NULL);
	for (size_t i = 0; i < NSEG; i++)
		strbuf_init(&ra->slots[i].error, 0);
	/* A block being read when the thread starts is the first segment. */
	if (r->block_pos < r->block_len) {
		struct slot *s = &ra->slots[0];
		s->buf = xmalloc(r->block_len - r->block_pos);
		s->alloc = r->block_len - r->block_pos;
		memcpy(s->buf, r->block + r->block_pos, s->alloc);
		s->seg = (struct mp_chunk){ s->buf, s->alloc, 0, r->block_offset, file_offset(r), true,
					      false, NULL };
		r->block_pos = r->block_len;
		ra->filled = 1;
	}
	err = pthread_create(&ra->thread, NULL, reading, ra);
	if (err) {
		if (ra->filled) { /* give the block back */
			r->block_pos = r->block_len - ra->slots[0].alloc;
		}
		for (size_t i = 0; i < NSEG; i++) {
			free(ra->slots[i].buf);
			strbuf_release(&ra->slots[i].error);
		}
		pthread_mutex_destroy(&ra->lock);
		pthread_cond_destroy(&ra->cond);
		free(ra);
		errno = err;
		return NULL;
	}
	return ra;
}

void mp_readahead_next(struct mp_readahead *ra, struct mp_chunk *g)
{
	pthread_mutex_lock(&ra->lock);
	if (ra->held) {
		/* The caller is done with the segment it held. */
		ra->held = false;
		ra->head = (ra->head + 1) % NSEG;
		ra->filled--;
		pthread_cond_broadcast(&ra->cond);
	}
	while (!ra->filled && !ra->done)
		pthread_cond_wait(&ra->cond, &ra->lock);
	if (!ra->filled) {
		/* The thread stopped without a last segment: only when told to. */
		pthread_mutex_unlock(&ra->lock);
		*g = (struct mp_chunk){ .end = true };
		return;
	}
	ra->held = true;
	*g = ra->slots[ra->head].seg;
	pthread_mutex_unlock(&ra->lock);
}

void mp_readahead_finish(struct mp_readahead *ra)
{
	struct mp_reader *r = ra->r;
	pthread_mutex_lock(&ra->lock);
	ra->stop = true;
	pthread_cond_broadcast(&ra->cond);
	pthread_mutex_unlock(&ra->lock);
	pthread_join(ra->thread, NULL);
	for (size_t i = 0; i < NSEG; i++) {
		free(ra->slots[i].buf);
		strbuf_release(&ra->slots[i].error);
	}
	pthread_mutex_destroy(&ra->lock);
	pthread_cond_destroy(&ra->cond);
	free(ra);
	r->ra = NULL;
	r->seg = (struct mp_chunk){ 0 };
}
