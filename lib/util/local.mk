# lib/util: generic helpers: errors, allocation, strings, hash maps, paths (lib/util/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/bytes.h \
	%reldir%/hash.c %reldir%/hash.h \
	%reldir%/machine.c %reldir%/machine.h \
	%reldir%/paths.c %reldir%/paths.h \
	%reldir%/publish.h \
	%reldir%/sort.h \
	%reldir%/strbuf.c %reldir%/strbuf.h \
	%reldir%/strtab.c %reldir%/strtab.h \
	%reldir%/usage.c %reldir%/usage.h \
	%reldir%/xalloc.c %reldir%/xalloc.h
# end of lib_libmp_a_SOURCES for lib/util
