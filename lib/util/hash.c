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

void mp_intmap_release(struct mp_intmap *m)
{
	free(m->e);
	mp_intmap_init(m);
}

void mp_intmap_grow(struct mp_intmap *m)
{
	struct mp_intmap_entry *old = m->e;
	size_t oldcap = m->cap;
	m->cap = oldcap ? oldcap * 2 : 16;
	m->shift = oldcap ? m->shift - 1 : 60;
	m->e = xcalloc_table(m->cap, sizeof(*m->e));
	m->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].val)
			mp_intmap_put(m, old[i].key, old[i].val - 1);
	free(old);
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
