/* Recording allocation and free events (record.c), called by the hooks. */
#ifndef MEMPROF_LIB_TRACKER_RECORD_H
#define MEMPROF_LIB_TRACKER_RECORD_H

#include <stddef.h>

#include "lib/tracker/base.h"

/* An allocation of size bytes at addr, with the caller's stack. */
void mp_record_alloc(unsigned kind, void *addr, size_t size) MP_HIDDEN;
/* A deallocation of the block at addr: recorded before the real free. */
void mp_record_free(unsigned kind, void *addr) MP_HIDDEN;
/* A deallocation of the pages [addr, addr + size) (munmap, MAP_FIXED, mremap). */
void mp_record_free_range(unsigned kind, void *addr, size_t size) MP_HIDDEN;

#endif
