/*
 * memprof.h: start, stop and snapshot memprof captures from inside a
 * program (man 3 memprof). Link with the tracker (pkg-config memprof), or
 * load it at run time with dlopen() and look the functions up with dlsym();
 * a program the tracker was preloaded into (LD_PRELOAD, memprof run
 * --paused) finds them there too. No ptrace, no environment needed.
 *
 * Every function returns 0 (memprof_is_recording: 1 or 0), or -1 with errno
 * set; none prints anything. They may be called from any thread.
 */
#ifndef MEMPROF_H
#define MEMPROF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMPROF_API_VERSION 1

/*
 * What a capture records. Zero means the default in every field, so
 * MEMPROF_OPTIONS_INIT (or a NULL pointer) gives the defaults; set size to
 * sizeof(struct memprof_options) in any other case: later versions add
 * fields at the end, and the tracker reads only the ones the caller knew.
 */
struct memprof_options {
	size_t size;                  /* sizeof(struct memprof_options) */
	unsigned memory_interval_ms;  /* time and RSS sampled every N ms, 1 to 3600000 (0: 10) */
	unsigned max_depth;           /* frames kept per stack, 1 to 1024 (0: 128) */
	int follow_fork;              /* forked children tracked too, each into PATH.<pid> */
	int no_python_frames;         /* in CPython: keep the interpreter's frames, not Python's */
	int trace_python_allocators;  /* in CPython: each object of the object and memory
					 domains recorded on its own, not pymalloc's arenas */
	int aggregate;                /* totals per stack, not every event (memprof run
					 --aggregate's), the collector's or ours */
	int overwrite;                /* replace an existing file at path */
	/*
	 * Sampled tracking (memprof-run(1)): one allocation recorded per
	 * sampling_interval bytes allocated on average, at most 1 GiB, and the
	 * reports estimate the rest (0: every allocation; 524288 for services).
	 * (Added after the fields above: a caller built with an older
	 * memprof.h passes a smaller size, and gets every allocation.)
	 */
	unsigned sampling_interval;
};
#define MEMPROF_OPTIONS_INIT { sizeof(struct memprof_options), 0, 0, 0, 0, 0, 0, 0, 0 }

/*
 * Start a capture into the file path (made relative to the current
 * directory now), with opts (NULL: the defaults). path NULL: where the
 * tracker's configuration says (MEMPROF_OUTPUT, or the collector of memprof
 * run --paused), else /tmp/memprof-UID/PROGRAM.PID.N.bin. Only the
 * allocations made from the moment it returns are recorded; a block
 * allocated before and freed while recording counts as freed "since
 * attach", never as negative memory. Errors: EBUSY (a capture is recording,
 * started by any means, or another thread is starting one), EEXIST (path
 * exists and opts->overwrite is 0), EINVAL (an option out of its bounds),
 * E2BIG (opts from a newer memprof.h asks for something this tracker does
 * not know), ENOTSUP (trace_python_allocators without a CPython
 * interpreter in the process; aggregate with sampling in a capture the
 * tracker writes itself), EPERM
 * (trace_python_allocators from a thread that does not hold the GIL), and
 * those of open(2).
 */
int memprof_start(const char *path, const struct memprof_options *opts);

/*
 * Stop the capture, whoever started it (but memprof attach, whose capture
 * memprof detach ends): returns once the file is complete, its trailer
 * written. Errors: ENOENT (nothing is recording), EPERM (memprof attach's
 * capture), EIO (the capture had stopped by itself: the disk filled up, or
 * the program closed its file).
 */
int memprof_stop(void);

/*
 * Write what the capture holds so far into a complete capture at path
 * (NULL: the capture's path with .snap.N), while recording goes on.
 * Errors: ENOENT (nothing is recording), EEXIST (path exists and the
 * capture was not started with overwrite), and those of open(2).
 */
int memprof_snapshot(const char *path);

/* What the tracker is doing. */
enum memprof_by {
	MEMPROF_BY_NONE = 0,      /* nothing recording */
	MEMPROF_BY_API = 1,       /* memprof_start() */
	MEMPROF_BY_CONTROL = 2,   /* memprof ctl or memprof serve, or the environment at start-up */
	MEMPROF_BY_ATTACH = 3,    /* memprof attach */
	MEMPROF_BY_LIVE = 4       /* memprof live (streams, writes no capture) */
};
struct memprof_status {
	size_t size;              /* set by the caller: sizeof(struct memprof_status) */
	int recording;            /* 1 while a capture is being recorded */
	int by;                   /* enum memprof_by */
	unsigned captures;        /* captures started in this process so far */
	unsigned long long duration_us;  /* how long the current (or last) capture ran */
	char path[4096];          /* the current (or last) capture's file, "" when the
				     tracker does not know it (a collector writes it) */
};

/* Fill *st (st->size set first). Errors: EINVAL (st NULL, or its size unknown). */
int memprof_status(struct memprof_status *st);

/* 1 while a capture is being recorded, else 0. */
int memprof_is_recording(void);

#ifdef __cplusplus
}
#endif

#endif
