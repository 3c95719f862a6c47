/*
 * The tracker's control socket, seen from the collector: the socket's file
 * that a process gone left behind is removed; and the socket of a tracker
 * that waits to be asked (lib/transport/ring.h, ctl_state) is watched. Under
 * memprof run a program of one thread keeps glibc's single-threaded paths:
 * its tracker listens on its control socket but starts the thread that
 * answers only once a request comes. The tracker passes the collector the
 * listening socket (after its header, on the stream's socket), which the
 * collector watches; when a connection waits there, it sets the header's
 * ctl_wake (a busy program starts the thread where one of its rings passes a
 * quarter) and, for a program that makes no event, calls
 * memprof_control_wake() in it with ptrace, as memprof attach calls its
 * entry: the collector is the program's ancestor, which Yama's ptrace_scope
 * 1 allows. What the program's request costs it: one stop of a few
 * milliseconds, once in its life.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/process/collect-private.h"
#include "lib/process/ctlsock.h"
#include "lib/process/inject.h"
#include "lib/process/procmaps.h"
#include "lib/transport/ring.h"

/* How long a busy program is given to start its thread itself before it is stopped to. */
#define WAKE_GRACE_MS 20
/* The whole call in the program, its stop at a safe point included. */
#define WAKE_TIMEOUT_MS 3000

static struct mp_shm_header *header(const struct stream *s)
{
	return s->drain ? mp_drain_header(s->drain) : NULL;
}

/* Whether fd is a listening socket of the local domain. */
static bool is_listening_unix(int fd)
{
	int v = 0, dom = 0;
	socklen_t l = sizeof(v), ld = sizeof(dom);
	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) == 0 && v &&
	       getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &ld) == 0 && dom == AF_UNIX;
}

/*
 * The control socket passed (with the header's last bytes, perhaps, before
 * the drain maps the rings): watched, tagged (uintptr_t)s | 2.
 */
static void take_socket(struct mp_collector *c, struct stream *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)(uintptr_t)s | 2 };
	struct mp_shm_header *h = header(s);
	if (s->ctl_fd >= 0 || !is_listening_unix(fd) || epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		/* (Not watched, epoll's limit reached: the program starts the thread at its next events.) */
		if (h && s->ctl_fd < 0)
			__atomic_store_n(&h->ctl_wake, 1, __ATOMIC_RELAXED);
		return;
	}
	s->ctl_fd = fd;
}

ssize_t mp_collect_ctl_read(struct mp_collector *c, struct stream *s, void *buf, size_t len)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} u;
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(s->fd, &msg, MSG_CMSG_CLOEXEC);
	bool took = false;
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			/*
			 * The kernel ends a read with the byte that brought descriptors:
			 * the last byte read, MP_CTL_FD_BYTE, is not the stream's.
			 */
			if (!took && k == 1 && ((const char *)buf)[n - 1] == MP_CTL_FD_BYTE) {
				took = true;
				take_socket(c, s, fd);
			} else {
				close(fd);
			}
		}
	}
	if (took && --n == 0) {
		errno = EAGAIN; /* (nothing else yet: not the end) */
		return -1;
	}
	return n;
}

void mp_collect_ctl_forget(struct stream *s)
{
	if (s->ctl_fd >= 0)
		close(s->ctl_fd); /* (out of the epoll set with it) */
	s->ctl_fd = -1;
}

/* Whether the tracker of s runs its thread, waiting up to ms for it to. */
static bool running_within(struct mp_shm_header *h, unsigned ms)
{
	struct timespec step = { 0, 1000 * 1000 };
	for (unsigned i = 0;; i++) {
		if (__atomic_load_n(&h->ctl_state, __ATOMIC_ACQUIRE) != MP_CTL_LAZY)
			return true;
		if (i == ms)
			return false;
		nanosleep(&step, NULL);
	}
}

/* Call memprof_control_wake() in process s; 0, or -1 with the reason in err. */
static int wake_remote(struct mp_collector *c, struct stream *s, struct strbuf *err)
{
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	const struct mp_procmaps_entry *lib;
	struct mp_inject_opts o = { 0 };
	int reaped = -1, rc = -1;
	long result = -1;
	if (mp_procmaps_read(&maps, s->pid, err) < 0)
		return -1;
	lib = mp_procmaps_tracker(&maps);
	if (!lib) {
		strbuf_addstr(err, "its libmemprof.so is not in its maps");
		goto out;
	}
	o.pid = s->pid;
	o.library = lib->path;
	o.entry = "memprof_control_wake";
	o.arg = "";
	o.timeout_ms = WAKE_TIMEOUT_MS;
	o.method = MP_INJECT_PTRACE;
	o.reaped = &reaped;
	rc = mp_inject(&o, &result, err);
	/* Our child ended while it was stopped: its status is memprof run's to pass on. */
	if (reaped != -1 && s->pid == c->opts.main_pid) {
		c->reaped = true;
		c->reaped_status = reaped;
	}
	if (rc == 0 && result != 0) {
		strbuf_addstr(err, "its tracker could not start a thread");
		rc = -1;
	}
out:
	mp_procmaps_release(&maps);
	return rc;
}

/* Whether process s has ended (its pidfd is readable): a zombie, or reaped. */
static bool ended(const struct stream *s)
{
	struct pollfd p = { .fd = s->pidfd, .events = POLLIN };
	return s->pidfd >= 0 && poll(&p, 1, 0) == 1;
}

/*
 * Tell the requests waiting at s's socket why nothing answers them (rather
 * than leave them to time out): the line, "error ...". Whether every one was.
 */
static bool tell(struct stream *s, const struct strbuf *line)
{
	int fd, e = 0;
	/*
	 * Without blocking for the while (the flag is the socket's, shared with the
	 * tracker, whose thread takes EAGAIN for "nothing yet" should it start now).
	 */
	int fl = fcntl(s->ctl_fd, F_GETFL);
	if (fl < 0 || fcntl(s->ctl_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return false;
	while ((fd = accept4(s->ctl_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		char req[256];
		/* (Its line read first: a socket closed with data unread is reset at the other end.) */
		ssize_t n = recv(fd, req, sizeof(req), 0);
		if (n >= 0 || errno == EAGAIN)
			n = send(fd, line->buf, line->len, MSG_NOSIGNAL); /* (an asker gone hears nothing) */
		close(fd);
	}
	e = errno;
	fcntl(s->ctl_fd, F_SETFL, fl);
	return e == EAGAIN || e == EWOULDBLOCK;
}

/*
 * The thread could not be started: the requests waiting are told why (the
 * program's next event still starts it), and so is the user, at the end.
 * One that ended meanwhile is said to have. Whether every request was told.
 */
static bool refuse(struct mp_collector *c, struct stream *s, const char *why)
{
	struct strbuf line = STRBUF_INIT;
	bool gone = ended(s), all;
	/* ("error " and the rest, which memprof ctl prints after "process PID: ".) */
	if (gone)
		strbuf_addstr(&line, "error ended before its tracker could answer\n");
	else
		strbuf_addf(&line, "error its tracker starts the thread that answers requests once asked, "
			    "and memprof could not ask it (%s): it answers once the program allocates "
			    "or frees again\n", why);
	all = tell(s, &line);
	if (!gone)
		mp_collect_warn(c, "process %d: %.*s", (int)s->pid, (int)line.len - 7, line.buf + 6);
	strbuf_release(&line);
	return all;
}

void mp_collect_ctl_event(struct mp_collector *c, struct stream *s)
{
	struct mp_shm_header *h = header(s);
	struct strbuf err = STRBUF_INIT;
	if (s->ctl_fd < 0)
		return; /* forgotten earlier in this round */
	if (!h || s->eof || s->gone) {
		mp_collect_ctl_forget(s);
		return;
	}
	__atomic_store_n(&h->ctl_wake, 1, __ATOMIC_RELAXED);
	/*
	 * Once the thread runs, it accepts. Else the requests waiting are told
	 * why, and the socket stays watched: the next request tries again.
	 */
	if (running_within(h, WAKE_GRACE_MS) || wake_remote(c, s, &err) == 0 || running_within(h, 0) ||
	    !refuse(c, s, err.buf))
		mp_collect_ctl_forget(s);
	strbuf_release(&err);
}

/*
 * A process that died (a crash, SIGKILL, _exit) leaves its tracker's control
 * socket behind: removed once the process is seen gone (mp_ctl_forget()).
 * Not one of another pid namespace's (named by its pid there, in its /tmp),
 * nor one that lives on.
 */
void mp_collect_ctl_end(struct stream *s)
{
	mp_collect_ctl_forget(s);
	if (s->pidfd < 0 || !s->peer_pid || s->pid != (pid_t)s->dec.header.pid || s->detach_seen ||
	    (s->exec_known && s->execd))
		return;
	mp_ctl_forget(s->pid, s->peer_uid, s->pidfd);
}

bool mp_collector_take_reaped(struct mp_collector *c, int *status)
{
	if (!c || !c->reaped)
		return false;
	c->reaped = false;
	*status = c->reaped_status;
	return true;
}
