/*
 * The tracker's output stream (stream.c): records are encoded into one
 * buffer under the main lock and written to the collector's socket, or to
 * the capture itself in direct mode.
 */
#ifndef MEMPROF_LIB_TRACKER_STREAM_H
#define MEMPROF_LIB_TRACKER_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/tracker/base.h"

#define MP_OUT_CAP (256u << 10)   /* stream buffer */
#define MP_HEADER_CAP (160u << 10)

struct mp_stream {
	int lock;                  /* the main lock: every field below, and every record */
	int sink_fd, sink_is_socket;
	uint8_t *out_buf;
	size_t out_len;
	uint32_t gen;              /* a followed fork child starts generation + 1 */
	uint32_t cur_thread;       /* the thread index events are in now */
	struct mp_enc_thread *threads; /* per thread index: the encoder's delta state */
	size_t threads_cap;        /* entries */
	uint64_t last_trace_ip;
	int final_mode;            /* after the exit handler: write every record at once */
	uint64_t n_allocs, n_frees, bytes_allocated, n_traces, n_records;
	uint64_t start_mono_ns, last_tick_ns, start_wall_us;
	int exit_status_known, exit_status_value;
	int statm_fd;
	unsigned mode;             /* MP_MODE_RUN, MP_MODE_PRELOAD or MP_MODE_ATTACH */
	long page_size;
	char exe_path[4096];
};
extern struct mp_stream mp_st MP_HIDDEN;

/* Write out what is buffered (under the lock). */
void mp_stream_flush_locked(void) MP_HIDDEN;

/* Room for n bytes of records at the end of the buffer (under the lock). */
static inline uint8_t *mp_room(size_t n)
{
	if (unlikely(mp_st.out_len + n > MP_OUT_CAP))
		mp_stream_flush_locked();
	return mp_st.out_buf + mp_st.out_len;
}

/* The record written at mp_room() ends at end. */
static inline void mp_commit(uint8_t *end)
{
	mp_st.out_len = (size_t)(end - mp_st.out_buf);
	mp_st.n_records++;
}

/* Run fn(arg) under the stream's lock. */
void mp_stream_locked(void (*fn)(void *), void *arg) MP_HIDDEN;
/* Append already-encoded records to the stream (takes the lock). */
void mp_stream_append(const uint8_t *rec, size_t len) MP_HIDDEN;
/*
 * Open the stream's destination as mp_cfg says (the collector's socket, or
 * the file), write preamble and header and a first tick. 0 or -1 (said on
 * standard error).
 */
int mp_stream_open(unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/* Microseconds since the stream started. */
uint64_t mp_stream_since_start_us(void) MP_HIDDEN;
/* The process's resident memory, from /proc/self/statm. */
uint64_t mp_stream_rss(void) MP_HIDDEN;
/* A marker record (EXIT, FORK, DETACH...) with a time and one field (under the lock). */
void mp_stream_marker_locked(unsigned tag, unsigned field, uint64_t value, int is_signed) MP_HIDDEN;
/* A TICK record: time and RSS (under the lock). */
void mp_stream_tick_locked(void) MP_HIDDEN;
/*
 * The process is ending: a last sample, the trailer when we write the file
 * ourselves, everything on its way, and from now on each event goes out at
 * once (under the lock).
 */
void mp_stream_finish_locked(void) MP_HIDDEN;

#endif
