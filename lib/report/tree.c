/* The tree report: the biggest stacks as an indented call tree. */
#include <config.h>
#include "lib/report/tree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/calltree.h"

struct render {
	const struct mp_analysis *a;
	const struct mp_calltree *t;
	const struct mp_term *term;
	uint64_t total;         /* bytes of the whole view: 100 % */
	struct strbuf *out;
	struct strbuf prefix;   /* the indentation of the current depth */
};

static void amount(struct render *r, uint64_t bytes)
{
	struct strbuf sb = STRBUF_INIT;
	enum mp_color c = mp_share_color(bytes, r->total);
	mp_format_size(&sb, bytes);
	strbuf_addf(&sb, " (");
	mp_format_percent(&sb, bytes, r->total);
	strbuf_addch(&sb, ')');
	strbuf_addf(r->out, "%s%s%s", mp_color(r->term, c), sb.buf, mp_color(r->term, MP_COLOR_RESET));
	strbuf_release(&sb);
}

static void function(struct render *r, uint32_t loc)
{
	const struct mp_location *l = mp_analysis_location(r->a, loc);
	strbuf_addstr(r->out, mp_color(r->term, MP_COLOR_MAGENTA));
	mp_text_addstr_safe(r->out, mp_analysis_string(r->a, l->function));
	strbuf_addstr(r->out, mp_color(r->term, MP_COLOR_RESET));
}

/* "  file:line", or "  (module)" when the file is unknown. */
static void where(struct render *r, uint32_t loc)
{
	const struct mp_location *l = mp_analysis_location(r->a, loc);
	if (l->file) {
		strbuf_addf(r->out, "  %s", mp_color(r->term, MP_COLOR_CYAN));
		mp_text_addstr_safe(r->out, mp_analysis_string(r->a, l->file));
		if (l->line)
			strbuf_addf(r->out, ":%u", l->line);
		strbuf_addstr(r->out, mp_color(r->term, MP_COLOR_RESET));
	} else if (l->module != MP_NONE && !(l->flags & MP_LOC_UNSYMBOLIZED)) {
		strbuf_addf(r->out, "  %s(", mp_color(r->term, MP_COLOR_CYAN));
		mp_text_addstr_safe(r->out, mp_analysis_string(r->a, r->a->modules[l->module].name));
		strbuf_addf(r->out, ")%s", mp_color(r->term, MP_COLOR_RESET));
	}
}

/* A node that only passes its memory on to its single callee. */
static bool passes_through(const struct mp_calltree_node *n)
{
	return n->nchildren == 1 && !n->self.count;
}

static void arrow(struct render *r)
{
	strbuf_addf(r->out, " %s\u2192%s ", mp_color(r->term, MP_COLOR_DIM),
		    mp_color(r->term, MP_COLOR_RESET));
}

/* Print the line of node (with the chain it starts), then its children. */
static void node_line(struct render *r, uint32_t node, bool last)
{
	const struct mp_calltree *t = r->t;
	uint32_t end = node, n = node;
	size_t len = 1, saved = r->prefix.len;

	/* Follow the chain while nothing branches off or allocates. */
	while (passes_through(&t->nodes[end])) {
		end = t->nodes[end].first_child;
		len++;
	}
	strbuf_add(r->out, r->prefix.buf, r->prefix.len);
	strbuf_addstr(r->out, last ? MP_TREE_LAST : MP_TREE_BRANCH);
	amount(r, t->nodes[node].total.bytes);
	strbuf_addch(r->out, ' ');
	if (len <= MP_TREE_CHAIN_MAX) {
		for (size_t i = 0; i < len; i++, n = t->nodes[n].first_child) {
			if (i)
				arrow(r);
			function(r, t->nodes[n].location);
		}
	} else {
		/* The first frame, how many are elided, the last two. */
		function(r, t->nodes[node].location);
		arrow(r);
		strbuf_addf(r->out, "%s\u2026 %zu more \u2026%s", mp_color(r->term, MP_COLOR_DIM),
			    len - 3, mp_color(r->term, MP_COLOR_RESET));
		for (size_t i = 0; i < len - 2; i++)
			n = t->nodes[n].first_child;
		arrow(r);
		function(r, t->nodes[n].location);
		arrow(r);
		function(r, t->nodes[end].location);
	}
	where(r, t->nodes[end].location);
	strbuf_addch(r->out, '\n');
	strbuf_addstr(&r->prefix, last ? MP_TREE_SPACE : MP_TREE_PIPE);
	for (uint32_t c = t->nodes[end].first_child; c != MP_NONE; c = t->nodes[c].next_sibling)
		node_line(r, c, t->nodes[c].next_sibling == MP_NONE);
	strbuf_setlen(&r->prefix, saved);
}

void mp_tree_render(const struct mp_analysis *a, enum mp_view view, size_t biggest,
		    const struct mp_term *term, struct strbuf *out)
{
	struct mp_group_row *rows;
	size_t n = mp_analysis_group(a, view, MP_BY_STACK, MP_SORT_BYTES, &rows);
	struct mp_calltree t;
	struct render r = { a, &t, term, 0, out, STRBUF_INIT };
	struct mp_counts rest = { 0, 0 };
	size_t rest_stacks = 0;

	mp_calltree_init(&t, a, 0);
	for (size_t i = 0; i < n; i++) {
		r.total += rows[i].c.bytes;
		if (i < biggest) {
			mp_calltree_add(&t, rows[i].stack, MP_THREAD_MERGED, rows[i].c);
		} else {
			rest.bytes += rows[i].c.bytes;
			rest.count += rows[i].c.count;
			rest_stacks++;
		}
	}
	mp_calltree_finish(&t);
	amount(&r, r.total);
	strbuf_addstr(out, " <ROOT>\n");
	for (uint32_t c = t.nodes[0].first_child; c != MP_NONE; c = t.nodes[c].next_sibling)
		node_line(&r, c, t.nodes[c].next_sibling == MP_NONE && !rest_stacks);
	if (rest_stacks) {
		strbuf_addstr(out, MP_TREE_LAST);
		amount(&r, rest.bytes);
		strbuf_addf(out, " %llu allocation%s from %zu location%s below the threshold\n",
			    (unsigned long long)rest.count, rest.count == 1 ? "" : "s", rest_stacks,
			    rest_stacks == 1 ? "" : "s");
	}
	mp_calltree_release(&t);
	strbuf_release(&r.prefix);
	free(rows);
}
