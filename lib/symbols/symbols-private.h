/*
 * What lib/symbols/symbols.c (the module map, the files, the lookups) and
 * lib/symbols/describe.c (what DWARF says about an address) share.
 */
#ifndef MEMPROF_LIB_SYMBOLS_SYMBOLS_PRIVATE_H
#define MEMPROF_LIB_SYMBOLS_SYMBOLS_PRIVATE_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/symbols/debugcache.h"
#include "lib/symbols/symbols.h"
#include "lib/symbols/symindex.h"
#include "lib/util/hash.h"
#include "lib/util/strtab.h"
#include "lib/util/xalloc.h"

/* ---- maps from 64-bit keys to pointers: mp_intmap holding uintptr_t ---- */

static inline void *ptr_get(const struct mp_intmap *m, uint64_t key)
{
	uint64_t v;
	return mp_intmap_get(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

static inline void ptr_put(struct mp_intmap *m, uint64_t key, void *val)
{
	mp_intmap_put(m, key, (uintptr_t)val);
}

static inline void *ptr_take(struct mp_intmap *m, uint64_t key)
{
	uint64_t v;
	return mp_intmap_take(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

/* ---- the shared cache: files and interned strings ---- */

/* One address range of a subprogram of a compilation unit. */
struct fn_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

/* The subprograms of one compilation unit, sorted by lo. */
struct unit_index {
	struct fn_range *fn;
	size_t n, alloc;
};

enum file_state { FILE_NEW, FILE_READY, FILE_UNUSABLE };

/* One file on disk, for one (root, path, build-id); shared by every module mapping it. */
struct sym_file {
	char *path;           /* as recorded */
	const char *root;     /* interned, or NULL */
	uint8_t *build_id;    /* as recorded */
	size_t build_id_len;
	bool pseudo;          /* [vdso] and co: no file, no warning */
	enum file_state state;
	const char *problem;  /* interned warning when the file is not used */
	bool debug_checked;
	bool debug_asked;     /* libdw asked for its debug file: a later ask is for a dwz file */
	bool undebugged;      /* no debug information: function names at most, no lines */
	bool unnamed;         /* undebugged, and some ip in it had no function name */
	char *debuginfo_path; /* for dwfl_standard_find_debuginfo */
	struct symcache *cache;
	Dwfl_Callbacks callbacks;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct mp_intmap units;  /* CU DIE address -> struct unit_index */
	struct mp_symindex *symindex; /* its symbol table by address, once looked into */
	bool symindex_tried;
	/*
	 * What lookups found, by (offset << 1 | return address): the frames'
	 * first index in memo + 1 and their count << 32. Every process that
	 * maps the file asks again for the same addresses (300 cc1 of a build):
	 * each address is described once.
	 */
	struct mp_intmap described;
	struct mp_sym_frame *memo;
	size_t nmemo, memo_alloc;
};

/* debuginfod (lib/symbols/debuginfod.c): its client, loaded when DEBUGINFOD_URLS is set. */
struct dinfod {
	bool loaded;          /* dlopen tried */
	void *so;
	struct debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(struct debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(struct debuginfod_client *);
	struct debuginfod_client *client;
	bool stalled;         /* a lookup timed out: the servers are not asked again */
};

struct symcache {
	unsigned refs;
	struct mp_strtab strings;  /* interned strings: their pointers never move */
	const char **demangled;    /* by string id: its demangled form, once computed */
	size_t demangled_alloc;
	struct mp_strtab file_keys; /* "root\npath\nbuild-id" */
	struct sym_file **files;    /* by key id */
	size_t files_alloc;
	size_t files_opened, units_indexed;
	struct sym_file **undebugged; /* files without debug information, in the order met */
	size_t nundebugged, undebugged_alloc;
	char *debug_dirs;      /* $MEMPROF_DEBUGINFO_PATH, read once, or NULL */
	struct mp_debugcache dcache; /* debug files kept decompressed */
	struct dinfod dinfod;
};

static inline const char *intern_len(struct symcache *c, const char *s, size_t len)
{
	return mp_strtab_get(&c->strings, mp_strtab_intern(&c->strings, s, len));
}

static inline const char *intern(struct symcache *c, const char *s)
{
	return intern_len(c, s, strlen(s));
}

/* Make index id exist in an array indexed by string id, new elements zeroed. */
#define GROW_TO_ID(arr, alloc, id)                                               \
	do {                                                                     \
		size_t old_ = (alloc);                                           \
		ALLOC_GROW(arr, (size_t)(id) + 1, alloc);                        \
		memset((arr) + old_, 0, ((alloc) - old_) * sizeof(*(arr)));     \
	} while (0)

/* ---- the object ---- */

struct sym_module {
	uint64_t id, base;
	const char *path; /* interned */
	struct sym_file *file;
};

/* base + vaddr .. + memsz of one segment of a module. */
struct range {
	uint64_t lo, hi;
	struct sym_module *m;
};

struct mp_symbols {
	struct symcache *cache;
	const char *root; /* interned, or NULL */
	bool demangle;
	struct mp_intmap modules;    /* id -> struct sym_module */
	struct range *ranges;     /* of every module, sorted by lo */
	size_t nranges, ranges_alloc;
	bool ranges_dirty;
	struct mp_sym_frame *frames;
	size_t frames_alloc;
	Dwarf_Die *chain;         /* scratch: the function DIEs of one lookup */
	size_t chain_alloc;
	const char **warnings;
	size_t nwarnings, warnings_alloc;
	struct mp_intmap warned;     /* interned warnings already listed */
	size_t lookups;
};

static inline void add_warning(struct mp_symbols *s, const char *line)
{
	/* Each interned line once. */
	if (!line || !mp_intmap_put(&s->warned, (uintptr_t)line, 1))
		return;
	ALLOC_GROW(s->warnings, s->nwarnings + 1, s->warnings_alloc);
	s->warnings[s->nwarnings++] = line;
}

/* Intern a message made by xasprintf() and free it. */
static inline const char *intern_msg(struct mp_symbols *s, char *msg)
{
	const char *line = intern(s->cache, msg);
	free(msg);
	return line;
}

/*
 * A lookup that may ask debuginfod (DEBUGINFOD_URLS set): between
 * mp_dinfod_enter() and mp_dinfod_leave(), memprof's own environment holds
 * its bound on the wait (DEBUGINFOD_TIMEOUT, unless the user set one) or,
 * once a lookup timed out, no DEBUGINFOD_URLS; leave restores it and notes
 * a failed lookup that took the whole bound (found: whether it found
 * something). Callers have started their programs before (memprof run
 * starts the program before the first lookup), so no program sees this.
 */
struct dinfod_scope {
	bool active, set_timeout;
	char *saved_urls;
	long timeout;
	double start;
};
void mp_dinfod_enter(struct mp_symbols *s, struct dinfod_scope *sc);
void mp_dinfod_leave(struct mp_symbols *s, struct dinfod_scope *sc, bool found);
/* A debug file with f's recorded build-id from debuginfod: an open fd and *path (to free), or -1. */
int mp_dinfod_find_debuginfo(struct mp_symbols *s, struct sym_file *f, char **path);
void mp_dinfod_release(struct dinfod *d);

/* What DWARF (or the symbol table) says about addr, a file offset in f: out's frames, innermost first. */
void mp_sym_describe(struct mp_symbols *s, struct sym_file *f, Dwarf_Addr addr, struct mp_sym *out);

#endif
