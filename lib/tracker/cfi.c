/*
 * Reading DWARF call-frame information (.eh_frame via .eh_frame_hdr) into
 * the stack walker's frame descriptors: the FDE of an address found by the
 * binary search table every linker writes, its CIE's initial rules, then
 * the CFA program run up to the address.
 */
#include <config.h>
#include "lib/tracker/cfi.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#if defined(__x86_64__)

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* ---- reading DWARF ---- */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t sleb(struct rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

#define RD_FIXED(type, name)                                  \
	static type name(struct rd *r)                        \
	{                                                     \
		type v;                                       \
		if (r->end - r->p < (ptrdiff_t)sizeof(type)) { \
			r->bad = 1;                           \
			return 0;                             \
		}                                             \
		memcpy(&v, r->p, sizeof(v));                  \
		r->p += sizeof(v);                            \
		return v;                                     \
	}
RD_FIXED(uint8_t, u8)
RD_FIXED(uint16_t, u16)
RD_FIXED(uint32_t, u32)
RD_FIXED(uint64_t, u64)

/* A DW_EH_PE-encoded pointer; datarel is relative to base (.eh_frame_hdr). */
static uint64_t encoded(struct rd *r, uint8_t enc, uint64_t base)
{
	uint64_t at = (uint64_t)r->p, v;
	if (enc == 0xff)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = u64(r); break;
	case 0x01: v = uleb(r); break;
	case 0x02: v = u16(r); break;
	case 0x03: v = u32(r); break;
	case 0x04: v = u64(r); break;
	case 0x09: v = (uint64_t)sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)u16(r); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)u32(r); break;
	case 0x0c: v = u64(r); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;
	case 0x30: v += base; break;
	default: r->bad = 1; return 0;
	}
	if (enc & 0x80)
		r->bad = 1; /* indirect pointers do not occur in FDE ranges */
	return v;
}

/*
 * Past a pointer whose value is not needed: the personality routine of a
 * CIE with 'P'. C++ code has one in most CIEs (GCC's __gxx_personality_v0,
 * reached through the GOT: DW_EH_PE_indirect | pcrel | sdata4), so
 * rejecting indirect pointers here sent every C++ frame to libunwind.
 */
static void skip_encoded(struct rd *r, uint8_t enc)
{
	if (enc == 0xff)
		return;
	if ((enc & 0x70) == 0x50) {
		r->bad = 1; /* DW_EH_PE_aligned: not written by GCC or LLVM for x86_64 */
		return;
	}
	encoded(r, enc & 0x0f, 0);
}

struct find {
	uint64_t ip;
	const uint8_t *hdr;
	uint64_t lo, hi;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	const ElfW(Phdr) *eh = NULL;
	int inside = 0;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->ip >= start && f->ip < start + ph->p_memsz)
			inside = 1;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			eh = ph;
	}
	if (!inside)
		return 0;
	if (eh)
		f->hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
	return 1;
}

struct rules {
	uint8_t cfa_reg;
	int64_t cfa_off;
	int64_t rbp_off, ra_off;
	uint8_t rbp_kind, ra_kind; /* 0 same/unset, 1 offset, 2 undefined, 3 unsupported */
};

/* Run call-frame instructions until the row that covers target. */
static int run_cfa(struct rd *r, uint64_t *loc, uint64_t target, uint64_t caf, int64_t daf,
		   uint8_t fde_enc, struct rules *st, const struct rules *init)
{
	struct rules stack[8];
	int depth = 0;
	while (r->p < r->end && !r->bad) {
		uint8_t op = u8(r), hi = op & 0xc0, lo = op & 0x3f;
		uint64_t reg, delta = 0;
		int64_t off;
		if (hi == 0x40) {
			delta = lo * caf;
			goto advance;
		}
		if (hi == 0x80) {
			reg = lo;
			off = (int64_t)uleb(r) * daf;
			goto set_offset;
		}
		if (hi == 0xc0) {
			reg = lo;
			goto restore;
		}
		switch (op) {
		case 0x00: continue;
		case 0x01: {
			uint64_t nl = encoded(r, fde_enc, 0);
			if (nl > target)
				return 0;
			*loc = nl;
			continue;
		}
		case 0x02: delta = u8(r) * caf; goto advance;
		case 0x03: delta = u16(r) * caf; goto advance;
		case 0x04: delta = u32(r) * caf; goto advance;
		case 0x05: reg = uleb(r); off = (int64_t)uleb(r) * daf; goto set_offset;
		case 0x06: reg = uleb(r); goto restore;
		case 0x07:
			reg = uleb(r);
			if (reg == REG_RBP)
				st->rbp_kind = 2;
			else if (reg == REG_RA)
				st->ra_kind = 2;
			continue;
		case 0x08:
			reg = uleb(r);
			if (reg == REG_RBP)
				st->rbp_kind = 0;
			else if (reg == REG_RA)
				st->ra_kind = 3;
			continue;
		case 0x09:
			reg = uleb(r);
			uleb(r);
			if (reg == REG_RBP || reg == REG_RA)
				return -1;
			continue;
		case 0x0a:
			if (depth == 8)
				return -1;
			stack[depth++] = *st;
			continue;
		case 0x0b:
			if (!depth)
				return -1;
			*st = stack[--depth]; /* the whole row, CFA rule included, as GCC expects */
			continue;
		case 0x0c: st->cfa_reg = (uint8_t)uleb(r); st->cfa_off = (int64_t)uleb(r); continue;
		case 0x0d: st->cfa_reg = (uint8_t)uleb(r); continue;
		case 0x0e: st->cfa_off = (int64_t)uleb(r); continue;
		case 0x0f: return -1; /* CFA by expression */
		case 0x10:
		case 0x16: {
			uint64_t len;
			reg = uleb(r);
			len = uleb(r);
			if (reg == REG_RBP || reg == REG_RA || len > (uint64_t)(r->end - r->p))
				return -1;
			r->p += len;
			continue;
		}
		case 0x11: reg = uleb(r); off = sleb(r) * daf; goto set_offset;
		case 0x12: st->cfa_reg = (uint8_t)uleb(r); st->cfa_off = sleb(r) * daf; continue;
		case 0x13: st->cfa_off = sleb(r) * daf; continue;
		case 0x14: case 0x15:
			reg = uleb(r);
			if (op == 0x14)
				uleb(r);
			else
				sleb(r);
			if (reg == REG_RBP || reg == REG_RA)
				return -1;
			continue;
		case 0x2e: uleb(r); continue;
		case 0x2f: reg = uleb(r); off = -(int64_t)uleb(r) * daf; goto set_offset;
		default: return -1;
		}
advance:
		if (*loc + delta > target)
			return 0;
		*loc += delta;
		continue;
set_offset:
		if (reg == REG_RBP) {
			st->rbp_kind = 1;
			st->rbp_off = off;
		} else if (reg == REG_RA) {
			st->ra_kind = 1;
			st->ra_off = off;
		}
		continue;
restore:
		if (reg == REG_RBP) {
			st->rbp_kind = init->rbp_kind;
			st->rbp_off = init->rbp_off;
		} else if (reg == REG_RA) {
			st->ra_kind = init->ra_kind;
			st->ra_off = init->ra_off;
		}
		continue;
	}
	return r->bad ? -1 : 0;
}

/* Compute the descriptor of the frame executing at ip (already adjusted for return addresses). */
void mp_cfi_describe(uint64_t ip, struct mp_cfi_desc *d)
{
	struct find f = { .ip = ip };
	struct rd r;
	uint64_t base, fde_count, lo, hi, fde_addr = 0, cie_addr, pc_begin, pc_range, loc;
	uint8_t table_enc, fde_enc = 0, version;
	uint64_t caf;
	int64_t daf;
	const char *aug;
	int has_z = 0, signal = 0;
	struct rules init = { REG_RSP, 8, 0, -8, 0, 1 }, st;

	d->ip = ip;
	d->flags = MP_CFI_BAD;
	dl_iterate_phdr(find_cb, &f);
	if (!f.hdr)
		return;
	/* .eh_frame_hdr: version, encodings, eh_frame_ptr, fde_count, sorted table. */
	base = (uint64_t)f.hdr;
	r = (struct rd){ f.hdr, f.hdr + 1024 * 1024 * 1024, 0 };
	if (u8(&r) != 1)
		return;
	{
		uint8_t ptr_enc = u8(&r), count_enc = u8(&r);
		table_enc = u8(&r);
		encoded(&r, ptr_enc, base);
		fde_count = encoded(&r, count_enc, base);
	}
	if (r.bad || table_enc != 0x3b || !fde_count)
		return; /* only the datarel|sdata4 table that every linker writes */
	{
		const int32_t *tab = (const int32_t *)r.p;
		lo = 0;
		hi = fde_count;
		if ((int64_t)ip < (int64_t)(base + (uint64_t)(int64_t)tab[0]))
			return;
		while (hi - lo > 1) {
			uint64_t mid = (lo + hi) / 2;
			if (base + (uint64_t)(int64_t)tab[2 * mid] <= ip)
				lo = mid;
			else
				hi = mid;
		}
		fde_addr = base + (uint64_t)(int64_t)tab[2 * lo + 1];
	}
	/* The FDE. */
	r = (struct rd){ (const uint8_t *)fde_addr, (const uint8_t *)fde_addr + 8, 0 };
	{
		uint32_t len = u32(&r);
		const uint8_t *cie_ptr_at = r.p;
		uint32_t cie_off;
		if (len == 0 || len == 0xffffffff)
			return;
		r.end = r.p + len;
		cie_off = u32(&r);
		if (!cie_off)
			return;
		cie_addr = (uint64_t)cie_ptr_at - cie_off;
	}
	/* The CIE. */
	{
		struct rd c = { (const uint8_t *)cie_addr, (const uint8_t *)cie_addr + 8, 0 };
		uint32_t len = u32(&c);
		if (len == 0 || len == 0xffffffff)
			return;
		c.end = c.p + len;
		if (u32(&c) != 0)
			return;
		version = u8(&c);
		if (version != 1 && version != 3)
			return;
		aug = (const char *)c.p;
		while (c.p < c.end && *c.p)
			c.p++;
		c.p++;
		caf = uleb(&c);
		daf = sleb(&c);
		if (version == 1)
			u8(&c);
		else
			uleb(&c);
		for (const char *a = aug; *a && !c.bad; a++) {
			switch (*a) {
			case 'z': has_z = 1; uleb(&c); break;
			case 'R': fde_enc = u8(&c); break;
			case 'L': u8(&c); break;
			case 'P': skip_encoded(&c, u8(&c)); break;
			case 'S': signal = 1; break;
			case 'B': break;
			default: return; /* unknown augmentation: its data cannot be skipped */
			}
		}
		if (c.bad || signal)
			return;
		/* The CIE's initial instructions define the rules every FDE starts from. */
		loc = 0;
		st = init;
		if (run_cfa(&c, &loc, UINT64_MAX, caf, daf, fde_enc, &st, &init) < 0)
			return;
		init = st;
	}
	pc_begin = encoded(&r, fde_enc, base);
	pc_range = encoded(&r, fde_enc & 0x0f, base);
	if (r.bad || ip < pc_begin || ip >= pc_begin + pc_range)
		return;
	if (has_z) {
		uint64_t alen = uleb(&r);
		if (alen > (uint64_t)(r.end - r.p))
			return;
		r.p += alen;
	}
	loc = pc_begin;
	st = init;
	if (run_cfa(&r, &loc, ip, caf, daf, fde_enc, &st, &init) < 0)
		return;
	if (st.ra_kind == 2) {
		d->flags = MP_CFI_END;
		return;
	}
	if (st.ra_kind != 1 || (st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) ||
	    st.rbp_kind == 3 || st.cfa_off < INT32_MIN || st.cfa_off > INT32_MAX ||
	    st.ra_off != -8 || st.rbp_off <= INT16_MIN || st.rbp_off > INT16_MAX)
		return; /* (the walk and reusable_from() read the x86_64 return-address slot) */
	d->cfa_off = (int32_t)st.cfa_off;
	d->ra_off = (int8_t)st.ra_off;
	d->rbp_off = st.rbp_kind == 1 ? (int16_t)st.rbp_off : MP_CFI_RBP_NONE;
	d->flags = (uint8_t)((st.cfa_reg == REG_RBP ? MP_CFI_CFA_RBP : 0) | (st.rbp_kind == 1 ? MP_CFI_RBP_SAVED : 0));
}

#endif
