/*
 * A stream's capture file: opened when its header comes, its snapshots
 * (memprof ctl PID snapshot) and its trailer; and what the tracker is told
 * of them (lib/transport/reply.h), which memprof ctl waits for.
 */
#include <config.h>
#include "lib/process/collect-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/format/writer.h"
#include "lib/symbols/symbols.h"
#include "lib/transport/reply.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

/* Past this much unread, a tracker is not reading (nobody waits): a new reply is dropped whole. */
#define REPLY_BACKLOG_MAX (64u << 10)

void mp_collect_flush_replies(struct stream *s)
{
	size_t done = 0;
	while (done < s->replies.len && !s->eof && s->fd >= 0) {
		ssize_t k = send(s->fd, s->replies.buf + done, s->replies.len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k <= 0)
			break;
		done += (size_t)k;
	}
	memmove(s->replies.buf, s->replies.buf + done, s->replies.len - done);
	strbuf_setlen(&s->replies, s->replies.len - done);
}

/*
 * Tell s's tracker (lib/transport/reply.h): memprof ctl may wait for it.
 * Replies go whole, in order: what the socket does not take now waits (the
 * collector sends it when the socket has room).
 */
static void reply(struct stream *s, uint8_t kind, uint64_t number, const char *text)
{
	uint8_t buf[MP_REPLY_HEAD + MP_REPLY_TEXT_MAX];
	size_t n = mp_reply(buf, kind, (uint32_t)number, text);
	if (s->eof || s->fd < 0 || s->replies.len + n > REPLY_BACKLOG_MAX)
		return;
	strbuf_add(&s->replies, buf, n);
	mp_collect_flush_replies(s);
}

/* An id of this collector's captures: its family (memprof-capture(5), header key 18). */
static uint64_t family_id(struct mp_collector *c)
{
	if (!c->family) {
		struct timespec ts;
		uint64_t id = 0;
		if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			id = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
			     ((uint64_t)getpid() << 40);
		}
		c->family = id ? id : 1;
	}
	return c->family;
}

/* The file name of the capture of the process s was forked from, or NULL. */
static const char *parent_capture(const struct mp_collector *c, const struct stream *s)
{
	const char *name = NULL;
	uint64_t parent = s->dec.header.forked_from;
	if (!parent)
		return NULL;
	/* Its latest capture (a pid may have had several: exec, or a reused pid). */
	for (size_t i = 0; i < c->nstreams; i++) {
		const struct stream *p = c->streams[i];
		if (p != s && p->info.path && p->have_header && p->dec.header.pid == parent) {
			const char *slash = strrchr(p->info.path, '/');
			name = slash ? slash + 1 : p->info.path;
		}
	}
	return name;
}

static void emit_raw(void *ctx, const uint8_t *rec, size_t len)
{
	mp_writer_raw(ctx, rec, len);
}

void mp_collect_end_capture(struct mp_collector *c, struct stream *s)
{
	struct mp_trailer t = { 0 };
	struct stat st;
	if (s->sym)
		mp_collect_retry_pending(c, s);
	if (s->agg) {
		mp_analysis_finish(s->agg);
		mp_aggregate_emit(s->agg, emit_raw, &s->w);
	}
	mp_collect_fill_trailer(c, s, &t, true);
	mp_writer_trailer(&s->w, &t);
	if (mp_writer_close(&s->w) < 0) {
		if (errno == ECANCELED)
			mp_collect_warn(c, "gave up writing '%s', which took no more data when memprof "
					"was told to stop; the capture is incomplete", s->info.path);
		else
			mp_collect_warn(c, "cannot write '%s': %s; the capture is incomplete",
					s->info.path ? s->info.path : "/dev/null", strerror(errno));
		s->info.failed = true;
	}
	s->w_open = false;
	if (s->info.path && stat(s->info.path, &st) == 0)
		s->info.file_bytes = (uint64_t)st.st_size;
	if (s->fd >= 0 && s->info.path && !s->info.failed)
		mp_collect_tell_finished(s);
	if (s->obs) {
		c->opts.observer->close(s->obs, &s->info);
		s->obs = NULL;
	}
}

size_t mp_collect_events(struct stream *s, size_t pos, size_t len)
{
	struct mp_writer_fed fed = { 0 };
	size_t took = mp_writer_events(&s->w, &s->dec, s->in + pos, len, &fed);
	s->info.records += fed.records;
	s->info.allocs += fed.allocs;
	s->info.frees += fed.frees;
	s->info.bytes += fed.bytes;
	return took;
}

void mp_collect_tell_finished(struct stream *s)
{
	uint8_t buf[MP_REPLY_HEAD + MP_REPLY_TEXT_MAX];
	char *full = mp_collect_whole_path(s->info.path);
	size_t n = mp_reply(buf, MP_REPLY_CAPTURE_DONE, s->info.capture, full);
	/* After what waits, if it can go now; the stream has ended, so nothing else will. */
	mp_collect_flush_replies(s);
	if (!s->replies.len && send(s->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* The tracker gave up waiting, or never waited: nothing to tell. */
	}
	free(full);
}

bool mp_collect_start_capture(struct mp_collector *c, struct stream *s)
{
	struct mp_header h = s->dec.header;
	struct mp_symbols_opts so = { .root = c->opts.root, .demangle = true };
	/* Heap blocks by serial number: the capture needs no addresses but the mappings'. */
	unsigned flags = (c->opts.force ? MP_WRITER_FORCE : 0) |
			 (c->opts.keep_addresses ? 0 : MP_WRITER_SERIALS);
	char *full, *why;
	int e;
	/* (Not the header's when the process runs in another pid namespace: memprof attach into one.) */
	s->pid = s->peer_pid > 0 ? s->peer_pid : (pid_t)h.pid;
	if (!c->main_claimed && s->pid == c->opts.main_pid) {
		s->main = true;
		c->main_claimed = true;
		c->main_captures = 1;
		s->info.capture = 1;
	}
	s->info.pid = s->pid;
	s->info.main = s->main;
	{
		struct strbuf name = STRBUF_INIT;
		mp_process_command_name(h.argv, h.argc, h.exe, &name);
		snprintf(s->info.command, sizeof(s->info.command), "%s", name.buf);
		strbuf_release(&name);
	}
	if (!c->output) {
		/* No capture: the records go through the writer, as ever, to nowhere. */
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || mp_writer_fdopen(&s->w, fd, "/dev/null", MP_WRITER_NO_COMPRESS) < 0) {
			if (fd >= 0)
				close(fd);
			mp_collect_warn(c, "cannot open '/dev/null': %s; process %d is not shown",
					strerror(errno), (int)s->pid);
			s->info.failed = true;
			return false;
		}
		goto opened;
	}
	s->info.path = mp_collect_path(c, s);
	if (s->main && c->output_fd >= 0) {
		if (mp_writer_fdopen(&s->w, c->output_fd, s->info.path, flags) < 0)
			goto fail;
		c->output_fd = -1;
	} else if (mp_writer_open(&s->w, s->info.path, flags) < 0) {
		goto fail;
	}
	full = mp_collect_whole_path(s->info.path);
	reply(s, MP_REPLY_CAPTURE_OK, s->info.capture, full);
	free(full);
opened:
	s->w_open = true;
	s->w.cancel_fd = c->opts.cancel_fd;
	if (c->opts.symbolize)
		h.flags |= MP_HF_SYMBOLIZED;
	/* Its family: the captures of this run, and the one of its parent. */
	h.family = family_id(c);
	h.parent_capture = (char *)parent_capture(c, s);
	if (c->opts.aggregate || (h.flags & MP_HF_AGGREGATED)) {
		/* The analysis reads the events as a capture without the flag would hold them. */
		struct mp_analysis_opts ao = MP_ANALYSIS_OPTS_INIT;
		struct mp_header plain = h;
		ao.flags = MP_ANALYSIS_SPLIT_THREADS;
		plain.flags &= ~(uint64_t)MP_HF_AGGREGATED;
		s->agg = xmalloc(sizeof(*s->agg));
		mp_analysis_init(s->agg, &ao);
		mp_analysis_header(s->agg, &plain);
		h.flags |= MP_HF_AGGREGATED;
	}
	mp_writer_header(&s->w, &h);
	if (c->opts.symbolize) {
		if (!c->shared)
			c->shared = mp_symbols_new(&so);
		so.share_with = c->shared;
		s->sym = mp_symbols_new(&so);
	}
	if (c->opts.observer) {
		struct mp_record rec = { .type = MP_REC_HEADER };
		rec.u.header = &h;
		s->obs = c->opts.observer->open(c->opts.observer->ctx, s->pid, s->info.path, &rec);
	}
	return true;
fail:
	e = errno;
	mp_collect_warn(c, "cannot create '%s': %s%s; the capture of process %d is lost", s->info.path,
	     strerror(e), e == EEXIST ? " (use -f to overwrite)" : "", (int)s->pid);
	full = mp_collect_whole_path(s->info.path);
	why = xasprintf("cannot create '%s': %s%s", full, strerror(e), e == EEXIST ? " (use -f to overwrite)" : "");
	reply(s, MP_REPLY_CAPTURE_FAILED, s->info.capture, why);
	free(why);
	free(full);
	s->info.failed = true;
	return false;
}

static void emit_buf(void *ctx, const uint8_t *rec, size_t len)
{
	strbuf_add(ctx, rec, len);
}

void mp_collect_snapshot(struct mp_collector *c, struct stream *s, uint64_t number)
{
	struct mp_trailer t = { 0 };
	struct strbuf extra = STRBUF_INIT;
	char *path, *full;
	if (!s->info.path) {
		mp_collect_note(c, "snapshot %llu of process %d not written: no capture is being written",
				(unsigned long long)number, (int)s->pid);
		reply(s, MP_REPLY_SNAP_FAILED, number, "no capture is being written");
		return;
	}
	path = xasprintf("%s.snap.%llu", s->info.path, (unsigned long long)number);
	mp_collect_fill_trailer(c, s, &t, false);
	t.end_reason = MP_END_SNAPSHOT;
	t.has_exit_code = t.has_exit_signal = false;
	t.core_dumped = 0;
	/* An aggregated capture's snapshot: the totals so far. */
	if (s->agg)
		mp_aggregate_emit(s->agg, emit_buf, &extra);
	/* The asker's working directory is not ours: it is told the whole path. */
	full = mp_collect_whole_path(path);
	if (mp_writer_snapshot(&s->w, path, (const uint8_t *)extra.buf, extra.len, &t) < 0) {
		char *why = xasprintf("'%s': %s", full, strerror(errno));
		mp_collect_warn(c, "cannot write the snapshot '%s': %s", path, strerror(errno));
		reply(s, MP_REPLY_SNAP_FAILED, number, why);
		free(why);
	} else {
		mp_collect_note(c, "wrote snapshot '%s'", path);
		reply(s, MP_REPLY_SNAP_OK, number, full);
	}
	free(full);
	free(path);
	strbuf_release(&extra);
}

/* Whether a stream of s's process began after s (the program it exec'd, tracked). */
static bool later_stream(const struct mp_collector *c, const struct stream *s)
{
	bool after = false;
	for (size_t i = 0; i < c->nstreams; i++) {
		if (c->streams[i] == s)
			after = true;
		else if (after && c->streams[i]->pid == s->pid)
			return true;
	}
	return false;
}

void mp_collect_fill_trailer(struct mp_collector *c, struct stream *s, struct mp_trailer *t_, bool final)
{
	struct mp_trailer t = { 0 };
	struct timeval tv;
	gettimeofday(&tv, NULL);
	t.end_time_us = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	/*
	 * A tracker that saw its end (exit, exec, stop) wrote its time there, in
	 * its last tick: the capture ends then, not when the collector got to it.
	 */
	if (final && (s->exit_seen || s->execd || s->detach_seen) && s->dec.time_us &&
	    s->dec.header.start_time_us + s->dec.time_us < t.end_time_us)
		t.end_time_us = s->dec.header.start_time_us + s->dec.time_us;
	if (t.end_time_us > s->dec.header.start_time_us)
		t.duration_us = t.end_time_us - s->dec.header.start_time_us;
	/* The process memprof run started: its first capture, or a later one (memprof ctl start). */
	bool main = s->main || (s->pid == c->opts.main_pid && (s->dec.header.flags & MP_HF_RESTARTED));
	/* A capture the tracker ended (detach, memprof ctl stop) ended there, whatever came later. */
	if (s->detach_seen || (c->detaching && !s->exit_seen && !(main && c->main_exited))) {
		t.end_reason = MP_END_DETACH;
	} else if (main && c->main_exited) {
		t.end_reason = MP_END_EXIT;
		if (WIFEXITED(c->main_status)) {
			t.has_exit_code = true;
			t.exit_code = WEXITSTATUS(c->main_status);
			/* It became another program, which no stream of its pid came from. */
			if (final)
				s->info.exec_replaced = (s->exec_known ? s->execd : !s->exit_seen) &&
							!s->broken && !later_stream(c, s);
		} else if (WIFSIGNALED(c->main_status)) {
			t.has_exit_signal = true;
			t.exit_signal = WTERMSIG(c->main_status);
			t.core_dumped = WCOREDUMP(c->main_status) ? 1 : 0;
		}
	} else if (s->exit_seen) {
		/* The process exited (the status is known when it called exit() itself). */
		t.end_reason = MP_END_EXIT;
		t.has_exit_code = s->exit_status_known;
		t.exit_code = s->exit_status & 0xff;
	} else if (s->exec_known && s->execd) {
		/* It went on as another program: no exit status of its own (the next capture's, if tracked). */
		t.end_reason = MP_END_EXEC;
	} else {
		t.end_reason = MP_END_DISCONNECT;
	}
	t.n_allocs = s->info.allocs;
	t.n_frees = s->info.frees;
	t.bytes_allocated = s->info.bytes;
	t.n_traces = s->info.traces;
	t.n_symbols = s->info.symbols;
	t.n_lost = s->info.lost;
	t.n_libunwind = s->info.libunwind;
	t.n_records = s->info.records + s->w.n_records + 2;
	*t_ = t;
}
