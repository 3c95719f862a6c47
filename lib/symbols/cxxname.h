/*
 * Demangled C++ names taken apart for reports: where the qualified name
 * begins after a function template's return type, and a short form with
 * the template arguments elided, for terminal views (heaptrack's
 * --shorten-templates rule, with operators kept whole).
 *
 *	"void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(...)"
 *	name start: the "std::vector..." part
 *	short: "std::vector<…>::_M_realloc_insert<…>(__gnu_cxx::__normal_iterator<…>, int const&)"
 */
#ifndef MEMPROF_LIB_SYMBOLS_CXXNAME_H
#define MEMPROF_LIB_SYMBOLS_CXXNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/util/strbuf.h"

/*
 * The offset of the qualified name in a demangled function name: past a
 * return type ("void ", "std::vector<int>& ") that function templates
 * carry; 0 when there is none, and for names that are not C++.
 */
size_t mp_cxx_name_start(const char *name);

/*
 * Whether name looks like a demangled C++ (or Rust) name worth shortening:
 * it has "::" or an argument list and does not begin with '<' or '['
 * (Python's "<module>", memprof's "[smaller frames]", Rust's "<T as
 * Trait>::f" keep their form).
 */
bool mp_cxx_is_name(const char *name);

/*
 * Append the short form of name to out: the return type left out, and
 * everything between the outermost '<' and '>' of each template argument
 * list replaced by "…" ("std::map<…>::operator[](int const&)"). The
 * arguments are kept, their own templates shortened; operator<, operator<<,
 * operator->, operator<=> and the like are kept whole. A name that is not
 * C++ (mp_cxx_is_name) or whose brackets do not balance is copied as is.
 */
void mp_cxx_shorten(const char *name, struct strbuf *out);

#endif
