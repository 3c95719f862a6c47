/*
 * Debug files kept decompressed, by build-id (debugcache.c).
 *
 * Distributions compress the DWARF of their debug files (Debian's libc6-dbg
 * and -dbgsym packages, Fedora's debuginfo): libdw inflates every debug
 * section of such a file when it first reads it, and for libc alone that is
 * some 80 ms of CPU in each run, more than the rest of symbolizing a small
 * program. The first run that needs such a file writes a copy with its
 * sections decompressed into a directory of the user's
 * ($MEMPROF_CACHE_DIR, else $XDG_CACHE_HOME/memprof, else
 * ~/.cache/memprof; empty: no cache), named by its build-id; later runs map
 * the copy and inflate nothing. A copy is written under a name of its own
 * and renamed into place, so a run never sees part of one; a copy that is
 * not sound (wrong build-id, sections past its end, still compressed) is
 * replaced. The directory is kept under $MEMPROF_CACHE_SIZE bytes (1G
 * unless set; suffixes k, M, G; 0: no cache), the files used least recently
 * removed first.
 *
 * Nothing here is an error a user sees: without a usable directory (a
 * read-only home in a container), every file is read as it is.
 */
#ifndef MEMPROF_LIB_SYMBOLS_DEBUGCACHE_H
#define MEMPROF_LIB_SYMBOLS_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>

struct mp_debugcache {
	char *dir;           /* NULL: no cache */
	uint64_t max_bytes;
	size_t hits;         /* files read from the cache */
	size_t written;      /* files decompressed into it */
};

/* The cache the environment asks for (see above). */
void mp_debugcache_init(struct mp_debugcache *dc);
void mp_debugcache_release(struct mp_debugcache *dc);

/*
 * The cached copy of the file with this build-id, kind "debug" (a debug
 * file) or "elf" (a file loaded as it is), opened read-only and checked,
 * its path in *found (free() it; found may be NULL); or -1 when there is
 * none (or no cache).
 */
int mp_debugcache_find(struct mp_debugcache *dc, const uint8_t *build_id, size_t len,
		       const char *kind, char **found);

/*
 * fd (an ELF file open for reading) or, when it has compressed sections and
 * a build-id (want, when want_len is not 0), its decompressed copy from the
 * cache (written now if it was not there): then fd is closed. Whatever
 * fails, fd itself is returned.
 */
int mp_debugcache_swap(struct mp_debugcache *dc, int fd, const char *kind, const uint8_t *want,
		       size_t want_len);

/*
 * Write to out_fd a copy of the ELF file in_fd with every compressed
 * section decompressed, every other section and the program headers where
 * they were (for debugcache.c and its tests). 0, or -1 (in_fd has no
 * compressed section, or is not an ELF file libelf can write again); *size
 * gets the copy's size.
 */
int mp_debugcache_decompress(int in_fd, int out_fd, uint64_t *size);

#endif
