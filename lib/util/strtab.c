/* Interned strings: one id per distinct text. */
#include <config.h>
#include "lib/util/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/xalloc.h"

void mp_strtab_init(struct mp_strtab *t)
{
	t->str = NULL;
	t->len = NULL;
	t->n = t->alloc = 0;
	mp_idxset_init(&t->set);
	mp_strtab_intern(t, "", 0);
}

void mp_strtab_release(struct mp_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	mp_idxset_release(&t->set);
	t->str = NULL;
	t->len = NULL;
	t->n = t->alloc = 0;
}

struct probe {
	const struct mp_strtab *t;
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx)
{
	const struct probe *p = ctx;
	return p->t->len[idx] == p->len && !memcmp(p->t->str[idx], p->s, p->len);
}

uint32_t mp_strtab_intern(struct mp_strtab *t, const char *s, size_t len)
{
	struct probe p = { t, s, len };
	uint64_t h = mp_hash_bytes(s, len);
	uint32_t id = mp_idxset_find(&t->set, h, str_eq, &p);
	if (id != UINT32_MAX)
		return id;
	if (t->n >= UINT32_MAX - 1)
		return 0; /* four billion distinct strings: not a real capture */
	if (t->n + 1 > t->alloc) {
		size_t alloc = t->alloc;
		ALLOC_GROW(t->str, t->n + 1, alloc);
		t->len = xreallocarray(t->len, alloc, sizeof(*t->len));
		t->alloc = alloc;
	}
	id = (uint32_t)t->n++;
	t->str[id] = xmalloc(len + 1);
	memcpy(t->str[id], s, len);
	t->str[id][len] = '\0';
	t->len[id] = (uint32_t)len;
	mp_idxset_add(&t->set, h, id);
	return id;
}
