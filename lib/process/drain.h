/*
 * The rings of one tracked process (lib/transport), drained on a thread of
 * their own: the collector's main thread may spend a long moment
 * symbolizing, and the tracked threads must not wait for it. The thread
 * merges the rings in order into a queue the collector takes from.
 */
#ifndef MEMPROF_LIB_PROCESS_DRAIN_H
#define MEMPROF_LIB_PROCESS_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

struct mp_drain;
struct mp_shm_header;

/*
 * Map the rings a tracker passed (memfd, which the drain then owns) and
 * start draining them; when its queue is large, and when it is done, it
 * writes to notify_fd (an eventfd; see mp_drain_ready()). idle_ms is its
 * longest sleep when the rings are quiet. pid is the writing process as
 * this one numbers it when its own pid namespace numbers it otherwise (a
 * container's), else 0. proc is the process as this one numbers it, always:
 * when its tracker asks (tick_ms, lib/transport/ring.h), the drain samples
 * it between rounds from /proc/proc/statm (TICK_AT records in the queue).
 * NULL with a one-line reason in err when the mapping cannot be used; a
 * drain that cannot sample says so in err too (and starts).
 */
struct mp_drain *mp_drain_start(int memfd, int notify_fd, unsigned idle_ms, pid_t pid, pid_t proc,
				struct strbuf *err);
/*
 * Move what was merged so far to the end of *buf (len bytes used of cap,
 * grown with realloc as needed).
 */
void mp_drain_take(struct mp_drain *d, uint8_t **buf, size_t *len, size_t *cap);
/*
 * Whether the drain queued something since the last mp_drain_take(): the
 * collector's wake-up is shared by every stream, and looking at each one's
 * queue on each wake-up cost it the square of the number of processes.
 * A drain writes notify_fd only for a large queue, and when it is done:
 * the collector looks at every queue each MP_DRAIN_LOOK_MS anyway.
 */
bool mp_drain_ready(struct mp_drain *d);
#define MP_DRAIN_LOOK_MS 50
/*
 * Merge now, on the caller's thread, what the rings hold (the drain's
 * thread may be dozing): a tracker that stops writes its last records,
 * then closes its socket, and the collector that sees the socket's end
 * wants to know whether they said it stopped.
 */
void mp_drain_sync(struct mp_drain *d);
/*
 * The process is gone or its stream ended: merge everything published,
 * stop the thread and tell the tracker (if it is still there) that its
 * reader is gone. What remains is then for mp_drain_take().
 */
void mp_drain_finish(struct mp_drain *d);
/*
 * Ask the drain to end (its last rounds, then done) without waiting: a
 * collector ending many streams at once lets their drains finish side by
 * side before it waits for each with mp_drain_finish().
 */
void mp_drain_stop(struct mp_drain *d);
void mp_drain_free(struct mp_drain *d);
/* Rings found corrupt, and rounds whose memory barrier failed (for warnings). */
uint32_t mp_drain_broken(const struct mp_drain *d);
/* The rings' header, which the drain maps (fields the tracker and the collector share). */
struct mp_shm_header *mp_drain_header(const struct mp_drain *d);
/* Whether the tracker was about to exec when its stream ended (lib/transport/ring.h). */
bool mp_drain_exec_pending(const struct mp_drain *d);
uint32_t mp_drain_unfenced(const struct mp_drain *d);
/* Records merged after a newer one (their order relative to other threads may be wrong). */
uint64_t mp_drain_late(const struct mp_drain *d);
/* Times a thread's record stayed in flight past MP_RING_STALE_NS and the others were merged past it. */
uint64_t mp_drain_stale(const struct mp_drain *d);

#endif
