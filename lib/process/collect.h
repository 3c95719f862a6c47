/*
 * The collector: receives the streams of tracked processes (a connection
 * each, which hands over the process's rings, lib/transport; a thread drains
 * the rings, lib/process/drain), symbolizes every new instruction pointer,
 * and writes one capture per process with a trailer. `memprof run` and
 * `memprof attach` drive it from their event loops.
 */
#ifndef MEMPROF_LIB_PROCESS_COLLECT_H
#define MEMPROF_LIB_PROCESS_COLLECT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

struct mp_collector;
struct mp_header;
struct mp_record;
struct mp_capture_info;

/*
 * An observer of every capture, record by record as the collector writes it:
 * the HEADER, then the tracker's records in the capture's order (events with
 * their addresses, whatever --keep-addresses says), and the STRING and SYMBOL
 * records the collector adds. For views of a running program (memprof live)
 * and aggregated captures. Records and their strings are valid only during
 * the call.
 */
struct mp_collect_observer {
	/*
	 * A capture begins (path NULL when no file is written): a context for
	 * the calls below (NULL: not observed).
	 */
	void *(*open)(void *ctx, pid_t pid, const char *path, const struct mp_record *header);
	void (*record)(void *sctx, const struct mp_record *rec);
	/* The capture is complete (info->failed: its file could not be written). */
	void (*close)(void *sctx, const struct mp_capture_info *info);
	void *ctx;
	/*
	 * Optional (NULL): the stream ended (the process is gone, replaced
	 * itself, or stopped tracking) and every record of it has been seen;
	 * close comes later, with the capture complete. A live view learns here
	 * that its process ended.
	 */
	void (*ended)(void *sctx);
};

/*
 * A capture's file, its name and its descriptor together (collect-paths.c),
 * created before the program it is of runs, so that it fails first.
 */
struct mp_capture_file {
	char *path;              /* NULL: none */
	int fd;                  /* -1: not open (or handed to the collector) */
	bool made;               /* created here, empty: removed when nothing is written into it */
};
#define MP_CAPTURE_FILE_INIT { NULL, -1, false }
/* The capture of process pid running prog, as its name goes by default: memprof-<base>.<pid>.bin. */
char *mp_capture_default_name(const char *prog, pid_t pid);
/*
 * Create the capture at path into f (a new file, or an existing one emptied
 * when force), without blocking: 0; 1 when path is a FIFO that no process
 * reads yet (mp_capture_file_wait() waits for one); -1 with one line in err
 * ("'PATH' exists (use -f to overwrite it)", "cannot create 'PATH': ...").
 * An output that may keep memprof waiting (a FIFO, a device) stays
 * non-blocking: the writer waits for it, as long as no stop is asked
 * (mp_collect_opts.cancel_fd).
 */
int mp_capture_file_create(struct mp_capture_file *f, const char *path, bool force,
			   struct strbuf *err);
/*
 * Wait for a process to open the FIFO f's create found unread, giving up
 * when cancel_fd (or -1) is readable: 0, or -1 with err.
 */
int mp_capture_file_wait(struct mp_capture_file *f, int cancel_fd, struct strbuf *err);
/* path from the root (a new string): as it is when absolute, else below the working directory. */
char *mp_collect_whole_path(const char *path);
/* Close f (if still open) and forget it; remove the file too when it was made and stayed empty. */
void mp_capture_file_release(struct mp_capture_file *f, bool remove);

struct mp_collect_opts {
	/*
	 * Capture of the main process, created already; others get .<pid>.
	 * The collector takes its descriptor (capture->fd becomes -1). NULL: no
	 * capture is written (the observer sees every stream: memprof live).
	 */
	struct mp_capture_file *capture;
	bool force;              /* overwrite existing files */
	/*
	 * Readable when the session is asked to stop (or -1): a capture's
	 * output that takes nothing then (a FIFO nobody reads) is given up.
	 */
	int cancel_fd;
	bool symbolize;          /* write SYMBOL records */
	pid_t main_pid;          /* the process whose stream is the main capture */
	const char *root;        /* prefix for module paths (containers), or NULL */
	bool keep_addresses;     /* heap blocks by address, not by serial number */
	const struct mp_collect_observer *observer; /* or NULL */
	/*
	 * Aggregated captures (memprof run --aggregate): totals per stack, thread
	 * and kind from an analysis of the events, which are not written. A
	 * tracker may ask for it for one capture (memprof ctl PID start --aggregate).
	 */
	bool aggregate;
};

/* What happened to a stream, for the caller's messages. */
struct mp_capture_info {
	char *path;
	pid_t pid;
	bool main;
	unsigned capture;        /* of the main process: 1, then 2, 3... (memprof ctl start); 0 */
	uint64_t allocs, frees, bytes, records, traces, symbols, threads;
	uint64_t lost;           /* events the tracker counted but could not record (LOST records) */
	uint64_t libunwind;      /* stacks the tracker walked with libunwind (UNWIND records) */
	uint64_t file_bytes;
	bool exec_replaced;      /* the process replaced itself (exec) */
	char command[64];        /* its command, short ("cc1", "python3 mp.py"; memprof(1)) */
	bool failed;             /* the file could not be written: see the warnings */
};

/*
 * A collector; NULL with errno set when it cannot be set up, and *what
 * naming what could not be made ("an epoll set (epoll_create1)").
 */
struct mp_collector *mp_collector_new(const struct mp_collect_opts *opts, const char **what);
void mp_collector_free(struct mp_collector *c);

/* Take ownership of a connected stream. */
void mp_collector_add(struct mp_collector *c, int fd);
/*
 * The socket tracked processes connect to: "stream" in a new private
 * directory base/NAME-XXXXXX, written to dir and path. When uid is not
 * ours (memprof as root attaching to another user's process), the
 * directory and socket are given to uid:gid so that process may connect.
 * Returns the listening socket, or -1 with a one-line message in err.
 */
int mp_collector_socket(const char *base, const char *name, uid_t uid, gid_t gid, char *dir,
			size_t dirlen, char *path, size_t pathlen, struct strbuf *err);
/* Take ownership of the listening socket tracked processes connect to. */
void mp_collector_listen(struct mp_collector *c, int fd);
/* How many streams have connected so far. */
size_t mp_collector_streams(struct mp_collector *c);
/*
 * Ask every open stream's tracker to stop (memprof attach's detach): one
 * byte on each connection; the trackers restore the programs and close.
 */
void mp_collector_detach(struct mp_collector *c);
/*
 * Poll set: mp_collector_pollfds() appends the listening socket (when given),
 * the drains' notification and each open stream's socket and process at
 * fds[0..max) and returns how many; after poll(), mp_collector_service()
 * accepts, reads and ends what is ready. Returns the number of streams still
 * open. A stream ends when its socket closes (exit, exec, detach) or its
 * process is gone.
 */
size_t mp_collector_pollfds(struct mp_collector *c, struct pollfd *fds, size_t max);
size_t mp_collector_service(struct mp_collector *c, const struct pollfd *fds, size_t n);
size_t mp_collector_open_streams(struct mp_collector *c);

/* The main process ended with this wait status (from waitpid). */
void mp_collector_main_exited(struct mp_collector *c, int wait_status);
/*
 * Whether the collector collected the exit of the main process (its child)
 * while it had it stopped to wake its control thread (collect-wake.c): then
 * true once, with its wait status, which no waitpid() returns again.
 */
bool mp_collector_take_reaped(struct mp_collector *c, int *status);
/*
 * Finish: close every stream (reading what is already there), write the
 * trailers, close the files. Returns the number of captures written; infos
 * are valid until mp_collector_free().
 */
size_t mp_collector_finish(struct mp_collector *c, const struct mp_capture_info **infos);
/* What the user should hear of (snapshots written), one line each. */
size_t mp_collector_notes(struct mp_collector *c, const char ***lines);
/* Warnings gathered so far (files that cannot be read or written), one line each. */
size_t mp_collector_warnings(struct mp_collector *c, const char ***lines);
/*
 * The modules of every process that have no debug information, what that
 * costs and how to get it, in one line (mp_symbols_hint()'s), or NULL:
 * information, not a problem, so callers print it as a note. Free it.
 */
char *mp_collector_symbols_hint(struct mp_collector *c);

#endif
