/*
 * The tracker's module map: which shared objects are loaded where, with their
 * build-ids and segments, as MODULE / MODULE_UNLOAD records. Changes are found
 * with dl_iterate_phdr (dlpi_adds / dlpi_subs), never by interposing dlopen
 * (a dlopen called from our library would resolve $ORIGIN and RUNPATH for us,
 * not for the program); dlclose is interposed (hooks.c), since the loader
 * unmaps a library with no call our hooks see.
 *
 * Locks, and why a thread that needs the map to be current may always wait
 * for it. glibc's dl_iterate_phdr holds the loader's write lock
 * (dl_load_write_lock) while it calls back; dlopen and dlclose hold it only
 * to link and unlink objects (and dlclose to unmap them), not while they run
 * constructors and destructors, which run under the other loader lock
 * (dl_load_lock), which no refresh takes. modules_lock comes second: it is
 * taken inside the callback and held after it until the refresh ends, so
 * its holder never waits for the loader, and no thread ever waits for it
 * while the holder waits for a lock the waiter holds. A thread that already
 * holds the write lock (dlclose or an allocation from a dl_iterate_phdr
 * callback of the program's) enters dl_iterate_phdr again (the lock is
 * recursive) and finds modules_lock free or held by a refresh that is past
 * the loader. A fork must not happen while one of our threads is inside
 * dl_iterate_phdr (the child would find the write lock held for good: glibc
 * resets only dl_load_lock there): refreshes hold fork_gate to read, and
 * atfork's mp_modules_lock() takes it to write. A refresh that finds it
 * taken does not wait (the forking thread may be in one of the program's
 * fork handlers, waiting for a lock the refreshing thread holds): it leaves
 * the map dirty for the next event.
 */
#include <config.h>

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/format/encode.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"
#include "lib/tracker/unwind.h"

struct module {
	uint64_t id;
	uint64_t base;
	uint64_t name_hash;
	uint64_t code_lo, code_hi; /* its executable segments, lowest to highest */
	int seen;
};
/* At most this many unloaded modules' code forgotten one by one in a refresh (else all of it). */
#define GONE_MAX 16

struct range {
	uint64_t lo, hi;
};

struct rangeset {
	struct range *r;
	size_t n, cap;
};

void (*mp_modules_unloaded)(const uint64_t (*gone)[2], size_t n);
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Readers first (glibc's default): a refresh goes in while a fork waits for
 * those in progress, and gives up only while the fork holds it.
 */
static pthread_rwlock_t fork_gate = PTHREAD_RWLOCK_INITIALIZER;
static struct module *mods;
static size_t nmods, mods_cap;
static uint64_t next_id = 1;
/* The loader's counters the map was last read at (read without the lock: atomics). */
static unsigned long long last_adds = ~0ull, last_subs = ~0ull;
/*
 * Why the next event must look at the map (mp_modules_dirty(), which every
 * event reads): DIRTY_MARK, code in no known module was seen, or a refresh
 * could not be done, and the map is read again whatever the loader's
 * counters say; each thread between mp_modules_unload_begin() and _end()
 * adds DIRTY_UNLOADING, and while any is there every event compares the
 * counters (an unmapped library's place may be taken already).
 */
#define DIRTY_MARK 1u
#define DIRTY_UNLOADING 2u
static unsigned dirty = DIRTY_MARK;
/* Executable ranges of known modules, sorted: `live` is read under ranges_lock, `next`
   is built under modules_lock and swapped in under ranges_lock. */
static int ranges_lock;
static struct rangeset live, next;
static uint8_t rec_buf[16 * 1024];

void mp_modules_lock(void) { pthread_rwlock_wrlock(&fork_gate); }
void mp_modules_unlock(void) { pthread_rwlock_unlock(&fork_gate); }
void mp_modules_reinit_lock(void)
{
	pthread_mutex_init(&modules_lock, NULL);
	fork_gate = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
	ranges_lock = 0;
	/* (The threads that were in dlclose are not in the child.) */
	__atomic_store_n(&dirty, DIRTY_MARK, __ATOMIC_RELAXED);
}
void mp_modules_mark_dirty(void) { __atomic_fetch_or(&dirty, DIRTY_MARK, __ATOMIC_RELAXED); }
int mp_modules_dirty(void) { return __atomic_load_n(&dirty, __ATOMIC_RELAXED) != 0; }

void mp_modules_reset(void)
{
	nmods = 0;
	live.n = next.n = 0;
	next_id = 1;
	__atomic_store_n(&last_adds, ~0ull, __ATOMIC_RELAXED);
	__atomic_store_n(&last_subs, ~0ull, __ATOMIC_RELAXED);
	mp_modules_mark_dirty();
}

int mp_modules_contains(uint64_t ip)
{
	size_t lo = 0, hi;
	int found = 0;
	mp_lock(&ranges_lock);
	hi = live.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ip < live.r[mid].lo) {
			hi = mid;
		} else if (ip >= live.r[mid].hi) {
			lo = mid + 1;
		} else {
			found = 1;
			break;
		}
	}
	mp_unlock(&ranges_lock);
	return found;
}

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The GNU build-id note of a loaded object, read from its mapped notes. */
static size_t build_id(const struct dl_phdr_info *info, const uint8_t **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t namesz = (nh->n_namesz + 3) & ~3u, descsz = (nh->n_descsz + 3) & ~3u;
			const uint8_t *name = p + sizeof(*nh), *desc = name + namesz;
			if (desc + descsz > end || desc < p)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 64) {
				*id = desc;
				return nh->n_descsz;
			}
			p = desc + descsz;
		}
	}
	return 0;
}

static const char *module_path(const struct dl_phdr_info *info, char *buf)
{
	static char exe[PATH_MAX];
	const char *name = info->dlpi_name;
	if (!name || !*name) {
		/* The main program has no name in the link map. */
		if (!exe[0])
			mp_exe_path(exe, sizeof(exe));
		return exe;
	}
	if (!strncmp(name, "linux-vdso", 10) || !strncmp(name, "linux-gate", 10))
		return "[vdso]";
	if (name[0] != '/' && realpath(name, buf))
		return buf;
	return name;
}

/* A record from the thread refreshing the map, into its own ring. */
static void put(const uint8_t *rec, size_t len)
{
	struct mp_wring *w = mp_thread_ring();
	if (w)
		mp_stream_put(w, rec, len);
}

static void emit_module(const struct dl_phdr_info *info, const char *path, uint64_t id)
{
	uint8_t *p = mp_enc_sized_begin(rec_buf, MP_TAG_MODULE);
	const uint8_t *bid = NULL;
	size_t blen = build_id(info, &bid), plen = strlen(path), nseg = 0;
	if (plen > PATH_MAX)
		plen = PATH_MAX;
	p = mp_put_uvarint(p, id);
	p = mp_put_uvarint(p, (uint64_t)info->dlpi_addr);
	p = mp_enc_bytes(p, path, plen);
	p = mp_enc_bytes(p, bid, blen);
	for (int i = 0; i < info->dlpi_phnum; i++)
		nseg += info->dlpi_phdr[i].p_type == PT_LOAD;
	if (nseg > 64)
		nseg = 64;
	p = mp_put_uvarint(p, nseg);
	for (int i = 0, k = 0; i < info->dlpi_phnum && k < (int)nseg; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		p = mp_put_uvarint(p, ph->p_vaddr);
		p = mp_put_uvarint(p, ph->p_memsz);
		p = mp_put_uvarint(p, ph->p_flags & (PF_R | PF_W | PF_X));
		k++;
	}
	p = mp_enc_sized_end(rec_buf, p);
	put(rec_buf, (size_t)(p - rec_buf));
}

static void emit_unload(uint64_t id)
{
	uint8_t *p = mp_enc_sized_begin(rec_buf, MP_TAG_MODULE_UNLOAD);
	p = mp_put_uvarint(p, id);
	p = mp_enc_sized_end(rec_buf, p);
	put(rec_buf, (size_t)(p - rec_buf));
}

static int add_range(uint64_t lo, uint64_t hi)
{
	size_t i;
	if (mp_pages_grow((void **)&next.r, &next.cap, next.n + 1, sizeof(*next.r), 64))
		return -1;
	/* Insertion sort: module counts are small and this runs only on changes. */
	for (i = next.n; i > 0 && next.r[i - 1].lo > lo; i--)
		next.r[i] = next.r[i - 1];
	next.r[i].lo = lo;
	next.r[i].hi = hi;
	next.n++;
	return 0;
}

static void swap_ranges(void)
{
	struct rangeset t;
	mp_lock(&ranges_lock);
	t = live;
	live = next;
	next = t;
	mp_unlock(&ranges_lock);
}

static int counters_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *c = data;
	(void)size;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

/* The loader's counters c are those the map was read at, and nothing else asks for a reading. */
static int map_current(const unsigned long long *c)
{
	return !(__atomic_load_n(&dirty, __ATOMIC_RELAXED) & DIRTY_MARK) &&
	       c[0] == __atomic_load_n(&last_adds, __ATOMIC_ACQUIRE) &&
	       c[1] == __atomic_load_n(&last_subs, __ATOMIC_ACQUIRE);
}

/* A reading of the map: one pass of dl_iterate_phdr, then what it found gone. */
struct reading {
	int locked;               /* modules_lock taken (by the first callback) */
	int full;                 /* the map is read again */
	unsigned long long c[2];  /* the loader's counters in this pass */
};

static void add_module(struct dl_phdr_info *info)
{
	char buf[PATH_MAX];
	const char *path = module_path(info, buf);
	uint64_t h = hash_name(path) ^ (uint64_t)info->dlpi_addr;
	size_t i;
	for (i = 0; i < nmods; i++)
		if (mods[i].name_hash == h && mods[i].base == (uint64_t)info->dlpi_addr)
			break;
	if (i == nmods) {
		if (mp_pages_grow((void **)&mods, &mods_cap, nmods + 1, sizeof(*mods), 64))
			return;
		mods[nmods].id = next_id++;
		mods[nmods].base = info->dlpi_addr;
		mods[nmods].name_hash = h;
		mods[nmods].code_lo = UINT64_MAX;
		mods[nmods].code_hi = 0;
		nmods++;
		emit_module(info, path, mods[i].id);
	}
	mods[i].seen = 1;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		add_range(lo, hi);
		if (lo < mods[i].code_lo)
			mods[i].code_lo = lo;
		if (hi > mods[i].code_hi)
			mods[i].code_hi = hi;
	}
}

static int refresh_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct reading *r = data;
	(void)size;
	if (!r->locked) {
		/* The first object: the lock (inside the loader's, see above), and whether to read on. */
		pthread_mutex_lock(&modules_lock);
		r->locked = 1;
		counters_cb(info, size, r->c);
		if (map_current(r->c))
			return 1; /* another thread has just read it */
		/* (A mark made from here on is for a change this reading may miss: kept.) */
		__atomic_fetch_and(&dirty, ~DIRTY_MARK, __ATOMIC_RELAXED);
		r->full = 1;
		for (size_t i = 0; i < nmods; i++)
			mods[i].seen = 0;
		next.n = 0;
	}
	add_module(info);
	return 0;
}

/* After a full reading, under modules_lock: the modules gone. */
static void reading_done(const struct reading *r)
{
	uint64_t gone[GONE_MAX][2];
	size_t ngone = 0;
	for (size_t i = 0; i < nmods;) {
		if (!mods[i].seen) {
			emit_unload(mods[i].id);
			if (ngone < GONE_MAX && mods[i].code_lo < mods[i].code_hi) {
				gone[ngone][0] = mods[i].code_lo;
				gone[ngone++][1] = mods[i].code_hi;
			} else if (mods[i].code_lo < mods[i].code_hi) {
				gone[0][0] = 0; /* too many at once: all code */
				gone[0][1] = UINT64_MAX;
				ngone = 1;
			}
			mods[i] = mods[--nmods];
		} else {
			i++;
		}
	}
	swap_ranges();
	/*
	 * Unloaded code invalidates what the stack walkers cached about it, and
	 * its trace nodes (another module may be loaded where it was). In this
	 * order: an event that finds the nodes' generation new (mp_nodes_gen)
	 * finds the walkers' new too, and no cached node of the old code.
	 */
	if (r->c[1] != last_subs && last_subs != ~0ull)
		mp_unwind_code_changed();
	if (ngone && mp_modules_unloaded)
		mp_modules_unloaded((const uint64_t(*)[2])gone, ngone);
	/* Last: a thread that finds the counters read (map_current()) finds all of the above done. */
	__atomic_store_n(&last_subs, r->c[1], __ATOMIC_RELEASE);
	__atomic_store_n(&last_adds, r->c[0], __ATOMIC_RELEASE);
}

int mp_modules_refresh(void)
{
	unsigned long long c[2] = { 0, 0 };
	struct reading r = { 0, 0, { 0, 0 } };
	int added = 0, cs;
	if (mp_state != MP_STATE_ON)
		return 0;
	mp_cs_enter(); /* (fork_gate, and the loader's lock) */
	mp_in_hook++;
	if (pthread_rwlock_tryrdlock(&fork_gate)) {
		mp_modules_mark_dirty(); /* a fork is under way: the next event looks again */
		goto out;
	}
	/* Most calls (the timer's ticks, events while a dlclose runs): nothing changed. */
	dl_iterate_phdr(counters_cb, c);
	if (!map_current(c)) {
		mp_sig_block(); /* the loader's, then a lock of ours, at length (base.h) */
		cs = mp_cancel_off(); /* a module's file is opened and read */
		dl_iterate_phdr(refresh_cb, &r);
		if (r.full) {
			added = r.c[0] != last_adds;
			reading_done(&r);
		}
		if (r.locked)
			pthread_mutex_unlock(&modules_lock);
		mp_cancel_restore(cs);
		mp_sig_unblock();
	}
	pthread_rwlock_unlock(&fork_gate);
out:
	mp_in_hook--;
	mp_cs_leave();
	return added;
}

void mp_modules_unload_begin(void)
{
	__atomic_add_fetch(&dirty, DIRTY_UNLOADING, __ATOMIC_SEQ_CST);
	/* A library seen by a refresh that could not be done: its MODULE while it is there. */
	if (__atomic_load_n(&dirty, __ATOMIC_RELAXED) & DIRTY_MARK)
		mp_modules_refresh();
}

void mp_modules_unload_end(void)
{
	unsigned d = __atomic_load_n(&dirty, __ATOMIC_RELAXED);
	mp_modules_refresh();
	/* (Not below zero: a fork's child starts again at zero while this thread was here.) */
	while (d >= DIRTY_UNLOADING &&
	       !__atomic_compare_exchange_n(&dirty, &d, d - DIRTY_UNLOADING, 0, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}
