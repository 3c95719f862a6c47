# lib/format: the capture format: constants, encoders, decoder, reader, writer, dump (lib/format/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/capture.c %reldir%/capture.h \
	%reldir%/dump.c %reldir%/dump.h \
	%reldir%/encode.h \
	%reldir%/fields.c %reldir%/fields.h \
	%reldir%/format.h \
	%reldir%/readahead.c %reldir%/readahead.h
# end of lib_libmp_a_SOURCES for lib/format
