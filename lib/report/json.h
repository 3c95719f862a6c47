/*
 * A small streaming JSON writer into a strbuf: objects, arrays, strings
 * escaped for any input (control characters, invalid UTF-8 replaced by
 * U+FFFD; optionally "<", ">", "&" and U+2028/2029 too, for embedding in
 * HTML script elements), pretty-printed with two-space indentation or
 * compact.
 */
#ifndef MEMPROF_LIB_REPORT_JSON_H
#define MEMPROF_LIB_REPORT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/strbuf.h"

enum mp_json_flags {
	MP_JSON_PRETTY = 1 << 0,    /* newlines and two-space indentation */
	MP_JSON_HTML_SAFE = 1 << 1, /* escape <, >, & and U+2028/U+2029 */
};

#define MP_JSON_MAX_DEPTH 64

struct mp_json {
	struct strbuf *out;
	unsigned flags;
	int depth;
	bool first[MP_JSON_MAX_DEPTH]; /* nothing written yet at this depth */
	bool after_key;
};

void mp_json_init(struct mp_json *j, struct strbuf *out, unsigned flags);
void mp_json_begin_object(struct mp_json *j);
void mp_json_end_object(struct mp_json *j);
void mp_json_begin_array(struct mp_json *j);
void mp_json_end_array(struct mp_json *j);
/* The key of the next value in an object. */
void mp_json_key(struct mp_json *j, const char *key);
void mp_json_string(struct mp_json *j, const char *s);
void mp_json_string_len(struct mp_json *j, const char *s, size_t len);
void mp_json_uint(struct mp_json *j, uint64_t v);
void mp_json_int(struct mp_json *j, int64_t v);
void mp_json_bool(struct mp_json *j, bool v);
void mp_json_null(struct mp_json *j);
/* A key and its value, in one call. */
void mp_json_field_uint(struct mp_json *j, const char *key, uint64_t v);
void mp_json_field_int(struct mp_json *j, const char *key, int64_t v);
void mp_json_field_bool(struct mp_json *j, const char *key, bool v);
void mp_json_field_string(struct mp_json *j, const char *key, const char *s);
/* "key": an array of n strings. */
void mp_json_field_strings(struct mp_json *j, const char *key, char *const *s, size_t n);
/* Append s as a quoted JSON string to sb. */
void mp_json_quote(struct strbuf *sb, const char *s, size_t len, unsigned flags);

#endif
