/*
 * Hash tables for the analysis: a map from 64-bit keys to 64-bit values, and
 * a set of indices into an array the caller owns (the caller hashes and
 * compares its own elements). Open addressing with linear probing and
 * backward-shift deletion, so no tombstones accumulate over a long stream.
 */
#ifndef MEMPROF_LIB_UTIL_HASH_H
#define MEMPROF_LIB_UTIL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A 64-bit mixer (the murmur3 finaliser): spreads keys such as addresses. */
static inline uint64_t mp_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a over bytes, finished with mp_hash_u64. */
uint64_t mp_hash_bytes(const void *p, size_t len);

/*
 * Continue the word hash h over n bytes: for each 8 bytes, read as a
 * little-endian word w (the last word filled from its low byte up and
 * zero-padded), h = rotate_left((h ^ w) * 0x9e3779b97f4a7c15, 31). Eight
 * bytes per multiplication: the checksum of capture blocks.
 */
uint64_t mp_hash_words(uint64_t h, const void *p, size_t n);

/* Combine a hash with another value (for tuple keys). */
static inline uint64_t mp_hash_combine(uint64_t h, uint64_t v)
{
	return mp_hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

struct mp_intmap_entry {
	uint64_t key;
	uint64_t val; /* value + 1; 0 marks an empty entry */
};

struct mp_intmap {
	struct mp_intmap_entry *e;
	size_t cap; /* a power of two, or 0 */
	size_t n;
	unsigned shift; /* 64 - log2(cap): a key's home is the top bits of key * golden ratio */
};

void mp_intmap_init(struct mp_intmap *m);
void mp_intmap_release(struct mp_intmap *m);
/* Twice the room (out of line: rare). */
void mp_intmap_grow(struct mp_intmap *m);

/*
 * Fibonacci hashing: one multiplication, and the top bits mix every bit of
 * the key (addresses, instruction pointers, serial numbers alike). The
 * lookups are inline: the collector makes two per allocation, and the
 * reporters as many per event.
 */
static inline size_t mp_intmap_home(const struct mp_intmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> m->shift);
}

/* Set key to val (val < UINT64_MAX), replacing any previous value; true when key is new. */
static inline bool mp_intmap_put(struct mp_intmap *m, uint64_t key, uint64_t val)
{
	size_t mask, i;
	/* At most half full: short probe sequences, and short clusters to shift on delete. */
	if (__builtin_expect((m->n + 1) * 2 > m->cap, 0))
		mp_intmap_grow(m);
	mask = m->cap - 1;
	for (i = mp_intmap_home(m, key);; i = (i + 1) & mask) {
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

/* True and *val set when key is present. */
static inline bool mp_intmap_get(const struct mp_intmap *m, uint64_t key, uint64_t *val)
{
	size_t mask, i;
	if (!m->cap)
		return false;
	mask = m->cap - 1;
	for (i = mp_intmap_home(m, key); m->e[i].val; i = (i + 1) & mask) {
		if (m->e[i].key == key) {
			*val = m->e[i].val - 1;
			return true;
		}
	}
	return false;
}

/* Remove key and set *val to its value; true when it was present. */
static inline bool mp_intmap_take(struct mp_intmap *m, uint64_t key, uint64_t *val)
{
	size_t mask, i, j;
	if (!m->cap)
		return false;
	mask = m->cap - 1;
	for (i = mp_intmap_home(m, key); m->e[i].val; i = (i + 1) & mask)
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
		size_t h = mp_intmap_home(m, m->e[j].key);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].val = 0;
	m->n--;
	return true;
}

/* Remove key; true when it was present. */
static inline bool mp_intmap_del(struct mp_intmap *m, uint64_t key)
{
	uint64_t val;
	return mp_intmap_take(m, key, &val);
}
/*
 * Visit every entry, in no order: for (size_t i = 0; mp_intmap_next(m, &i, &k, &v);).
 * The map must not change during the visit.
 */
static inline bool mp_intmap_next(const struct mp_intmap *m, size_t *i, uint64_t *key, uint64_t *val)
{
	for (; *i < m->cap; (*i)++)
		if (m->e[*i].val) {
			*key = m->e[*i].key;
			*val = m->e[*i].val - 1;
			(*i)++;
			return true;
		}
	return false;
}

/*
 * A set of uint32_t indices, each standing for an element of the caller's
 * array. Lookups pass the element's hash and an equality callback that
 * compares the candidate index with what is looked for.
 */
struct mp_idxset_entry {
	uint32_t idx1;  /* index + 1; 0 marks an empty entry */
	uint32_t hash;  /* low bits of the element's hash, to skip most comparisons */
};

struct mp_idxset {
	struct mp_idxset_entry *e;
	size_t cap, n;
};

typedef bool (*mp_idxset_eq_fn)(const void *ctx, uint32_t idx);

void mp_idxset_init(struct mp_idxset *s);
void mp_idxset_release(struct mp_idxset *s);
/*
 * The index of the element equal to the one described, or UINT32_MAX. Inline,
 * so that a caller's eq, a static function, is inlined too.
 */
static inline uint32_t mp_idxset_find(const struct mp_idxset *s, uint64_t hash, mp_idxset_eq_fn eq,
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
/* Add idx (not already present) under hash. */
void mp_idxset_add(struct mp_idxset *s, uint64_t hash, uint32_t idx);

#endif
