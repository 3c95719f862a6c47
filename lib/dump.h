/* Text form of capture records: one line per record, for `memprof parse` and tests. */
#ifndef MEMPROF_LIB_DUMP_H
#define MEMPROF_LIB_DUMP_H

#include "lib/capture.h"
#include "lib/strbuf.h"

/* Append rec as one line (with a newline) to out; r resolves string ids. */
void mp_dump_record(struct strbuf *out, const struct mp_reader *r, const struct mp_record *rec);
/* Append "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" for microseconds since the epoch. */
void mp_format_time(struct strbuf *out, uint64_t epoch_us);
/* The name of an ELF machine ("x86_64", "aarch64", ...) or "machine#N". */
const char *mp_machine_name(uint64_t machine);

#endif
