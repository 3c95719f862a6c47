/*
 * A ring of NBATCH batches between a reading thread and the caller. The
 * reader fills a batch with decoded records and copies what they point to
 * (the decoder reuses its buffers) into the batch's arena; the caller holds
 * one batch at a time and gives it back when it asks for the next.
 */
#include <config.h>
#include "lib/format/readahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/xalloc.h"

/*
 * Batches of 16384 records (1.5 MiB): with 4096, the handoffs between the
 * threads cost `memprof stats` 15-20% more time; with 1024, 20% more again.
 */
#define NBATCH 4
#define BATCH_RECS 16384
#define ARENA_BYTES (64u * 1024)

struct batch {
	struct mp_record recs[BATCH_RECS];
	size_t n;
	uint8_t *arena;
	size_t used, cap;
	uint64_t offset, n_records;
};

struct mp_readahead {
	struct mp_reader *r;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch batches[NBATCH];
	size_t head, filled;      /* the oldest filled batch; how many are filled */
	bool held;                /* the caller holds batches[head] */
	bool done, stop;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A pointer of a record to data the decoder may reuse: where the pointer is, what it covers. */
struct span {
	void *field;      /* the address of the record's pointer member */
	size_t len;
	bool terminate;   /* strings get a NUL after their bytes */
};
#define SPAN(member, n, nul) ((struct span){ &(member), (n), (nul) })

/*
 * The data a record points to, at most three spans. HEADER points to the
 * decoder's header, set once and never changed: it needs no copy. Events,
 * traces and ticks point to nothing.
 */
static int spans_of(struct mp_record *rec, struct span s[3])
{
	switch (rec->type) {
	case MP_REC_THREAD:
		s[0] = SPAN(rec->u.thread.name, rec->u.thread.name_len, true);
		return 1;
	case MP_REC_MODULE:
		s[0] = SPAN(rec->u.module.path, rec->u.module.path_len, true);
		s[1] = SPAN(rec->u.module.build_id, rec->u.module.build_id_len, false);
		s[2] = SPAN(rec->u.module.seg, rec->u.module.nseg * sizeof(struct mp_segment), false);
		return 3;
	case MP_REC_STRING:
		s[0] = SPAN(rec->u.string.text, rec->u.string.len, true);
		return 1;
	case MP_REC_SYMBOL:
		s[0] = SPAN(rec->u.symbol.frames, rec->u.symbol.nframes * sizeof(struct mp_frame), false);
		return 1;
	case MP_REC_ATTACH: case MP_REC_DETACH: case MP_REC_FORK:
	case MP_REC_LOST: case MP_REC_EXIT: case MP_REC_MESSAGE: case MP_REC_SNAPSHOT:
		if (!rec->u.marker.text)
			return 0;
		s[0] = SPAN(rec->u.marker.text, rec->u.marker.text_len, true);
		return 1;
	case MP_REC_UNKNOWN:
		s[0] = SPAN(rec->u.unknown.data, rec->u.unknown.len, false);
		return 1;
	case MP_REC_TRAILER:
		/* The decoder's trailer would change under the caller if another came. */
		s[0] = SPAN(rec->u.trailer, sizeof(struct mp_trailer), false);
		return 1;
	default:
		return 0;
	}
}

static size_t span_bytes(const struct span *s)
{
	return align8(s->len + s->terminate);
}

/* Bytes a record's copied data takes in an arena. */
static size_t extra_size(struct mp_record *rec)
{
	struct span s[3];
	size_t n = 0;
	for (int i = 0, k = spans_of(rec, s); i < k; i++)
		n += span_bytes(&s[i]);
	return n;
}

/* Make rec's pointers point into the batch's arena (room checked by the caller). */
static void copy_data(struct batch *b, struct mp_record *rec)
{
	struct span s[3];
	for (int i = 0, k = spans_of(rec, s); i < k; i++) {
		uint8_t *dst = b->arena + b->used;
		const void *src;
		/* The members are pointers of several types: moved as bytes, not punned. */
		memcpy(&src, s[i].field, sizeof(src));
		if (s[i].len)
			memcpy(dst, src, s[i].len);
		if (s[i].terminate)
			dst[s[i].len] = 0;
		memcpy(s[i].field, &(const void *){ dst }, sizeof(dst));
		b->used += span_bytes(&s[i]);
	}
}

/* Wait for an empty batch; NULL when told to stop. */
static struct batch *take_empty(struct mp_readahead *ra)
{
	struct batch *b = NULL;
	pthread_mutex_lock(&ra->lock);
	while (ra->filled == NBATCH && !ra->stop)
		pthread_cond_wait(&ra->cond, &ra->lock);
	if (!ra->stop)
		b = &ra->batches[(ra->head + ra->filled) % NBATCH];
	pthread_mutex_unlock(&ra->lock);
	if (b) {
		b->n = 0;
		b->used = 0;
	}
	return b;
}

static void publish(struct mp_readahead *ra, struct batch *b)
{
	pthread_mutex_lock(&ra->lock);
	ra->filled++;
	pthread_cond_broadcast(&ra->cond);
	pthread_mutex_unlock(&ra->lock);
}

static void *reading(void *arg)
{
	struct mp_readahead *ra = arg;
	struct batch *b = take_empty(ra);

	/* Records are decoded straight into the batch: a copy of each, 96 bytes, cost 3.5% of stats. */
	while (b) {
		struct mp_record *rec;
		size_t need;
		if (b->n == BATCH_RECS) {
			publish(ra, b);
			if (!(b = take_empty(ra)))
				break;
		}
		rec = &b->recs[b->n];
		if (!mp_reader_next(ra->r, rec))
			break;
		need = extra_size(rec);
		if (need && b->used + need > b->cap) {
			if (b->n) {
				/* Its data go with it to the next batch: nothing points into that arena yet. */
				struct mp_record moved = *rec;
				publish(ra, b);
				if (!(b = take_empty(ra)))
					break;
				b->recs[0] = moved;
				rec = &b->recs[0];
			}
			if (need > b->cap) {
				free(b->arena);
				b->cap = need > ARENA_BYTES ? need : ARENA_BYTES;
				b->arena = xmalloc(b->cap);
			}
		}
		if (need)
			copy_data(b, rec);
		b->n++;
		b->offset = mp_reader_offset(ra->r);
		b->n_records = ra->r->n_records;
	}
	if (b && b->n)
		publish(ra, b);
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
	for (size_t i = 0; i < NBATCH; i++) {
		ra->batches[i].cap = ARENA_BYTES;
		ra->batches[i].arena = xmalloc(ARENA_BYTES);
	}
	err = pthread_create(&ra->thread, NULL, reading, ra);
	if (err) {
		for (size_t i = 0; i < NBATCH; i++)
			free(ra->batches[i].arena);
		pthread_mutex_destroy(&ra->lock);
		pthread_cond_destroy(&ra->cond);
		free(ra);
		errno = err;
		return NULL;
	}
	return ra;
}

int mp_readahead_next(struct mp_readahead *ra, struct mp_batch_view *v)
{
	struct batch *b;
	pthread_mutex_lock(&ra->lock);
	if (ra->held) {
		/* The caller is done with the batch it held. */
		ra->held = false;
		ra->head = (ra->head + 1) % NBATCH;
		ra->filled--;
		pthread_cond_broadcast(&ra->cond);
	}
	while (!ra->filled && !ra->done)
		pthread_cond_wait(&ra->cond, &ra->lock);
	if (!ra->filled) {
		pthread_mutex_unlock(&ra->lock);
		return 0;
	}
	ra->held = true;
	b = &ra->batches[ra->head];
	pthread_mutex_unlock(&ra->lock);
	v->recs = b->recs;
	v->n = b->n;
	v->offset = b->offset;
	v->n_records = b->n_records;
	return 1;
}

void mp_readahead_finish(struct mp_readahead *ra)
{
	pthread_mutex_lock(&ra->lock);
	ra->stop = true;
	pthread_cond_broadcast(&ra->cond);
	pthread_mutex_unlock(&ra->lock);
	pthread_join(ra->thread, NULL);
	for (size_t i = 0; i < NBATCH; i++)
		free(ra->batches[i].arena);
	pthread_mutex_destroy(&ra->lock);
	pthread_cond_destroy(&ra->cond);
	free(ra);
}
