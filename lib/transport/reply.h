/*
 * What a collector says back to the tracker, on the socket over which the
 * tracker handed it the rings. Bytes, in this order of arrival:
 *   a reply: its kind, a number (4 bytes, little-endian), the text's length
 *     (2 bytes, little-endian, at most MP_REPLY_TEXT_MAX) and the text:
 *     - MP_REPLY_CAPTURE_OK, MP_REPLY_CAPTURE_FAILED: the capture's file
 *       was opened (the number: 1 for the main process's first capture, N
 *       for its FILE.N, else 0; the text: its absolute path), or why not;
 *     - MP_REPLY_SNAP_OK, MP_REPLY_SNAP_FAILED: snapshot number was written
 *       (the text: its absolute path), or why not;
 *     - MP_REPLY_CAPTURE_DONE: the tracker ended the stream (it wrote
 *       its DETACH record, then shut its side of the socket for writing)
 *       and the capture is finished, its trailer written (the text: its
 *       absolute path); the collector closes the connection after it;
 *     (`memprof ctl PID start`, `snapshot` and `stop` wait for them);
 *   any other byte: the end of tracking is asked (attach's detach).
 * The end of the connection means the collector is gone.
 */
#ifndef MEMPROF_LIB_TRANSPORT_REPLY_H
#define MEMPROF_LIB_TRANSPORT_REPLY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MP_REPLY_END 'D'
#define MP_REPLY_SNAP_OK 'S'
#define MP_REPLY_SNAP_FAILED 'F'
#define MP_REPLY_CAPTURE_OK 'C'
#define MP_REPLY_CAPTURE_FAILED 'E'
#define MP_REPLY_CAPTURE_DONE 'W'
#define MP_REPLY_HEAD 7 /* kind, number, length */
#define MP_REPLY_TEXT_MAX 4000

/* A reply of kind into buf (MP_REPLY_HEAD + MP_REPLY_TEXT_MAX bytes); returns its size. */
static inline size_t mp_reply(uint8_t *buf, uint8_t kind, uint32_t number, const char *text)
{
	size_t len = strlen(text);
	if (len > MP_REPLY_TEXT_MAX)
		len = MP_REPLY_TEXT_MAX;
	buf[0] = kind;
	for (int i = 0; i < 4; i++)
		buf[1 + i] = (uint8_t)(number >> (8 * i));
	buf[5] = (uint8_t)len;
	buf[6] = (uint8_t)(len >> 8);
	memcpy(buf + MP_REPLY_HEAD, text, len);
	return MP_REPLY_HEAD + len;
}

#endif
