# lib/transport: the rings between a tracked process and its collector (lib/transport/README.md).
# The merge is in libmp.a for the collector and in libmemprof.so for captures the tracker writes.
lib_libmp_a_SOURCES += \
	%reldir%/merge.c %reldir%/merge.h \
	%reldir%/reply.h \
	%reldir%/ring.h \
	%reldir%/settings.c %reldir%/settings.h
# end of lib_libmp_a_SOURCES for lib/transport
