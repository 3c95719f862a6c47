/* The mappings of a live process and the dynamic symbols of its modules. */
#include <config.h>
#include "lib/process/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

void mp_procmaps_release(struct mp_procmaps *m)
{
	for (size_t i = 0; i < m->nr; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->nr = m->alloc = 0;
}

int mp_procmaps_parse(struct mp_procmaps *m, pid_t pid, const char *text, struct strbuf *err)
{
	const char *line = text;
	unsigned lineno = 0;

	mp_procmaps_release(m);
	m->pid = pid;
	while (*line) {
		const char *eol = strchrnul(line, '\n');
		struct mp_procmaps_entry e;
		char *copy = xstrndup(line, eol - line);
		int used = 0;

		lineno++;
		memset(&e, 0, sizeof(e));
		if (sscanf(copy, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n",
			   &e.start, &e.end, e.perms, &e.offset, &e.dev_major, &e.dev_minor,
			   &e.inode, &used) < 7 || e.end < e.start) {
			strbuf_addf(err, "cannot parse line %u of the maps of process %d: '%s'",
				    lineno, (int)pid, copy);
			free(copy);
			return -1;
		}
		{
			const char *p = copy + used;
			while (*p == ' ' || *p == '\t')
				p++;
			e.path = *p ? xstrdup(p) : NULL;
		}
		free(copy);
		ALLOC_GROW(m->v, m->nr + 1, m->alloc);
		m->v[m->nr++] = e;
		line = *eol ? eol + 1 : eol;
	}
	return 0;
}

int mp_procmaps_read(struct mp_procmaps *m, pid_t pid, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	int ret;

	strbuf_addf(&path, "/proc/%d/maps", (int)pid);
	if (strbuf_read_file(&text, path.buf, 16384) < 0) {
		strbuf_addf(err, "cannot read '%s': %s", path.buf, strerror(errno));
		ret = -1;
	} else {
		ret = mp_procmaps_parse(m, pid, text.buf, err);
	}
	strbuf_release(&path);
	strbuf_release(&text);
	return ret;
}

const char *mp_procmaps_basename(const struct mp_procmaps_entry *e)
{
	const char *slash;

	if (!e->path)
		return "";
	if (e->path[0] != '/')
		return e->path;
	slash = strrchr(e->path, '/');
	return slash + 1;
}

int mp_procmaps_same_file(const struct mp_procmaps_entry *a, const struct mp_procmaps_entry *b)
{
	return a->inode && a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

const struct mp_procmaps_entry *mp_procmaps_find(const struct mp_procmaps *m, const char *const *prefixes)
{
	for (size_t i = 0; i < m->nr; i++) {
		const struct mp_procmaps_entry *e = &m->v[i];
		const char *base;

		if (!e->inode || e->offset != 0 || !e->path || e->path[0] != '/')
			continue;
		base = mp_procmaps_basename(e);
		for (const char *const *p = prefixes; *p; p++)
			if (!strncmp(base, *p, strlen(*p)))
				return e;
	}
	return NULL;
}

const struct mp_procmaps_entry *mp_procmaps_tracker(const struct mp_procmaps *m)
{
	static const char *const names[] = { "libmemprof.so", NULL };
	return mp_procmaps_find(m, names);
}

const struct mp_procmaps_entry *mp_procmaps_find_file(const struct mp_procmaps *m, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < m->nr; i++) {
		const struct mp_procmaps_entry *e = &m->v[i];

		if (e->inode == (uint64_t)ino && e->offset == 0 && e->dev_major == major(dev) &&
		    e->dev_minor == minor(dev))
			return e;
	}
	return NULL;
}

const struct mp_procmaps_entry *mp_procmaps_lookup(const struct mp_procmaps *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nr; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

int mp_procmaps_open(const struct mp_procmaps *m, const struct mp_procmaps_entry *module, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	struct stat st;
	int fd;

	if (!module->path || module->path[0] != '/') {
		strbuf_addf(err, "mapping %" PRIx64 "-%" PRIx64 " of process %d has no file",
			    module->start, module->end, (int)m->pid);
		return -1;
	}
	/* Exact even when the file was replaced or lives in another mount namespace; needs privilege. */
	strbuf_addf(&path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)m->pid, module->start, module->end);
	fd = open(path.buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		strbuf_reset(&path);
		strbuf_addf(&path, "/proc/%d/root%s", (int)m->pid, module->path);
		fd = open(path.buf, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			strbuf_addf(err, "cannot open '%s' of process %d: %s", module->path,
				    (int)m->pid, strerror(errno));
			strbuf_release(&path);
			return -1;
		}
	}
	strbuf_release(&path);
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_ino != module->inode ||
	    major(st.st_dev) != module->dev_major || minor(st.st_dev) != module->dev_minor) {
		strbuf_addf(err, "'%s' on disk is not the file mapped in process %d (replaced since it was loaded?)",
			    module->path, (int)m->pid);
		close(fd);
		return -1;
	}
	return fd;
}

/* The index of name in names[0..n), or -1. */
static long name_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (long)i;
	return -1;
}

/* Walk .dynsym: the default (non-hidden) version of each wanted function wins. */
static int scan_dynsym(Elf *elf, Elf_Scn *symscn, GElf_Shdr *symhdr, Elf_Data *versym,
		       const char *const *names, size_t n, uint64_t *values)
{
	Elf_Data *data = elf_getdata(symscn, NULL);
	size_t count;
	unsigned char *is_default = xcalloc(n ? n : 1, 1), *is_ifunc = xcalloc(n ? n : 1, 1);

	if (!data || !symhdr->sh_entsize) {
		free(is_default);
		free(is_ifunc);
		return -1;
	}
	count = symhdr->sh_size / symhdr->sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		long idx;
		int hidden = 0;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(elf, symhdr->sh_link, sym.st_name);
		if (!name || (idx = name_index(names, n, name)) < 0)
			continue;
		if (versym) {
			GElf_Versym vs;
			if (gelf_getversym(versym, (int)i, &vs))
				hidden = (vs & 0x8000) != 0;
		}
		if (values[idx] && (is_default[idx] || hidden))
			continue;
		values[idx] = sym.st_value;
		is_default[idx] = !hidden;
		is_ifunc[idx] = GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC;
	}
	/* an indirect function's value is its resolver, not callable as the function */
	for (size_t i = 0; i < n; i++)
		if (is_ifunc[i])
			values[i] = 0;
	free(is_default);
	free(is_ifunc);
	return 0;
}

int mp_procmaps_elf_symbols(int fd, const char *what, const char *const *names, size_t n,
			    uint64_t *values, uint64_t *load_vaddr, struct strbuf *err)
{
	Elf *elf;
	Elf_Scn *scn = NULL, *symscn = NULL;
	Elf_Data *versym = NULL;
	GElf_Shdr symhdr = { 0 };
	size_t phnum;
	int have_load = 0, ret = -1;

	memset(values, 0, n * sizeof(*values));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		strbuf_addf(err, "'%s' is not an ELF file", what);
		goto out;
	}
	if (elf_getphdrnum(elf, &phnum) < 0)
		phnum = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*load_vaddr = ph.p_vaddr & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
			have_load = 1;
			break;
		}
	}
	if (!have_load) {
		strbuf_addf(err, "'%s' has no loadable segment at offset 0", what);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			symscn = scn;
			symhdr = sh;
		} else if (sh.sh_type == SHT_GNU_versym) {
			versym = elf_getdata(scn, NULL);
		}
	}
	if (!symscn) {
		strbuf_addf(err, "'%s' has no dynamic symbol table", what);
		goto out;
	}
	if (scan_dynsym(elf, symscn, &symhdr, versym, names, n, values) < 0) {
		strbuf_addf(err, "cannot read the dynamic symbols of '%s': %s", what, elf_errmsg(-1));
		goto out;
	}
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	return ret;
}

int mp_procmaps_symbols(const struct mp_procmaps *m, const struct mp_procmaps_entry *module,
			const char *const *names, size_t n, uint64_t *addrs, struct strbuf *err)
{
	uint64_t load_vaddr = 0;
	int fd = mp_procmaps_open(m, module, err);

	if (fd < 0)
		return -1;
	if (mp_procmaps_elf_symbols(fd, module->path, names, n, addrs, &load_vaddr, err) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	for (size_t i = 0; i < n; i++)
		if (addrs[i])
			addrs[i] += module->start - load_vaddr;
	return 0;
}
