/*
 * Python-aware stacks: finding the interpreter, reading the allocating
 * thread's Python frames, and placing them among the native frames
 * (python.h says how). Everything read is reached from the calling thread's
 * own state, which the interpreter keeps consistent at every call it makes
 * (an allocation is one), through structures whose layout is checked
 * against the interpreter's version and, per code object, its type.
 */
#include <config.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/format/pyframe.h"
#include "lib/tracker/python-private.h"
#include "lib/tracker/stream.h"

int mp_py_on;
volatile int mp_py_quiet;
struct mp_pylayout mp_pyl;
void *(*mp_py_gil_tstate)(void);

/*
 * _PyRuntime's _initialized and initialized: the interpreter's state can be
 * read once the first is set (the runtime exists, with the key of its
 * thread states), which comes before the interpreter runs any code; the
 * second is set when its start-up is done and goes back to 0 when it begins
 * to finalize. In 3.11 to 3.13 they stand 24 and 8 bytes before
 * _PyRuntime._finalizing.
 */
static const volatile int *py_runtime_initialized, *py_initialized;
/* The calling thread's thread state (a pthread_getspecific): it never allocates. */
static void *(*py_this_tstate)(void);
static int py_seen_initialized;
static const char *py_note; /* why Python frames are off, for the capture */

/* ---- finding the interpreter ---- */

static void layout_311_312(unsigned minor)
{
	mp_pyl.ts_thread_id = minor == 11 ? 152 : 136;
	mp_pyl.ts_cframe = 56;
	mp_pyl.ts_frame = -1;
	mp_pyl.cf_frame = minor == 11 ? 8 : 0;
	mp_pyl.cf_prev = minor == 11 ? 16 : 8;
	mp_pyl.fr_code = minor == 11 ? 32 : 0;
	mp_pyl.fr_prev = minor == 11 ? 48 : 8;
	mp_pyl.fr_instr = 56;
	mp_pyl.fr_entry = minor == 11 ? 68 : -1;
	mp_pyl.fr_owner = minor == 11 ? 69 : 70;
	mp_pyl.fr_locals = 72;
	mp_pyl.co_filename = 112;
	mp_pyl.co_qualname = 128;
	mp_pyl.co_linetable = 136;
	mp_pyl.co_firstlineno = minor == 11 ? 72 : 68;
	mp_pyl.co_code = minor == 11 ? 184 : 192;
	mp_pyl.ob_type = 8;
	mp_pyl.str_state = 32;
	mp_pyl.str_length = 16;
	mp_pyl.str_ascii = minor == 11 ? 48 : 40;
	mp_pyl.str_compact = minor == 11 ? 72 : 56;
	mp_pyl.bytes_size = 16;
	mp_pyl.bytes_data = 32;
}

/*
 * 3.13 publishes its layout at the start of _PyRuntime (_Py_DebugOffsets,
 * "xdebugpy"): read where 3.13's own header puts each offset. 0 or -1.
 */
static int layout_313(const uint8_t *rt, unsigned long version, long *finalizing)
{
	uint64_t v;
#define DBG(off) (memcpy(&v, rt + (off), 8), (long)v)
	if (memcmp(rt, "xdebugpy", 8) || (uint64_t)DBG(8) != version)
		return -1;
	if (DBG(16))
		return -1; /* free-threaded build: another object layout */
	*finalizing = DBG(32);
	mp_pyl.ts_frame = DBG(184);
	mp_pyl.ts_thread_id = DBG(192);
	mp_pyl.ts_cframe = mp_pyl.cf_frame = mp_pyl.cf_prev = mp_pyl.fr_entry = -1;
	mp_pyl.fr_prev = DBG(232);
	mp_pyl.fr_code = DBG(240);
	mp_pyl.fr_instr = DBG(248);
	mp_pyl.fr_locals = DBG(256);
	mp_pyl.fr_owner = DBG(264);
	mp_pyl.co_filename = DBG(280);
	mp_pyl.co_qualname = DBG(296);
	mp_pyl.co_linetable = DBG(304);
	mp_pyl.co_firstlineno = DBG(312);
	mp_pyl.co_code = DBG(344);
	mp_pyl.ob_type = DBG(360);
	mp_pyl.bytes_size = DBG(520);
	mp_pyl.bytes_data = DBG(528);
	mp_pyl.str_state = DBG(544);
	mp_pyl.str_length = DBG(552);
	mp_pyl.str_ascii = DBG(560);
	/* The compact (non-ASCII) header adds utf8_length and utf8 to the ASCII one. */
	mp_pyl.str_compact = mp_pyl.str_ascii + 16;
#undef DBG
	/* Anything beyond a few cache lines is not a layout we read. */
	return mp_pyl.ts_frame > 0 && mp_pyl.ts_frame < 4096 && mp_pyl.co_code > 0 &&
	       mp_pyl.co_code < 4096 && mp_pyl.fr_owner < 256 && mp_pyl.fr_locals > 0 &&
	       mp_pyl.fr_locals < 256 && *finalizing >= 24 &&
	       *finalizing < 4096 ? 0 : -1;
}

/* The interpreter in this process, if it is one we read: 0, or -1 with py_note. */
static int find_python(void)
{
	const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");
	const uint8_t *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
	long finalizing = 24;
	unsigned minor;
	if (!version) {
		if (dlsym(RTLD_DEFAULT, "Py_Initialize"))
			py_note = "Python frames need Python 3.11 or later: stacks show the "
				  "interpreter's own frames";
		return -1;
	}
	py_this_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	/* 3.13's name for it, then 3.11's and 3.12's. */
	mp_py_gil_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyThreadState_GetUnchecked");
	if (!mp_py_gil_tstate)
		mp_py_gil_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "_PyThreadState_UncheckedGet");
	mp_pyl.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	mp_pyl.str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	mp_pyl.bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!rt || !py_this_tstate || !mp_pyl.code_type || !mp_pyl.str_type ||
	    !mp_pyl.bytes_type) {
		py_note = "Python frames are off: the interpreter does not export what they need";
		return -1;
	}
	if ((*version >> 24) != 3) {
		py_note = "Python frames are off: not a CPython 3 interpreter";
		return -1;
	}
	minor = (unsigned)(*version >> 16) & 0xff;
	mp_pyl.minor = minor;
	if (minor == 11 || minor == 12) {
		layout_311_312(minor);
	} else if (minor == 13) {
		if (layout_313(rt, *version, &finalizing)) {
			py_note = "Python frames are off: this Python 3.13 does not publish a layout "
				  "they read (a free-threaded build?)";
			return -1;
		}
	}
	if (minor >= 11 && minor <= 13) {
		py_runtime_initialized = (const volatile int *)(rt + finalizing - 24);
		py_initialized = (const volatile int *)(rt + finalizing - 8);
		return 0;
	}
	py_note = minor < 11 ? "Python frames need Python 3.11 or later: stacks show the "
			       "interpreter's own frames"
			     : "Python frames are off: this Python is newer than memprof knows "
			       "(3.11 to 3.13)";
	return -1;
}

int mp_py_setup(void)
{
	static int found = -2;
	if (found == -2) {
		found = find_python();
		/*
		 * A symbol not found left an error with the C library, which the next
		 * dl call of the program would free (a free of a block allocated before
		 * tracking) and dlerror() would return: the first call returns it, the
		 * second frees it, unrecorded, as the caller is inside the tracker.
		 */
		dlerror();
		dlerror();
	}
	__atomic_store_n(&mp_py_on, found == 0 && mp_cfg.python_frames, __ATOMIC_RELEASE);
	return mp_py_on;
}

void mp_py_give_up(const char *why)
{
	py_note = why;
	__atomic_store_n(&mp_py_on, 0, __ATOMIC_RELEASE);
	{
		struct mp_wring *w = mp_thread_ring();
		if (w)
			mp_py_message(w, 2, why);
	}
}

void mp_py_message(struct mp_wring *w, unsigned level, const char *text)
{
	uint8_t rec[512], *p;
	size_t len = strlen(text);
	if (len > sizeof(rec) - 64)
		len = sizeof(rec) - 64;
	p = mp_enc_sized_begin(rec, MP_TAG_MESSAGE);
	p = mp_enc_field_uint(p, MP_M_TIME, mp_stream_since_start_us());
	p = mp_enc_field_bytes(p, MP_M_TEXT, text, len);
	p = mp_enc_field_uint(p, MP_M_LEVEL, level);
	p = mp_enc_sized_end(rec, p);
	mp_stream_put(w, rec, (size_t)(p - rec));
}

void mp_py_stream_started(struct mp_wring *w)
{
	if (py_note && mp_cfg.python_frames && w)
		mp_py_message(w, 2, py_note);
}

/* ---- code objects: a number each ---- */

/*
 * A code object is known by its address and by the fields that say what it
 * is (its names, line table and first line): a code object freed and another
 * made at its address gets a number of its own unless it is the same code.
 * Entries are written once, under codes_lock, and read without it; an entry
 * whose address was taken by another code object is marked dead
 * (CODE_DEAD) and a new one added. A grown table replaces the old one, whose
 * pages are given back: a reader still in it finds zeros, "unknown", and
 * takes the lock.
 */
struct pycode {
	uint64_t code, qualname, filename, linetable;
	uint32_t firstlineno, id;
};
struct pycode_table {
	size_t mask, used;
	struct pycode e[];
};
#define CODE_DEAD 1u
static struct pycode_table *codes;
static uint64_t *code_by_id;   /* the code object of each number (for its description) */
static size_t code_by_id_cap;
static uint32_t ncodes;
static int codes_lock;

static inline size_t code_slot(uint64_t code)
{
	uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 31));
}

static struct pycode_table *codes_new(size_t slots)
{
	struct pycode_table *t = mp_pages(sizeof(*t) + slots * sizeof(t->e[0]));
	if (t)
		t->mask = slots - 1;
	return t;
}

static void codes_put(struct pycode_table *t, const struct pycode *c)
{
	size_t i = code_slot(c->code) & t->mask;
	while (t->e[i].code)
		i = (i + 1) & t->mask;
	t->e[i] = *c;
	t->e[i].code = 0;
	__atomic_store_n(&t->e[i].code, c->code, __ATOMIC_RELEASE);
	t->used++;
}

/* A new number for the code object c (under codes_lock); 0 when there is no room. */
static uint32_t codes_add(const struct pycode *want)
{
	struct pycode_table *t = codes;
	struct pycode c = *want;
	if (ncodes == UINT32_MAX)
		return 0;
	if (!t || (t->used + 1) * 2 > t->mask + 1) {
		struct pycode_table *n = codes_new(t ? (t->mask + 1) * 2 : 1u << 10);
		if (!n)
			return 0;
		for (size_t i = 0; t && i <= t->mask; i++)
			if (t->e[i].code > CODE_DEAD)
				codes_put(n, &t->e[i]);
		__atomic_store_n(&codes, n, __ATOMIC_RELEASE);
		if (t)
			madvise(t, sizeof(*t) + (t->mask + 1) * sizeof(t->e[0]), MADV_DONTNEED);
		t = n;
	}
	if (mp_pages_grow((void **)&code_by_id, &code_by_id_cap, (size_t)ncodes + 2, sizeof(uint64_t),
			  1u << 12))
		return 0;
	/* Another code object had this address: its entry is dead from now on. */
	for (size_t i = code_slot(c.code) & t->mask; t->e[i].code; i = (i + 1) & t->mask)
		if (t->e[i].code == c.code)
			__atomic_store_n(&t->e[i].code, CODE_DEAD, __ATOMIC_RELEASE);
	c.id = ++ncodes;
	code_by_id[c.id] = c.code;
	codes_put(t, &c);
	return c.id;
}

static inline int code_match(const struct pycode *e, const struct pycode *c)
{
	return e->qualname == c->qualname && e->filename == c->filename &&
	       e->linetable == c->linetable && e->firstlineno == c->firstlineno;
}

/* The number of a live code object (its type checked); 0 when it cannot have one. */
static __attribute__((noinline)) uint32_t code_id_slow(const struct pycode *c)
{
	const void *code = (const void *)(uintptr_t)c->code;
	const struct pycode_table *t;
	uint32_t id = 0;
	mp_lock(&codes_lock);
	t = codes;
	for (size_t i = t ? code_slot(c->code) & t->mask : 0; t && t->e[i].code; i = (i + 1) & t->mask)
		if (t->e[i].code == c->code && code_match(&t->e[i], c)) {
			id = t->e[i].id;
			goto out;
		}
	/* A code object we have not seen: check what it points to is what a code object has. */
	if (!mp_py_is((const void *)(uintptr_t)c->qualname, mp_pyl.str_type) ||
	    !mp_py_is((const void *)(uintptr_t)c->filename, mp_pyl.str_type) ||
	    !mp_py_is((const void *)(uintptr_t)c->linetable, mp_pyl.bytes_type)) {
		mp_unlock(&codes_lock);
		mp_py_give_up("Python frames are off: a code object is not laid out as memprof "
			      "expects for this version");
		return 0;
	}
	(void)code;
	id = codes_add(c);
out:
	mp_unlock(&codes_lock);
	return id;
}

static inline uint32_t code_id(const void *code)
{
	struct pycode c;
	const struct pycode_table *t = __atomic_load_n(&codes, __ATOMIC_ACQUIRE);
	c.code = (uint64_t)(uintptr_t)code;
	c.qualname = mp_py_word(code, mp_pyl.co_qualname);
	c.filename = mp_py_word(code, mp_pyl.co_filename);
	c.linetable = mp_py_word(code, mp_pyl.co_linetable);
	c.firstlineno = mp_py_u32(code, mp_pyl.co_firstlineno);
	if (likely(t != NULL)) {
		size_t mask = __atomic_load_n(&t->mask, __ATOMIC_RELAXED);
		for (size_t i = code_slot(c.code) & mask; mask; i = (i + 1) & mask) {
			uint64_t k = __atomic_load_n(&t->e[i].code, __ATOMIC_ACQUIRE);
			if (!k)
				break;
			if (k == c.code && code_match(&t->e[i], &c))
				return t->e[i].id;
		}
	}
	return code_id_slow(&c);
}

const char *mp_py_code(uint32_t id)
{
	return id && id <= ncodes ? (const char *)(uintptr_t)code_by_id[id] : NULL;
}

void mp_py_codes_lock(void)
{
	mp_lock(&codes_lock);
}

void mp_py_codes_unlock(void)
{
	mp_unlock(&codes_lock);
}

void mp_py_forked(void)
{
	codes_lock = 0;
}

/* ---- the thread's frames ---- */

/*
 * A walk's state, with the layout's offsets in locals: the walk stores into
 * the keys, which the compiler must assume could change mp_pyl.
 */
struct walk {
	long code, instr, prev, owner;
	struct mp_pykey *k;
	int n;
};

static inline void walk_init(struct walk *w, struct mp_pybuf *b)
{
	w->code = mp_pyl.fr_code;
	w->instr = mp_pyl.fr_instr;
	w->prev = mp_pyl.fr_prev;
	w->owner = mp_pyl.fr_owner;
	w->k = b->key;
	w->n = 0;
}

/* One Python frame (not a shim): its key, for resolve(), which checks its code object. */
static inline void push_frame(struct walk *w, const char *fr)
{
	struct mp_pykey *k = &w->k[w->n++];
	k->code = mp_py_word(fr, w->code);
	k->instr = mp_py_word(fr, w->instr);
}

/* One frame's term of the Python stack's hash: its ip at a position from the outermost. */
static inline void hash_term(uint64_t ip, uint64_t pos, const uint64_t outer[2], uint64_t h[2])
{
	uint64_t x = ip ^ (pos * 0x165667b19e3779f9ull), y = x * 0x9e3779b97f4a7c15ull,
		 z = x * 0xbf58476d1ce4e5b9ull;
	h[0] = outer[0] + (y ^ (y >> 29));
	h[1] = outer[1] + (z ^ (z >> 31));
}

/*
 * The walk's ips: the outermost frames that run the same code at the same
 * instruction as those of the last walk at the same depth keep their ips
 * and hashes (an ip is the code object's number and the instruction's
 * offset); the others get their code object's number and their hash. The
 * one way this can name a frame wrongly: between two allocations of the
 * thread, its code object freed and another made at the same address, run
 * at the same depth and the same instruction address; the frame then keeps
 * the first one's name and line.
 */
static void resolve(struct mp_pybuf *b)
{
	const struct mp_pykey *k = b->key;
	struct mp_pyent *e = b->ent;
	static const uint64_t zero[2];
	int n = b->n, d = 0;
	while (d < n && d < b->nent && k[n - 1 - d].instr == e[d].key.instr &&
	       k[n - 1 - d].code == e[d].key.code)
		d++;
	for (; d < n; d++) {
		const char *code = (const char *)(uintptr_t)k[n - 1 - d].code;
		/* 3.11 and 3.12 point before the next instruction, 3.13 at it: the same line either way. */
		int64_t unit = ((int64_t)k[n - 1 - d].instr - (int64_t)(uintptr_t)(code + mp_pyl.co_code)) / 2;
		/* Number 0 (not a code object, or no room for a number): shown as a bare address. */
		uint32_t id = mp_py_is(code, mp_pyl.code_type) ? code_id(code) : 0;
		e[d].key = k[n - 1 - d];
		e[d].ip = mp_pyip(id, unit < 0 ? 0 : unit > MP_PYIP_OFFSET_MAX ? MP_PYIP_OFFSET_MAX : (uint32_t)unit);
		hash_term(e[d].ip, (uint64_t)d, d ? e[d - 1].hash : zero, e[d].hash);
	}
	b->nent = n;
}

/* The ip of the walk's frame i (innermost first). */
static inline uint64_t frame_ip(const struct mp_pybuf *b, int i)
{
	return b->ent[b->n - 1 - i].ip;
}

/*
 * 3.11: the chain of _PyCFrame, one on the C stack of each C-level call of
 * the evaluation loop; each names its innermost frame, and its frames go
 * back to the one marked is_entry, whose previous frame is the next
 * _PyCFrame's innermost (the evaluation loop links them so on entry). That
 * frame ends the group without a look at is_entry, which often lies in
 * another cache line than the fields the walk reads. A chain linked any
 * other way would only put frames in the wrong group: the walk is bounded.
 */
static void walk_cframes(const char *tstate, struct mp_pybuf *b)
{
	const char *cf = (const char *)(uintptr_t)mp_py_word(tstate, mp_pyl.ts_cframe);
	long cf_frame = mp_pyl.cf_frame, cf_prev = mp_pyl.cf_prev;
	const char *fr = cf ? (const char *)(uintptr_t)mp_py_word(cf, cf_frame) : NULL;
	struct walk w;
	walk_init(&w, b);
	for (int guard = 0; cf && b->ngroups < MP_PY_MAX_GROUPS && guard < 4 * MP_PY_MAX_GROUPS; guard++) {
		const char *next = (const char *)(uintptr_t)mp_py_word(cf, cf_prev);
		const char *stop = next ? (const char *)(uintptr_t)mp_py_word(next, cf_frame) : NULL;
		struct mp_pygroup *g = &b->g[b->ngroups];
		g->anchor = (uint64_t)(uintptr_t)cf;
		g->start = w.n;
		/* The outermost call's frames end the chain (the root _PyCFrame has none). */
		for (; fr && fr != stop && w.n < MP_PY_MAX_FRAMES; fr = (const char *)(uintptr_t)mp_py_word(fr, w.prev))
			push_frame(&w, fr);
		g->len = w.n - g->start;
		if (g->len)
			b->ngroups++;
		cf = next;
		fr = stop;
	}
	b->n = w.n;
}

/*
 * 3.12 and 3.13: one chain of frames, in which each C-level call of the
 * evaluation loop put a shim frame of its own (owned by the C stack, and on
 * it) below the frames it runs.
 */
static void walk_frames(const char *fr, struct mp_pybuf *b)
{
	struct mp_pygroup *g = &b->g[0];
	struct walk w;
	walk_init(&w, b);
	g->start = 0;
	for (int guard = 0; fr && guard < 2 * MP_PY_MAX_FRAMES; guard++) {
		if (((const uint8_t *)fr)[w.owner] == MP_PY_OWNED_BY_CSTACK) {
			if (w.n > g->start) {
				g->anchor = (uint64_t)(uintptr_t)fr;
				g->len = w.n - g->start;
				if (++b->ngroups == MP_PY_MAX_GROUPS)
					break;
				g = &b->g[b->ngroups];
			}
			g->start = w.n;
		} else if (w.n < MP_PY_MAX_FRAMES) {
			push_frame(&w, fr);
		} else {
			break;
		}
		fr = (const char *)(uintptr_t)mp_py_word(fr, w.prev);
	}
	/* Frames with no shim below them belong to no C-level call we can place. */
	b->n = b->ngroups ? b->g[b->ngroups - 1].start + b->g[b->ngroups - 1].len : 0;
}

int mp_py_walk(struct mp_tstate *ts)
{
	struct mp_pybuf *b;
	const char *tstate;
	if (likely(*py_initialized)) {
		if (unlikely(!py_seen_initialized))
			py_seen_initialized = 1;
		if (unlikely(mp_py_quiet))
			mp_py_quiet = 0; /* initialized again (a program that embeds Python) */
	} else if (py_seen_initialized) {
		if (!mp_py_quiet) {
			struct mp_wring *w = mp_thread_ring();
			mp_py_quiet = 1;
			if (w)
				mp_py_message(w, 1, "the Python interpreter began to finalize: tracking "
						    "ended there");
		}
		return -1;
	} else if (!*py_runtime_initialized) {
		return 0; /* too early: the thread states' key may not exist yet */
	}
	tstate = py_this_tstate();
	/* A thread that never ran Python, or whose state is not its own. */
	if (!tstate || mp_py_word(tstate, mp_pyl.ts_thread_id) != ts->pthread)
		return 0;
	b = ts->py;
	if (unlikely(!b)) {
		b = mp_pages(sizeof(*b));
		if (!b)
			return 0;
		ts->py = b;
	}
	b->n = b->ngroups = 0;
	if (mp_pyl.ts_cframe < 0)
		walk_frames((const char *)(uintptr_t)mp_py_word(tstate, mp_pyl.ts_frame), b);
	else if (mp_pyl.fr_entry >= 0)
		walk_cframes(tstate, b);
	else
		walk_frames((const char *)(uintptr_t)mp_py_word(
				    (const void *)(uintptr_t)mp_py_word(tstate, mp_pyl.ts_cframe),
				    mp_pyl.cf_frame),
			    b);
	if (b->n) {
		resolve(b);
		/* Its threading.Thread's name: at its first Python frames, then at most once a tick. */
		if (unlikely(ts->py_name_tick != mp_stream_tick_epoch()))
			mp_py_thread_name(ts, tstate);
	}
	return b->n;
}

/* ---- placing them among the native frames ---- */

int mp_py_match(struct mp_pybuf *b, const uint64_t *sp, size_t stride, int n)
{
	int k = 0, placed = 0;
	for (int g = 0; g < b->ngroups; g++) {
		uint64_t a = b->g[g].anchor;
		b->g[g].native = -1;
		/* Frame k runs between its stack pointer and the next one's: both rise outwards. */
		while (k + 1 < n && sp[(size_t)(k + 1) * stride] <= a)
			k++;
		if (k + 1 < n && sp[(size_t)k * stride] <= a) {
			b->g[g].native = k;
			placed += b->g[g].len;
		}
	}
	return placed;
}

uint64_t mp_py_seed(const struct mp_pybuf *b)
{
	/* The frames' ips (their hash, kept from walk to walk), then each group. */
	uint64_t h = b->ent[b->n - 1].hash[0] ^ (b->ent[b->n - 1].hash[1] * 0x9e3779b97f4a7c15ull) ^
		     (uint64_t)b->n << 48;
	for (int g = 0; g < b->ngroups; g++) {
		const struct mp_pygroup *gr = &b->g[g];
		uint64_t x = (gr->anchor ^ ((uint64_t)gr->start << 48) ^ ((uint64_t)gr->len << 32)) *
			     0xbf58476d1ce4e5b9ull;
		h += x ^ (x >> 31);
	}
	return (h ^ (h >> 29)) | 1ull << 63;
}

void mp_py_hash(const struct mp_pybuf *b, int n, uint64_t h[2])
{
	/* The Python frames (kept from walk to walk), then where each group goes. */
	uint64_t h0 = h[0] + b->ent[b->n - 1].hash[0], h1 = h[1] + b->ent[b->n - 1].hash[1];
	for (int g = 0; g < b->ngroups; g++) {
		const struct mp_pygroup *gr = &b->g[g];
		/* Native frames counted from the outermost: the same wherever the innermost are. */
		uint64_t where = gr->native < 0 ? 0 : (uint64_t)(n - gr->native);
		uint64_t x = (where << 40) ^ ((uint64_t)(b->n - gr->start) << 20) ^ (uint64_t)gr->len;
		uint64_t y = x * 0xc2b2ae3d27d4eb4full, z = x * 0x94d049bb133111ebull;
		h0 += y ^ (y >> 31);
		h1 += z ^ (z >> 29);
	}
	h[0] = h0 ? h0 : 1;
	h[1] = h1;
}

int mp_py_splice(const struct mp_pybuf *b, const uint64_t *ip, size_t stride, int n, void **out, int cap)
{
	int g = 0, m = 0;
	for (int k = 0; k < n && m < cap; k++) {
		int replaced = 0;
		while (g < b->ngroups && b->g[g].native >= 0 && b->g[g].native < k)
			g++;
		while (g < b->ngroups && b->g[g].native == k) {
			const struct mp_pygroup *gr = &b->g[g++];
			for (int i = 0; i < gr->len && m < cap; i++)
				out[m++] = (void *)(uintptr_t)frame_ip(b, gr->start + i);
			replaced = 1;
		}
		if (!replaced)
			out[m++] = (void *)(uintptr_t)ip[(size_t)k * stride];
	}
	return m;
}

int mp_py_unwind(struct mp_pybuf *b, int cap)
{
	unw_context_t uc;
	unw_cursor_t c;
	int n = 0;
	if (cap > MP_PY_MAX_NATIVE)
		cap = MP_PY_MAX_NATIVE;
	if (unw_getcontext(&uc) || unw_init_local(&c, &uc))
		return 0;
	/* After a step the cursor is in the caller: its ip, and its stack pointer at the call. */
	while (n < cap && unw_step(&c) > 0) {
		unw_word_t ip, sp;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) || unw_get_reg(&c, UNW_REG_SP, &sp) || !ip)
			break;
		b->nip[n] = ip;
		b->sp[n] = sp;
		n++;
	}
	return n;
}
