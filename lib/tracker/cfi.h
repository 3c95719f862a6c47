/*
 * DWARF call-frame information for the tracker's stack walker (unwind.c):
 * what the frame executing at an instruction address looks like, read from
 * its module's .eh_frame_hdr and .eh_frame (x86_64).
 */
#ifndef MEMPROF_LIB_TRACKER_CFI_H
#define MEMPROF_LIB_TRACKER_CFI_H

#include <stdint.h>

#include "lib/tracker/base.h"

enum {
	MP_CFI_CFA_RBP = 1 << 0,  /* CFA = rbp + off (else rsp + off) */
	MP_CFI_END = 1 << 1,      /* the return address is undefined: the outermost frame */
	MP_CFI_BAD = 1 << 2,      /* not handled here: use libunwind */
	MP_CFI_RBP_SAVED = 1 << 3,/* rbp saved at CFA + rbp_off */
};
#define MP_CFI_RBP_NONE INT16_MIN

struct mp_cfi_desc {
	uint64_t ip;   /* 0: empty */
	int32_t cfa_off;
	int16_t rbp_off;
	int8_t ra_off;
	uint8_t flags;
};

/*
 * The descriptor of the frame executing at ip (a return address less 1, but
 * for the innermost frame): MP_CFI_BAD when the walker cannot use it (its rules
 * need an expression, a signal frame, a return address not at CFA - 8...).
 */
void mp_cfi_describe(uint64_t ip, struct mp_cfi_desc *d) MP_HIDDEN;

#endif
