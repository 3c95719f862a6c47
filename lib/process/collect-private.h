/* Internal to lib/process/collect: the collector's state, shared by collect.c (streams and
 * captures) and collect-symbols.c (symbolizing, warnings and notes). */
#ifndef MEMPROF_LIB_PROCESS_COLLECT_PRIVATE_H
#define MEMPROF_LIB_PROCESS_COLLECT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/analysis/analysis.h"
#include "lib/format/decode.h"
#include "lib/format/writer.h"
#include "lib/process/collect.h"
#include "lib/process/drain.h"
#include "lib/symbols/symbols.h"
#include "lib/util/hash.h"
#include "lib/util/strbuf.h"
#include "lib/util/strtab.h"

#define READ_CHUNK (1u << 20)

struct stream {
	int fd;                      /* the tracker's socket; -1 once the program closed it */
	int memfd;                   /* the tracker's rings, until the drain takes them */
	struct stat rings_file;      /* their device and inode, to find them in /proc/PID/maps */
	int pidfd;                   /* readable when the process is gone, or -1 */
	int ctl_fd;                  /* its waiting control socket, passed to us and watched (collect-wake.c), or -1 */
	bool ep_out;                 /* fd's epoll interest includes writing (replies wait) */
	bool socket_lost;            /* the program closed the socket: the rings are read on */
	bool gone;                   /* its pidfd said the process is gone */
	bool child_holds;            /* ended, but a followed child not set up yet holds its socket */
	bool execd, exec_known;      /* the socket ended while the process lived on: it exec'd */
	struct strbuf replies;       /* what the tracker is to be told, not sent yet (collect-capture.c) */
	struct mp_drain *drain;      /* draining the rings, once the header is in */
	bool eof, broken, finished, have_hello, have_preamble, have_header, exit_seen;
	bool exit_status_known, main, detach_failed, detach_seen;
	/*
	 * The process, as this collector numbers it: the socket's peer, which
	 * the header's pid (its own pid namespace's) differs from in a container.
	 */
	pid_t pid;
	pid_t peer_pid;              /* from the socket (SO_PEERCRED); 0 when it has none here */
	unsigned long peer_uid;      /* its effective uid then */
	int exit_status;
	uint8_t *in;
	size_t in_len, in_cap;
	size_t in_off;               /* in_more: where the records not processed yet begin */
	bool in_more;                /* whole records wait past in_off (a round's budget ran out) */
	struct mp_decoder dec;
	struct mp_writer w;
	bool w_open;
	struct mp_symbols *sym;
	size_t sym_warned;
	struct mp_intmap seen_ips;   /* ips symbolized (-> their module's id + 1) or pending (-> 0) */
	struct mp_intmap strings;    /* interned string pointer -> id in this file */
	struct mp_strtab pystrings;  /* the text of Python frames' names, interned for `strings` */
	uint64_t *pending;           /* ips no known module contained yet */
	size_t npending, pending_alloc;
	/* MODULE records, held until a SYMBOL names their module (never, for most of
	 * the modules of a program that allocates from a few): id -> index + 1 */
	struct mp_intmap module_at;
	struct held_module { uint8_t *rec; size_t len; } *held; /* rec NULL once written */
	size_t nheld, held_alloc;
	struct mp_capture_info info;
	void *obs;                   /* the observer's context, or NULL */
	struct mp_analysis *agg;     /* an aggregated capture's analysis of the events, or NULL */
};

struct mp_collector {
	struct mp_collect_opts opts;
	char *output;                /* the main capture's path (NULL: no capture) */
	int output_fd;               /* its descriptor, until the main stream takes it */
	int listen_fd;
	int notify_fd;               /* an eventfd the drains write when they queue data */
	int epfd;                    /* an epoll set of all the descriptors above and below */
	int look_fd;                 /* a timerfd: look at every drain's queue (MP_DRAIN_LOOK_MS) */
	bool detaching;
	struct stream **streams;
	size_t nstreams, streams_alloc;
	bool main_exited, main_claimed;
	unsigned main_captures;      /* captures of the main process so far (memprof ctl start) */
	int main_status;
	bool reaped;                 /* a wake (collect-wake.c) collected the main process's exit: */
	int reaped_status;           /* its status, for mp_collector_take_reaped() */
	char **notes;                /* what the user should hear of (snapshots written) */
	size_t nnotes, notes_alloc;
	struct mp_symbols *shared;   /* file cache shared by every process's symbolizer */
	uint64_t family;             /* the id every capture of this collector names (0: none yet) */
	struct mp_capture_info *infos;
	size_t ninfos;
	char **warnings;
	size_t nwarnings, warnings_alloc;
};

/* Show rec to the observer of s's capture, if any. */
static inline void mp_collect_observe(struct mp_collector *c, struct stream *s,
				      const struct mp_record *rec)
{
	if (s->agg)
		mp_analysis_record(s->agg, rec);
	if (s->obs)
		c->opts.observer->record(s->obs, rec);
}

/* Remember a warning for the end of the run (each distinct text once). */
void mp_collect_warn(struct mp_collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Remember a note for the user (snapshots written and the like). */
void mp_collect_note(struct mp_collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * collect-wake.c: the control socket of a tracker that waits to be asked.
 * Read s's socket (as read(2)), on which the tracker passes it after its
 * header (watched from then on, tagged (uintptr_t)s | 2; the byte that
 * brought it is not returned); a connection there: start its thread; forget
 * it.
 */
ssize_t mp_collect_ctl_read(struct mp_collector *c, struct stream *s, void *buf, size_t len);
void mp_collect_ctl_event(struct mp_collector *c, struct stream *s);
void mp_collect_ctl_forget(struct stream *s);
/* The stream ended: that, and the socket's file of a process that died is removed. */
void mp_collect_ctl_end(struct stream *s);

/* collect-ends.c: the process is gone (s->gone) but a followed child not set up yet holds its socket. */
bool mp_collect_held_by_child(const struct stream *s);
/* That child let the socket go (set up, exec'd or exited): the hold ends (s->child_holds). */
void mp_collect_hold_event(struct stream *s);
/* Whether process s still maps its rings (/proc/PID/maps): it neither exited nor replaced itself. */
bool mp_collect_rings_mapped(const struct stream *s);
/*
 * Let go of what s held to make its capture, once finished: its rings, input,
 * writer, symbols and tables (its header and info stay). Again: nothing.
 */
void mp_collect_release_work(struct stream *s);
/* The path of s's capture (a new string): FILE, FILE.N or FILE.PID, none taken already. */
char *mp_collect_path(struct mp_collector *c, struct stream *s);
/*
 * collect-capture.c: open s's capture when its header came (false, said,
 * when it cannot be); write snapshot number of it; its trailer as it would
 * be now (final: the capture ends).
 */
bool mp_collect_start_capture(struct mp_collector *c, struct stream *s);
/* Send what of s's replies its socket has room for now. */
void mp_collect_flush_replies(struct stream *s);
/*
 * The end of s's capture, once every record of it is in: its last symbols
 * (or an aggregated capture's totals), its trailer, the file closed, the
 * tracker and the observer told.
 */
void mp_collect_end_capture(struct mp_collector *c, struct stream *s);
/* Tell s's tracker, which ended its stream, that its capture is finished (its trailer written). */
void mp_collect_tell_finished(struct stream *s);
/*
 * The event records at s->in + pos (len bytes) written into the capture
 * (mp_writer_events()) and counted; returns the bytes taken, 0 when the first
 * is one mp_decode() must decode.
 */
size_t mp_collect_events(struct stream *s, size_t pos, size_t len);
void mp_collect_snapshot(struct mp_collector *c, struct stream *s, uint64_t number);
void mp_collect_fill_trailer(struct mp_collector *c, struct stream *s, struct mp_trailer *t, bool final);
/* Write the SYMBOL record of ip into s's capture; false when no module contains it (yet). */
bool mp_collect_symbolize(struct mp_collector *c, struct stream *s, uint64_t ip);
/*
 * Whether ip needs its SYMBOL record: never seen, or symbolized in a module
 * unloaded since (another may be loaded there now). Marks it pending.
 */
bool mp_collect_new_ip(struct stream *s, uint64_t ip);
/* Write the SYMBOL record a PYFRAME record's payload (data, len) describes into s's capture. */
void mp_collect_pyframe(struct mp_collector *c, struct stream *s, const uint8_t *data, size_t len);
/* Symbolize the ips that no module contained before, keeping those still unknown. */
void mp_collect_retry_pending(struct mp_collector *c, struct stream *s);
/* Hold the MODULE record (rec, len) of module id until a symbol uses the module. */
void mp_collect_hold_module(struct stream *s, uint64_t id, const uint8_t *rec, size_t len);
/* Module id is unloaded: false when its MODULE record was never written (nor must its unload be). */
bool mp_collect_unload_module(struct stream *s, uint64_t id);
/* Free what the held modules take. */
void mp_collect_release_modules(struct stream *s);

#endif
