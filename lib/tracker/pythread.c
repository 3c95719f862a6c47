/*
 * Python thread names: the name of the threading.Thread a thread runs (its
 * _name attribute) becomes the thread's name in the capture, as memray shows
 * it. memray watches writes to Thread._name from Python code of its own;
 * memprof runs no Python code in the program and changes none of its
 * objects: the thread itself reads the name, with plain loads, at its first
 * allocation with Python frames and then at most once per tick (so a rename
 * shows within an interval), and only while it holds the GIL, so that no
 * other thread changes the object under it.
 *
 * The path: the thread's outermost Python frame runs Thread._bootstrap (of
 * threading.py), whose first local is the Thread; the Thread's attributes
 * are values kept with the object (3.11, 3.12: before it; 3.13: inline, after
 * its header) in the order of its class's shared keys, or a dict (combined
 * or split) once its __dict__ was made. Every object on the way is checked
 * for its type before it is read; anything unexpected leaves the name as it
 * is. The main thread, which runs no Thread._bootstrap, keeps its OS name.
 *
 * Which name wins: the last change, as with memray. A Python name is taken
 * when it differs from the last one taken (another str object); an OS name
 * (prctl(PR_SET_NAME), pthread_setname_np) when it is set.
 */
#include <config.h>

#include <string.h>

#include "lib/tracker/python-private.h"
#include "lib/tracker/stream.h"

/* PyTypeObject's tp_flags and its bits; PyHeapTypeObject's ht_cached_keys (3.11 to 3.13). */
#define TP_FLAGS 168
#define TPFLAGS_INLINE_VALUES (1ul << 2) /* 3.13 */
#define TPFLAGS_MANAGED_DICT (1ul << 4)
#define HT_CACHED_KEYS(minor) ((minor) == 11 ? 872 : 880)
/* PyDictObject's keys and values; PyDictKeysObject's fields; 3.13's PyDictValues. */
#define MA_KEYS 32
#define MA_VALUES 40
#define DK_LOG2_INDEX_BYTES 9
#define DK_KIND 10
#define DK_NENTRIES 24
#define DK_INDICES 32
#define DK_KIND_GENERAL 0
#define DICT_VALUES_VALID 3 /* 3.13: 0 once the values moved to a dict */
#define DICT_VALUES_ARRAY(minor) ((minor) >= 13 ? 8 : 0)
/* A Thread has about twenty attributes: a longer table is not one to read. */
#define MAX_ENTRIES 256

static const void *bootstrap_code; /* Thread._bootstrap's code object, once seen */

static inline const char *ptr(const void *p, long off)
{
	return (const char *)(uintptr_t)mp_py_word(p, off);
}

/* The thread's outermost Python frame (shims left out), or NULL. */
static const char *outermost_frame(const char *tstate)
{
	const char *fr, *last = NULL;
	if (mp_pyl.ts_cframe < 0) {
		fr = ptr(tstate, mp_pyl.ts_frame);
	} else {
		const char *cf = ptr(tstate, mp_pyl.ts_cframe);
		fr = cf ? ptr(cf, mp_pyl.cf_frame) : NULL;
	}
	for (int guard = 0; fr && guard < 4 * MP_PY_MAX_FRAMES; guard++) {
		if (((const uint8_t *)fr)[mp_pyl.fr_owner] != MP_PY_OWNED_BY_CSTACK)
			last = fr;
		fr = ptr(fr, mp_pyl.fr_prev);
	}
	return last;
}

/* Whether s is the str of these len ASCII bytes. */
static int str_is(const char *s, const char *text, size_t len)
{
	uint32_t state;
	if (!mp_py_is(s, mp_pyl.str_type))
		return 0;
	state = mp_py_u32(s, mp_pyl.str_state);
	/* compact and ASCII */
	return ((state >> 5) & 1) && ((state >> 6) & 1) && mp_py_word(s, mp_pyl.str_length) == len &&
	       !memcmp(s + mp_pyl.str_ascii, text, len);
}

static int is_bootstrap(const char *code)
{
	static const char suffix[] = "threading.py";
	char file[512];
	size_t n;
	if (code == __atomic_load_n(&bootstrap_code, __ATOMIC_RELAXED))
		return 1;
	if (!mp_py_is(code, mp_pyl.code_type) ||
	    !str_is(ptr(code, mp_pyl.co_qualname), "Thread._bootstrap", 17))
		return 0;
	n = mp_py_str_text(ptr(code, mp_pyl.co_filename), file, sizeof(file));
	if (n < sizeof(suffix) - 1 || memcmp(file + n - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1))
		return 0;
	__atomic_store_n(&bootstrap_code, code, __ATOMIC_RELAXED);
	return 1;
}

/*
 * The entry of key "_name" in a keys object: its index, and its value (a
 * combined table's); -1 when there is none.
 */
static long find_name_key(const char *keys, const char **value)
{
	unsigned log2_index_bytes = ((const uint8_t *)keys)[DK_LOG2_INDEX_BYTES];
	unsigned kind = ((const uint8_t *)keys)[DK_KIND];
	uint64_t n = mp_py_word(keys, DK_NENTRIES);
	size_t size = kind == DK_KIND_GENERAL ? 24 : 16, key_at = kind == DK_KIND_GENERAL ? 8 : 0;
	const char *entries;
	if (kind > 2 || log2_index_bytes > 32 || n > MAX_ENTRIES)
		return -1;
	entries = keys + DK_INDICES + ((size_t)1 << log2_index_bytes);
	for (uint64_t i = 0; i < n; i++) {
		const char *e = entries + i * size;
		if (str_is(ptr(e, (long)key_at), "_name", 5)) {
			*value = ptr(e, (long)(key_at + 8));
			return (long)i;
		}
	}
	return -1;
}

/* The value of obj's attribute _name (from its values or its dict), or NULL. */
static const char *name_attribute(const char *obj)
{
	unsigned minor = mp_pyl.minor;
	const char *type = ptr(obj, mp_pyl.ob_type), *values = NULL, *dict = NULL, *keys, *value;
	uint64_t flags = mp_py_word(type, TP_FLAGS);
	long ix;
	if (!(flags & TPFLAGS_MANAGED_DICT))
		return NULL;
	if (minor == 11) {
		values = ptr(obj, -4 * 8);
		dict = ptr(obj, -3 * 8);
	} else if (minor == 12) {
		uint64_t w = mp_py_word(obj, -3 * 8);
		if (w & 1)
			values = (const char *)(uintptr_t)(w + 1);
		else
			dict = (const char *)(uintptr_t)w;
	} else {
		if ((flags & TPFLAGS_INLINE_VALUES) && obj[16 + DICT_VALUES_VALID])
			values = obj + 16;
		else
			dict = ptr(obj, -3 * 8);
	}
	if (values) {
		keys = ptr(type, HT_CACHED_KEYS(minor));
	} else if (dict) {
		keys = ptr(dict, MA_KEYS);
		values = ptr(dict, MA_VALUES); /* a split table's, or NULL */
	} else {
		return NULL;
	}
	if (!keys || (ix = find_name_key(keys, &value)) < 0)
		return NULL;
	if (values)
		value = ptr(values, DICT_VALUES_ARRAY(minor) + ix * 8);
	return mp_py_is(value, mp_pyl.str_type) ? value : NULL;
}

void mp_py_thread_name(struct mp_tstate *ts, const char *tstate)
{
	const char *fr, *thread, *name;
	char text[MP_THREAD_NAME_MAX];
	size_t len;
	/*
	 * Holding the GIL: no other thread changes the Thread while it is read.
	 * (Without it, the next allocation looks again, not the next tick's.)
	 */
	if (!mp_py_gil_tstate || mp_py_gil_tstate() != (const void *)tstate)
		return;
	ts->py_name_tick = mp_stream_tick_epoch();
	fr = outermost_frame(tstate);
	if (!fr || !is_bootstrap(ptr(fr, mp_pyl.fr_code)))
		return;
	thread = ptr(fr, mp_pyl.fr_locals); /* self */
	if (!thread || !(name = name_attribute(thread)) || (uint64_t)(uintptr_t)name == ts->py_name_obj)
		return;
	ts->py_name_obj = (uint64_t)(uintptr_t)name;
	len = mp_py_str_text(name, text, sizeof(text) - 1);
	mp_thread_rename_self(ts, text, len);
}
