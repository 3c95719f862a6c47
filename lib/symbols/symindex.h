/*
 * A module's symbol table sorted by address, to name an address without
 * libdw's dwfl_module_addrinfo(), which reads every symbol of the table on
 * each call: a stripped program with 29,000 exported symbols (gcc's cc1)
 * took seconds to symbolize. The answer is dwfl_module_addrinfo()'s, to the
 * symbol; where its rules for symbols without a size (assembly labels) could
 * make it another, the lookup says so and the caller asks libdw.
 */
#ifndef MEMPROF_LIB_SYMBOLS_SYMINDEX_H
#define MEMPROF_LIB_SYMBOLS_SYMINDEX_H

#include <elfutils/libdwfl.h>

struct mp_symindex;

/* The index of mod's symbol table; NULL when it has none, or on a machine whose symbol values need resolving (ppc64). */
struct mp_symindex *mp_symindex_build(Dwfl_Module *mod);
/*
 * The name dwfl_module_addrinfo(mod, addr) gives, in *name (NULL: no symbol):
 * 1; or 0 when only libdw can tell.
 */
int mp_symindex_lookup(const struct mp_symindex *x, Dwarf_Addr addr, const char **name);
void mp_symindex_free(struct mp_symindex *x);

#endif
