/*
 * How reports show stacks: the classes of frames (Python, the interpreter's,
 * start-up, allocator plumbing, the program's own), a Python program's
 * stacks folded to its Python frames and the native code they call, and
 * each stack's allocation site. The data never changes: only which frames
 * are shown and which one names a stack. man/memprof.1, "FRAMES", has the
 * rules in the user's words.
 */
#include <config.h>
#include "lib/analysis/analysis-private.h"

#include <stdlib.h>
#include <string.h>

#include "lib/symbols/cxxname.h"
#include "lib/util/xalloc.h"

/* ---- classes ------------------------------------------------------------- */

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}
/* The same for a string literal. */
#define STARTS_WITH(s, lit) (!strncmp((s), lit, sizeof(lit) - 1))

/*
 * The frames that start the process or a thread, before any code of the
 * program's runs: _start, __libc_start_main (and _impl), __libc_start_call_main,
 * start_thread, clone, clone3, __clone, __clone3, __clone_internal. (Every
 * location is classified: most names are done with at one test.)
 */
static bool is_startup(const char *fn)
{
	switch (fn[0]) {
	case '_':
		if (fn[1] != '_')
			return !strcmp(fn, "_start");
		return STARTS_WITH(fn, "__libc_start_") || !strcmp(fn, "__clone") ||
		       !strcmp(fn, "__clone3") || !strcmp(fn, "__clone_internal");
	case 's':
		return !strcmp(fn, "start_thread");
	case 'c':
		return !strcmp(fn, "clone") || !strcmp(fn, "clone3");
	default:
		return false;
	}
}

/*
 * Allocator plumbing: the frames between the code that asked for memory
 * and the allocator, which are never the answer to "who allocated". By
 * name (its qualified part, past a template's return type): operator new
 * and delete, the C++ standard library's and its ABI's namespaces, Rust's
 * alloc and core; by source file: the C++ standard library's headers and
 * Rust's own library sources, inlined into the program.
 */
static bool is_plumbing(const char *fn, const char *file)
{
	static const char *const prefixes[] = {
		"operator new", "operator delete", "std::", "__gnu_cxx::", "__cxxabiv1::",
		"__cxa_", "alloc::", "<alloc::", "core::", "<core::", "__rust_", "__rdl_", "__rg_",
	};
	/* A return type comes before a space: most names have none. */
	const char *name = strchr(fn, ' ') ? fn + mp_cxx_name_start(fn) : fn;
	if (strchr("os_a<c", name[0]))
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (name[0] == prefixes[i][0] && starts_with(name, prefixes[i]))
				return true;
	return (strstr(file, "/c++/") &&
		(strstr(file, "/include/c++/") || STARTS_WITH(file, "/usr/include/"))) ||
	       STARTS_WITH(file, "/rustc/");
}

uint32_t mp_frames_classify(const struct mp_analysis *a, const struct mp_location *l)
{
	const struct mp_module *m = l->module != MP_NONE ? &a->modules[l->module] : NULL;
	const char *fn = mp_analysis_string(a, l->function);
	uint32_t c = 0;
	if (l->flags & (MP_LOC_TRUNCATED | MP_LOC_NO_STACK | MP_LOC_GROUP | MP_LOC_PROCESS))
		return 0;
	if (m && m->source)
		return MP_LOC_PYTHON;
	if (m && m->interpreter)
		c |= MP_LOC_INTERPRETER;
	if (m && m->program)
		c |= MP_LOC_PROGRAM;
	if (is_startup(fn))
		c |= MP_LOC_STARTUP;
	if (is_plumbing(fn, l->file ? mp_analysis_string(a, l->file) : ""))
		c |= MP_LOC_PLUMBING;
	return c;
}

/* ---- folded stacks -------------------------------------------------------- */

bool mp_analysis_folds(const struct mp_analysis *a)
{
	return a->interpreter_loc != MP_NONE && !(a->opts.flags & MP_ANALYSIS_ALL_FRAMES);
}

size_t mp_analysis_view_stack(const struct mp_analysis *a, uint32_t stack, uint32_t **buf,
			      size_t *alloc)
{
	size_t n = mp_analysis_stack(a, stack, buf, alloc), k = 0;
	bool python = false, interpreter = false;
	if (!mp_analysis_folds(a))
		return n;
	for (size_t i = 0; i < n; i++) {
		const struct mp_location *l = &a->locs[(*buf)[i]];
		python |= (l->flags & MP_LOC_PYTHON) != 0;
		interpreter |= (l->flags & MP_LOC_INTERPRETER) != 0;
		if (!mp_location_folded(l))
			(*buf)[k++] = (*buf)[i];
	}
	if (!python && interpreter) {
		/* Outermost, but inside a process's frame (MP_ANALYSIS_SPLIT_PROCESSES). */
		ALLOC_GROW(*buf, k + 1, *alloc);
		if (k && (a->locs[(*buf)[k - 1]].flags & MP_LOC_PROCESS)) {
			(*buf)[k] = (*buf)[k - 1];
			(*buf)[k - 1] = a->interpreter_loc;
			k++;
		} else {
			(*buf)[k++] = a->interpreter_loc;
		}
	}
	return k ? k : mp_analysis_stack(a, stack, buf, alloc);
}

/* ---- sites ---------------------------------------------------------------- */

/* What one forward sweep over the trace nodes knows of the stack ending at each. */
struct sweep {
	uint32_t site;          /* innermost frame shown that can be a site */
	uint32_t shown;         /* innermost frame shown */
	uint32_t python;        /* innermost Python frame */
};
enum { HAS_PYTHON = 1, HAS_INTERPRETER = 2 };
/* What cannot be an allocation's site (mp_analysis_site()). */
#define NOT_SITE (MP_LOC_RUNTIME | MP_LOC_TRUNCATED | MP_LOC_PLUMBING)

/*
 * A capture without Python frames: nothing is folded and no site has a
 * caller, so a node's site is its innermost frame that can be one, else its
 * parent's, else (no frame of the stack can be one) the node's innermost.
 */
static void compute_native_sites(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	bool raw = (a->opts.flags & MP_ANALYSIS_RAW_LEAF) != 0;
	uint32_t *memo = p->site_memo;
	memo[0] = MP_NONE;
	for (size_t n = 1; n <= a->ntraces; n++) {
		const uint32_t *locs;
		size_t k = mp_analysis_node_frames(a, (uint32_t)n, &locs);
		uint32_t site = MP_NONE;
		for (size_t i = 0; i < k && site == MP_NONE && !raw; i++)
			if (!(a->locs[locs[i]].flags & NOT_SITE))
				site = locs[i];
		memo[n] = site != MP_NONE ? site : memo[p->traces[n].parent];
	}
	/* Children come after their parents: a second sweep puts in the fallbacks. */
	for (size_t n = a->ntraces; n >= 1; n--)
		if (memo[n] == MP_NONE) {
			const uint32_t *locs;
			mp_analysis_node_frames(a, (uint32_t)n, &locs);
			memo[n] = locs[0];
		}
}

void mp_frames_compute_sites(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	struct sweep *w;
	uint8_t *has;
	bool folds = mp_analysis_folds(a), raw = (a->opts.flags & MP_ANALYSIS_RAW_LEAF) != 0;

	p->site_memo = xreallocarray(NULL, a->ntraces + 1, sizeof(*p->site_memo));
	if (a->interpreter_loc == MP_NONE) {
		compute_native_sites(a);
		return;
	}
	w = xreallocarray(NULL, a->ntraces + 1, sizeof(*w));
	has = xcalloc(a->ntraces + 1, 1);
	p->caller_memo = xreallocarray(NULL, a->ntraces + 1, sizeof(*p->caller_memo));
	w[0] = (struct sweep){ MP_NONE, MP_NONE, MP_NONE };
	p->site_memo[0] = p->caller_memo[0] = MP_NONE;
	/* Parents have lower numbers than their children: one forward sweep. */
	for (size_t n = 1; n <= a->ntraces; n++) {
		const uint32_t *locs;
		size_t k = mp_analysis_node_frames(a, (uint32_t)n, &locs);
		uint32_t parent = p->traces[n].parent;
		struct sweep s = { MP_NONE, MP_NONE, MP_NONE };
		uint32_t site;
		has[n] = has[parent];
		for (size_t i = 0; i < k; i++) {
			const struct mp_location *l = &a->locs[locs[i]];
			if (l->flags & MP_LOC_PYTHON) {
				has[n] |= HAS_PYTHON;
				if (s.python == MP_NONE)
					s.python = locs[i];
			}
			if (l->flags & MP_LOC_INTERPRETER)
				has[n] |= HAS_INTERPRETER;
			if (folds && mp_location_folded(l))
				continue;
			if (s.shown == MP_NONE)
				s.shown = locs[i];
			if (s.site == MP_NONE && !(l->flags & NOT_SITE))
				s.site = locs[i];
		}
		if (s.site == MP_NONE)
			s.site = w[parent].site;
		if (s.shown == MP_NONE)
			s.shown = w[parent].shown;
		if (s.python == MP_NONE)
			s.python = w[parent].python;
		w[n] = s;
		/* The stack's own answer (mp_analysis_site() says the rule). */
		if (folds && has[n] == HAS_INTERPRETER && (raw ? s.shown : s.site) == MP_NONE)
			site = a->interpreter_loc;
		else if (!raw && s.site != MP_NONE)
			site = s.site;
		else if (s.shown != MP_NONE)
			site = s.shown;
		else
			site = locs[0];
		p->site_memo[n] = site;
		p->caller_memo[n] = site == a->interpreter_loc || (a->locs[site].flags & MP_LOC_PYTHON)
					    ? MP_NONE : s.python;
	}
	free(w);
	free(has);
}

uint32_t mp_analysis_site(const struct mp_analysis *a, uint32_t stack)
{
	const uint32_t *locs;
	if (!stack || stack > a->ntraces)
		return MP_LOCATION_NO_STACK;
	if (a->p->site_memo)
		return a->p->site_memo[stack];
	/* Before the end of the pass: the innermost frame. */
	mp_analysis_node_frames(a, stack, &locs);
	return locs[0];
}

uint32_t mp_analysis_site_in(const struct mp_analysis *a, const uint32_t *shown, size_t n)
{
	if (!(a->opts.flags & MP_ANALYSIS_RAW_LEAF))
		for (size_t i = 0; i < n; i++)
			if (!(a->locs[shown[i]].flags & NOT_SITE))
				return shown[i];
	return shown[0];
}

uint32_t mp_analysis_caller(const struct mp_analysis *a, uint32_t stack)
{
	if (!stack || stack > a->ntraces || !a->p->caller_memo)
		return MP_NONE;
	return a->p->caller_memo[stack];
}
