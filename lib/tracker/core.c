/*
 * The tracker's recording core: configuration, the output stream, per-thread
 * state, the trace tree that deduplicates stacks, ticks, fork and exit.
 * Everything here runs inside the target, often inside malloc: no malloc,
 * no stdio, and the main lock is never held while taking the loader's lock.
 */
#include <config.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include "lib/format/encode.h"
#include "lib/tracker/tracker.h"
#include "lib/tracker/unwind.h"

struct mp_real mp_real;
__thread int mp_in_hook MP_IE_TLS;
volatile int mp_state;

#define MAX_DEPTH_LIMIT 1024
#define OWN_FRAMES 16          /* room for the tracker's own frames at the top of a stack */
#define OUT_CAP (256u << 10)   /* stream buffer */
#define HEADER_CAP (160u << 10)

static struct {
	int follow_fork, force, direct, libunwind_only;
	unsigned interval_ms, max_depth;
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char output[4096];
} cfg;

/*
 * The main lock: a futex lock (0 free, 1 held, 2 held with waiters). Every
 * event takes it once; pthread_mutex_lock/unlock cost twice as much for the
 * same uncontended exchange.
 */
static int main_lock;

static __attribute__((noinline)) void lock_slow(int *l, int c)
{
	for (int spin = 0; spin < 100 && c; spin++) {
		__builtin_ia32_pause();
		c = __atomic_load_n(l, __ATOMIC_RELAXED);
		if (!c && __atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
	}
	if (c != 2)
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	while (c) {
		syscall(SYS_futex, l, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	}
}

static inline void mp_lock(int *l)
{
	int c = 0;
	if (likely(__atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return;
	lock_slow(l, c);
}

static inline void mp_unlock(int *l)
{
	if (unlikely(__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 2))
		syscall(SYS_futex, l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ---- the stream (all under main_lock) ---- */
static int sink_fd = -1, sink_is_socket;
static uint8_t *out_buf;
static size_t out_len;
static uint32_t stream_gen = 1;     /* a followed fork child starts generation + 1 */
static uint32_t enc_cur_thread;
static struct mp_enc_thread *enc_threads;
static size_t enc_threads_cap;     /* entries */
static uint64_t last_trace_ip;
static int final_mode;             /* after the exit handler: write every record at once */
static uint64_t n_allocs, n_frees, bytes_allocated, n_traces_total, n_records;
static uint64_t start_mono_ns, last_tick_ns, start_wall_us;
static int exit_status_known, exit_status_value;
static int statm_fd = -1;
static unsigned stream_mode;        /* MP_MODE_RUN, MP_MODE_PRELOAD or MP_MODE_ATTACH */
static long page_size = 4096;
static char exe_path[4096];
static uint64_t self_lo, self_hi;
uint64_t mp_self_base;

/* ---- per-thread state ---- */
struct tstate {
	struct tstate *next;       /* all live threads, under main_lock */
	struct tstate *next_dying; /* threads whose key destructor ran */
	uint32_t index;            /* thread index in the stream of generation gen */
	uint32_t gen;              /* 0: not declared in the current stream */
	uint32_t cache_gen;        /* generation of the cached stack's nodes */
	uint32_t walk_gen;         /* generation of the nodes kept in the walker's frames */
	int depth;                 /* cached stack depth */
	int dying;
	pid_t tid;
	unsigned long pthread;
	char name[16];
	uint64_t *ips;             /* cached stack, root first */
	uint32_t *nodes;           /* its trace nodes */
	uint64_t *scratch;         /* the stack being recorded, root first */
	void **raw;                /* unwinder output, innermost first */
	struct mp_unwinder *uw;    /* our stack walker (NULL: libunwind only) */
};

/*
 * Whole stacks: a 96-bit hash of a stack's return addresses (outermost
 * first) -> its leaf trace node. Programs allocate from their stacks over and
 * over; a known one costs one probe here instead of one trace-tree probe per
 * frame. Read without a lock: entries are only ever added, under main_lock,
 * the key's first word last; a grown table replaces the old one, which stays
 * (readers may still be in it).
 */
struct smap_entry {
	uint64_t h0;     /* 0: empty */
	uint32_t h1;     /* 96 bits of fingerprint in all: 16-byte slots keep the table in cache */
	uint32_t node;
};
struct smap {
	size_t mask, count;
	struct smap_entry e[];
};
static struct smap *smap;
static __thread struct tstate *tls_ts MP_IE_TLS;
static struct tstate *all_threads, *dying_threads, *free_tstates;
static pthread_key_t ts_key;
static size_t ts_size;
static uint32_t next_thread_index;
static uint32_t *free_indices;
static size_t n_free_indices, free_indices_cap;

/* ---- the trace tree (under main_lock) ---- */
struct tt_entry {
	uint64_t ip;
	uint32_t parent;
	uint32_t index; /* 0: empty slot */
};
static struct tt_entry *tt;
static size_t tt_size; /* slots, a power of two */
static uint32_t tt_count;

static pthread_t timer_thread;
static int timer_running;
static volatile int timer_stop;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- bootstrap arena ---- */

static char boot_arena[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

void *mp_boot_alloc(size_t size, size_t align)
{
	/* A size header before each block lets realloc copy it out. */
	size_t start, *hdr;
	if (align < 16)
		align = 16;
	start = (__atomic_load_n(&boot_used, __ATOMIC_RELAXED) + sizeof(size_t) + align - 1) &
		~(align - 1);
	for (;;) {
		size_t cur = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
		start = (cur + sizeof(size_t) + align - 1) & ~(align - 1);
		if (start + size > sizeof(boot_arena))
			return NULL;
		if (__atomic_compare_exchange_n(&boot_used, &cur, start + size, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	hdr = (size_t *)(boot_arena + start) - 1;
	*hdr = size;
	return boot_arena + start;
}

int mp_is_boot(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof(boot_arena);
}

size_t mp_boot_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* ---- output ---- */

static void sink_failed(int err)
{
	int fd = sink_fd;
	sink_fd = -1;
	mp_state = MP_STATE_OFF;
	if (fd >= 0)
		close(fd);
	if (cfg.direct)
		mp_write_stderr("cannot write the capture '", cfg.output,
				err == ENOSPC ? "': no space left on device; tracking stopped"
					      : "'; tracking stopped");
	else if (err != EPIPE && err != ECONNRESET)
		mp_write_stderr("lost the connection to the collector", "; tracking stopped", NULL);
	/* A collector that went away (EPIPE) already reported why; the program just runs on. */
}

static void sink_write(const uint8_t *p, size_t n)
{
	while (n && sink_fd >= 0) {
		ssize_t w = sink_is_socket ? send(sink_fd, p, n, MSG_NOSIGNAL) : write(sink_fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			sink_failed(errno);
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void flush_locked(void)
{
	if (out_len) {
		sink_write(out_buf, out_len);
		out_len = 0;
	}
}

static inline uint8_t *room(size_t n)
{
	if (unlikely(out_len + n > OUT_CAP))
		flush_locked();
	return out_buf + out_len;
}

static inline void commit(uint8_t *end)
{
	out_len = (size_t)(end - out_buf);
	n_records++;
}

void mp_stream_locked(void (*fn)(void *), void *arg)
{
	mp_lock(&main_lock);
	fn(arg);
	mp_unlock(&main_lock);
}

void mp_stream_append(const uint8_t *rec, size_t len)
{
	mp_lock(&main_lock);
	if (sink_fd >= 0 && len <= OUT_CAP) {
		memcpy(room(len), rec, len);
		commit(out_buf + out_len + len);
		if (final_mode)
			flush_locked();
	}
	mp_unlock(&main_lock);
}

/* ---- threads ---- */

static void release_index(uint32_t index)
{
	if (mp_pages_grow((void **)&free_indices, &free_indices_cap, n_free_indices + 1,
			  sizeof(*free_indices), 1024))
		return;
	free_indices[n_free_indices++] = index;
}

static int grow_enc_threads(uint32_t index)
{
	if (index >= MP_MAX_THREADS)
		return -1;
	return mp_pages_grow((void **)&enc_threads, &enc_threads_cap, (size_t)index + 1,
			     sizeof(*enc_threads), 256);
}

/* THREAD record for ts's index; both sides reset the index's deltas (under main_lock). */
static void emit_thread(struct tstate *ts)
{
	uint8_t *p, *rec;
	memset(&enc_threads[ts->index], 0, sizeof(enc_threads[ts->index]));
	rec = p = room(64);
	p = mp_enc_sized_begin(p, MP_TAG_THREAD);
	p = mp_put_uvarint(p, ts->index);
	p = mp_put_uvarint(p, (uint64_t)ts->tid);
	p = mp_enc_bytes(p, ts->name, strnlen(ts->name, sizeof(ts->name)));
	commit(mp_enc_sized_end(rec, p));
}

/* Declare ts in the current stream (under main_lock). */
static int declare_thread(struct tstate *ts)
{
	uint32_t index;
	if (likely(ts->gen == stream_gen))
		return 0;
	index = n_free_indices ? free_indices[--n_free_indices] : next_thread_index++;
	if (grow_enc_threads(index)) {
		release_index(index);
		return -1;
	}
	ts->index = index;
	ts->gen = stream_gen;
	emit_thread(ts);
	return 0;
}

static void ts_destroy(void *arg)
{
	struct tstate *ts = arg;
	/* Late frees in other TLS destructors still use ts; the timer reclaims it. */
	mp_lock(&main_lock);
	if (!ts->dying) {
		ts->dying = 1;
		ts->next_dying = dying_threads;
		dying_threads = ts;
	}
	mp_unlock(&main_lock);
}

static void unlink_thread(struct tstate *ts)
{
	for (struct tstate **pp = &all_threads; *pp; pp = &(*pp)->next)
		if (*pp == ts) {
			*pp = ts->next;
			break;
		}
}

/* Reclaim the state of threads that are gone (timer thread, under main_lock). */
static void reap_dying(void)
{
	struct tstate **pp = &dying_threads;
	pid_t pid = getpid();
	while (*pp) {
		struct tstate *ts = *pp;
		if (syscall(SYS_tgkill, pid, ts->tid, 0) == -1 && errno == ESRCH) {
			*pp = ts->next_dying;
			unlink_thread(ts);
			if (ts->gen == stream_gen)
				release_index(ts->index);
			ts->next = free_tstates;
			free_tstates = ts;
		} else {
			pp = &ts->next_dying;
		}
	}
}

static struct tstate *get_tstate(void)
{
	struct tstate *ts = tls_ts;
	char *mem;
	if (likely(ts != NULL))
		return ts;
	mp_lock(&main_lock);
	ts = free_tstates;
	if (ts)
		free_tstates = ts->next;
	mp_unlock(&main_lock);
	if (!ts) {
		mem = mp_pages(ts_size);
		if (!mem)
			return NULL;
		ts = (struct tstate *)mem;
		mem += sizeof(*ts);
		ts->ips = (uint64_t *)mem;
		mem += (MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t);
		ts->scratch = (uint64_t *)mem;
		mem += (MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t);
		ts->raw = (void **)mem;
		mem += (MAX_DEPTH_LIMIT + OWN_FRAMES + 1) * sizeof(void *);
		ts->nodes = (uint32_t *)mem;
	}
	ts->gen = ts->cache_gen = ts->walk_gen = 0;
	ts->depth = 0;
	ts->dying = 0;
	/* A recycled state belonged to another thread, with another stack. */
	if (ts->uw)
		mp_unwinder_free(ts->uw);
	ts->uw = cfg.libunwind_only ? NULL : mp_unwinder_new();
	ts->tid = (pid_t)syscall(SYS_gettid);
	ts->pthread = (unsigned long)pthread_self();
	memset(ts->name, 0, sizeof(ts->name));
	syscall(SYS_prctl, PR_GET_NAME, ts->name, 0, 0, 0);
	mp_lock(&main_lock);
	ts->next = all_threads;
	all_threads = ts;
	mp_unlock(&main_lock);
	tls_ts = ts;
	pthread_setspecific(ts_key, ts);
	return ts;
}

void mp_record_thread_name(unsigned long pthread, const char *name)
{
	int saved = errno;
	if (mp_state != MP_STATE_ON || !name)
		return;
	mp_lock(&main_lock);
	for (struct tstate *ts = all_threads; ts; ts = ts->next) {
		if (ts->pthread != pthread || ts->dying)
			continue;
		strncpy(ts->name, name, sizeof(ts->name) - 1);
		ts->name[sizeof(ts->name) - 1] = '\0';
		if (sink_fd >= 0 && ts->gen == stream_gen)
			emit_thread(ts);
		break;
	}
	mp_unlock(&main_lock);
	errno = saved;
}

/* ---- the trace tree ---- */

static inline size_t tt_hash(uint32_t parent, uint64_t ip)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull ^ ((uint64_t)parent * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h ^ (h >> 29));
}

static int tt_grow(void)
{
	size_t size = tt_size ? tt_size * 2 : 1u << 12;
	struct tt_entry *n = mp_pages(size * sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < tt_size; i++) {
		size_t j;
		if (!tt[i].index)
			continue;
		for (j = tt_hash(tt[i].parent, tt[i].ip) & (size - 1); n[j].index; j = (j + 1) & (size - 1))
			;
		n[j] = tt[i];
	}
	if (tt)
		mp_pages_free(tt, tt_size * sizeof(*tt));
	tt = n;
	tt_size = size;
	return 0;
}

/* The node for (parent, ip), created (and its TRACE record written) if new; 0 on failure. */
static uint32_t tt_node(uint32_t parent, uint64_t ip)
{
	size_t j;
	/*
	 * Up to 7/8 full: the table is the tracker's largest, every page of it
	 * is resident, and it is searched only for stacks the stack map has not
	 * seen, so its longer probes cost little.
	 */
	if (unlikely((size_t)tt_count * 8 >= tt_size * 7) && tt_grow())
		return 0;
	for (j = tt_hash(parent, ip) & (tt_size - 1); tt[j].index; j = (j + 1) & (tt_size - 1))
		if (tt[j].ip == ip && tt[j].parent == parent)
			return tt[j].index;
	tt[j].ip = ip;
	tt[j].parent = parent;
	tt[j].index = ++tt_count;
	commit(mp_enc_trace(room(MP_ENC_MAX_EVENT), tt_count, parent, ip, &last_trace_ip));
	n_traces_total++;
	/* Code outside every known module means the loader mapped something new. */
	if (ip != MP_IP_TRUNCATED && !mp_modules_contains(ip))
		mp_modules_mark_dirty();
	return tt_count;
}

static struct smap *smap_new(size_t slots)
{
	struct smap *m = mp_pages(sizeof(*m) + slots * sizeof(m->e[0]));
	if (m)
		m->mask = slots - 1;
	return m;
}

/* The leaf node of the stack hashed h, or 0 when unknown (no lock needed). */
static inline uint32_t smap_get(const uint64_t h[2])
{
	const struct smap *m = __atomic_load_n(&smap, __ATOMIC_ACQUIRE);
	size_t mask;
	if (unlikely(!m))
		return 0;
	/* 0 in a table given back (see smap_put): unknown. */
	mask = __atomic_load_n(&m->mask, __ATOMIC_RELAXED);
	if (unlikely(!mask))
		return 0;
	for (size_t i = h[0] & mask;; i = (i + 1) & mask) {
		uint64_t k = __atomic_load_n(&m->e[i].h0, __ATOMIC_ACQUIRE);
		if (!k)
			return 0;
		if (k == h[0] && m->e[i].h1 == (uint32_t)h[1])
			return m->e[i].node;
	}
}

/* Start loading the stack map's slot for h: the probe comes after the lock is taken. */
static inline void smap_prefetch(const uint64_t h[2])
{
	const struct smap *m = __atomic_load_n(&smap, __ATOMIC_RELAXED);
	if (likely(m != NULL))
		__builtin_prefetch(&m->e[h[0] & __atomic_load_n(&m->mask, __ATOMIC_RELAXED)]);
}

static void smap_put_slot(struct smap *m, uint64_t h0, uint32_t h1, uint32_t node)
{
	size_t i = h0 & m->mask;
	while (m->e[i].h0)
		i = (i + 1) & m->mask;
	m->e[i].h1 = h1;
	m->e[i].node = node;
	__atomic_store_n(&m->e[i].h0, h0, __ATOMIC_RELEASE);
	m->count++;
}

/* Remember a stack's node (under main_lock). */
static void smap_put(const uint64_t h[2], uint32_t node)
{
	struct smap *m = smap;
	if (!m || (m->count + 1) * 2 > m->mask + 1) {
		struct smap *n = smap_new(m ? (m->mask + 1) * 2 : 1u << 10);
		if (!n)
			return;
		for (size_t i = 0; m && i <= m->mask; i++)
			if (m->e[i].h0)
				smap_put_slot(n, m->e[i].h0, m->e[i].h1, m->e[i].node);
		__atomic_store_n(&smap, n, __ATOMIC_RELEASE);
		/*
		 * The old table stays mapped, since a reader may be in it, but its
		 * pages go back: a reader there sees zeros, which mean "unknown
		 * stack", and takes the locked path, as for any new stack.
		 */
		if (m)
			madvise(m, sizeof(*m) + (m->mask + 1) * sizeof(m->e[0]), MADV_DONTNEED);
		m = n;
	}
	smap_put_slot(m, h[0], (uint32_t)h[1], node);
}

static void tt_reset(void)
{
	/* A new stream numbers its nodes afresh (only a forked child's one thread runs). */
	if (smap) {
		memset(smap->e, 0, (smap->mask + 1) * sizeof(smap->e[0]));
		smap->count = 0;
	}
	if (tt)
		memset(tt, 0, tt_size * sizeof(*tt));
	tt_count = 0;
	last_trace_ip = 0;
}

/* ---- recording ---- */

/*
 * The slow path: a stack as innermost-first return addresses (from our walker
 * or from libunwind) into ts->scratch, root first, without the tracker's own
 * frames, cut to --max-depth; returns the depth.
 */
static int stack_from_ips(struct tstate *ts, int n, int truncated)
{
	int kept = 0, k = 0;
	int cap = (int)cfg.max_depth + OWN_FRAMES + 1;
	if (n == cap)
		truncated = 1;
	/* The tracker's own frames (the hooks, main_wrapper) are not the program's. */
	for (int i = 0; i < n; i++) {
		uint64_t ip = (uint64_t)ts->raw[i];
		if (ip >= self_lo && ip < self_hi)
			continue;
		if (kept == (int)cfg.max_depth) {
			truncated = 1;
			break;
		}
		ts->raw[kept++] = ts->raw[i];
	}
	if (truncated)
		ts->scratch[k++] = MP_IP_TRUNCATED;
	for (int j = kept - 1; j >= 0; j--)
		ts->scratch[k++] = (uint64_t)ts->raw[j];
	return k;
}

/* Emit the event's thread context (under main_lock); returns its delta state or NULL. */
static inline struct mp_enc_thread *event_thread(struct tstate *ts, uint8_t **p)
{
	if (unlikely(ts->gen != stream_gen) && declare_thread(ts))
		return NULL;
	*p = room(2 * MP_ENC_MAX_EVENT);
	if (unlikely(ts->index != enc_cur_thread)) {
		*p = mp_enc_thread_switch(*p, ts->index);
		enc_cur_thread = ts->index;
		n_records++;
	}
	return &enc_threads[ts->index];
}

/* The leaf trace node of a stack in ts->scratch (under main_lock); 0 on failure. */
static uint32_t slow_stack_node(struct tstate *ts, int depth, int k)
{
	uint32_t node;
	if (unlikely(ts->cache_gen != stream_gen))
		k = 0;
	node = k ? ts->nodes[k - 1] : 0;
	for (int j = k; j < depth; j++) {
		node = tt_node(node, ts->scratch[j]);
		if (unlikely(!node))
			return 0;
		ts->ips[j] = ts->scratch[j];
		ts->nodes[j] = node;
	}
	ts->depth = depth;
	ts->cache_gen = stream_gen;
	return node;
}

/*
 * A stack's hash is the sum of one term per frame, each mixing the return
 * address with the frame's position from the outermost: position makes the
 * order count, and the terms being independent lets the processor compute a
 * deep stack's in parallel instead of as one chain of multiplications. Two
 * lanes with different constants give 96 bits of fingerprint (smap_entry).
 */
#define POS_MUL 0xd6e8feb86659fd93ull

/* The term of ip at position pos; pos_mul is pos * POS_MUL, kept as a running sum by the caller. */
static inline uint64_t term(uint64_t ip, uint64_t pos_mul, uint64_t k)
{
	uint64_t x = (ip ^ pos_mul) * k;
	return x ^ (x >> 29);
}

/*
 * The fast path, first half (no lock): the walker's frames, innermost first,
 * of which the outermost `stable` still carry what was computed last time;
 * the newer ones get the hash of the stack up to them and their depth.
 * Returns -1 when the stack is deeper than --max-depth (the caller cuts it
 * the slow way), else 0 with the whole stack's hash in h.
 */
static int fast_stack_hash(struct tstate *ts, struct mp_uframe *f, int n, int stable, uint64_t h[2])
{
	uint64_t h0 = 0, h1 = 0, pos_mul;
	uint32_t depth = 0;
	if (unlikely(ts->walk_gen != stream_gen)) {
		stable = 0;
		ts->walk_gen = stream_gen;
	}
	if (stable) {
		h0 = f[n - stable].hash[0];
		h1 = f[n - stable].hash[1];
		depth = f[n - stable].depth;
	}
	pos_mul = depth * POS_MUL;
	for (int k = n - stable - 1; k >= 0; k--) {
		uint64_t ip = f[k].ra;
		/* The tracker's own frames are invisible: the caller's hash carries on. */
		if (likely(ip < self_lo || ip >= self_hi)) {
			if (unlikely(++depth > cfg.max_depth))
				return -1;
			pos_mul += POS_MUL;
			h0 += term(ip, pos_mul, 0x9e3779b97f4a7c15ull);
			h1 += term(ip, pos_mul, 0xbf58476d1ce4e5b9ull);
		}
		f[k].hash[0] = h0;
		f[k].hash[1] = h1;
		f[k].depth = depth;
		f[k].node = MP_UFRAME_NO_NODE;
	}
	/* 0 marks an empty slot of the stack map. */
	h[0] = (h0 ^ depth) ? (h0 ^ depth) : 1;
	h[1] = h1;
	return 0;
}

/*
 * The fast path, second half (under main_lock), for a stack the stack map
 * does not know: trace nodes from the innermost frame whose node is known.
 * Returns the leaf's node, or 0 when the tree is full.
 */
static uint32_t fast_stack_node(struct mp_uframe *f, int n)
{
	uint32_t node = 0;
	int j = 0;
	while (j < n && f[j].node == MP_UFRAME_NO_NODE)
		j++;
	if (j < n)
		node = f[j].node;
	for (int k = j - 1; k >= 0; k--) {
		uint64_t ip = f[k].ra;
		if (likely(ip < self_lo || ip >= self_hi)) {
			node = tt_node(node, ip);
			if (unlikely(!node))
				return 0;
		}
		f[k].node = node;
	}
	return node;
}

void mp_record_alloc(unsigned kind, void *addr, size_t size)
{
	int saved = errno;
	struct tstate *ts = get_tstate();
	struct mp_enc_thread *t;
	struct mp_uframe *frames = NULL;
	uint64_t h[2] = { 0, 0 };
	uint8_t *p;
	uint32_t node = 0;
	int n = -1, stable = 0, truncated = 0, depth = 0, k = 0;

	if (unlikely(!ts))
		goto out;
	if (likely(ts->uw != NULL))
		n = mp_unwind(ts->uw, &frames, &stable, &truncated);
	if (likely(n >= 0 && !truncated) && likely(fast_stack_hash(ts, frames, n, stable, h) == 0)) {
		smap_prefetch(h);
	} else {
		/* libunwind, or a stack deeper than the walker keeps or --max-depth. */
		if (n >= 0) {
			int cap = (int)cfg.max_depth + OWN_FRAMES + 1, m = 0;
			for (int i = 0; i < n && m < cap; i++)
				ts->raw[m++] = (void *)frames[i].ra;
			depth = stack_from_ips(ts, m, truncated);
		} else {
			depth = stack_from_ips(ts, unw_backtrace(ts->raw, (int)cfg.max_depth + OWN_FRAMES + 1), 0);
		}
		if (ts->uw)
			mp_unwind_forget(ts->uw);
		n = -1;
		if (likely(ts->cache_gen == stream_gen)) {
			int m = depth < ts->depth ? depth : ts->depth;
			while (k < m && ts->ips[k] == ts->scratch[k])
				k++;
		}
	}
	if (unlikely(mp_modules_dirty()))
		mp_modules_refresh(0);
	mp_lock(&main_lock);
	if (unlikely(sink_fd < 0))
		goto unlock;
	if (likely(n >= 0)) {
		/* A known stack, or new frames for the tree. */
		node = smap_get(h);
		if (unlikely(!node)) {
			node = fast_stack_node(frames, n);
			if (likely(node))
				smap_put(h, node);
		}
	} else {
		node = slow_stack_node(ts, depth, k);
	}
	t = event_thread(ts, &p);
	if (unlikely(!t))
		goto unlock;
	commit(mp_enc_alloc(p, t, kind, (uint64_t)addr, size, node));
	n_allocs++;
	bytes_allocated += size;
	if (unlikely(final_mode))
		flush_locked();
unlock:
	mp_unlock(&main_lock);
out:
	errno = saved;
}

static void record_free(unsigned kind, void *addr, int ranged, size_t size)
{
	int saved = errno;
	struct tstate *ts = get_tstate();
	struct mp_enc_thread *t;
	uint8_t *p;
	if (unlikely(!ts))
		goto out;
	mp_lock(&main_lock);
	if (likely(sink_fd >= 0) && (t = event_thread(ts, &p))) {
		commit(mp_enc_free(p, t, kind, (uint64_t)addr, ranged, size));
		n_frees++;
		if (unlikely(final_mode))
			flush_locked();
	}
	mp_unlock(&main_lock);
out:
	errno = saved;
}

void mp_record_free(unsigned kind, void *addr)
{
	record_free(kind, addr, 0, 0);
}

void mp_record_free_range(unsigned kind, void *addr, size_t size)
{
	record_free(kind, addr, 1, size);
}

static uint64_t since_start_us(void)
{
	return (now_ns(CLOCK_MONOTONIC) - start_mono_ns) / 1000;
}


/* ---- header and trailer ---- */

static size_t read_cmdline(uint8_t *buf, size_t cap)
{
	ssize_t n = mp_read_file("/proc/self/cmdline", (char *)buf, cap);
	if (n <= 0)
		return 0;
	/* Keep whole arguments: a cut one would be misleading. */
	if ((size_t)n == cap) {
		while (n > 0 && buf[n - 1])
			n--;
	}
	return (size_t)n;
}

static size_t build_header(uint8_t *buf, unsigned mode, unsigned flags, pid_t forked_from)
{
	static uint8_t cmdline[64 * 1024];
	uint8_t *p = buf, *rec;
	struct utsname uts;
	char cwd[4096];
	size_t clen = read_cmdline(cmdline, sizeof(cmdline));

	memcpy(p, MP_MAGIC, MP_MAGIC_LEN);
	p[MP_MAGIC_LEN] = MP_FORMAT_MAJOR;
	p[MP_MAGIC_LEN + 1] = MP_FORMAT_MINOR;
	p += MP_MAGIC_LEN + 2;
	rec = p;
	p = mp_enc_sized_begin(p, MP_TAG_HEADER);
	p = mp_enc_field_uint(p, MP_H_PID, (uint64_t)getpid());
	p = mp_enc_field_uint(p, MP_H_PPID, (uint64_t)getppid());
	p = mp_enc_field_bytes(p, MP_H_ARGV, cmdline, clen);
	p = mp_enc_field_bytes(p, MP_H_EXE, exe_path, strlen(exe_path));
	p = mp_enc_field_uint(p, MP_H_START_TIME, start_wall_us);
	if (uname(&uts) == 0)
		p = mp_enc_field_bytes(p, MP_H_HOSTNAME, uts.nodename, strlen(uts.nodename));
	p = mp_enc_field_uint(p, MP_H_PAGE_SIZE, (uint64_t)page_size);
	p = mp_enc_field_uint(p, MP_H_MODE, mode);
	p = mp_enc_field_uint(p, MP_H_MAX_DEPTH, cfg.max_depth);
	p = mp_enc_field_uint(p, MP_H_INTERVAL_MS, cfg.interval_ms);
	p = mp_enc_field_uint(p, MP_H_FLAGS, flags);
	p = mp_enc_field_uint(p, MP_H_MAIN_TID, (uint64_t)syscall(SYS_gettid));
#if defined(__x86_64__)
	p = mp_enc_field_uint(p, MP_H_MACHINE, EM_X86_64);
#elif defined(__aarch64__)
	p = mp_enc_field_uint(p, MP_H_MACHINE, EM_AARCH64);
#endif
	p = mp_enc_field_uint(p, MP_H_POINTER_SIZE, sizeof(void *));
	p = mp_enc_field_bytes(p, MP_H_TRACKER_VERSION, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	if (getcwd(cwd, sizeof(cwd)))
		p = mp_enc_field_bytes(p, MP_H_CWD, cwd, strlen(cwd));
	if (forked_from)
		p = mp_enc_field_uint(p, MP_H_FORKED_FROM, (uint64_t)forked_from);
	p = mp_enc_sized_end(rec, p);
	return (size_t)(p - buf);
}

/* A marker record with a time and one optional field (under main_lock). */
static void marker_locked(unsigned tag, unsigned field, uint64_t value, int is_signed)
{
	uint8_t *rec = room(64), *p;
	p = mp_enc_sized_begin(rec, tag);
	p = mp_enc_field_uint(p, MP_M_TIME, since_start_us());
	if (is_signed)
		p = mp_enc_field_sint(p, field, (int64_t)value);
	else
		p = mp_enc_field_uint(p, field, value);
	commit(mp_enc_sized_end(rec, p));
}

/* Direct mode writes its own trailer: the collector is not there to do it. */
static void trailer_locked(void)
{
	uint8_t *rec = room(256), *p;
	uint64_t end_us = now_ns(CLOCK_REALTIME) / 1000;
	p = mp_enc_sized_begin(rec, MP_TAG_TRAILER);
	p = mp_enc_field_uint(p, MP_T_END_TIME, end_us);
	p = mp_enc_field_uint(p, MP_T_DURATION, since_start_us());
	p = mp_enc_field_uint(p, MP_T_END_REASON, exit_status_known ? MP_END_EXIT : MP_END_DISCONNECT);
	if (exit_status_known)
		p = mp_enc_field_uint(p, MP_T_EXIT_CODE, (uint64_t)(exit_status_value & 0xff));
	p = mp_enc_field_uint(p, MP_T_N_ALLOCS, n_allocs);
	p = mp_enc_field_uint(p, MP_T_N_FREES, n_frees);
	p = mp_enc_field_uint(p, MP_T_BYTES_ALLOCATED, bytes_allocated);
	p = mp_enc_field_uint(p, MP_T_N_TRACES, n_traces_total);
	p = mp_enc_field_uint(p, MP_T_N_RECORDS, n_records + 1);
	commit(mp_enc_sized_end(rec, p));
}

/* ---- the sink ---- */

/* Expand the output pattern: %p is the pid, %% a percent sign; a followed child gets .<pid>. */
static int output_path(char *out, size_t cap, int child)
{
	const char *s = cfg.output;
	size_t n = 0;
	int had_pid = 0;
	char num[24];
	for (; *s; s++) {
		const char *add = s;
		size_t alen = 1;
		if (s[0] == '%' && s[1] == 'p') {
			alen = mp_u64_to_dec(num, (uint64_t)getpid());
			add = num;
			had_pid = 1;
			s++;
		} else if (s[0] == '%' && s[1] == '%') {
			s++;
		}
		if (n + alen >= cap)
			return -1;
		memcpy(out + n, add, alen);
		n += alen;
	}
	if (child && !had_pid) {
		size_t l = mp_u64_to_dec(num, (uint64_t)getpid());
		if (n + 1 + l >= cap)
			return -1;
		out[n++] = '.';
		memcpy(out + n, num, l);
		n += l;
	}
	out[n] = '\0';
	return 0;
}

static void tick_locked(void);

/* Open the stream's destination and write preamble and header. */
static int open_sink(unsigned mode, unsigned flags, pid_t forked_from)
{
	static uint8_t header[HEADER_CAP];
	size_t hlen;
	if (cfg.direct) {
		char path[4096];
		int oflags = O_WRONLY | O_CREAT | O_CLOEXEC | (cfg.force ? O_TRUNC : O_EXCL);
		if (output_path(path, sizeof(path), forked_from != 0)) {
			mp_write_stderr("MEMPROF_OUTPUT is too long; the program runs untracked", NULL, NULL);
			return -1;
		}
		sink_fd = open(path, oflags, 0644);
		if (sink_fd < 0) {
			mp_write_stderr("cannot create the capture '", path,
					errno == EEXIST ? "': it exists (set MEMPROF_FORCE=1 to overwrite); "
							  "the program runs untracked"
							: "'; the program runs untracked");
			return -1;
		}
		sink_is_socket = 0;
	} else {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int size = 4 << 20;
		sink_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (sink_fd < 0)
			return -1;
		memcpy(sa.sun_path, cfg.socket_path, sizeof(sa.sun_path));
		if (connect(sink_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			mp_write_stderr("cannot connect to the collector at '", cfg.socket_path,
					"'; the program runs untracked");
			close(sink_fd);
			sink_fd = -1;
			return -1;
		}
		setsockopt(sink_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		sink_is_socket = 1;
	}
	start_mono_ns = last_tick_ns = now_ns(CLOCK_MONOTONIC);
	start_wall_us = now_ns(CLOCK_REALTIME) / 1000;
	hlen = build_header(header, mode, flags, forked_from);
	sink_write(header, hlen);
	if (sink_fd < 0)
		return -1;
	/* A first sample at time 0: even a program that ends at once has a start and an end. */
	mp_lock(&main_lock);
	tick_locked();
	mp_unlock(&main_lock);
	return 0;
}

/* ---- start-up ---- */

/*
 * The next definition after ours; when the C library was preloaded before us
 * there is none after, and the default one is right unless it is our own.
 */
static void *next_symbol(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	Dl_info a, b;
	if (p)
		return p;
	p = dlsym(RTLD_DEFAULT, name);
	if (p && dladdr(p, &a) && dladdr((void *)&next_symbol, &b) && a.dli_fbase == b.dli_fbase)
		return NULL;
	return p;
}

#define RESOLVE(name) (mp_real.name = (__typeof__(mp_real.name))next_symbol(#name))

static void resolve_real(void)
{
	RESOLVE(malloc);
	RESOLVE(calloc);
	RESOLVE(realloc);
	RESOLVE(reallocarray);
	RESOLVE(free);
	RESOLVE(free_sized);
	RESOLVE(free_aligned_sized);
	RESOLVE(posix_memalign);
	RESOLVE(aligned_alloc);
	RESOLVE(memalign);
	RESOLVE(valloc);
	RESOLVE(pvalloc);
	RESOLVE(malloc_usable_size);
	RESOLVE(mmap);
	RESOLVE(munmap);
	RESOLVE(mremap);
	RESOLVE(fork);
	RESOLVE(exit);
	RESOLVE(_exit);
	RESOLVE(_Exit);
	RESOLVE(abort);
	RESOLVE(execve);
	RESOLVE(execv);
	RESOLVE(execvp);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	RESOLVE(pthread_setname_np);
	RESOLVE(prctl);
}

/* An integer setting in [lo, hi], else its default (checked before narrowing). */
static unsigned env_in(const char *name, unsigned def, uint64_t lo, uint64_t hi)
{
	uint64_t v = mp_env_u64(name, def);
	return v < lo || v > hi ? def : (unsigned)v;
}

/* A path setting into dst; -1 when it does not fit. */
static int env_path(char *dst, size_t size, const char *value)
{
	if (strlen(value) >= size)
		return -1;
	strcpy(dst, value);
	return 0;
}

static int read_config(void)
{
	const char *sock = mp_getenv("MEMPROF_SOCKET"), *out = mp_getenv("MEMPROF_OUTPUT");
	const char *unwind = mp_getenv("MEMPROF_UNWIND");
	cfg.interval_ms = env_in("MEMPROF_INTERVAL_MS", 10, 1, 3600 * 1000);
	cfg.max_depth = env_in("MEMPROF_MAX_DEPTH", 128, 1, MAX_DEPTH_LIMIT);
	cfg.follow_fork = mp_env_u64("MEMPROF_FOLLOW_FORK", 0) != 0;
	cfg.force = mp_env_u64("MEMPROF_FORCE", 0) != 0;
	cfg.libunwind_only = unwind && !strcmp(unwind, "libunwind");
	/* A failure leaves the tracker off, whatever cfg.direct says. */
	if (sock && *sock) {
		cfg.direct = 0;
		return env_path(cfg.socket_path, sizeof(cfg.socket_path), sock);
	}
	if (out && *out) {
		cfg.direct = 1;
		return env_path(cfg.output, sizeof(cfg.output), out);
	}
	return -1;
}

static int self_range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t addr = (uint64_t)data;
	uint64_t lo = UINT64_MAX, hi = 0;
	int mine = 0;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		if (addr >= start && addr < end)
			mine = 1;
		if (ph->p_flags & PF_X) {
			if (start < lo)
				lo = start;
			if (end > hi)
				hi = end;
		}
	}
	if (!mine)
		return 0;
	self_lo = lo;
	self_hi = hi;
	mp_self_base = info->dlpi_addr;
	return 1;
}

static void new_stream_state(void)
{
	tt_reset();
	stream_gen++;
	enc_cur_thread = 0;
	if (enc_threads)
		memset(enc_threads, 0, enc_threads_cap * sizeof(*enc_threads));
	next_thread_index = 0;
	n_free_indices = 0;
	out_len = 0;
	n_allocs = n_frees = bytes_allocated = n_traces_total = n_records = 0;
	exit_status_known = 0;
	final_mode = 0;
	mp_modules_reset();
}

/* What every way of tracking needs, done once: buffers, keys, the stack walker's setup. */
static int setup(void)
{
	static int done;
	ssize_t n;
	if (done)
		return 0;
	page_size = sysconf(_SC_PAGESIZE);
	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(self_range_cb, (void *)(uintptr_t)&mp_init_stage1);
	ts_size = sizeof(struct tstate) + 2 * (MAX_DEPTH_LIMIT + 1) * sizeof(uint64_t) +
		  (MAX_DEPTH_LIMIT + OWN_FRAMES + 1) * sizeof(void *) +
		  (MAX_DEPTH_LIMIT + 1) * sizeof(uint32_t);
	out_buf = mp_pages(OUT_CAP);
	if (!out_buf || pthread_key_create(&ts_key, ts_destroy) || tt_grow()) {
		mp_write_stderr("cannot allocate the tracker's buffers; the program runs untracked",
				NULL, NULL);
		return -1;
	}
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	done = 1;
	return 0;
}

void mp_init_stage1(void)
{
	static int initializing;
	if (__atomic_exchange_n(&initializing, 1, __ATOMIC_ACQ_REL))
		return; /* re-entered from dlsym's allocations, or another thread races us */
	mp_in_hook++;
	resolve_real();
	if (!mp_real.malloc || !mp_real.free || !mp_real.calloc || !mp_real.realloc) {
		mp_write_stderr("cannot find the C library's allocator; the program runs untracked",
				NULL, NULL);
		mp_state = MP_STATE_OFF;
		goto out;
	}
	/* Without configuration (memprof attach loads us with dlopen) nothing starts here. */
	if (read_config() || setup()) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	mp_modules_reset();
	stream_mode = cfg.direct ? MP_MODE_PRELOAD : MP_MODE_RUN;
	if (open_sink(stream_mode, cfg.follow_fork ? MP_HF_FOLLOW_FORK : 0, 0)) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	mp_state = MP_STATE_ON;
out:
	mp_in_hook--;
}

/* ---- ticks ---- */

static uint64_t read_rss(void)
{
	char buf[128];
	ssize_t n;
	uint64_t pages = 0;
	const char *s;
	if (statm_fd < 0)
		return 0;
	n = pread(statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	s = strchr(buf, ' '); /* size, then resident */
	if (!s)
		return 0;
	for (s++; *s >= '0' && *s <= '9'; s++)
		pages = pages * 10 + (uint64_t)(*s - '0');
	return pages * (uint64_t)page_size;
}

static void tick_locked(void)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t delta_us = (now - start_mono_ns) / 1000 - (last_tick_ns - start_mono_ns) / 1000;
	commit(mp_enc_tick(room(MP_ENC_MAX_EVENT), delta_us, read_rss()));
	last_tick_ns = now;
}

static int attach_control(void);
static void attach_stop(void);

static void *timer_main(void *arg)
{
	struct timespec ts = { cfg.interval_ms / 1000, (long)(cfg.interval_ms % 1000) * 1000000L };
	(void)arg;
	mp_in_hook = 1; /* this thread is the tracker's: never record it */
	syscall(SYS_prctl, PR_SET_NAME, "memprof-timer", 0, 0, 0);
	while (!timer_stop && mp_state == MP_STATE_ON) {
		nanosleep(&ts, NULL);
		if (timer_stop || mp_state != MP_STATE_ON)
			break;
		if (stream_mode == MP_MODE_ATTACH && attach_control()) {
			attach_stop();
			return NULL;
		}
		/* The module map first, outside the main lock (see modules.c); an attached
		   tracker also patches the modules loaded since. */
		if (mp_modules_refresh(0) && stream_mode == MP_MODE_ATTACH)
			mp_got_patch();
		mp_lock(&main_lock);
		if (sink_fd >= 0) {
			tick_locked();
			reap_dying();
			flush_locked();
		}
		mp_unlock(&main_lock);
	}
	/* An attached tracker whose collector went away restores the program as it was. */
	if (stream_mode == MP_MODE_ATTACH && !timer_stop)
		attach_stop();
	return NULL;
}

static void start_timer(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	sigfillset(&all);
	/* All signals blocked, so the program's signals never land on our thread. */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	timer_stop = 0;
	timer_running = pthread_create(&timer_thread, &attr, timer_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The process is ending: a last sample, the trailer when we write the file
 * ourselves, everything on its way, and from now on each event goes out at
 * once (under main_lock).
 */
static void finish_locked(void)
{
	tick_locked();
	if (cfg.direct)
		trailer_locked();
	flush_locked();
	final_mode = 1;
}

/* ---- exit, exec, abort ---- */

void mp_flush_now(void)
{
	int saved = errno;
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	mp_lock(&main_lock);
	if (sink_fd >= 0) {
		tick_locked();
		flush_locked();
	}
	mp_unlock(&main_lock);
	mp_in_hook--;
	errno = saved;
}

void mp_record_exit(int status, int final)
{
	int saved = errno;
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	mp_lock(&main_lock);
	if (sink_fd >= 0) {
		exit_status_known = 1;
		exit_status_value = status;
		marker_locked(MP_TAG_EXIT, MP_M_STATUS, (uint64_t)(int64_t)status, 1);
		if (final)
			finish_locked(); /* _exit: nothing else runs after us */
	}
	mp_unlock(&main_lock);
	mp_in_hook--;
	errno = saved;
}

/* Registered from our constructor, so it runs after the program's own exit handlers. */
static void at_exit(void)
{
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	/* Modules closed since the last tick (outside the main lock, as always). */
	mp_modules_refresh(0);
	mp_lock(&main_lock);
	if (sink_fd >= 0) {
		/*
		 * Returning from main reaches exit() inside the C library, past every
		 * hook an attached tracker could patch: say the process exits, if not
		 * with which status.
		 */
		if (!exit_status_known && stream_mode == MP_MODE_ATTACH) {
			uint8_t *rec = room(32), *p = mp_enc_sized_begin(rec, MP_TAG_EXIT);
			p = mp_enc_field_uint(p, MP_M_TIME, since_start_us());
			commit(mp_enc_sized_end(rec, p));
		}
		finish_locked(); /* frees in later destructors are written one by one */
	}
	mp_unlock(&main_lock);
	mp_in_hook--;
}

void mp_record_fork(pid_t child)
{
	if (mp_state != MP_STATE_ON)
		return;
	mp_in_hook++;
	mp_lock(&main_lock);
	if (sink_fd >= 0)
		marker_locked(MP_TAG_FORK, MP_M_CHILD_PID, (uint64_t)child, 0);
	mp_unlock(&main_lock);
	mp_in_hook--;
}

/* ---- fork ---- */

static int fork_locked;

static void atfork_prepare(void)
{
	/* No thread may be half-way through a record when the child is cloned. */
	fork_locked = mp_state == MP_STATE_ON;
	if (fork_locked) {
		mp_modules_lock();
		mp_lock(&main_lock);
	}
}

static void atfork_parent(void)
{
	if (fork_locked) {
		mp_unlock(&main_lock);
		mp_modules_unlock();
	}
}

static void atfork_child(void)
{
	struct tstate *self = tls_ts;
	if (!fork_locked)
		return;
	main_lock = 0;
	mp_modules_reinit_lock();
	mp_in_hook++;
	/* The parent's connection stays the parent's: the child never writes to it. */
	if (sink_fd >= 0)
		close(sink_fd);
	sink_fd = -1;
	timer_running = 0;
	if (!cfg.follow_fork) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	/* A new stream for the child: its own file, its own trace tree and threads. */
	all_threads = dying_threads = NULL;
	if (self) {
		self->next = NULL;
		self->tid = (pid_t)syscall(SYS_gettid);
		all_threads = self;
	}
	new_stream_state();
	if (statm_fd >= 0)
		close(statm_fd);
	statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (open_sink(stream_mode, MP_HF_FOLLOW_FORK | MP_HF_FORK_CHILD, getppid())) {
		mp_state = MP_STATE_OFF;
		goto out;
	}
	start_timer();
out:
	mp_in_hook--;
}

/* ---- the environment of child programs ---- */

/*
 * The environment is edited in place in `environ`, never with setenv/unsetenv:
 * a program may define its own (bash does, for its variable table), and ours
 * would then call the program's before it is initialised.
 */
extern char **environ;

static void env_remove_at(char **e)
{
	do
		e[0] = e[1];
	while (*++e);
}

/* The variables the tracker reads; other MEMPROF_* variables are the user's. */
static const char *const own_vars[] = {
	"MEMPROF_SOCKET=", "MEMPROF_OUTPUT=", "MEMPROF_FORCE=", "MEMPROF_FOLLOW_FORK=",
	"MEMPROF_INTERVAL_MS=", "MEMPROF_MAX_DEPTH=", "MEMPROF_UNWIND=",
};

static int own_var(const char *entry)
{
	for (size_t i = 0; i < sizeof(own_vars) / sizeof(own_vars[0]); i++)
		if (!strncmp(entry, own_vars[i], strlen(own_vars[i])))
			return 1;
	return 0;
}

/* Remove our own library from LD_PRELOAD and our variables, unless children are followed. */
static void clean_environment(void)
{
	static char value[8192] = "LD_PRELOAD=";
	Dl_info info;
	char **e;
	if (cfg.follow_fork || !environ || !dladdr((void *)&clean_environment, &info) ||
	    !info.dli_fname)
		return;
	for (e = environ; *e;) {
		if (own_var(*e)) {
			env_remove_at(e);
			continue;
		}
		if (!strncmp(*e, "LD_PRELOAD=", 11)) {
			const char *s = *e + 11;
			size_t n = 11, ourlen = strlen(info.dli_fname);
			while (*s) {
				size_t len = strcspn(s, ": ");
				const char *base = s + len;
				int ours;
				while (base > s && base[-1] != '/')
					base--;
				ours = (len == ourlen && !strncmp(s, info.dli_fname, len)) ||
				       ((size_t)(s + len - base) == 13 && !strncmp(base, "libmemprof.so", 13));
				if (!ours && len && n + len + 2 < sizeof(value)) {
					if (n > 11)
						value[n++] = ':';
					memcpy(value + n, s, len);
					n += len;
				}
				s += len;
				while (*s == ':' || *s == ' ')
					s++;
			}
			value[n] = '\0';
			if (n == 11) {
				env_remove_at(e);
				continue;
			}
			*e = value;
		}
		e++;
	}
}

/*
 * libunwind allocates on first use: do it now, unrecorded. A few steps, not
 * unw_backtrace: that would also fill the thread's trace cache, 256 KiB of the
 * program's memory for a fallback most programs never take (a thread that
 * does take it gets its cache then, from mmap, unrecorded).
 */
static void warm_libunwind(void)
{
	unw_context_t uc;
	unw_cursor_t c;
	if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
		for (int i = 0; i < 4 && unw_step(&c) > 0; i++)
			;
}

__attribute__((constructor(101))) static void stage2(void)
{
	mp_in_hook++;
	if (mp_state == MP_STATE_INIT)
		mp_init_stage1();
	if (mp_state == MP_STATE_ON) {
		warm_libunwind();
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atexit(at_exit);
		start_timer();
	}
	if (mp_getenv("MEMPROF_SOCKET") || mp_getenv("MEMPROF_OUTPUT"))
		clean_environment();
	mp_in_hook--;
}

/* ---- attach ---- */

/*
 * The collector of `memprof attach` asks for the end of tracking with one byte
 * on the stream's socket; its end (EOF, an error) means the same.
 */
static int attach_control(void)
{
	char c;
	ssize_t n;
	if (sink_fd < 0)
		return 1;
	n = recv(sink_fd, &c, 1, MSG_DONTWAIT);
	if (n < 0)
		return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
	return 1; /* a request ('D'), or the end of the connection */
}

/* Stop tracking an attached process: hooks inert, GOT restored, capture finished. */
static void attach_stop(void)
{
	mp_in_hook++;
	mp_state = MP_STATE_OFF;
	/* Outside the main lock: restoring walks the loaded objects. */
	mp_got_unpatch();
	mp_lock(&main_lock);
	if (sink_fd >= 0) {
		marker_locked(MP_TAG_DETACH, MP_M_RSS, read_rss(), 0);
		tick_locked();
		flush_locked();
		close(sink_fd);
		sink_fd = -1;
	}
	mp_unlock(&main_lock);
	timer_running = 0;
	mp_in_hook--;
}

int mp_attach_start(const struct mp_attach_cfg *ac)
{
	static int registered;
	struct mp_marker_baseline base = { 0 };
	if (mp_state == MP_STATE_ON)
		return -EALREADY;
	if (timer_running)
		return -EBUSY; /* a detach is still finishing */
	if (mp_state == MP_STATE_INIT)
		mp_init_stage1();
	if (!mp_real.malloc || setup())
		return -ENOMEM;
	if (strlen(ac->socket_path) >= sizeof(cfg.socket_path))
		return -ENAMETOOLONG;
	memset(cfg.socket_path, 0, sizeof(cfg.socket_path));
	strcpy(cfg.socket_path, ac->socket_path);
	cfg.direct = 0;
	cfg.interval_ms = ac->interval_ms ? ac->interval_ms : 10;
	cfg.max_depth = ac->max_depth && ac->max_depth <= MAX_DEPTH_LIMIT ? ac->max_depth : 128;
	cfg.follow_fork = ac->follow_fork;
	cfg.libunwind_only = ac->libunwind_only;
	mp_lock(&main_lock);
	/* A new stream: its own trace tree, threads, modules and counters. */
	new_stream_state();
	mp_unlock(&main_lock);
	if (statm_fd < 0)
		statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	stream_mode = MP_MODE_ATTACH;
	if (open_sink(MP_MODE_ATTACH, cfg.follow_fork ? MP_HF_FOLLOW_FORK : 0, 0))
		return -ECONNREFUSED;
	mp_heap_baseline(&base);
	mp_lock(&main_lock);
	{
		uint8_t *rec = room(128), *p;
		p = mp_enc_sized_begin(rec, MP_TAG_ATTACH);
		p = mp_enc_field_uint(p, MP_M_TIME, 0);
		p = mp_enc_field_uint(p, MP_M_RSS, read_rss());
		if (base.valid) {
			p = mp_enc_field_uint(p, MP_M_HEAP_ARENA, base.arena);
			p = mp_enc_field_uint(p, MP_M_HEAP_IN_USE, base.in_use);
		}
		commit(mp_enc_sized_end(rec, p));
	}
	mp_unlock(&main_lock);
	if (!registered) {
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atexit(at_exit);
		registered = 1;
	}
	mp_state = MP_STATE_ON;
	start_timer();
	return 0;
}
