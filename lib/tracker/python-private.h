/* Internal to lib/tracker/python: the interpreter's layout, shared by python.c and pydescribe.c. */
#ifndef MEMPROF_LIB_TRACKER_PYTHON_PRIVATE_H
#define MEMPROF_LIB_TRACKER_PYTHON_PRIVATE_H

#include <stdint.h>
#include <string.h>

#include "lib/tracker/python.h"

/*
 * Where the fields the tracker reads are, in bytes from the start of their
 * structure, for the running interpreter's minor version (-1: none).
 * 3.11 and 3.12 from their headers (the layout is fixed within a minor
 * version); 3.13 from the interpreter's own _Py_DebugOffsets.
 */
struct mp_pylayout {
	unsigned minor;
	long ts_thread_id;           /* PyThreadState: pthread_self() of its thread */
	long ts_cframe, ts_frame;    /* ->cframe (3.11, 3.12) or ->current_frame (3.13) */
	long cf_frame, cf_prev;      /* _PyCFrame: current_frame, previous */
	long fr_code, fr_prev, fr_instr, fr_entry, fr_owner; /* _PyInterpreterFrame */
	long fr_locals;              /* its localsplus: the arguments first */
	long co_filename, co_qualname, co_linetable, co_firstlineno, co_code; /* PyCodeObject */
	long ob_type;
	long str_state, str_length, str_ascii, str_compact; /* str: state bits, length, data */
	long bytes_size, bytes_data;
	const void *code_type, *str_type, *bytes_type;
};
extern struct mp_pylayout mp_pyl MP_HIDDEN;

#define MP_PY_OWNED_BY_CSTACK 3

/* A pointer-sized field; p is an object the interpreter keeps alive while we read it. */
static inline uint64_t mp_py_word(const void *p, long off)
{
	uint64_t v;
	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static inline uint32_t mp_py_u32(const void *p, long off)
{
	uint32_t v;
	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static inline int mp_py_is(const void *obj, const void *type)
{
	return obj && (const void *)(uintptr_t)mp_py_word(obj, mp_pyl.ob_type) == type;
}

/*
 * The thread state of the calling thread when it holds the GIL (in 3.11:
 * of the thread that holds it), or NULL (unexported: no Python thread names).
 */
extern void *(*mp_py_gil_tstate)(void) MP_HIDDEN;

/* Python frames off for good (the layout is not what we expected), with a word for the capture. */
void mp_py_give_up(const char *why) MP_HIDDEN;

/* The text of a str object into out (cap bytes); "?" when it is not a compact str (pydescribe.c). */
size_t mp_py_str_text(const char *s, char *out, size_t cap) MP_HIDDEN;

#endif
