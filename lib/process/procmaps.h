/* The mappings of a live process (/proc/PID/maps) and the dynamic symbols of its modules. */
#ifndef MEMPROF_LIB_PROCESS_PROCMAPS_H
#define MEMPROF_LIB_PROCESS_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

struct mp_procmaps_entry {
	uint64_t start, end; /* [start, end) in the process */
	uint64_t offset;     /* file offset of start */
	unsigned dev_major, dev_minor;
	uint64_t inode;      /* 0 for anonymous and special mappings */
	char perms[5];       /* "r-xp" */
	char *path;          /* as the kernel shows it ("[vdso]", "/x (deleted)"); NULL when anonymous */
};

struct mp_procmaps {
	pid_t pid;
	struct mp_procmaps_entry *v;
	size_t nr, alloc;
};

#define MP_PROCMAPS_INIT { 0, NULL, 0, 0 }

/* Read /proc/PID/maps. Returns 0, or -1 with the reason in err. */
int mp_procmaps_read(struct mp_procmaps *m, pid_t pid, struct strbuf *err);
/* Parse the text of a maps file (for tests and for mp_procmaps_read). */
int mp_procmaps_parse(struct mp_procmaps *m, pid_t pid, const char *text, struct strbuf *err);
void mp_procmaps_release(struct mp_procmaps *m);

/* The last path component of a mapping ("libc.so.6"), or its whole name ("[vdso]"); "" when anonymous. */
const char *mp_procmaps_basename(const struct mp_procmaps_entry *e);
/*
 * The first mapping at file offset 0 of a module whose base name starts with one of the
 * NULL-terminated prefixes ("libc.so", "libc-"), i.e. the mapping that gives the module's
 * load address; NULL when no module matches.
 */
const struct mp_procmaps_entry *mp_procmaps_find(const struct mp_procmaps *m, const char *const *prefixes);
/* The same for memprof's tracker, libmemprof.so (preloaded, linked, or loaded by attach). */
const struct mp_procmaps_entry *mp_procmaps_tracker(const struct mp_procmaps *m);
/* The offset-0 mapping of the module backed by the file with this device and inode, or NULL. */
const struct mp_procmaps_entry *mp_procmaps_find_file(const struct mp_procmaps *m, dev_t dev, ino_t ino);
/* The mapping holding addr, or NULL. */
const struct mp_procmaps_entry *mp_procmaps_lookup(const struct mp_procmaps *m, uint64_t addr);
/* True when a and b are mappings of the same file. */
int mp_procmaps_same_file(const struct mp_procmaps_entry *a, const struct mp_procmaps_entry *b);

/*
 * Open the file behind a mapping as the process sees it: /proc/PID/map_files/START-END
 * when allowed (exact, also in containers), else /proc/PID/root/PATH, checked to be the
 * same device and inode. Returns an fd, or -1 with the reason in err.
 */
int mp_procmaps_open(const struct mp_procmaps *m, const struct mp_procmaps_entry *module, struct strbuf *err);

/*
 * Look up the defined function symbols names[0..n) in the .dynsym of the ELF file open
 * at fd: values[i] is the symbol's st_value, 0 when absent (undefined, not a function, or
 * a GNU indirect function, which cannot be called directly). The default version of a
 * versioned symbol wins. *load_vaddr gets the page-aligned address of the PT_LOAD segment
 * at file offset 0, so that the address in a process is module->start - *load_vaddr + value.
 * Returns 0, or -1 with the reason in err (what names the file).
 */
int mp_procmaps_elf_symbols(int fd, const char *what, const char *const *names, size_t n,
			    uint64_t *values, uint64_t *load_vaddr, struct strbuf *err);

/*
 * The same for a module of the process: addrs[i] is the address of names[i] in the process,
 * 0 when absent. Returns 0, or -1 with the reason in err.
 */
int mp_procmaps_symbols(const struct mp_procmaps *m, const struct mp_procmaps_entry *module,
			const char *const *names, size_t n, uint64_t *addrs, struct strbuf *err);

#endif
