/*
 * The tracker's module map: which shared objects are loaded where, with their
 * build-ids and segments, as MODULE / MODULE_UNLOAD records. Changes are found
 * with dl_iterate_phdr (dlpi_adds / dlpi_subs), never by interposing dlopen
 * (a dlopen called from our library would resolve $ORIGIN and RUNPATH for us,
 * not for the program); dlclose is interposed (hooks.c), since the loader
 * unmaps a library with no call our hooks see. dl_iterate_phdr takes the
 * loader's lock, so it is never called with the main lock held; refreshes
 * are serialised by their own lock and a thread that finds it busy simply
 * goes on (but dlclose's, which waits a while).
 */
#include <config.h>

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
static struct module *mods;
static size_t nmods, mods_cap;
static uint64_t next_id = 1;
static unsigned long long last_adds = ~0ull, last_subs = ~0ull;
static int dirty = 1;
/* Executable ranges of known modules, sorted: `live` is read under ranges_lock, `next`
   is built under modules_lock and swapped in under ranges_lock. */
static int ranges_lock;
static struct rangeset live, next;
static uint8_t rec_buf[16 * 1024];

void mp_modules_lock(void) { pthread_mutex_lock(&modules_lock); }
void mp_modules_unlock(void) { pthread_mutex_unlock(&modules_lock); }
void mp_modules_reinit_lock(void)
{
	pthread_mutex_init(&modules_lock, NULL);
	ranges_lock = 0;
}
void mp_modules_mark_dirty(void) { __atomic_store_n(&dirty, 1, __ATOMIC_RELAXED); }
int mp_modules_dirty(void) { return __atomic_load_n(&dirty, __ATOMIC_RELAXED); }

void mp_modules_reset(void)
{
	nmods = 0;
	live.n = next.n = 0;
	next_id = 1;
	last_adds = last_subs = ~0ull;
	dirty = 1;
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

static int refresh_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	char buf[PATH_MAX];
	const char *path = module_path(info, buf);
	uint64_t h = hash_name(path) ^ (uint64_t)info->dlpi_addr;
	size_t i;
	(void)size;
	(void)data;
	for (i = 0; i < nmods; i++)
		if (mods[i].name_hash == h && mods[i].base == (uint64_t)info->dlpi_addr)
			break;
	if (i == nmods) {
		if (mp_pages_grow((void **)&mods, &mods_cap, nmods + 1, sizeof(*mods), 64))
			return 0;
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
	return 0;
}

/*
 * The modules' lock, waiting at most 50 ms: the thread refreshing may wait
 * for the loader's lock, which a dlclose run by a library's destructor holds
 * (a nested dlclose). 0, or nonzero when the time ran out.
 */
static int lock_a_while(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 50 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_timedlock(&modules_lock, &until);
}

int mp_modules_refresh(int wait)
{
	unsigned long long c[2] = { 0, 0 };
	uint64_t gone[GONE_MAX][2];
	size_t ngone = 0;
	int changed = 0, cs;
	if (mp_state != MP_STATE_ON)
		return 0;
	if (!mp_modules_dirty()) {
		/* The timer asks at every tick: nothing loaded or unloaded since, nothing to do. */
		mp_cs_enter(); /* (the loader's lock) */
		dl_iterate_phdr(counters_cb, c);
		mp_cs_leave();
		if (c[0] == __atomic_load_n(&last_adds, __ATOMIC_RELAXED) &&
		    c[1] == __atomic_load_n(&last_subs, __ATOMIC_RELAXED))
			return 0;
	}
	mp_sig_block(); /* as under a lock of ours, and the loader is called (base.h) */
	if (wait ? lock_a_while() : pthread_mutex_trylock(&modules_lock)) {
		mp_sig_unblock();
		mp_modules_mark_dirty(); /* (the next event looks again) */
		return 0; /* another thread is at it */
	}
	mp_in_hook++;
	cs = mp_cancel_off(); /* a module's file is opened and read */
	dl_iterate_phdr(counters_cb, c);
	if (mp_modules_dirty() || c[0] != last_adds || c[1] != last_subs) {
		__atomic_store_n(&dirty, 0, __ATOMIC_RELAXED);
		for (size_t i = 0; i < nmods; i++)
			mods[i].seen = 0;
		next.n = 0;
		dl_iterate_phdr(refresh_cb, NULL);
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
		/* Another module may be loaded where they were: their nodes are not its. */
		if (ngone && mp_modules_unloaded)
			mp_modules_unloaded((const uint64_t(*)[2])gone, ngone);
		/* Unloaded code invalidates what the stack walkers cached about it. */
		if (c[1] != last_subs && last_subs != ~0ull)
			mp_unwind_code_changed();
		changed = c[0] != last_adds;
		__atomic_store_n(&last_adds, c[0], __ATOMIC_RELAXED);
		__atomic_store_n(&last_subs, c[1], __ATOMIC_RELAXED);
	}
	mp_cancel_restore(cs);
	mp_in_hook--;
	pthread_mutex_unlock(&modules_lock);
	mp_sig_unblock();
	return changed;
}
