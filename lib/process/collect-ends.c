/*
 * A stream's socket and rings once its process may be gone: whether a child
 * still holds the socket, and whether the process still maps its rings
 * (lib/process/collect.c decides what the stream's end is from these).
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/format/format.h"
#include "lib/process/collect-private.h"
#include "lib/process/procmaps.h"
#include "lib/util/strbuf.h"

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
