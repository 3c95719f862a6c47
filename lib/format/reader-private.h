/*
 * Internal to lib/format: what the reader (reader.c), its block opener
 * (reader-blocks.c) and its reading thread (readahead.c) share.
 */
#ifndef MEMPROF_LIB_FORMAT_READER_PRIVATE_H
#define MEMPROF_LIB_FORMAT_READER_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/format/reader.h"
#include "lib/util/strbuf.h"

/* Read more of the file into r->buf; returns bytes read, 0 at EOF, -1 on error (errno). */
ssize_t mp_reader_fill(struct mp_reader *r);
/*
 * The records of the BLOCK at file offset at (payload: its len bytes after
 * tag and length) into *out (grown as needed), *raw_len bytes. Returns 0, or
 * -1 with a one-line reason in *why. Blocks must be opened in order.
 */
int mp_reader_open_block(struct mp_reader *r, const uint8_t *payload, size_t len, uint64_t at,
			 uint8_t **out, size_t *out_alloc, size_t *raw_len, struct strbuf *why);

/*
 * The reading thread (readahead.c): the thread reads the file, finds its
 * records' boundaries and opens its blocks (decompresses and joins their
 * field streams) ahead, and hands over chunks of records (struct
 * mp_chunk); mp_reader_next() decodes them, so that records never go
 * through memory decoded.
 *
 * mp_readahead_start(): start reading r in a new thread, from where r
 * stands; until mp_readahead_finish() only the thread touches r's file and
 * blocks. NULL (errno set) when no thread can be started.
 * mp_readahead_next(): give back the chunk held in *g (if any) and wait for
 * the next one into *g.
 * mp_readahead_finish(): stop the thread, wait for it, free everything.
 */
struct mp_readahead *mp_readahead_start(struct mp_reader *r);
void mp_readahead_next(struct mp_readahead *ra, struct mp_chunk *g);
void mp_readahead_finish(struct mp_readahead *ra);

#endif
