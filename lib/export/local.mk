# lib/export: memprof transform's formats (lib/export/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/csv.c \
	%reldir%/export.c %reldir%/export.h %reldir%/export-private.h \
	%reldir%/folded.c \
	%reldir%/pprof.c \
	%reldir%/sink.c %reldir%/sink.h \
	%reldir%/speedscope.c
# end of lib_libmp_a_SOURCES for lib/export
lib_libmp_a_CFLAGS += $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
MP_LIBS += $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)

# The pprof messages, generated from our profile.proto into the build tree.
nodist_lib_libmp_a_SOURCES = %reldir%/profile.pb-c.c %reldir%/profile.pb-c.h
BUILT_SOURCES = %reldir%/profile.pb-c.c %reldir%/profile.pb-c.h
CLEANFILES += %reldir%/profile.pb-c.c %reldir%/profile.pb-c.h
EXTRA_DIST += %reldir%/profile.proto
%reldir%/profile.pb-c.c: %reldir%/profile.proto
	$(AM_V_GEN)$(MKDIR_P) %reldir% && \
	$(PROTOC_C) --proto_path=$(srcdir)/%reldir% --c_out=%reldir% $(srcdir)/%reldir%/profile.proto
# Both files come from one run (the automake manual's recipe for a rule with two outputs).
%reldir%/profile.pb-c.h: %reldir%/profile.pb-c.c
	@test -f $@ || rm -f %reldir%/profile.pb-c.c
	@test -f $@ || $(MAKE) $(AM_MAKEFLAGS) %reldir%/profile.pb-c.c
# pprof.c includes the generated header, also when a single target is made.
%reldir%/lib_libmp_a-pprof.$(OBJEXT): %reldir%/profile.pb-c.h
