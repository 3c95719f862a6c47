/*
 * The zstd dictionary that stream 5 (other records: modules, strings,
 * symbols, traces, ticks) of codec 3 blocks starts from: part of format 3.0
 * (man/memprof-capture.5), never to change. Internal to lib/format.
 */
#ifndef MEMPROF_LIB_FORMAT_DICT_H
#define MEMPROF_LIB_FORMAT_DICT_H

#define MP_DICT_OTHER_SIZE 8192
/* Its id, in its header and in the frame header of every stream 5. */
#define MP_DICT_OTHER_ID 0x4d413303u

extern const unsigned char mp_dict_other[MP_DICT_OTHER_SIZE];

#endif
