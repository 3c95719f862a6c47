/* A hash map from 64-bit keys to 64-bit values. */
#include <config.h>
#include "lib/u64map.h"

#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

static inline size_t slot_of(uint64_t key, size_t size)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 32)) & (size - 1);
}

void mp_u64map_release(struct mp_u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

bool mp_u64map_get(const struct mp_u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->size)
		return false;
	for (size_t i = slot_of(key, m->size);; i = (i + 1) & (m->size - 1)) {
		if (!m->used[i])
			return false;
		if (m->keys[i] == key) {
			if (val)
				*val = m->vals[i];
			return true;
		}
	}
}

static void grow(struct mp_u64map *m)
{
	struct mp_u64map n = { 0 };
	n.size = m->size ? m->size * 2 : 64;
	n.keys = xcalloc(n.size, sizeof(*n.keys));
	n.vals = xcalloc(n.size, sizeof(*n.vals));
	n.used = xcalloc(n.size, 1);
	for (size_t i = 0; i < m->size; i++)
		if (m->used[i])
			mp_u64map_put(&n, m->keys[i], m->vals[i]);
	mp_u64map_release(m);
	*m = n;
}

bool mp_u64map_put(struct mp_u64map *m, uint64_t key, uint64_t val)
{
	size_t i;
	if ((m->count + 1) * 4 > m->size * 3)
		grow(m);
	for (i = slot_of(key, m->size); m->used[i]; i = (i + 1) & (m->size - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return false;
		}
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
	return true;
}

bool mp_u64map_del(struct mp_u64map *m, uint64_t key)
{
	size_t i, j;
	if (!m->size)
		return false;
	for (i = slot_of(key, m->size);; i = (i + 1) & (m->size - 1)) {
		if (!m->used[i])
			return false;
		if (m->keys[i] == key)
			break;
	}
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	for (j = (i + 1) & (m->size - 1); m->used[j]; j = (j + 1) & (m->size - 1)) {
		size_t home = slot_of(m->keys[j], m->size);
		if (((j - home) & (m->size - 1)) >= ((j - i) & (m->size - 1))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->used[i] = 0;
	m->count--;
	return true;
}
