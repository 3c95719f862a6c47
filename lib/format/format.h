/*
 * The capture format's constants: magic, version, record tags, allocator
 * kinds and field keys. man/memprof-capture.5 is the specification; this
 * header must agree with it. Shared by the tracker, the writer and the reader.
 */
#ifndef MEMPROF_LIB_FORMAT_FORMAT_H
#define MEMPROF_LIB_FORMAT_FORMAT_H

/* "\x89MEMPROF": the high byte catches 7-bit transfers, the name identifies us. */
#define MP_MAGIC "\x89MEMPROF"
#define MP_MAGIC_LEN 8
/*
 * Version rule: a reader reads every file of its major version, whatever the
 * minor. A minor bump may add length-prefixed record types, header/trailer
 * keys and trailing fields; anything else needs a major bump.
 */
#define MP_FORMAT_MAJOR 4
#define MP_FORMAT_MINOR 0
/*
 * The oldest major version readers still read: 2.0 only added to 1.0,
 * 3.0 changed STRING and SYMBOL records, which readers decode by the file's
 * version, and 4.0 only added BLOCK codec 4 (varint planes), which blocks
 * name themselves.
 */
#define MP_FORMAT_MAJOR_MIN 1
/*
 * The version of a tracker's own stream, which is also the version of a
 * capture the tracker writes itself (direct mode, MEMPROF_OUTPUT): its
 * records are all 2.0 records (the 3.0 ones are the collector's writer's),
 * and its STRING and SYMBOL records, which direct mode writes for Python
 * frames, are 2.0's, with ids and absolute ips.
 */
#define MP_STREAM_MAJOR 2

/*
 * Record tags. Tags below 0x80 have a fixed grammar known to every reader of
 * the major version; tags from 0x80 up are followed by a varint payload
 * length, so readers skip the types they do not know.
 */
enum mp_tag {
	MP_TAG_THREAD_SWITCH = 0x01, /* varint thread index */
	MP_TAG_TRACE = 0x02,         /* varint (index - parent), svarint ip delta */
	MP_TAG_TICK = 0x03,          /* varint time delta in us, varint rss bytes */
	MP_TAG_ALLOC = 0x10,         /* + kind (0..15): addr, varint size, svarint stack delta */
	MP_TAG_FREE = 0x20,          /* + kind (0..15): addr */
	MP_TAG_FREE_RANGE = 0x30,    /* + kind (0..15): addr, varint size */
	MP_TAG_ALLOC_SEQ = 0x40,     /* + kind (0..15): varint size, svarint stack delta (2.0) */
	MP_TAG_FREE_SEQ = 0x50,      /* + kind (0..15): varint age of the block freed (2.0) */
	/*
	 * 3.0: allocations of a known class, and frees of kinds free and
	 * realloc by number with the number in the tag or in byte planes.
	 */
	MP_TAG_ALLOC_REF = 0x60,     /* + class (0..17): no field */
	MP_TAG_ALLOC_REF_N = 0x72,   /* varint class - 18 */
	MP_TAG_TICK_DELTA = 0x73,    /* varint time delta in us, svarint rss change in 4 KiB pages */
	MP_TAG_FREE_NEAR_LIT = 0x04, /* + q (0..3): kind free, near q */
	MP_TAG_FREE_AGE_LIT = 0x08,  /* + age (0..3): kind free */
	MP_TAG_FREE_NEAR_N = 0x0c,   /* + n - 1 (n = 1..3 bytes; + 3: counted): kind free, near */
	MP_TAG_FREE_AGE_N = 0x74,    /* as FREE_NEAR_N: kind free, age */
	MP_TAG_REALLOC_NEAR_N = 0x78, /* as FREE_NEAR_N: kind realloc, near */
	MP_TAG_REALLOC_AGE_N = 0x7c, /* as FREE_NEAR_N: kind realloc, age */

	MP_TAG_FIRST_SIZED = 0x80,
	MP_TAG_HEADER = 0x80,        /* fields */
	MP_TAG_TRAILER = 0x81,       /* fields */
	MP_TAG_THREAD = 0x82,        /* index, tid, name */
	MP_TAG_MODULE = 0x83,        /* id, base, path, build-id, segments */
	MP_TAG_MODULE_UNLOAD = 0x84, /* id */
	MP_TAG_STRING = 0x85,        /* id, bytes */
	MP_TAG_SYMBOL = 0x86,        /* ip, module, offset, frames */
	MP_TAG_ATTACH = 0x87,        /* fields */
	MP_TAG_DETACH = 0x88,        /* fields */
	MP_TAG_FORK = 0x89,          /* fields */
	MP_TAG_BLOCK = 0x8a,         /* codec, raw length, compressed records */
	MP_TAG_LOST = 0x8b,          /* fields */
	MP_TAG_EXIT = 0x8c,          /* fields */
	MP_TAG_MESSAGE = 0x8d,       /* fields */
	MP_TAG_SNAPSHOT = 0x8e,      /* fields: a snapshot was asked for here (tracker to collector) */
	MP_TAG_PYFRAME = 0x8f,       /* ip, function, file, line, column: an interpreter frame
					(tracker to collector; lib/format/pyframe.h) */
	/* Aggregated captures (lib/format/aggregate.h), all keyed: */
	MP_TAG_AGG_SLOT = 0x93,      /* one stack, thread and kind: allocated, at the peak, leaked */
	MP_TAG_AGG_TOTALS = 0x94,    /* the capture's totals */
	MP_TAG_AGG_HIST = 0x95,      /* allocation sizes by power of two */
	MP_TAG_AGG_KIND = 0x96,      /* one allocator kind's totals */
	MP_TAG_AGG_THREAD = 0x97,    /* one thread's totals */
	MP_TAG_AGG_SAMPLE = 0x98,    /* a point of the memory time series */
	MP_TAG_UNWIND = 0x99,        /* fields: stacks walked by libunwind since the last (count) */
	/*
	 * fields time, rss: a sample at a time since the start rather than a
	 * delta (tracker and drain to collector only: the collector writes it
	 * as a TICK; see tick_ms in lib/transport/ring.h)
	 */
	MP_TAG_TICK_AT = 0x9a,
	MP_TAG_ALLOC_X = 0x90,       /* kind, then as ALLOC */
	MP_TAG_FREE_X = 0x91,        /* kind, then as FREE */
	MP_TAG_FREE_RANGE_X = 0x92,  /* kind, then as FREE_RANGE */
};

/* Allocator kinds: one namespace for allocation and deallocation functions. */
enum mp_kind {
	MP_KIND_MALLOC = 0,
	MP_KIND_CALLOC = 1,
	MP_KIND_REALLOC = 2,
	MP_KIND_FREE = 3,
	MP_KIND_POSIX_MEMALIGN = 4,
	MP_KIND_ALIGNED_ALLOC = 5,
	MP_KIND_MEMALIGN = 6,
	MP_KIND_VALLOC = 7,
	MP_KIND_PVALLOC = 8,
	MP_KIND_MMAP = 9,
	MP_KIND_MUNMAP = 10,
	MP_KIND_MREMAP = 11,
	MP_KIND_REALLOCARRAY = 12,
	MP_KIND_FREE_SIZED = 13,
	MP_KIND_FREE_ALIGNED_SIZED = 14,
	MP_KIND_COUNT
};

/*
 * True for kinds whose events are ranges of pages (mmap family). Inline: the
 * writer asks for every event, and the tracker's fold (fold.h) too.
 */
static inline int mp_kind_is_mapping(unsigned kind)
{
	return kind == MP_KIND_MMAP || kind == MP_KIND_MUNMAP || kind == MP_KIND_MREMAP;
}

/*
 * Codecs of BLOCK records: one zstd frame; the records split into field
 * streams (2.0); field streams, each a zstd stream continued from block to
 * block (3.0); the same with sizes and stack deltas in varint planes (4.0).
 */
enum { MP_CODEC_ZSTD = 1, MP_CODEC_ZSTD_FIELDS = 2, MP_CODEC_ZSTD_STREAMS = 3, MP_CODEC_ZSTD_PLANES = 4 };

/* 3.0: allocation classes (kind, size, stack) an ALLOC_REF can name; the first ALLOC_SEQs define them. */
#define MP_MAX_CLASSES 65536
/* ALLOC_REF classes carried in the tag itself. */
#define MP_REF_IN_TAG 18
/* The unit of TICK_DELTA's change of RSS. */
#define MP_TICK_RSS_UNIT 4096

/*
 * Blocks in streams of ALLOC_SEQ records name a block by its serial number:
 * readers show serial s as this address, which no process can have (it is
 * in the kernel's half of the address space), aligned like a heap block.
 */
#define MP_SERIAL_ADDR_BASE (1ull << 63)
#define MP_SERIAL_ADDR(s) (MP_SERIAL_ADDR_BASE | ((uint64_t)(s) << 4))

/* Field value types, in the low 3 bits of a field key. */
enum { MP_FIELD_UINT = 0, MP_FIELD_SINT = 1, MP_FIELD_BYTES = 2 };
#define MP_FIELD_KEY(id, type) (((id) << 3) | (type))

/* HEADER fields. */
enum mp_header_field {
	MP_H_PID = 1,
	MP_H_PPID = 2,
	MP_H_ARGV = 3,           /* bytes: arguments, each NUL-terminated */
	MP_H_EXE = 4,
	MP_H_START_TIME = 5,     /* microseconds since the Unix epoch */
	MP_H_HOSTNAME = 6,
	MP_H_PAGE_SIZE = 7,
	MP_H_MODE = 8,           /* enum mp_mode */
	MP_H_MAX_DEPTH = 9,
	MP_H_INTERVAL_MS = 10,
	MP_H_FLAGS = 11,         /* enum mp_header_flags */
	MP_H_MAIN_TID = 12,
	MP_H_MACHINE = 13,       /* ELF e_machine of the target */
	MP_H_POINTER_SIZE = 14,
	MP_H_TRACKER_VERSION = 15,
	MP_H_CWD = 16,
	MP_H_FORKED_FROM = 17,   /* parent pid, in the capture of a followed child */
	MP_H_FAMILY = 18,        /* the id every capture of one collector's run shares */
	MP_H_PARENT_CAPTURE = 19, /* bytes: the file name of the parent's capture */
	MP_H_SAMPLING_INTERVAL = 20, /* sampled: one sample per N bytes allocated (absent: exact) */
};

enum mp_mode { MP_MODE_RUN = 1, MP_MODE_PRELOAD = 2, MP_MODE_ATTACH = 3 };

enum mp_header_flags {
	MP_HF_FOLLOW_FORK = 1 << 0,
	MP_HF_SYMBOLIZED = 1 << 1, /* the collector adds SYMBOL records */
	MP_HF_FORK_CHILD = 1 << 2,
	MP_HF_RESTARTED = 1 << 3,  /* a later capture of a process (memprof ctl PID start) */
	MP_HF_PYTHON_FRAMES = 1 << 5, /* stacks show Python frames for the interpreter's (pyframe.h) */
	/*
	 * Aggregated (memprof run --aggregate): totals per stack, thread and kind
	 * instead of events; in a tracker's stream, a request for one.
	 */
	MP_HF_AGGREGATED = 1 << 4,
};

/* TRAILER fields. */
enum mp_trailer_field {
	MP_T_END_TIME = 1,       /* microseconds since the Unix epoch */
	MP_T_EXIT_CODE = 2,
	MP_T_EXIT_SIGNAL = 3,
	MP_T_CORE_DUMPED = 4,
	MP_T_N_ALLOCS = 5,
	MP_T_N_FREES = 6,
	MP_T_BYTES_ALLOCATED = 7,
	MP_T_N_TRACES = 8,
	MP_T_N_SYMBOLS = 9,
	MP_T_N_RECORDS = 10,
	MP_T_N_LOST = 11,
	MP_T_DURATION = 12,      /* microseconds */
	MP_T_END_REASON = 13,    /* enum mp_end_reason */
	MP_T_N_LIBUNWIND = 14,   /* stacks walked by libunwind, not the tracker's walker (UNWIND) */
};

enum mp_end_reason {
	MP_END_EXIT = 1,         /* the process ended; exit code or signal known */
	MP_END_DETACH = 2,       /* tracking stopped by detach or --duration */
	MP_END_DISCONNECT = 3,   /* the stream ended without an exit status */
	MP_END_SNAPSHOT = 4,     /* a snapshot: the capture went on after this point */
	MP_END_EXEC = 5,         /* the process replaced itself with another program (exec) */
};

/* Fields of ATTACH, DETACH, FORK, LOST, EXIT, MESSAGE and UNWIND records. */
enum mp_marker_field {
	MP_M_TIME = 1,           /* microseconds since the capture's start time */
	MP_M_RSS = 2,
	MP_M_HEAP_ARENA = 3,     /* mallinfo2 arena + hblkhd at attach */
	MP_M_HEAP_IN_USE = 4,    /* mallinfo2 uordblks + hblkhd at attach */
	MP_M_CHILD_PID = 5,
	MP_M_COUNT = 6,
	MP_M_STATUS = 7,
	MP_M_TEXT = 8,
	MP_M_LEVEL = 9,          /* 1 info, 2 warning */
};

/* Pseudo instruction pointer of the node that marks a stack cut at --max-depth. */
#define MP_IP_TRUNCATED 1

/* Limits a reader enforces, so corrupt lengths cannot exhaust memory. */
#define MP_MAX_RECORD_LEN (64u << 20)
#define MP_MAX_BLOCK_RAW (16u << 20)
#define MP_MAX_THREADS (1u << 22)
#define MP_MAX_FRAMES 4096

#endif
