/*
 * The folded-stacks export, as flamegraph.pl and inferno read it: one line
 * per distinct call path of function names, root first, separated by ";",
 * then a space and the bytes of the view ("main;load;xmalloc 4096"). Paths
 * are merged on function names (different lines of one function are one
 * frame), so each line is unique; with split threads the thread is the
 * first frame. Names are from the capture: control characters, invalid
 * UTF-8 and ";" are written as \xNN so a line always splits right.
 */
#include <config.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "lib/export/export-private.h"
#include "lib/util/hash.h"
#include "lib/util/xalloc.h"

/* A node of the trie of paths: a function (or, at the top, a thread) below its parent. */
struct fnode {
	uint32_t parent;        /* MP_NONE for the root */
	uint32_t name;          /* string id of the function; the thread for a thread node */
	bool is_thread;
	uint64_t bytes;         /* of the paths ending here */
};

struct folded {
	const struct mp_analysis *a;
	struct fnode *nodes;
	size_t n, alloc;
	struct mp_idxset set;   /* (parent, name, is_thread) -> node */
	struct strbuf line;
};

struct fnode_probe {
	const struct folded *f;
	uint32_t parent, name;
	bool is_thread;
};

static bool fnode_eq(const void *ctx, uint32_t idx)
{
	const struct fnode_probe *q = ctx;
	const struct fnode *n = &q->f->nodes[idx];
	return n->parent == q->parent && n->name == q->name && n->is_thread == q->is_thread;
}

static uint32_t child(struct folded *f, uint32_t parent, uint32_t name, bool is_thread)
{
	struct fnode_probe probe = { f, parent, name, is_thread };
	uint64_t h = mp_hash_combine(mp_hash_combine(mp_hash_u64(parent), name), is_thread);
	uint32_t idx = mp_idxset_find(&f->set, h, fnode_eq, &probe);
	struct fnode *n;
	if (idx != MP_NONE)
		return idx;
	ALLOC_GROW(f->nodes, f->n + 1, f->alloc);
	idx = (uint32_t)f->n++;
	n = &f->nodes[idx];
	n->parent = parent;
	n->name = name;
	n->is_thread = is_thread;
	n->bytes = 0;
	mp_idxset_add(&f->set, h, idx);
	return idx;
}

/*
 * Append the frames from the root to node, separated by ";". The path is
 * gathered in *chain first: no recursion, however deep the stack (a
 * capture may hold any depth).
 */
static void add_path(struct folded *f, uint32_t node, uint32_t **chain, size_t *chain_alloc)
{
	size_t depth = 0;
	for (uint32_t k = node; k; k = f->nodes[k].parent) {
		ALLOC_GROW(*chain, depth + 1, *chain_alloc);
		(*chain)[depth++] = k;
	}
	while (depth-- > 0) {
		const struct fnode *n = &f->nodes[(*chain)[depth]];
		if (f->line.len)
			strbuf_addch(&f->line, ';');
		if (n->is_thread) {
			struct strbuf label = STRBUF_INIT;
			mp_analysis_thread_label(f->a, n->name, &label);
			mp_export_add_name(&f->line, label.buf, ";");
			strbuf_release(&label);
		} else {
			mp_export_add_name(&f->line, mp_analysis_string(f->a, n->name), ";");
		}
	}
}

int mp_export_folded(const struct mp_analysis *a, const struct mp_export_opts *o,
		     struct mp_sink *out)
{
	struct folded f = { .a = a };
	uint32_t *stack = NULL;
	size_t stack_alloc = 0;

	mp_idxset_init(&f.set);
	strbuf_init(&f.line, 0);
	ALLOC_GROW(f.nodes, 1, f.alloc);
	f.nodes[0] = (struct fnode){ MP_NONE, 0, false, 0 };
	f.n = 1;
	for (size_t i = 0; i < a->nslots; i++) {
		const struct mp_slot *s = &a->slots[i];
		struct mp_counts c = mp_slot_counts(s, o->view);
		uint32_t node = 0;
		size_t n;
		if (!c.bytes)
			continue; /* a line of 0 bytes draws nothing */
		if (s->thread != MP_THREAD_MERGED)
			node = child(&f, node, s->thread, true);
		n = mp_analysis_view_stack(a, s->stack, &stack, &stack_alloc);
		for (size_t k = n; k-- > 0;)
			node = child(&f, node, mp_analysis_location(a, stack[k])->function, false);
		f.nodes[node].bytes += c.bytes;
	}
	/* Nodes are numbered after their parents: in order, each path is written once. */
	for (size_t i = 1; i < f.n && !mp_sink_failed(out); i++) {
		if (!f.nodes[i].bytes)
			continue;
		strbuf_reset(&f.line);
		add_path(&f, (uint32_t)i, &stack, &stack_alloc);
		strbuf_addf(&f.line, " %llu\n", (unsigned long long)f.nodes[i].bytes);
		mp_sink_write(out, f.line.buf, f.line.len);
	}
	free(stack);
	free(f.nodes);
	mp_idxset_release(&f.set);
	strbuf_release(&f.line);
	return mp_sink_failed(out) ? -1 : 0;
}
