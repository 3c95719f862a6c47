/*
 * Python-aware stacks (python.c, pydescribe.c): when the program is CPython
 * 3.11 to 3.13, each allocation's stack gets the Python frames of the
 * allocating thread in place of the interpreter's evaluation frames, read
 * from the thread's frame chain at the moment of the allocation.
 *
 * How a Python frame finds its place among the native ones: every C-level
 * call of the evaluation loop keeps a structure on its own C stack frame (the
 * _PyCFrame of 3.11 and 3.12, the entry frame of 3.12 and 3.13), and the
 * thread's Python frames are chained through those structures. The address
 * of that structure falls inside exactly one native frame of the walk (between
 * its CFA and its caller's): that frame's instruction pointer is replaced by
 * the Python frames it was running. No symbol of the interpreter is needed,
 * so a stripped interpreter, inlined or split evaluation functions and
 * generators all work the same.
 *
 * A Python frame is a synthetic instruction pointer (lib/format/pyframe.h):
 * a number the tracker gives each code object, and the offset of the frame's
 * instruction. The first trace node of each such ip is preceded by a PYFRAME
 * record with the function, file, line and column (pydescribe.c).
 */
#ifndef MEMPROF_LIB_TRACKER_PYTHON_H
#define MEMPROF_LIB_TRACKER_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#include "lib/tracker/base.h"
#include "lib/tracker/config.h"
#include "lib/tracker/threads.h"

#define MP_PY_MAX_FRAMES MP_MAX_DEPTH_LIMIT /* Python frames kept per stack */
#define MP_PY_MAX_GROUPS 256                /* C-level calls of the evaluation loop per stack */
#define MP_PY_MAX_NATIVE (MP_MAX_DEPTH_LIMIT + MP_OWN_FRAMES + 1)

/* The Python frames one C-level call of the evaluation loop was running. */
struct mp_pygroup {
	uint64_t anchor;   /* the address on the C stack that says which native frame it is */
	int start, len;    /* its frames in ip[], innermost first */
	int native;        /* the native frame it replaces (innermost first), or -1 */
};

/* A Python frame as the walk finds it: its code object and instruction. */
struct mp_pykey {
	uint64_t code, instr;
};

/* A Python frame of the stack, by its depth from the outermost: its ip and the stack's hash to it. */
struct mp_pyent {
	struct mp_pykey key;
	uint64_t ip, hash[2];
};

/*
 * Per thread (struct mp_tstate), made on the thread's first Python event.
 * The frames are kept by depth from the outermost from one walk to the
 * next: those that run the same code at the same instruction as last time
 * keep their ip and hash untouched (a thread allocating in a loop mostly
 * changes its innermost frames), the others are written anew.
 */
struct mp_pybuf {
	int n, ngroups;            /* this walk's frames and groups */
	int nent;                  /* frames in ent[] (the last walk's) */
	struct mp_pygroup g[MP_PY_MAX_GROUPS];
	struct mp_pykey key[MP_PY_MAX_FRAMES];  /* this walk's frames, innermost first */
	struct mp_pyent ent[MP_PY_MAX_FRAMES];
	/* The libunwind walk (no frames of our walker): return addresses and stack pointers. */
	uint64_t nip[MP_PY_MAX_NATIVE], sp[MP_PY_MAX_NATIVE];
};

/* Python frames replace the interpreter's in this process's stacks. */
extern int mp_py_on MP_HIDDEN;
/*
 * The interpreter is finalizing: nothing is recorded any more, so what the
 * program held when its own code ended (after its atexit handlers) is what
 * the capture calls leaked, as in memray.
 */
extern volatile int mp_py_quiet MP_HIDDEN;

/*
 * Look for a supported interpreter in the process (once) and turn Python
 * frames on when mp_cfg.python_frames asks for them. Returns mp_py_on.
 */
int mp_py_setup(void) MP_HIDDEN;
/* A new stream: a MESSAGE record into w if Python frames were asked for and are off, saying why. */
void mp_py_stream_started(struct mp_wring *w) MP_HIDDEN;
/* A MESSAGE record (level 1 information, 2 warning) into w. */
void mp_py_message(struct mp_wring *w, unsigned level, const char *text) MP_HIDDEN;
/*
 * Before each allocation: the calling thread's Python frames into ts->py,
 * grouped by the C-level call that runs them. Returns how many (0: none,
 * the stack is native only), or -1 while the interpreter is finalizing
 * (nothing is to be recorded: mp_py_quiet is set).
 */
int mp_py_walk(struct mp_tstate *ts) MP_HIDDEN;
/*
 * Which native frame each group replaces, from the native walk's frames
 * (innermost first) whose stack pointers (the CFA of our walker's frames)
 * are sp[0], sp[stride], ... Returns the number of Python frames placed.
 */
int mp_py_match(struct mp_pybuf *b, const uint64_t *sp, size_t stride, int n) MP_HIDDEN;
/*
 * What, besides the native stack, makes the stack of an allocation with
 * Python frames (after mp_py_walk): the frames' ips and the C stack
 * addresses of the calls that run them. Never 0.
 */
uint64_t mp_py_seed(const struct mp_pybuf *b) MP_HIDDEN;
/* Mix the Python frames, and where they are placed, into the hash of n native frames. */
void mp_py_hash(const struct mp_pybuf *b, int n, uint64_t h[2]) MP_HIDDEN;
/*
 * The whole stack, innermost first, into out (at most cap entries): the
 * native return addresses ip[0], ip[stride], ... with the placed groups
 * instead of the frames they replace. Returns its length.
 */
int mp_py_splice(const struct mp_pybuf *b, const uint64_t *ip, size_t stride, int n, void **out,
		 int cap) MP_HIDDEN;
/*
 * The libunwind walk of the calling thread with stack pointers, into b->nip
 * and b->sp (at most cap frames); returns how many.
 */
int mp_py_unwind(struct mp_pybuf *b, int cap) MP_HIDDEN;

/*
 * The calling thread's Python name (pythread.c), tstate its thread state,
 * once it has Python frames: when it runs a threading.Thread and holds the
 * GIL, the Thread's name becomes the thread's if it changed since the last
 * look. Notes the tick.
 */
void mp_py_thread_name(struct mp_tstate *ts, const char *tstate) MP_HIDDEN;

/* ---- descriptions (pydescribe.c) ---- */

/*
 * Under the trace tree's lock, before the TRACE record of a node whose ip is
 * synthetic: the PYFRAME record of ip into ring w, if this stream has none
 * yet. 0, or -1 when the record could not be written.
 */
int mp_py_describe(struct mp_wring *w, uint64_t ip) MP_HIDDEN;
/* A new stream describes every ip afresh (under the tree's lock). */
void mp_py_stream_reset(void) MP_HIDDEN;
/* The code object with this number, for its description (pydescribe.c; under the codes' lock). */
const char *mp_py_code(uint32_t id) MP_HIDDEN;
void mp_py_codes_lock(void) MP_HIDDEN;
void mp_py_codes_unlock(void) MP_HIDDEN;
/* In a forked child: the codes' lock is free. */
void mp_py_forked(void) MP_HIDDEN;

/*
 * Direct mode: the STRING and SYMBOL records that stand for a PYFRAME
 * record (its payload: data, len), passed to out one by one. Each capture
 * numbers its strings afresh after mp_py_direct_reset().
 */
void mp_py_direct_symbols(const uint8_t *data, size_t len,
			  int (*out)(void *ctx, const uint8_t *p, size_t n), void *ctx) MP_HIDDEN;
void mp_py_direct_reset(void) MP_HIDDEN;

#endif
