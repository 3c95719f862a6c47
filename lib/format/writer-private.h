/*
 * Internal to lib/format: what the writer's two files share. writer.c
 * builds blocks of records; writer-blocks.c compresses and writes them.
 */
#ifndef MEMPROF_LIB_FORMAT_WRITER_PRIVATE_H
#define MEMPROF_LIB_FORMAT_WRITER_PRIVATE_H

#include <stddef.h>

#include "lib/format/writer.h"

/* Write bytes to the file; the first error is kept in w->errnum. */
void mp_writer_write(struct mp_writer *w, const void *buf, size_t len);
/* Room for len bytes of scratch in w->raw. */
void mp_writer_raw_room(struct mp_writer *w, size_t len);
/* Write the records buffered so far as a block, now. Returns 0 or -1. */
int mp_writer_block(struct mp_writer *w);

#endif
