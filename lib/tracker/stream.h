/*
 * The tracker's output (stream.c): the shared mapping of per-thread rings
 * (lib/transport/ring.h) the collector reads, and the connection that hands
 * it over with the capture's header. In direct mode (direct.h) the tracker
 * reads its rings itself.
 */
#ifndef MEMPROF_LIB_TRACKER_STREAM_H
#define MEMPROF_LIB_TRACKER_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/tracker/base.h"
#include "lib/transport/ring.h"

#define MP_HEADER_CAP (160u << 10)
/* Room an event needs in a ring: length, key delta, the record, and the encoders' 8-byte slack. */
#define MP_RING_EVENT_ROOM (1 + MP_VARINT_MAX + MP_ENC_MAX_EVENT + 8)

struct mp_stream {
	int sink_fd, sink_is_socket;   /* the collector's socket, or the capture (direct mode) */
	/*
	 * The collector's pid as this process's pid namespace numbers it (the
	 * socket's peer), or 0 when it has none here: a collector outside a
	 * container's namespace, whose own pid (h->reader_pid) means nothing here.
	 */
	pid_t collector_pid;
	uint32_t gen;                  /* a new stream (attach, a followed child) is generation + 1 */
	/* The rings: the mapping, its memfd, how much of it the file holds and how much is mapped. */
	void *shm;
	struct mp_shm_header *h;
	int shm_fd;
	uint64_t shm_file;
	uint64_t shm_mapped;           /* h->size, unless mp_stream_unreserve() gave the rest back */
	int clock;                     /* enum mp_clock of the mapping */
	int solo_ok;                   /* a ring may take solo keys (ring.h: enum mp_keys) */
	int rings_lock;                /* handing out rings */
	/* Direct mode: the tracker reads its own rings (a thread with a full ring calls it). */
	void (*self_reader)(int final);
	int final;                     /* direct mode at exit: each record is merged at once */
	uint64_t start_mono_ns, last_tick_ns, start_wall_us;
	/* The collector samples this stream (ring.h's tick_ms): our samples are TICK_ATs, few. */
	int reader_ticks;
	int exit_status_known, exit_status_value;
	int statm_fd;
	unsigned mode;                 /* MP_MODE_RUN, MP_MODE_PRELOAD or MP_MODE_ATTACH */
	unsigned capture_no;           /* captures started in this process (memprof ctl start) */
	/*
	 * A live view's stream (memprof live): what goes wrong with it is told
	 * to the view, never on the program's standard error.
	 */
	int quiet;
	long page_size;
	char exe_path[4096];
};
extern struct mp_stream mp_st MP_HIDDEN;

/*
 * Give back the address space the rings reserve beyond the rings made so
 * far (2 GiB, which mlockall(MCL_CURRENT) counts against RLIMIT_MEMLOCK);
 * later rings are mapped after them as they come. 1 when something was
 * given back.
 */
int mp_stream_unreserve(void) MP_HIDDEN;

/*
 * 1 while events may be written, in a page the kernel zeroes in a forked
 * child (MADV_WIPEONFORK): a child never writes into its parent's rings,
 * whatever way it was forked and whatever runs before our fork handler.
 */
extern volatile int *mp_live MP_HIDDEN;

/* A new stream: its mapping of rings (not yet live). 0, or -1 (said on standard error). */
int mp_stream_create(void) MP_HIDDEN;
/*
 * Hand the rings to the collector at MEMPROF_SOCKET, with the preamble and
 * header. 0, or -1 (said on standard error).
 */
int mp_stream_connect(unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/* The preamble and HEADER record into buf (MP_HEADER_CAP bytes); returns their size. */
size_t mp_stream_header(uint8_t *buf, unsigned mode, unsigned flags, pid_t forked_from) MP_HIDDEN;
/* Records may be written from now on. */
void mp_stream_start(void) MP_HIDDEN;
/*
 * What the stream's reader said back on its socket (replies.c,
 * lib/transport/reply.h). Whether it asks for the end of tracking (attach's
 * collector, a live view), or the connection ended.
 */
int mp_stream_end_asked(void) MP_HIDDEN;
/* Whether the connection ended (the collector is gone). */
int mp_stream_reader_gone(void) MP_HIDDEN;
/*
 * Wait at most wait_ms for the collector's word on snapshot number: 1 when
 * it wrote it (text: its path), 0 when it could not (text: why), -1 when no
 * word came (the stream ended, or the time ran out).
 */
int mp_stream_snapshot_wait(uint32_t number, unsigned wait_ms, char *text, size_t cap) MP_HIDDEN;
/*
 * The same for the capture's file, which the collector opens when the stream
 * begins: 1 opened (text: its path), 0 not (text: why), -1 no word (yet).
 */
int mp_stream_capture_wait(unsigned wait_ms, char *text, size_t cap) MP_HIDDEN;
/*
 * The stream's last record is written: shut our side of the connection for
 * writing, which ends the stream, and wait at most wait_ms for the
 * collector to say the capture is finished: 1 (text: its path), 0 when the
 * collector closed the connection without saying so, -1 when no word came
 * in time (or there is no connection).
 */
int mp_stream_finish_wait(unsigned wait_ms, char *text, size_t cap) MP_HIDDEN;
/* Close the connection (or, in direct mode, the capture): what was said on it is forgotten. */
void mp_stream_close_sink(void) MP_HIDDEN;
/* In a forked child, before mp_stream_close(). */
void mp_stream_replies_forked(void) MP_HIDDEN;
/* Give up the stream's mapping and connection (a forked child's copy of its parent's). */
void mp_stream_close(void) MP_HIDDEN;
/* Tracking stops here, with a line on standard error (unless it had stopped already). */
void mp_stream_stop(const char *a, const char *b, const char *c) MP_HIDDEN;
/*
 * Detach: stop every thread from writing records but the one writing into
 * ring self, waiting for records in flight; self may then write the last
 * records before mp_stream_detach() closes the connection. The mapping stays
 * mapped (a thread may be about to touch it), its memory given back once
 * the collector is done.
 */
void mp_stream_quiesce(struct mp_wring *self) MP_HIDDEN;
void mp_stream_detach(void) MP_HIDDEN;

/* A ring of the current stream into w, for thread tid; 0, or -1 when none can be had. */
int mp_stream_ring(struct mp_wring *w, pid_t tid) MP_HIDDEN;
/*
 * The ring has no room for n bytes: wait for the reader (ringing its
 * doorbell). 0 when there is room, -1 when tracking stopped meanwhile or the
 * collector went away (the record is then not written).
 */
int mp_stream_wait_room(struct mp_wring *w, size_t n) MP_HIDDEN;
/*
 * The ring passed its half-full mark: ring the doorbell if the reader sleeps;
 * and when the reader asks (the header's ctl_wake), start the control socket's
 * thread through mp_stream_ctl_wake (set by control.c while it waits), which
 * mp_stream_ring() calls too for the program's second thread.
 */
void mp_stream_half_full(struct mp_wring *w) MP_HIDDEN;
extern int (*mp_stream_ctl_wake)(void) MP_HIDDEN;
/*
 * Pass the collector the control socket fd that waits to be asked (after
 * the header, on the stream's socket: ring.h's mp_send_fd()). 0, or -1
 * when there is no collector's socket or the send failed.
 */
int mp_stream_pass_control(int fd) MP_HIDDEN;
/*
 * Write one already-encoded record (TRACE, THREAD, MODULE, TICK, a marker)
 * into ring w, keyed now. 0, or -1 when it was not written.
 */
int mp_stream_put(struct mp_wring *w, const uint8_t *rec, size_t len) MP_HIDDEN;

/* Microseconds since the stream started. */
uint64_t mp_stream_since_start_us(void) MP_HIDDEN;
/* (Re)open /proc/self/statm, this process's (a forked child's is not its parent's). */
void mp_stream_open_statm(void) MP_HIDDEN;
/* The process's resident memory, from /proc/self/statm. */
uint64_t mp_stream_rss(void) MP_HIDDEN;
/* A marker record (EXIT, FORK, DETACH...) with a time and one field (none when 0), into w. */
void mp_stream_marker(struct mp_wring *w, unsigned tag, unsigned field, uint64_t value,
		      int is_signed) MP_HIDDEN;
/* A TICK record (time and RSS), into w. */
void mp_stream_tick(struct mp_wring *w) MP_HIDDEN;
/*
 * The stream's last records follow (a stop, the exit): a collector that
 * samples the process (reader_ticks) writes no sample after them.
 */
void mp_stream_ticks_end(void) MP_HIDDEN;
/* A new stream's ticks (mp_stream_create()); a forked child's (mp_stream_forked()). */
void mp_stream_ticks_begin(void) MP_HIDDEN;
void mp_stream_ticks_forked(void) MP_HIDDEN;
/*
 * What changes once a sample (a thread's name is looked at again then): the
 * time of our last one, or the collector's count of its own.
 */
static inline uint64_t mp_stream_tick_epoch(void)
{
	if (mp_st.reader_ticks && mp_st.h)
		return __atomic_load_n(&mp_st.h->tick_seq, __ATOMIC_RELAXED);
	return __atomic_load_n(&mp_st.last_tick_ns, __ATOMIC_RELAXED);
}

/* Locks held across fork (lifecycle.c), so the child finds them free. */
void mp_stream_lock_all(void) MP_HIDDEN;
void mp_stream_unlock_all(void) MP_HIDDEN;
void mp_stream_ticks_lock(void) MP_HIDDEN;
void mp_stream_ticks_unlock(void) MP_HIDDEN;
void mp_stream_forked(void) MP_HIDDEN;
/*
 * The program is about to exec (on), or its exec failed (off): the collector
 * tells an exec from an exit when the connection ends (ring.h, exec_pending).
 */
void mp_stream_exec(int on) MP_HIDDEN;
/* The forked child has its own stream (or none): the copy of its parent's connection goes. */
void mp_stream_forked_done(void) MP_HIDDEN;

#endif
