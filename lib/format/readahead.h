/*
 * Reading a capture ahead in a second thread: one thread reads, decompresses
 * and decodes while the caller analyses what came before, in batches of
 * records whose data (names, paths, symbol frames) is copied with them.
 */
#ifndef MEMPROF_LIB_FORMAT_READAHEAD_H
#define MEMPROF_LIB_FORMAT_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/format/decode.h"
#include "lib/format/reader.h"

struct mp_readahead;

/*
 * Start reading r in a new thread. Until mp_readahead_finish() the caller
 * must not use r. Returns NULL (errno set) when no thread can be started:
 * read r directly then.
 */
struct mp_readahead *mp_readahead_start(struct mp_reader *r);

/* One batch: records in stream order, valid until the next call. */
struct mp_batch_view {
	const struct mp_record *recs;
	size_t n;
	uint64_t offset;     /* the reader's file offset after the batch */
	uint64_t n_records;  /* records read so far, the batch included */
};

/* The next batch into v; 0 when the stream has ended (or stopped). */
int mp_readahead_next(struct mp_readahead *ra, struct mp_batch_view *v);

/* Stop the thread (if it still reads), wait for it and free everything; r is the caller's again. */
void mp_readahead_finish(struct mp_readahead *ra);

#endif
