/* Symbolization: instruction pointers of a tracked process to functions, lines and inlined frames. */
#ifndef MEMPROF_LIB_SYMBOLS_SYMBOLS_H
#define MEMPROF_LIB_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/format/decode.h"

/*
 * Three callers use this module:
 *
 *  - the collector (memprof run / attach) symbolizes every new ip of a live
 *    target while it runs and writes SYMBOL records, so that the capture is
 *    self-contained;
 *  - the reporters symbolize, at report time and maybe on another machine,
 *    a capture written without symbols (a hand-preloaded tracker), from the
 *    module paths and build-ids recorded in its MODULE records;
 *  - a collector that follows forks keeps one mp_symbols per process and
 *    shares the per-file work between them (opts.share_with).
 *
 * Usage: feed it the module map as it arrives (mp_symbols_add_module() for
 * each MODULE record, mp_symbols_remove_module() for MODULE_UNLOAD), call
 * mp_symbols_lookup() once per distinct ip, and print the lines of
 * mp_symbols_warnings() as warnings.
 *
 * What a lookup gives:
 *  - the module that contains the ip (its PT_LOAD segments, mapped at
 *    base + vaddr) and the offset ip - base: always, when a module contains
 *    the ip, even if its file cannot be read;
 *  - the frames at that address, innermost first. When the ip lies in code
 *    that the compiler inlined, there is one frame per inlined function and
 *    the last frame is the real function that contains the code:
 *      frames[0]     the inlined callee; file:line is the line of the ip
 *      frames[i]     i >= 1: the function that frames[i-1] was inlined into;
 *                    file:line:column is the call site (DW_AT_call_file,
 *                    DW_AT_call_line, DW_AT_call_column)
 *      frames[n-1]   the containing subprogram
 *    Without inlining there is one frame. Function names come from DWARF
 *    (the linkage name, demangled, else the plain name), else from the ELF
 *    symbol table (.symtab, then .dynsym); file and line come from the
 *    line table. A frame can have a function and no file (no line table
 *    for that code: file NULL, line 0), or a file and no function
 *    (function NULL). Column 0 means unknown.
 *
 * Where the files come from: a module's path is opened as
 * "<root><path>" first (for an absolute path) and then as "<path>" (root
 * from the options; a " (deleted)" suffix is dropped). Debug information is found like the
 * elfutils tools do: in the file itself, else by build-id under
 * DIR/.build-id/xx/yyyy.debug for each directory DIR of
 * $MEMPROF_DEBUGINFO_PATH (colon-separated, read once per cache), then
 * <root>/usr/lib/debug and /usr/lib/debug (where Debian's -dbgsym
 * packages put them), else by .gnu_debuglink next to the file, in its
 * .debug/ directory, and under those directories; a separate debug file
 * is used only if its build-id (or debuglink CRC) matches; else, when
 * DEBUGINFOD_URLS is set, from debuginfod. When the file cannot be used
 * (missing, not ELF, other build-id), a debug file found by the recorded
 * build-id, in those directories or from debuginfod, stands in for it.
 *
 * debuginfod: lookups wait at most DEBUGINFOD_TIMEOUT seconds for a
 * server to connect and send its first 100 KB (10 when the user did not
 * set it: memprof sets it in its own environment for the length of each
 * lookup, so callers must have started their programs before their first
 * lookup); once a lookup failed after that whole wait, no server is asked
 * again by objects sharing the cache, and a warning says so.
 *
 * Build-ids: when the capture recorded a build-id and the file on disk has
 * another one (or none), the file is not used, so that no wrong symbol is
 * ever shown: its ips resolve to module + offset with no frames, and a
 * warning says why. When the capture recorded none, the file is used.
 *
 * Files are opened lazily, at the first lookup of an ip in them, so
 * modules whose code never shows up cost nothing and cause no warning.
 * Each file is opened once per (root, path, build-id) and kept: modules of
 * the same file at other load addresses, removed and re-added modules, and
 * processes sharing the cache reuse it. Within a file, functions are
 * indexed per compilation unit on first use, so a lookup costs a binary
 * search and a walk down one function's scopes.
 *
 * Pseudo modules ("[vdso]" and other bracketed names, "linux-vdso.so.1",
 * "linux-gate.so.1", an empty path) have no file: their ips resolve to
 * module + offset, without a warning.
 *
 * Not thread-safe: use an mp_symbols, and all the objects that share its
 * cache, from one thread at a time.
 */

struct mp_symbols;

struct mp_symbols_opts {
	/*
	 * Prefix for module and debug paths (e.g. "/proc/1234/root" for a
	 * process in a container), or NULL. Paths are tried under the root
	 * first, then as they are.
	 */
	const char *root;
	/* Demangle C++ names (callers turn it on by default). */
	bool demangle;
	/*
	 * Share the file cache (opened files, indexes, interned strings) of
	 * this object, e.g. the parent of a forked child; NULL for a cache of
	 * its own. Each object keeps its own modules and warnings. The cache
	 * lives until the last object using it is freed.
	 */
	struct mp_symbols *share_with;
};

/* A new symbolizer; opts may be NULL (no root, demangling on). */
struct mp_symbols *mp_symbols_new(const struct mp_symbols_opts *opts);
/* Free s; strings it returned stay valid while another object shares its cache. */
void mp_symbols_free(struct mp_symbols *s);

/*
 * A module of the target, as in a MODULE record: its id (unique among the
 * modules present), load bias base, path, build-id (NULL or length 0 when
 * none was recorded) and PT_LOAD segments, each mapped at base + vaddr
 * (modulo 2^64: a prelinked library loaded below its link address has a
 * "negative" bias). A module without segments contains no ip, nor does a
 * segment that wraps around the end of the address space. Returns 0, or -1 when a
 * module with this id is already present (nothing is changed then).
 */
int mp_symbols_add_module(struct mp_symbols *s, uint64_t id, uint64_t base, const char *path,
			  const uint8_t *build_id, size_t build_id_len,
			  const struct mp_segment *seg, size_t nseg);
/* Forget module id (MODULE_UNLOAD); unknown ids are ignored. The file stays cached. */
void mp_symbols_remove_module(struct mp_symbols *s, uint64_t id);
/* Whether module id is in the map (added, not removed since). */
bool mp_symbols_has_module(struct mp_symbols *s, uint64_t id);

struct mp_sym_frame {
	const char *function; /* NULL when unknown */
	const char *file;     /* as in the debug information (usually absolute); NULL when unknown */
	uint32_t line, column; /* 0 when unknown */
};

struct mp_sym {
	uint64_t module_id;   /* 0 when no module contains the ip */
	uint64_t offset;      /* ip - base of that module */
	const char *module_path; /* as given to mp_symbols_add_module(); NULL without a module */
	size_t nframes;       /* 0 when the module has no symbol for it */
	const struct mp_sym_frame *frames; /* innermost first (see above) */
};

/*
 * Resolve ip and fill *out. is_return_address: ip is a return address (every
 * frame of an unwound stack but the innermost one), so look up ip - 1, the
 * call instruction, both to find the module and the line; out->offset is
 * still ip - base. Returns 0 when a module contains the ip (nframes may be
 * 0), -1 when none does (out then has module_id 0 and no frames).
 *
 * Lifetimes: out->frames is valid until the next lookup on s or its free;
 * the strings (function, file, module_path) stay valid, unchanged, until
 * s and every object sharing its cache are freed, and equal strings are
 * the same pointer, so callers may key tables on the pointers.
 */
int mp_symbols_lookup(struct mp_symbols *s, uint64_t ip, bool is_return_address,
		      struct mp_sym *out);

/*
 * The problems met so far by lookups on s, one line each, in the order met,
 * each file's problem once. Their forms:
 *   cannot find '<path>': no symbols
 *   cannot find '<path>' (in '<root>' or outside it): no symbols
 *   cannot open '<path>': <strerror>: no symbols
 *   '<path>' is not a regular file: no symbols
 *   '<path>' is not an ELF file: no symbols
 *   cannot read '<path>': <libdwfl's reason>: no symbols
 *   '<path>' has build-id <hex>, the capture recorded build-id <hex>: not used
 *     (or "has no build-id")
 *   no debuginfod server in DEBUGINFOD_URLS answered in <n> s (DEBUGINFOD_TIMEOUT
 *     sets this wait): not asked again
 * with <path> as given to mp_symbols_add_module(). The caller prints them as
 * warnings (e.g. warning("%s", lines[i])); lines
 * are only appended, so a caller printing them as they come remembers how
 * many it has printed. *lines is valid until the next call on s.
 * Files without debug information are no problem: see mp_symbols_hint().
 */
size_t mp_symbols_warnings(struct mp_symbols *s, const char ***lines);

/*
 * The files looked into so far, by s and every object sharing its cache,
 * that have no debug information, in one line that says which (their base
 * names, those with an ip that got no function name first, four at most
 * and how many more), what that costs, and how to get it:
 *   no debug information for <n> module(s) (<name>, ... and <m> more):
 *   <function names but no source lines | some frames show module+offset
 *   instead of a function, none has a source line>; to get them, install
 *   their debug symbols (Debian's -dbgsym packages) <or set DEBUGINFOD_URLS
 *   to a debuginfod server | : the servers in DEBUGINFOD_URLS have none |
 *   : the servers in DEBUGINFOD_URLS did not answer in time>
 * Returns it (free() it), or NULL when every file had its debug information.
 */
char *mp_symbols_hint(struct mp_symbols *s);

/* Counters, for tests, benchmarks and debug output. */
struct mp_symbols_stats {
	size_t lookups;      /* mp_symbols_lookup() calls on this object */
	size_t files_opened; /* files looked for by the shared cache: each (root, path, build-id) once */
	size_t units_indexed; /* compilation units indexed by the shared cache */
	size_t debug_cache_hits; /* files read decompressed from the cache of debug files (debugcache.h) */
	size_t debug_cache_written; /* files decompressed into it */
};
void mp_symbols_stats(struct mp_symbols *s, struct mp_symbols_stats *st);

#endif
