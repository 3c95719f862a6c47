/*
 * Internal to lib/format: what the writer's files share. writer.c builds
 * blocks of records; writer-events.c encodes the events into them (and
 * turns a tracker's into the capture's); writer-blocks.c compresses and
 * writes them.
 */
#ifndef MEMPROF_LIB_FORMAT_WRITER_PRIVATE_H
#define MEMPROF_LIB_FORMAT_WRITER_PRIVATE_H

#include <stddef.h>

#include "lib/format/writer.h"

/* Write bytes to the file; the first error is kept in w->errnum. */
void mp_writer_write(struct mp_writer *w, const void *buf, size_t len);
/* Room for len bytes of scratch in w->raw. */
void mp_writer_raw_room(struct mp_writer *w, size_t len);
/* Field stream i's zstd context of a writer closed: kept for the next writer, or freed. */
void mp_writer_put_cctx(int i, void *cctx);
/* Write the records buffered so far as a block, now. Returns 0 or -1. */
int mp_writer_block(struct mp_writer *w);

/* The most raw bytes of records a block holds (but for one record that is larger). */
#define MP_WRITER_BLOCK_RAW (1u << 20)
/* Before adding len bytes of records: the block written first when they would not fit. */
void mp_writer_block_room(struct mp_writer *w, size_t len);
/* Scratch room (w->raw) for encoding records of at most len bytes, to be committed. */
uint8_t *mp_writer_reserve(struct mp_writer *w, size_t len);
/* The record encoded in w->raw up to end joins the block. */
void mp_writer_commit(struct mp_writer *w, const uint8_t *end);
/* Room in w->threads for index thread. */
void mp_writer_grow_threads(struct mp_writer *w, uint32_t thread);

#endif
