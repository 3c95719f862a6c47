/* The tree report: the biggest stacks as an indented call tree. */
#include <config.h>
#include "lib/report/tree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/calltree.h"
#include "lib/report/report.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

struct render {
	const struct mp_analysis *a;
	const struct mp_calltree *t;
	const struct mp_term *term;
	const struct mp_tree_opts *o;
	uint64_t total;         /* bytes of the whole view: 100 % */
	struct strbuf *out;
	struct strbuf prefix;   /* the indentation of the current depth */
	uint32_t *chain;        /* the nodes of the chain being printed */
	size_t chain_alloc;
	bool *shown;            /* which of them the line names */
	size_t shown_alloc;
	size_t own;             /* the innermost of the program's own frames in the chain, or its length */
};

/* How much a label says: siblings that would read the same get more. */
enum detail {
	PLAIN,          /* functions, the last one's file and line */
	LINES,          /* and the line of each call ("main:15 → fill") */
	FULL,           /* and C++ names whole */
};

static void amount(struct render *r, struct strbuf *sb, uint64_t bytes, bool color)
{
	const struct mp_term *t = color ? r->term : NULL;
	strbuf_addstr(sb, mp_color(t, mp_share_color(bytes, r->total)));
	mp_format_size(sb, bytes);
	strbuf_addf(sb, " (");
	mp_format_percent(sb, bytes, r->total);
	strbuf_addf(sb, ")%s", mp_color(t, MP_COLOR_RESET));
}

/* A frame of the chain: its function, and with LINES the line of its call. */
static void function(struct render *r, struct strbuf *sb, uint32_t loc, enum detail d, bool call,
		     const struct mp_term *t)
{
	const struct mp_location *l = mp_analysis_location(r->a, loc);
	strbuf_addstr(sb, mp_color(t, MP_COLOR_MAGENTA));
	mp_report_function(r->a, loc, d == FULL || r->term->full_names, sb);
	strbuf_addstr(sb, mp_color(t, MP_COLOR_RESET));
	if (call && d >= LINES && l->line)
		strbuf_addf(sb, ":%u", l->line);
}

/* "  file:line", or "  (module)" when the file is unknown. */
static void where(struct render *r, struct strbuf *sb, uint32_t loc, const struct mp_term *t)
{
	const struct mp_location *l = mp_analysis_location(r->a, loc);
	if (l->file) {
		strbuf_addf(sb, "  %s", mp_color(t, MP_COLOR_CYAN));
		mp_text_addstr_safe(sb, mp_analysis_string(r->a, l->file));
		if (l->line)
			strbuf_addf(sb, ":%u", l->line);
		strbuf_addstr(sb, mp_color(t, MP_COLOR_RESET));
	} else if (l->module != MP_NONE && !(l->flags & MP_LOC_UNSYMBOLIZED)) {
		strbuf_addf(sb, "  %s(", mp_color(t, MP_COLOR_CYAN));
		mp_text_addstr_safe(sb, mp_analysis_string(r->a, r->a->modules[l->module].name));
		strbuf_addf(sb, ")%s", mp_color(t, MP_COLOR_RESET));
	}
}

/* A node that only passes its memory on to its single callee. */
static bool passes_through(const struct mp_calltree_node *n)
{
	return n->nchildren == 1 && !n->self.count;
}

/* The chain that starts at node: r->chain[0..len), followed while nothing branches off or allocates. */
static size_t chain_of(struct render *r, uint32_t node)
{
	size_t len = 0;
	for (;;) {
		ALLOC_GROW(r->chain, len + 1, r->chain_alloc);
		r->chain[len++] = node;
		if (!passes_through(&r->t->nodes[node]))
			return len;
		node = r->t->nodes[node].first_child;
	}
}

/* A frame that "… N more …" may hide: neither Python code nor the program's own. */
static bool foldable(const struct mp_location *l)
{
	return !(l->flags & MP_LOC_PYTHON) &&
	       (l->flags & (MP_LOC_RUNTIME | MP_LOC_PLUMBING | MP_LOC_TRUNCATED | MP_LOC_INTERPRETER |
			    MP_LOC_STARTUP | MP_LOC_UNSYMBOLIZED));
}

/*
 * Which frames of a chain of len the line names (r->shown): all of a short
 * chain or with --whole-paths; else the first, the last two, every Python
 * frame, the innermost frame of the executable's own code and the innermost
 * of the others that are not foldable (a library of the program's), the
 * others folded into "… N more …".
 */
static void choose(struct render *r, size_t len)
{
	const struct mp_analysis *a = r->a;
	size_t own = len, program = len;
	ALLOC_GROW(r->shown, len, r->shown_alloc);
	for (size_t i = 0; i < len; i++) {
		const struct mp_location *l = mp_analysis_location(a, r->t->nodes[r->chain[i]].location);
		r->shown[i] = r->o->whole_paths || len <= MP_TREE_CHAIN_MAX || i == 0 || i + 2 >= len ||
			      (l->flags & MP_LOC_PYTHON);
		if (!foldable(l))
			own = i;
		if ((l->flags & MP_LOC_PROGRAM) && !(l->flags & (MP_LOC_PLUMBING | MP_LOC_STARTUP)))
			program = i;
	}
	if (own < len)
		r->shown[own] = true;
	if (program < len)
		r->shown[program] = true;
	r->own = program < len ? program : own;
	/* "… 1 more …" would take the room of the frame it hides. */
	for (size_t i = 1; i + 1 < len; i++)
		if (!r->shown[i] && r->shown[i - 1] && r->shown[i + 1])
			r->shown[i] = true;
}

/* The text of a chain's line after its amount: frames, arrows, folds and where the last one is. */
static void label(struct render *r, struct strbuf *sb, size_t len, enum detail d, bool color)
{
	const struct mp_term *t = color ? r->term : NULL;
	size_t i = 0;
	while (i < len) {
		if (i)
			strbuf_addf(sb, " %s\u2192%s ", mp_color(t, MP_COLOR_DIM), mp_color(t, MP_COLOR_RESET));
		if (r->shown[i]) {
			function(r, sb, r->t->nodes[r->chain[i]].location, d, i + 1 < len, t);
			i++;
		} else {
			size_t k = i;
			while (k < len && !r->shown[k])
				k++;
			strbuf_addf(sb, "%s\u2026 %zu more \u2026%s", mp_color(t, MP_COLOR_DIM), k - i,
				    mp_color(t, MP_COLOR_RESET));
			i = k;
		}
	}
	where(r, sb, r->t->nodes[r->chain[len - 1]].location, t);
}

/*
 * Fit a chain's line into width columns: fold more of the frames the line
 * names, outermost first (never the first, the last or the innermost of the
 * program's own), then cut what is still too wide.
 */
static void fit_label(struct render *r, struct strbuf *sb, size_t len, enum detail d, size_t width)
{
	size_t start = sb->len;
	label(r, sb, len, d, true);
	while (width && mp_text_width(sb->buf + start, sb->len - start) > width) {
		size_t drop = 0;
		for (size_t i = 1; i + 1 < len && !drop; i++)
			if (r->shown[i] && i != r->own)
				drop = i;
		if (!drop)
			break;
		r->shown[drop] = false;
		strbuf_setlen(sb, start);
		label(r, sb, len, d, true);
	}
	mp_text_cut(sb, start, width, r->term);
}

struct sibling {
	uint32_t node;
	enum detail detail;
	char *text;             /* its label at that detail, uncoloured */
};

static int sibling_cmp(const void *x, const void *y)
{
	const struct sibling *a = x, *b = y;
	int c = strcmp(a->text, b->text);
	return c ? c : (a->node > b->node) - (a->node < b->node);
}

static int sibling_order(const void *x, const void *y)
{
	const struct sibling *a = x, *b = y;
	return (a->node > b->node) - (a->node < b->node);
}

static void sibling_text(struct render *r, struct sibling *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = chain_of(r, s->node);
	choose(r, len);
	label(r, &sb, len, s->detail, false);
	free(s->text);
	s->text = strbuf_detach(&sb, NULL);
}

/*
 * How much each child of a node must say so that no two read the same
 * ("main:15 → fill", "main:17 → fill"): into kids, in the tree's order.
 */
static struct sibling *siblings(struct render *r, uint32_t parent, size_t *count)
{
	const struct mp_calltree *t = r->t;
	struct sibling *kids = NULL;
	size_t n = 0, alloc = 0;
	for (uint32_t c = t->nodes[parent].first_child; c != MP_NONE; c = t->nodes[c].next_sibling) {
		ALLOC_GROW(kids, n + 1, alloc);
		kids[n] = (struct sibling){ c, PLAIN, NULL };
		sibling_text(r, &kids[n++]);
	}
	for (enum detail d = LINES; d <= FULL && n > 1; d++) {
		bool again = false;
		mp_qsort(kids, n, sizeof(*kids), sibling_cmp);
		for (size_t i = 0; i < n;) {
			size_t k = i + 1;
			while (k < n && !strcmp(kids[k].text, kids[i].text))
				k++;
			for (size_t j = i; k - i > 1 && j < k; j++) {
				kids[j].detail = d;
				sibling_text(r, &kids[j]);
				again = true;
			}
			i = k;
		}
		if (!again)
			break;
	}
	/* Node numbers grow with the order children were made, not the order shown: sort by it. */
	mp_qsort(kids, n, sizeof(*kids), sibling_order);
	*count = n;
	return kids;
}

static void print_children(struct render *r, uint32_t parent, bool more_after);

/* Print the line of node (with the chain it starts), then its children. */
static void node_line(struct render *r, uint32_t node, enum detail d, bool last)
{
	const struct mp_calltree *t = r->t;
	size_t saved = r->prefix.len, start = r->out->len, len = chain_of(r, node), used;
	uint32_t end = r->chain[len - 1];

	choose(r, len);
	strbuf_add(r->out, r->prefix.buf, r->prefix.len);
	strbuf_addstr(r->out, last ? MP_TREE_LAST : MP_TREE_BRANCH);
	amount(r, r->out, t->nodes[node].total.bytes, true);
	strbuf_addch(r->out, ' ');
	used = mp_text_width(r->out->buf + start, r->out->len - start);
	fit_label(r, r->out, len, d, r->term->limit ? (r->term->limit > used + 1 ? r->term->limit - used : 1) : 0);
	strbuf_addch(r->out, '\n');
	strbuf_addstr(&r->prefix, last ? MP_TREE_SPACE : MP_TREE_PIPE);
	print_children(r, end, false);
	strbuf_setlen(&r->prefix, saved);
}

static void print_children(struct render *r, uint32_t parent, bool more_after)
{
	size_t n;
	struct sibling *kids = siblings(r, parent, &n);
	/* In the tree's order (by size), which node numbers need not follow. */
	for (uint32_t c = r->t->nodes[parent].first_child; c != MP_NONE;
	     c = r->t->nodes[c].next_sibling) {
		struct sibling key = { c, PLAIN, NULL }, *s = bsearch(&key, kids, n, sizeof(*kids), sibling_order);
		node_line(r, c, s->detail, r->t->nodes[c].next_sibling == MP_NONE && !more_after);
	}
	for (size_t i = 0; i < n; i++)
		free(kids[i].text);
	free(kids);
}

void mp_tree_render(const struct mp_analysis *a, enum mp_view view, size_t biggest,
		    const struct mp_tree_opts *o, const struct mp_term *term, struct strbuf *out)
{
	struct mp_group_row *rows;
	size_t n = mp_analysis_group(a, view, MP_BY_STACK, MP_SORT_BYTES, &rows);
	struct mp_calltree t;
	struct render r = { a, &t, term, o, 0, out, STRBUF_INIT, NULL, 0, NULL, 0, 0 };
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
	amount(&r, out, r.total, true);
	strbuf_addstr(out, " <ROOT>\n");
	print_children(&r, 0, rest_stacks > 0);
	if (rest_stacks) {
		strbuf_addstr(out, MP_TREE_LAST);
		amount(&r, out, rest.bytes, true);
		strbuf_addf(out, " %llu allocation%s from %zu location%s below the threshold\n",
			    (unsigned long long)rest.count, rest.count == 1 ? "" : "s", rest_stacks,
			    rest_stacks == 1 ? "" : "s");
	}
	mp_calltree_release(&t);
	strbuf_release(&r.prefix);
	free(r.chain);
	free(r.shown);
	free(rows);
}
