/*
 * A table of interned strings: each distinct text gets one small id, so
 * reports compare and store ids and emit every string once (the HTML pages
 * ship this table as their string table).
 */
#ifndef MEMPROF_LIB_UTIL_STRTAB_H
#define MEMPROF_LIB_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "lib/util/hash.h"

struct mp_strtab {
	char **str;     /* by id, NUL-terminated; id 0 is "" */
	uint32_t *len;  /* by id */
	size_t n, alloc;
	struct mp_idxset set;
};

void mp_strtab_init(struct mp_strtab *t);
void mp_strtab_release(struct mp_strtab *t);
/* The id of the text s[0..len) (which may hold NULs), adding it if new. */
uint32_t mp_strtab_intern(struct mp_strtab *t, const char *s, size_t len);
static inline uint32_t mp_strtab_intern_str(struct mp_strtab *t, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return mp_strtab_intern(t, s, n);
}
/* The text of an id ("" for ids out of range). */
static inline const char *mp_strtab_get(const struct mp_strtab *t, uint32_t id)
{
	return id < t->n ? t->str[id] : "";
}
static inline size_t mp_strtab_len(const struct mp_strtab *t, uint32_t id)
{
	return id < t->n ? t->len[id] : 0;
}

#endif
