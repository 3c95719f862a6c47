/* A hash map from 64-bit keys to 64-bit values (open addressing, linear probing). */
#ifndef MEMPROF_LIB_U64MAP_H
#define MEMPROF_LIB_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mp_u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t size;  /* slots, a power of two (0 before the first insert) */
	size_t count;
};

#define MP_U64MAP_INIT { NULL, NULL, NULL, 0, 0 }

void mp_u64map_release(struct mp_u64map *m);
/* The value of key in *val; returns false when absent. */
bool mp_u64map_get(const struct mp_u64map *m, uint64_t key, uint64_t *val);
/* Insert or replace; returns true when the key is new. */
bool mp_u64map_put(struct mp_u64map *m, uint64_t key, uint64_t val);
/* Remove key; returns false when absent. */
bool mp_u64map_del(struct mp_u64map *m, uint64_t key);

#endif
