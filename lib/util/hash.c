/* Hash tables for the analysis: a 64-bit map and a set of caller-owned indices. */
#include <config.h>
#include "lib/util/hash.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/xalloc.h"

uint64_t mp_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return mp_hash_u64(h ^ len);
}

static inline uint64_t word_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return (h << 31) | (h >> 33);
}

uint64_t mp_hash_words(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, sizeof(w));
		h = word_step(h, le64toh(w));
	}
	if (n) {
		w = 0;
		for (size_t i = 0; i < n; i++)
			w |= (uint64_t)s[i] << (8 * i);
		h = word_step(h, w);
	}
	return h;
}

/* ---- mp_intmap ---------------------------------------------------------- */

void mp_intmap_init(struct mp_intmap *m)
{
	m->e = NULL;
	m->cap = 0;
	m->n = 0;
	m->shift = 64;
}

/*
 * Fibonacci hashing: one multiplication, and the top bits mix every bit of
 * the key (addresses, instruction pointers, serial numbers alike). The
 * collector does two lookups per allocation, so the hash must be cheap.
 */
static inline size_t home(const struct mp_intmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> m->shift);
}

void mp_intmap_release(struct mp_intmap *m)
{
	free(m->e);
	mp_intmap_init(m);
}

static void intmap_grow(struct mp_intmap *m)
{
	struct mp_intmap_entry *old = m->e;
	size_t oldcap = m->cap;
	m->cap = oldcap ? oldcap * 2 : 16;
	m->shift = oldcap ? m->shift - 1 : 60;
	m->e = xcalloc(m->cap, sizeof(*m->e));
	m->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].val)
			mp_intmap_put(m, old[i].key, old[i].val - 1);
	free(old);
}

bool mp_intmap_put(struct mp_intmap *m, uint64_t key, uint64_t val)
{
	size_t mask, i;
	/* At most half full: short probe sequences, and short clusters to shift on delete. */
	if ((m->n + 1) * 2 > m->cap)
		intmap_grow(m);
	mask = m->cap - 1;
	for (i = home(m, key);; i = (i + 1) & mask) {
		if (!m->e[i].val) {
			m->e[i].key = key;
			m->e[i].val = val + 1;
			m->n++;
			return true;
		}
		if (m->e[i].key == key) {
			m->e[i].val = val + 1;
			return false;
		}
	}
}

bool mp_intmap_get(const struct mp_intmap *m, uint64_t key, uint64_t *val)
{
	size_t mask, i;
	if (!m->cap)
		return false;
	mask = m->cap - 1;
	for (i = home(m, key); m->e[i].val; i = (i + 1) & mask) {
		if (m->e[i].key == key) {
			*val = m->e[i].val - 1;
			return true;
		}
	}
	return false;
}

bool mp_intmap_del(struct mp_intmap *m, uint64_t key)
{
	uint64_t val;
	return mp_intmap_take(m, key, &val);
}

bool mp_intmap_take(struct mp_intmap *m, uint64_t key, uint64_t *val)
{
	size_t mask, i, j;
	if (!m->cap)
		return false;
	mask = m->cap - 1;
	for (i = home(m, key); m->e[i].val; i = (i + 1) & mask)
		if (m->e[i].key == key)
			break;
	if (!m->e[i].val)
		return false;
	*val = m->e[i].val - 1;
	/*
	 * Backward-shift deletion: move later entries of the cluster into the
	 * hole when their home slot allows it, so lookups never need tombstones.
	 */
	for (j = (i + 1) & mask; m->e[j].val; j = (j + 1) & mask) {
		size_t h = home(m, m->e[j].key);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].val = 0;
	m->n--;
	return true;
}

/* ---- mp_idxset ---------------------------------------------------------- */

void mp_idxset_init(struct mp_idxset *s)
{
	s->e = NULL;
	s->cap = 0;
	s->n = 0;
}

void mp_idxset_release(struct mp_idxset *s)
{
	free(s->e);
	mp_idxset_init(s);
}

static void idxset_insert(struct mp_idxset *s, uint32_t hash, uint32_t idx1)
{
	size_t mask = s->cap - 1, i;
	for (i = hash & mask; s->e[i].idx1; i = (i + 1) & mask)
		;
	s->e[i].idx1 = idx1;
	s->e[i].hash = hash;
	s->n++;
}

void mp_idxset_add(struct mp_idxset *s, uint64_t hash, uint32_t idx)
{
	if ((s->n + 1) * 4 > s->cap * 3) {
		struct mp_idxset_entry *old = s->e;
		size_t oldcap = s->cap;
		s->cap = oldcap ? oldcap * 2 : 16;
		s->e = xcalloc(s->cap, sizeof(*s->e));
		s->n = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].idx1)
				idxset_insert(s, old[i].hash, old[i].idx1);
		free(old);
	}
	idxset_insert(s, (uint32_t)hash, idx + 1);
}

uint32_t mp_idxset_find(const struct mp_idxset *s, uint64_t hash, mp_idxset_eq_fn eq,
			const void *ctx)
{
	size_t mask, i;
	uint32_t h = (uint32_t)hash;
	if (!s->cap)
		return UINT32_MAX;
	mask = s->cap - 1;
	for (i = h & mask; s->e[i].idx1; i = (i + 1) & mask)
		if (s->e[i].hash == h && eq(ctx, s->e[i].idx1 - 1))
			return s->e[i].idx1 - 1;
	return UINT32_MAX;
}
