/*
 * A stream's socket and rings once its process may be gone: whether a child
 * still holds the socket, and whether the process still maps its rings
 * (lib/process/collect.c decides what the stream's end is from these); and
 * what a stream whose capture is finished lets go.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/format/format.h"
#include "lib/process/collect-private.h"
#include "lib/process/procmaps.h"
#include "lib/symbols/symbols.h"
#include "lib/util/strbuf.h"
#include "lib/util/strtab.h"

/*
 * The process is gone, yet its socket is open: a child it forked holds it,
 * followed and not set up yet (it keeps its copy of the parent's connection
 * until its own stream is connected, lib/tracker/lifecycle.c). Its stream
 * may still begin, so the collector waits for that socket's end: a parent
 * that leaves at once (glibc's daemon()) must not end the run before the
 * child it left behind allocates.
 */
bool mp_collect_held_by_child(const struct stream *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLRDHUP };
	if (!s->gone || s->detach_seen || s->fd < 0 || !(s->dec.header.flags & MP_HF_FOLLOW_FORK))
		return false;
	return poll(&p, 1, 0) == 0;
}

/* The child that held an ended stream's socket let it go (set up, exec'd or exited). */
void mp_collect_hold_event(struct stream *s)
{
	char buf[256];
	ssize_t n;
	do
		n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
	while (n > 0 || (n < 0 && errno == EINTR));
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	close(s->fd);
	s->fd = -1;
	s->child_holds = false;
}

/* Whether process s still maps its rings (/proc/PID/maps): it neither exited nor replaced itself. */
bool mp_collect_rings_mapped(const struct stream *s)
{
	struct mp_procmaps m = MP_PROCMAPS_INIT;
	struct strbuf err = STRBUF_INIT;
	bool found = s->rings_file.st_ino && mp_procmaps_read(&m, s->pid, &err) == 0 &&
		     mp_procmaps_find_file(&m, s->rings_file.st_dev, s->rings_file.st_ino);
	mp_procmaps_release(&m);
	strbuf_release(&err);
	return found;
}

/*
 * What a stream holds to make its capture: its rings' mapping and memfd, its
 * input, symbols and tables. A finished capture needs none of it (what is
 * kept: the header, for its children's captures to name it, and its info,
 * for the closing lines).
 */
void mp_collect_release_work(struct stream *s)
{
	if (s->memfd >= 0)
		close(s->memfd);
	s->memfd = -1;
	mp_drain_free(s->drain);
	s->drain = NULL;
	if (s->w_open)
		mp_writer_close(&s->w);
	s->w_open = false;
	free(s->in);
	s->in = NULL;
	s->in_len = s->in_cap = s->in_off = 0;
	if (s->sym)
		mp_symbols_free(s->sym);
	s->sym = NULL;
	mp_intmap_release(&s->seen_ips);
	mp_collect_release_modules(s);
	mp_intmap_release(&s->strings);
	mp_strtab_release(&s->pystrings);
	free(s->pending);
	s->pending = NULL;
	s->npending = s->pending_alloc = 0;
	if (s->agg) {
		mp_analysis_release(s->agg);
		free(s->agg);
		s->agg = NULL;
	}
}
