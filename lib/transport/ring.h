/*
 * The transport between a tracked process and its collector: a shared
 * mapping (a memfd the tracker creates and passes to the collector) holding
 * one ring of records per tracked thread. A thread writes only its own ring,
 * with no lock; every record carries an order key taken at the moment the
 * event happens (before a free releases its block, after an allocation
 * returns), so the collector can merge the rings into the one order the
 * capture needs (lib/transport/merge.h). The collector keeps the mapping when
 * the process dies: every record whose write completed reaches the capture.
 *
 * Order keys come from the time-stamp counter when the kernel's own clock is
 * the TSC (synchronised across CPUs), else from a counter in the mapping
 * incremented atomically. For the collector to know that no thread is about
 * to publish a record older than what it merges, each ring has a busy flag
 * set around a record's key and write; see mp_ring_begin() and
 * mp_merge_round().
 *
 * Allocation-free and header-only for the writer: the tracker uses it inside
 * malloc hooks.
 */
#ifndef MEMPROF_LIB_TRANSPORT_RING_H
#define MEMPROF_LIB_TRANSPORT_RING_H

#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define MP_SHM_MAGIC 0x474e49524650454dull /* "MEPFRING" */
#define MP_SHM_VERSION 4

/* Sizes: a ring of this many bytes per thread; the mapping reserves room for max rings. */
#define MP_RING_SIZE_DEFAULT (128u << 10)
#define MP_RING_MAX_DEFAULT 16384u
/* The largest record a ring takes (a MODULE with a long path and many segments). */
#define MP_RING_MAX_RECORD (16u << 10)

enum mp_clock { MP_CLOCK_TSC = 1, MP_CLOCK_COUNTER = 2 };
enum mp_ring_state { MP_RING_FREE = 0, MP_RING_ACTIVE = 1, MP_RING_RETIRED = 2 };
/* What the reader is doing, for writers deciding whether to ring the doorbell. */
enum mp_reader_state { MP_READER_ACTIVE = 0, MP_READER_SLEEPING = 1, MP_READER_GONE = 2 };
/* The tracker's control socket, as the header's ctl_state says (see there). */
enum mp_ctl_state { MP_CTL_UNSAID = 0, MP_CTL_LAZY = 1, MP_CTL_RUNNING = 2 };

/*
 * The first page of the mapping. Fields before `n_rings` are written once by
 * the tracker before the mapping is passed on; the others each sit in their
 * own cache line, as different parties write them.
 */
struct mp_shm_header {
	uint64_t magic;
	uint32_t version;
	uint32_t clock;             /* enum mp_clock */
	uint32_t ring_size;         /* bytes of data per ring, a power of two */
	uint32_t max_rings;
	uint64_t ctl_offset;        /* offset of the ring control table */
	uint64_t data_offset;       /* offset of ring 0's data; ring i's is data_offset + i * ring_size */
	uint64_t size;              /* bytes the whole mapping may grow to */
	/* Rings handed out so far (release); the reader maps and reads rings [0, n_rings). */
	uint32_t n_rings __attribute__((aligned(64)));
	/* The order counter (MP_CLOCK_COUNTER). */
	uint64_t counter __attribute__((aligned(64)));
	/* Who takes counter keys how (enum mp_keys): */
	uint32_t owner;             /* 1 + the ring whose writer adds plainly; 0 none; MP_OWNER_SHARED */
	uint32_t sharers;           /* the tracker's own threads adding atomically just now */
	uint32_t handoffs;          /* owners so far: past MP_OWNER_HANDOFFS, shared for good */
	int32_t handoff_lock;       /* the tracker's spin lock around a change of owner */
	/* Written by the reader. */
	uint32_t reader_state __attribute__((aligned(64))); /* enum mp_reader_state */
	int32_t reader_pid;         /* in the reader's pid namespace: nonzero once it reads */
	/* A futex the reader sleeps on; writers bump and wake it (the doorbell). */
	uint32_t doorbell __attribute__((aligned(64)));
	/*
	 * Set by the tracker just before the program's exec, cleared when the
	 * exec failed: a process whose connection ends with it set replaced
	 * itself, where one without exited (perhaps past the exit hooks).
	 */
	uint32_t exec_pending __attribute__((aligned(64)));
	/*
	 * Who samples the process (a TICK: the time and the resident set size):
	 * tick_ms nonzero, written by the tracker before the mapping is passed,
	 * asks the reader to, every tick_ms, in TICK_AT records of its own
	 * between its rounds (lib/process/drain.c); the tracker then starts no
	 * thread for it, and writes TICK_ATs itself only at its stream's start
	 * and end. 0: the tracker's own thread writes the TICKs. Times are
	 * CLOCK_MONOTONIC, the stream's start at start_mono_ns.
	 */
	uint32_t tick_ms __attribute__((aligned(64)));
	/* Set by the tracker before its last records (a stop, the exit): no reader TICK_AT after them. */
	uint32_t ticks_off;
	uint64_t start_mono_ns;
	/* The time of the tracker's last TICK_AT, stored before it: the reader's next comes tick_ms after. */
	uint64_t own_tick_ns;
	/* Samples the reader wrote so far (a thread name is looked at again once a sample). */
	uint64_t tick_seq __attribute__((aligned(64)));
	/*
	 * The control socket of a tracker whose reader samples it (memprof run):
	 * it listens but starts no thread until asked, so that a program of one
	 * thread keeps glibc's single-threaded paths. ctl_state MP_CTL_LAZY,
	 * then the listening socket passed on the stream's socket after the
	 * header (mp_send_fd(), MP_CTL_FD_BYTE). The reader watches it; on a connection it
	 * sets ctl_wake, which the tracker reads where a ring passes a quarter,
	 * and, for a program that makes no event, calls the exported
	 * memprof_control_wake() in it (ptrace). The tracker sets MP_CTL_RUNNING
	 * once its thread answers.
	 */
	uint32_t ctl_state __attribute__((aligned(64)));
	uint32_t ctl_wake;
};

/*
 * The resident pages in a read of /proc/PID/statm (n bytes of buf, n <= 0:
 * none), which the sampler of the process reads, tracker or reader; 0 when
 * it says none.
 */
static inline uint64_t mp_statm_resident(const char *buf, ssize_t n)
{
	uint64_t pages = 0;
	ssize_t i = 0;
	while (i < n && buf[i] != ' ') /* size, then resident */
		i++;
	for (i++; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		pages = pages * 10 + (uint64_t)(buf[i] - '0');
	return pages;
}

/*
 * A ring's control block: a cache line the writer writes and one the reader
 * writes. head and tail count bytes ever written and consumed, so the data
 * at position x is at x & (ring_size - 1).
 */
struct mp_ring_ctl {
	uint64_t head;              /* published bytes (release) */
	uint32_t busy;              /* 1 from before a record's key is taken until it is published */
	uint32_t state;             /* enum mp_ring_state */
	uint32_t tid;               /* the thread writing it */
	uint32_t waiting;           /* the writer waits for room (a futex on tail_lo) */
	uint64_t pad0[5];
	uint64_t tail __attribute__((aligned(64))); /* consumed bytes (release); futex on its low half */
	uint64_t pad1[7];
};

/*
 * What a tracker sends first on the collector's socket, with the mapping's
 * memfd as SCM_RIGHTS; then the capture's preamble and header.
 */
#define MP_HELLO_MAGIC "MPHELLO"
struct mp_shm_hello {
	char magic[8];
	uint32_t version;           /* MP_SHM_VERSION */
	uint32_t pid;
};

/* The hello as a message, with room for the memfd beside it: the collector's recvmsg(). */
struct mp_hello_msg {
	struct mp_shm_hello hello;
	struct iovec iov;
	struct msghdr msg;
	/* Last: glibc's struct cmsghdr ends with a flexible array (clang warns elsewhere). */
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
};

static inline void mp_hello_msg_init(struct mp_hello_msg *m)
{
	m->iov = (struct iovec){ &m->hello, sizeof(m->hello) };
	m->msg = (struct msghdr){ .msg_iov = &m->iov, .msg_iovlen = 1, .msg_control = m->u.buf,
				  .msg_controllen = sizeof(m->u.buf) };
}

/*
 * Send len bytes of data on the local socket sock with descriptor fd attached
 * (SCM_RIGHTS): the hello with the rings' memfd, and after the header the
 * byte MP_CTL_FD_BYTE with a listening control socket that waits to be asked
 * (see the header's ctl_state). The bytes sent, or -1 (errno).
 */
#define MP_CTL_FD_BYTE 'c'
static inline ssize_t mp_send_fd(int sock, const void *data, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { (void *)data, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t n;
	memset(&u, 0, sizeof(u));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Offsets and size of a mapping for max rings of ring_size bytes. */
static inline void mp_shm_layout(uint32_t ring_size, uint32_t max_rings, uint64_t *ctl_offset,
				 uint64_t *data_offset, uint64_t *size)
{
	uint64_t ctl = 4096, data = ctl + (uint64_t)max_rings * sizeof(struct mp_ring_ctl);
	data = (data + 4095) & ~4095ull;
	*ctl_offset = ctl;
	*data_offset = data;
	*size = data + (uint64_t)max_rings * ring_size;
}

/* Bytes of the mapping that rings [0, n) need (the file's size, page-rounded). */
static inline uint64_t mp_shm_needed(const struct mp_shm_header *h, uint32_t n)
{
	return h->data_offset + (uint64_t)n * h->ring_size;
}

static inline struct mp_ring_ctl *mp_shm_ctl(void *base, const struct mp_shm_header *h, uint32_t i)
{
	return (struct mp_ring_ctl *)((char *)base + h->ctl_offset) + i;
}

static inline uint8_t *mp_shm_data(void *base, const struct mp_shm_header *h, uint32_t i)
{
	return (uint8_t *)base + h->data_offset + (uint64_t)i * h->ring_size;
}

/* ---- clocks ---- */

/* CLOCK_MONOTONIC in nanoseconds: the samples' times (start_mono_ns), and how long a ring stays busy. */
static inline uint64_t mp_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- order keys ---- */

/* The time-stamp counter, after the loads before it are done (lfence). */
static inline uint64_t mp_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

/*
 * How a ring's writer takes counter keys. The atomic add is a full barrier,
 * a good part of what recording an event costs, and a program that
 * allocates from one thread at a time has nothing to order its events
 * against but that thread's own: so one ring at a time is the owner, whose
 * writer increments the counter with a plain load and store, for as long as
 * no other writer takes keys. A program thread that finds another ring the
 * owner takes over: it withdraws ownership, makes every thread pass a memory
 * barrier (membarrier(2)), waits for the old owner's record in flight, then
 * owns. After MP_OWNER_HANDOFFS changes the counter is shared for good
 * (threads that take turns all the time). The tracker's own threads (ticks,
 * modules) count themselves in `sharers` around an atomic add of their own.
 * The writer's side of this is in the tracker (lib/tracker/stream.c).
 * Without membarrier(2) every writer adds atomically (MP_KEYS_SHARED).
 */
enum mp_keys { MP_KEYS_SHARED = 0, MP_KEYS_SOLO = 1, MP_KEYS_FOREIGN = 2 };
#define MP_OWNER_SHARED UINT32_MAX
#define MP_OWNER_HANDOFFS 64u

/* ---- the writer's side: one thread per ring ---- */

/*
 * The writer's own view of its ring, in its memory: where it writes, and
 * the last tail it read (it reads the shared one only when the ring looks
 * full).
 */
struct mp_wring {
	/*
	 * The header of the ring's own mapping: a writer that comes late to a
	 * stream that was detached meanwhile (whose mapping stays mapped) must
	 * not follow the tracker to the next one, or to none.
	 */
	struct mp_shm_header *h;
	struct mp_ring_ctl *ctl;
	uint8_t *data;
	uint64_t mask;              /* ring_size - 1 */
	uint64_t head;              /* bytes written, published or not */
	uint64_t tail;              /* the last tail read */
	uint64_t last_key;          /* keys are written as deltas to the ring's previous one */
	uint64_t pub_key;           /* the key of the last record published */
	uint64_t half_mark;         /* head at which the ring is half full (doorbell) */
	uint32_t index;
	uint8_t keys;               /* enum mp_keys: a program thread's ring, a tracker thread's, or no owners */
};

/* Room for a record of up to n bytes, contiguous at mp_wring_at(); 0, or -1 when it must wait. */
static inline int mp_wring_room(struct mp_wring *w, size_t n)
{
	uint64_t size = w->mask + 1, off = w->head & w->mask;
	/* A record never wraps: the end of the lap is skipped (a 0 byte says so). */
	uint64_t need = n + (off + n > size ? size - off : 0);
	if (__builtin_expect(w->head + need - w->tail <= size, 1))
		return 0;
	w->tail = __atomic_load_n(&w->ctl->tail, __ATOMIC_ACQUIRE);
	return w->head + need - w->tail <= size ? 0 : -1;
}

/* Where the next record goes (after mp_wring_room() said there is room): skip a short lap end. */
static inline uint8_t *mp_wring_at(struct mp_wring *w, size_t n)
{
	uint64_t size = w->mask + 1, off = w->head & w->mask;
	if (off + n > size) {
		w->data[off] = 0;
		w->head += size - off;
		off = 0;
	}
	return w->data + off;
}

/*
 * The order key of a record being written now (after its busy flag). It
 * must follow every load before it: an allocation's key the load that found
 * its block free, a free's key the load that gave the program the pointer
 * (another thread's block, handed over).
 */
static inline uint64_t mp_shm_key_shared(struct mp_shm_header *h)
{
	/* A locked add is a full barrier: the busy flag is visible before the key exists. */
	return __atomic_fetch_add(&h->counter, 1, __ATOMIC_SEQ_CST) + 1;
}

/* The owner's key, when it is the owner and no one else takes keys (else 0). */
static inline uint64_t mp_shm_key_owner(struct mp_shm_header *h, uint32_t index)
{
	uint64_t k;
	if (__atomic_load_n(&h->owner, __ATOMIC_RELAXED) != index + 1 ||
	    __atomic_load_n(&h->sharers, __ATOMIC_RELAXED))
		return 0;
	/* The release orders the busy flag before the key for the reader, which
	   reads the counter, then the flags (lib/transport/merge.h). */
	k = __atomic_load_n(&h->counter, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&h->counter, k, __ATOMIC_RELEASE);
	return k;
}

/*
 * A ring busy for this long without publishing anything has a writer that
 * left its record (a signal handler that interrupted it never returned, or
 * one blocked in a handler): the collector merges the other rings past it,
 * and a writer taking over the counter stops waiting for it, else they
 * would wait for good. Its record, if it ever comes, is merged late (and
 * counted so).
 */
#define MP_RING_STALE_NS 1000000000ull
/*
 * Sooner than that, when the writer is asleep in the kernel: a record's
 * write makes no system call, so a writer found sleeping (state S or D)
 * in the middle of one is in a signal handler that interrupted it.
 */
#define MP_RING_ASLEEP_NS 10000000ull

/*
 * Whether thread tid (of any process) sleeps in the kernel just now, from
 * /proc/TID/stat: 1, 0, or -1 when it cannot be read. Raw system calls: no
 * allocation, no hook of the tracker's.
 */
static inline int mp_ring_writer_asleep(uint32_t tid)
{
	char path[32] = "/proc/", digits[12], buf[512], *p = path + 6;
	int n = 0, fd;
	long len;
	do
		digits[n++] = (char)('0' + tid % 10);
	while ((tid /= 10) && n < 11);
	while (n)
		*p++ = digits[--n];
	memcpy(p, "/stat", 6);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	/* "tid (comm) S ...": comm may hold anything, so the state follows the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	return p[2] == 'S' || p[2] == 'D';
}

/*
 * Whether a ring busy and unmoved for waited_ns has a writer that left its
 * record (MP_RING_STALE_NS, MP_RING_ASLEEP_NS; tid as this process numbers
 * it, 0 when unknown): the merge and a change of the counter's owner stop
 * waiting for it.
 */
static inline int mp_ring_writer_left(uint64_t waited_ns, uint32_t tid)
{
	return waited_ns >= MP_RING_STALE_NS ||
	       (waited_ns >= MP_RING_ASLEEP_NS && tid && mp_ring_writer_asleep(tid) == 1);
}

/* Publish the record that ends at end, then clear the busy flag. */
static inline void mp_wring_publish(struct mp_wring *w, uint8_t *end)
{
	uint64_t off = w->head & w->mask;
	w->head += (uint64_t)(end - (w->data + off));
	w->pub_key = w->last_key;
	__atomic_store_n(&w->ctl->head, w->head, __ATOMIC_RELEASE);
	__atomic_store_n(&w->ctl->busy, 0, __ATOMIC_RELEASE);
}

/*
 * The writer left a record unfinished for good (a signal handler that
 * interrupted it never returned): that record is dropped, and the next key
 * is a delta to the last one published, as the reader has it.
 */
static inline void mp_wring_recover(struct mp_wring *w)
{
	if (!w->ctl || !__atomic_load_n(&w->ctl->busy, __ATOMIC_RELAXED))
		return;
	w->last_key = w->pub_key;
	__atomic_store_n(&w->ctl->busy, 0, __ATOMIC_RELEASE);
}

/* Give up a record after mp_wring_begin(): nothing is published. */
static inline void mp_wring_abandon(struct mp_wring *w)
{
	__atomic_store_n(&w->ctl->busy, 0, __ATOMIC_RELEASE);
}

/*
 * A record in a ring: its length (a varint, counting what follows it), the
 * key as a varint delta to the ring's previous key, then the record's bytes
 * as the tracker's stream has them (lib/format/encode.h). A length of 0 marks
 * the end of a lap.
 *
 * mp_wring_frame() writes the key at p + 1, leaving p[0] for the length of a
 * record under 128 bytes, and returns where the record's bytes go;
 * mp_wring_frame_end() writes the length.
 */
static inline uint8_t *mp_wring_frame(struct mp_wring *w, uint8_t *p, uint64_t key)
{
	uint64_t d = key - w->last_key;
	w->last_key = key;
	p++;
	while (d >= 0x80) {
		*p++ = (uint8_t)(d | 0x80);
		d >>= 7;
	}
	*p++ = (uint8_t)d;
	return p;
}

static inline void mp_wring_frame_end(uint8_t *start, uint8_t *end)
{
	start[0] = (uint8_t)(end - start - 1);
}

#endif
