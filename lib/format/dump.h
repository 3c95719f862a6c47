/* Text form of capture records: one line per record, for `memprof parse` and tests. */
#ifndef MEMPROF_LIB_FORMAT_DUMP_H
#define MEMPROF_LIB_FORMAT_DUMP_H

#include "lib/format/decode.h"
#include "lib/format/reader.h"
#include "lib/util/strbuf.h"

/* Append rec as one line (with a newline) to out; r resolves string ids. */
void mp_dump_record(struct strbuf *out, const struct mp_reader *r, const struct mp_record *rec);
/*
 * Stacks for `memprof parse --stacks`: fed every TRACE, SYMBOL, MODULE and
 * MODULE_UNLOAD record of a capture (a first pass), it renders a trace node
 * as the list of its frames' functions, innermost first (from the SYMBOL
 * record its ip had when the node was made: a library loaded where an
 * unloaded one was has records of its own).
 */
struct mp_stacks;
struct mp_stacks *mp_stacks_new(void);
void mp_stacks_free(struct mp_stacks *st);
void mp_stacks_add(struct mp_stacks *st, const struct mp_reader *r, const struct mp_record *rec);
/* Append ["f","g",...] for node (innermost first); unresolved ips as module+0xoffset or 0xip. */
void mp_stacks_render(struct mp_stacks *st, struct strbuf *out, uint64_t node);

/* Append "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" for microseconds since the epoch. */
void mp_format_time(struct strbuf *out, uint64_t epoch_us);
/* The name of an ELF machine ("x86_64", "aarch64", ...) or "machine#N". */
const char *mp_machine_name(uint64_t machine);

#endif
