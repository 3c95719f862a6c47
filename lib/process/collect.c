/* The collector: tracked processes' streams in, symbolized captures out. */
#include <config.h>
#include "lib/process/collect.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/format/decode.h"
#include "lib/format/format.h"
#include "lib/format/writer.h"
#include "lib/process/drain.h"
#include "lib/process/procmaps.h"
#include "lib/util/hash.h"
#include "lib/symbols/symbols.h"
#include "lib/transport/reply.h"
#include "lib/transport/ring.h"
#include "lib/util/xalloc.h"

#include "lib/process/collect-private.h"

#include "lib/format/pyframe.h"

/*
 * The collector's descriptors are in one epoll set, and its loop polls that
 * one descriptor: poll(2) over two descriptors per process cost it, at each
 * wake-up, time in proportion to the processes, and the wake-ups come in
 * proportion to them too (256 idle followed processes kept 1.3 CPUs busy).
 * An event's data is a stream (its socket), a stream with its low bit set
 * (its pidfd), or one of these.
 */
#define EP_LISTEN 8
#define EP_NOTIFY 16
#define EP_LOOK 24

static int watch(struct mp_collector *c, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };
	return epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void close_open(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

struct mp_collector *mp_collector_new(const struct mp_collect_opts *opts, const char **what)
{
	struct itimerspec every = { { 0, MP_DRAIN_LOOK_MS * 1000000L }, { 0, MP_DRAIN_LOOK_MS * 1000000L } };
	struct mp_collector *c = xcalloc(1, sizeof(*c));
	c->opts = *opts;
	c->listen_fd = -1;
	c->output_fd = -1;
	c->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->epfd = c->notify_fd < 0 ? -1 : epoll_create1(EPOLL_CLOEXEC);
	c->look_fd = c->epfd < 0 ? -1 : timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	*what = c->notify_fd < 0 ? "an eventfd (eventfd2)"
		: c->epfd < 0 ? "an epoll set (epoll_create1)"
		: c->look_fd < 0 || timerfd_settime(c->look_fd, 0, &every, NULL) ? "a timer (timerfd_create)"
		: watch(c, c->notify_fd, EPOLLIN, EP_NOTIFY) || watch(c, c->look_fd, EPOLLIN, EP_LOOK)
			? "its epoll set (epoll_ctl)" : NULL;
	if (*what) {
		int err = errno;
		close_open(c->notify_fd);
		close_open(c->epfd);
		close_open(c->look_fd);
		free(c);
		errno = err;
		return NULL;
	}
	c->opts.capture = NULL;
	c->output = opts->capture ? xstrdup(opts->capture->path) : NULL;
	c->output_fd = opts->capture ? opts->capture->fd : -1;
	if (opts->capture)
		opts->capture->fd = -1; /* ours now */
	if (opts->root)
		c->opts.root = xstrdup(opts->root);
	return c;
}

static void stream_free(struct stream *s)
{
	close_open(s->fd);
	close_open(s->pidfd);
	close_open(s->ctl_fd);
	mp_collect_release_work(s);
	strbuf_release(&s->replies);
	mp_decoder_release(&s->dec);
	free(s);
}

void mp_collector_free(struct mp_collector *c)
{
	if (!c)
		return;
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	for (size_t i = 0; i < c->nstreams; i++)
		stream_free(c->streams[i]);
	free(c->streams);
	if (c->shared)
		mp_symbols_free(c->shared);
	for (size_t i = 0; i < c->ninfos; i++)
		free(c->infos[i].path);
	free(c->infos);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	free(c->warnings);
	free(c->output);
	close_open(c->output_fd);
	free((char *)c->opts.root);
	close(c->notify_fd);
	close(c->epfd);
	close(c->look_fd);
	free(c);
}

void mp_collector_add(struct mp_collector *c, int fd)
{
	struct stream *s = xcalloc(1, sizeof(*s));
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	s->fd = fd;
	s->memfd = -1;
	s->pidfd = -1;
	s->ctl_fd = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred) && cred.pid > 0) {
		s->peer_pid = cred.pid;
		s->peer_uid = cred.uid;
	}
	strbuf_init(&s->replies, 0);
	mp_decoder_init(&s->dec);
	mp_strtab_init(&s->pystrings);
	ALLOC_GROW(c->streams, c->nstreams + 1, c->streams_alloc);
	c->streams[c->nstreams++] = s;
	if (watch(c, fd, EPOLLIN, (uint64_t)(uintptr_t)s))
		mp_collect_warn(c, "cannot watch a tracker's connection: %s", strerror(errno));
	/* A tracker that connected after the detach was asked (it waited to be accepted) stops too. */
	if (c->detaching && send(fd, (const char[]){ MP_REPLY_END }, 1, MSG_NOSIGNAL) < 0)
		s->detach_failed = true;
}

void mp_collector_listen(struct mp_collector *c, int fd)
{
	c->listen_fd = fd;
	if (fd < 0)
		return;
	/* Non-blocking: each wake-up accepts every connection waiting (a fork storm's). */
	set_nonblock(fd);
	if (watch(c, fd, EPOLLIN, EP_LISTEN))
		mp_collect_warn(c, "cannot watch the collector's socket: %s", strerror(errno));
}

size_t mp_collector_streams(struct mp_collector *c)
{
	return c->nstreams;
}

void mp_collector_detach(struct mp_collector *c)
{
	c->detaching = true;
	for (size_t i = 0; i < c->nstreams; i++) {
		struct stream *s = c->streams[i];
		if (!s->eof && s->fd >= 0 && send(s->fd, (const char[]){ MP_REPLY_END }, 1, MSG_NOSIGNAL) < 0)
			s->detach_failed = true;
	}
}

size_t mp_collector_open_streams(struct mp_collector *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nstreams; i++)
		n += !c->streams[i]->eof || c->streams[i]->child_holds;
	return n;
}


/* ---- streams ---- */

/*
 * What one round of the collector's loop processes of a stream, at most (a
 * small part of what a drain's queue can hold): a busy process's backlog
 * must not keep the loop from accepting a new connection (a followed child
 * waits for that) or serving the other streams.
 */
#define ROUND_BUDGET (1u << 20)

/*
 * Decode what has arrived, pass it to the capture, symbolize new ips; stop
 * after budget bytes of records, with in_more set.
 */
static void process(struct mp_collector *c, struct stream *s, size_t budget)
{
	size_t pos = s->in_off, chunk = pos, start = pos;
	struct mp_record rec;
	ssize_t n;

	s->in_more = false;
	if (s->broken)
		goto consume_all;
	if (!s->have_preamble) {
		n = mp_decode_preamble(&s->dec, s->in, s->in_len);
		if (n == 0)
			return;
		if (n < 0)
			goto corrupt;
		pos = (size_t)n;
		s->have_preamble = true;
	}
	if (!s->have_header) {
		n = mp_decode(&s->dec, s->in + pos, s->in_len - pos, &rec);
		if (n == 0)
			goto consume;
		if (n < 0 || rec.type != MP_REC_HEADER)
			goto corrupt;
		pos += (size_t)n;
		s->have_header = true;
		if (!mp_collect_start_capture(c, s)) {
			s->broken = true;
			goto consume_all;
		}
	}
	chunk = pos;
	while (pos < s->in_len) {
		if (pos - start >= budget) {
			s->in_more = true;
			break;
		}
		/* Events straight into the capture, when nothing observes them: most of what comes. */
		if (!s->obs && !s->agg && mp_writer_events_tag(s->in[pos])) {
			size_t left = budget - (pos - start), took;
			mp_writer_raw(&s->w, s->in + chunk, pos - chunk); /* (the records before them first) */
			took = mp_collect_events(s, pos, s->in_len - pos < left ? s->in_len - pos : left);
			chunk = pos += took;
			if (took)
				continue;
		}
		n = mp_decode(&s->dec, s->in + pos, s->in_len - pos, &rec);
		if (n == 0)
			break;
		if (n < 0)
			goto corrupt;
		/*
		 * Events and what their delta state depends on (thread switches and
		 * declarations) are written anew: the capture's encoding is not the
		 * tracker's. Other records are copied as they came.
		 */
		if (rec.type == MP_REC_ALLOC || rec.type == MP_REC_FREE || rec.type == MP_REC_SWITCH ||
		    rec.type == MP_REC_THREAD || (s->agg && rec.type == MP_REC_TICK)) {
			/* (An aggregated capture has neither events nor ticks: its analysis takes them.) */
			mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
			chunk = pos + (size_t)n;
		}
		mp_collect_observe(c, s, &rec);
		switch (rec.type) {
		case MP_REC_ALLOC:
			s->info.allocs++;
			s->info.bytes += rec.u.ev.size;
			if (!s->agg)
				mp_writer_alloc(&s->w, rec.thread, rec.u.ev.kind, rec.u.ev.addr,
						rec.u.ev.size, rec.u.ev.stack);
			break;
		case MP_REC_FREE:
			s->info.frees++;
			if (s->agg)
				break;
			if (rec.u.ev.ranged)
				mp_writer_free_range(&s->w, rec.thread, rec.u.ev.kind, rec.u.ev.addr,
						     rec.u.ev.size);
			else
				mp_writer_free(&s->w, rec.thread, rec.u.ev.kind, rec.u.ev.addr);
			break;
		case MP_REC_THREAD: {
			char *name;
			s->info.threads++;
			if (s->agg)
				break; /* the aggregate records name the threads */
			name = xstrndup(rec.u.thread.name, rec.u.thread.name_len);
			mp_writer_thread(&s->w, rec.u.thread.index, rec.u.thread.tid, name);
			free(name);
			break;
		}
		case MP_REC_DETACH:
			s->detach_seen = true;
			break;
		case MP_REC_MESSAGE:
			/* The tracker's warnings (Python frames it could not give) reach the user too. */
			if ((rec.u.marker.has & MP_HAS_TEXT) && (rec.u.marker.has & MP_HAS_LEVEL) &&
			    rec.u.marker.level >= 2)
				mp_collect_warn(c, "%.*s (process %d)", (int)rec.u.marker.text_len,
						rec.u.marker.text, (int)s->pid);
			break;
		case MP_REC_SNAPSHOT:
			/* Asked for with memprof ctl: the capture so far, as one of its own. */
			mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
			chunk = pos + (size_t)n;
			mp_collect_snapshot(c, s, rec.u.marker.count);
			break;
		case MP_REC_LOST:
			s->info.lost += rec.u.marker.count;
			break;
		case MP_REC_UNWIND:
			s->info.libunwind += rec.u.marker.count;
			break;
		case MP_REC_EXIT:
			s->exit_seen = true;
			if (rec.u.marker.has & MP_HAS_STATUS) {
				s->exit_status_known = true;
				s->exit_status = (int)rec.u.marker.status;
			}
			break;
		case MP_REC_UNKNOWN:
			if (rec.u.unknown.tag != MP_TAG_PYFRAME)
				break;
			/* The tracker's description of a Python frame: a symbol like any other. */
			mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
			chunk = pos + (size_t)n;
			mp_collect_pyframe(c, s, rec.u.unknown.data, rec.u.unknown.len);
			break;
		case MP_REC_TRACE:
			s->info.traces++;
			if (s->sym && rec.u.trace.ip != MP_IP_TRUNCATED && !mp_pyip_is(rec.u.trace.ip) &&
			    mp_collect_new_ip(s, rec.u.trace.ip)) {
				mp_writer_raw(&s->w, s->in + chunk, pos + (size_t)n - chunk);
				chunk = pos + (size_t)n;
				if (!mp_collect_symbolize(c, s, rec.u.trace.ip)) {
					ALLOC_GROW(s->pending, s->npending + 1, s->pending_alloc);
					s->pending[s->npending++] = rec.u.trace.ip;
				}
			}
			break;
		case MP_REC_MODULE:
			if (s->sym) {
				char *path = xstrndup(rec.u.module.path, rec.u.module.path_len);
				mp_symbols_add_module(s->sym, rec.u.module.id, rec.u.module.base, path,
						      rec.u.module.build_id, rec.u.module.build_id_len,
						      rec.u.module.seg, rec.u.module.nseg);
				free(path); /* the record: into the capture when a symbol uses it */
				mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
				chunk = pos + (size_t)n;
				mp_collect_hold_module(s, rec.u.module.id, s->in + pos, (size_t)n);
				mp_collect_retry_pending(c, s);
			}
			break;
		case MP_REC_MODULE_UNLOAD:
			if (s->sym && !mp_collect_unload_module(s, rec.u.unload.id)) {
				mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
				chunk = pos + (size_t)n;
			}
			if (s->sym) /* (the unload of a module never written is left out too) */
				mp_symbols_remove_module(s->sym, rec.u.unload.id);
			break;
		case MP_REC_TICK:
			/* Each tick ends an interval, after which the writer may write its block. */
			if (!s->agg && rec.u.tick.at) {
				/* A TICK_AT (the drain's samples, the tracker's first and last) becomes a TICK. */
				uint8_t t[1 + 2 * MP_VARINT_MAX];
				mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
				mp_writer_raw(&s->w, t, (size_t)(mp_enc_tick(t, rec.u.tick.delta_us, rec.u.tick.rss) - t));
			} else if (!s->agg) { /* (an aggregated capture's analysis has taken the tick) */
				mp_writer_raw(&s->w, s->in + chunk, pos + (size_t)n - chunk);
			}
			chunk = pos + (size_t)n;
			mp_writer_flush(&s->w);
			break;
		default:
			break;
		}
		s->info.records++;
		pos += (size_t)n;
	}
	mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
	if (s->in_more) {
		s->in_off = pos; /* no copy of the rest: the next round starts there */
		return;
	}
consume:
	memmove(s->in, s->in + pos, s->in_len - pos); /* a record's beginning, if anything */
	s->in_len -= pos;
	s->in_off = 0;
	return;
corrupt:
	mp_collect_warn(c, "the stream of process %d is corrupt (%s); its capture ends there", (int)s->pid,
	     s->dec.err.buf);
	/* Keep the whole records that came before the damage. */
	if (s->w_open)
		mp_writer_raw(&s->w, s->in + chunk, pos - chunk);
	s->broken = true;
consume_all:
	s->in_len = 0;
	s->in_off = 0;
	s->in_more = false;
}

/*
 * What the drain merged from the rings, into the capture: budget bytes of
 * it at most (SIZE_MAX: all), the rest at the loop's next round, which a
 * wake-up of our own brings at once.
 */
static void take(struct mp_collector *c, struct stream *s, size_t budget)
{
	uint64_t one = 1;
	if (!s->drain)
		return;
	if (budget != SIZE_MAX && !s->in_more && !mp_drain_ready(s->drain))
		return; /* nothing new */
	if (s->in_more) {
		process(c, s, budget);
		if (s->in_more)
			goto more;
	}
	mp_drain_take(s->drain, &s->in, &s->in_len, &s->in_cap);
	if (s->in_len)
		process(c, s, budget);
	if (!s->in_more)
		return;
more:
	if (write(c->notify_fd, &one, sizeof(one)) < 0) {
		/* a full counter: the loop looks anyway */
	}
}

static void finish_stream(struct mp_collector *c, struct stream *s);

/*
 * The stream ended: the process is gone, replaced itself (exec), or its
 * tracker stopped (detach). Everything its rings hold goes to the capture;
 * one the tracker stopped (memprof ctl PID stop, a detach) is finished at
 * once, its trailer written: the process runs on, and the capture's time
 * is the time it recorded.
 */
static void end_stream(struct mp_collector *c, struct stream *s)
{
	if (s->eof)
		return;
	s->eof = true;
	if (s->drain) {
		mp_drain_finish(s->drain);
		take(c, s, SIZE_MAX);
		/* Its end: an exec the tracker saw begin, or an exit (glibc's daemon() leaves past our hooks). */
		s->exec_known = true;
		s->execd = !s->exit_seen && mp_drain_exec_pending(s->drain);
		if (mp_drain_broken(s->drain))
			mp_collect_warn(c, "%u ring%s of process %d were written over (by the program?); "
			     "their events from there on are lost", mp_drain_broken(s->drain),
			     mp_drain_broken(s->drain) == 1 ? "" : "s", (int)s->pid);
		if (mp_drain_late(s->drain))
			mp_collect_warn(c, "%llu events of process %d came after newer ones of other threads: their "
			     "order may be wrong", (unsigned long long)mp_drain_late(s->drain), (int)s->pid);
		if (mp_drain_stale(s->drain))
			mp_collect_warn(c, "%llu time%s a thread of process %d was held in the middle of "
			     "recording an event (by a signal handler that interrupted it and waited, or never "
			     "returned): the other threads' events were taken past it",
			     (unsigned long long)mp_drain_stale(s->drain), mp_drain_stale(s->drain) == 1 ? "" : "s",
			     (int)s->pid);
		if (mp_drain_unfenced(s->drain))
			mp_collect_warn(c, "membarrier(2) failed while reading process %d: events of its threads "
			     "may be out of order", (int)s->pid);
	}
	mp_collect_ctl_end(s);
	close_open(s->pidfd);
	s->pidfd = -1;
	if (s->obs && c->opts.observer->ended)
		c->opts.observer->ended(s->obs);
	/*
	 * (Its tracker may wait, on the socket, to hear that it is finished.)
	 * A process of the family other than the one memprof run started is
	 * finished now too: its capture ends when it did, and what making it
	 * took (rings, tables, its file's descriptor) goes, rather than piling
	 * up over a build's thousands of processes. The started one waits for
	 * its exit status, which memprof run's wait gives (mp_collector_finish()).
	 */
	if (s->detach_seen || (s->pid != c->opts.main_pid && s->have_header))
		finish_stream(c, s);
	if (mp_collect_held_by_child(s)) {
		s->child_holds = true; /* its fd stays watched: mp_collect_hold_event() */
		return;
	}
	close_open(s->fd);
	s->fd = -1;
}

/* The tracker's hello: its version and the memfd of its rings. */
static bool read_hello(struct mp_collector *c, struct stream *s)
{
	struct mp_hello_msg m;
	struct cmsghdr *cm;
	ssize_t n;
	mp_hello_msg_init(&m);
	do
		n = recvmsg(s->fd, &m.msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	cm = n > 0 ? CMSG_FIRSTHDR(&m.msg) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&s->memfd, CMSG_DATA(cm), sizeof(int));
	if (n <= 0)
		return false; /* gone before it said anything */
	if (n != (ssize_t)sizeof(m.hello) || memcmp(m.hello.magic, MP_HELLO_MAGIC, 8) ||
	    m.hello.version != MP_SHM_VERSION || s->memfd < 0) {
		mp_collect_warn(c, "process %u connected with a tracker that is not this memprof's (%s); it is "
		     "not tracked", m.hello.pid, n == (ssize_t)sizeof(m.hello) && !memcmp(m.hello.magic,
		     MP_HELLO_MAGIC, 8) ? "another version" : "no hello");
		return false;
	}
	s->have_hello = true;
	return true;
}

/* The header is in: the rings can be read, and the process watched. */
static void start_drain(struct mp_collector *c, struct stream *s)
{
	struct strbuf err = STRBUF_INIT;
	unsigned idle = s->dec.header.interval_ms && s->dec.header.interval_ms < 1000
				? (unsigned)s->dec.header.interval_ms : 100;
	if (fstat(s->memfd, &s->rings_file) < 0)
		s->rings_file.st_ino = 0; /* (no mapping has inode 0 and offset 0 of a memfd) */
	s->drain = mp_drain_start(s->memfd, c->notify_fd, idle,
				  s->pid != (pid_t)s->dec.header.pid ? s->pid : 0, s->pid, &err);
	if (!s->drain) {
		mp_collect_warn(c, "process %d: %s; its capture has no events", (int)s->pid, err.buf);
		strbuf_release(&err);
		return;
	}
	if (err.len)
		mp_collect_warn(c, "process %d: %s", (int)s->pid, err.buf);
	strbuf_release(&err);
	s->memfd = -1; /* the drain's now */
#ifdef SYS_pidfd_open
	s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (s->pidfd >= 0 && watch(c, s->pidfd, EPOLLIN, (uint64_t)(uintptr_t)s | 1)) {
		close(s->pidfd); /* its end is then seen from the socket and the rings */
		s->pidfd = -1;
	}
#endif
	strbuf_release(&err);
}

/*
 * The socket ended, but no detach was said and the process still maps its
 * rings: the program closed the tracker's descriptor (a daemon closing what
 * it inherited). Its events still come through the rings: they are read on
 * until the process is gone (its pidfd), replaces itself (a stream of the same
 * pid begins), or the tracker detaches.
 */
static bool socket_closed_by_program(struct mp_collector *c, struct stream *s)
{
	if (!s->drain || s->pidfd < 0 || s->detach_seen)
		return false;
	/* What came before, a detach or an exit among it: the drain may not have merged it yet. */
	mp_drain_sync(s->drain);
	take(c, s, SIZE_MAX);
	if (s->detach_seen)
		return false;
	if (!mp_collect_rings_mapped(s))
		return false; /* exited, or replaced itself */
	close(s->fd);
	s->fd = -1;
	s->socket_lost = true;
	mp_collect_note(c, "process %d closed memprof's socket; its events are still read from its rings",
			(int)s->pid);
	return true;
}

/* A stream begins: an older one of the same process that lost its socket has ended (exec). */
static void superseded(struct mp_collector *c, struct stream *s)
{
	for (size_t i = 0; i < c->nstreams; i++) {
		struct stream *o = c->streams[i];
		if (o != s && !o->eof && o->socket_lost && o->pid == s->pid)
			end_stream(c, o);
	}
}

/* Read once from a ready stream's socket: the hello, the header, or its end. */
static void read_stream(struct mp_collector *c, struct stream *s)
{
	uint8_t junk[4096], *dst;
	size_t room;
	ssize_t n;
	if (!s->have_hello) {
		if (!read_hello(c, s))
			end_stream(c, s);
		return;
	}
	if (s->have_header) {
		/* Nothing else comes this way but a control socket that waits (taken by mp_collect_ctl_read()). */
		dst = junk;
		room = sizeof(junk);
	} else {
		if (s->in_cap - s->in_len < READ_CHUNK) {
			s->in_cap = s->in_len + READ_CHUNK;
			s->in = xrealloc(s->in, s->in_cap);
		}
		dst = s->in + s->in_len;
		room = s->in_cap - s->in_len;
	}
	do
		n = mp_collect_ctl_read(c, s, dst, room);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		if (!s->have_header || !socket_closed_by_program(c, s))
			end_stream(c, s);
		return;
	}
	if (s->have_header)
		return;
	s->in_len += (size_t)n;
	process(c, s, SIZE_MAX);
	if (s->have_header && !s->broken) {
		superseded(c, s);
		start_drain(c, s);
	}
}

size_t mp_collector_pollfds(struct mp_collector *c, struct pollfd *fds, size_t max)
{
	/* A stream with replies waiting wants to write too. */
	for (size_t i = 0; i < c->nstreams; i++) {
		struct stream *s = c->streams[i];
		bool out = s->replies.len > 0;
		if (s->eof || s->fd < 0 || out == s->ep_out)
			continue;
		struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0),
					  .data.u64 = (uint64_t)(uintptr_t)s };
		if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, s->fd, &ev) == 0)
			s->ep_out = out;
	}
	if (!max)
		return 0;
	fds[0] = (struct pollfd){ .fd = c->epfd, .events = POLLIN };
	return 1;
}

static void serve_event(struct mp_collector *c, const struct epoll_event *ev)
{
	struct stream *s;
	if (ev->data.u64 == EP_LISTEN) {
		for (int i = 0; i < 256; i++) {
			int cfd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (cfd < 0)
				break;
			mp_collector_add(c, cfd);
		}
		return;
	}
	if (ev->data.u64 == EP_NOTIFY || ev->data.u64 == EP_LOOK) {
		uint64_t v;
		ssize_t r = read(ev->data.u64 == EP_NOTIFY ? c->notify_fd : c->look_fd, &v, sizeof(v));
		(void)r; /* reset, or already reset: every stream is looked at anyway */
		for (size_t i = 0; i < c->nstreams; i++) {
			s = c->streams[i];
			if (s->eof)
				continue;
			take(c, s, ROUND_BUDGET);
			/* Without its socket, a stream ends at its detach. */
			if (s->socket_lost && s->detach_seen)
				end_stream(c, s);
		}
		return;
	}
	s = (struct stream *)(uintptr_t)(ev->data.u64 & ~(uint64_t)3);
	if (ev->data.u64 & 2) {
		mp_collect_ctl_event(c, s);
		return;
	}
	if (s->eof) {
		if (s->child_holds && !(ev->data.u64 & 1))
			mp_collect_hold_event(s);
		return; /* ended by an earlier event of this round */
	}
	if (ev->data.u64 & 1) {
		s->gone = true;
		end_stream(c, s); /* the process is gone; a child may hold its socket (mp_collect_held_by_child()) */
		return;
	}
	if (s->fd < 0)
		return;
	if (ev->events & EPOLLOUT)
		mp_collect_flush_replies(s);
	if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		read_stream(c, s);
}

size_t mp_collector_service(struct mp_collector *c, const struct pollfd *fds, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct epoll_event evs[64];
		int m;
		if (fds[k].fd != c->epfd || !fds[k].revents)
			continue;
		do
			m = epoll_wait(c->epfd, evs, 64, 0);
		while (m < 0 && errno == EINTR);
		/* Processes gone: their drains' last rounds first, side by side. */
		for (int i = 0; i < m; i++) {
			struct stream *s = (struct stream *)(uintptr_t)(evs[i].data.u64 & ~(uint64_t)3);
			if ((evs[i].data.u64 & 1) && !s->eof && s->drain)
				mp_drain_stop(s->drain);
		}
		for (int i = 0; i < m; i++)
			serve_event(c, &evs[i]);
	}
	return mp_collector_open_streams(c);
}

void mp_collector_main_exited(struct mp_collector *c, int wait_status)
{
	c->main_exited = true;
	c->main_status = wait_status;
}

static void finish_stream(struct mp_collector *c, struct stream *s)
{
	if (s->finished)
		return;
	s->finished = true;
	/* What the socket still holds (a header), then everything the rings hold. */
	if (!s->eof && s->fd >= 0 && !s->have_header) {
		set_nonblock(s->fd);
		while (!s->eof && !s->have_header) {
			size_t before = s->in_len;
			read_stream(c, s);
			if (s->in_len == before)
				break;
		}
	}
	end_stream(c, s);
	if (s->w_open)
		mp_collect_end_capture(c, s);
	mp_collect_release_work(s);
}

/*
 * The trailer of s's capture as it stands; final: it is the capture's own, not
 * a snapshot's (which the collector may take late, after the program ended).
 */
size_t mp_collector_finish(struct mp_collector *c, const struct mp_capture_info **infos)
{
	for (size_t i = 0; i < c->nstreams; i++) {
		struct stream *s = c->streams[i];
		if (!s->finished)
			finish_stream(c, s);
	}
	if (!c->infos) {
		c->infos = xcalloc(c->nstreams + 1, sizeof(*c->infos));
		for (size_t i = 0; i < c->nstreams; i++) {
			struct stream *s = c->streams[i];
			if (!s->info.path)
				continue;
			c->infos[c->ninfos] = s->info;
			c->infos[c->ninfos].path = xstrdup(s->info.path);
			c->ninfos++;
		}
	}
	*infos = c->infos;
	return c->ninfos;
}
