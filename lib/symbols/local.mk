# lib/symbols: symbolization with libdw (lib/symbols/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/symbols.c %reldir%/symbols.h %reldir%/describe.c %reldir%/debuginfod.c \
	%reldir%/debugcache.c %reldir%/debugcache.h \
	%reldir%/symbols-private.h \
	%reldir%/symindex.c %reldir%/symindex.h %reldir%/cxxname.c %reldir%/cxxname.h
# end of lib_libmp_a_SOURCES for lib/symbols
