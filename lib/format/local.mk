# lib/format: the capture format: constants, encoders, decoder, reader, writer, dump (lib/format/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/aggregate.c %reldir%/aggregate.h \
	%reldir%/decode.c %reldir%/decode-events.c %reldir%/decode.h %reldir%/decode-private.h \
	%reldir%/dict.c %reldir%/dict.h \
	%reldir%/dump.c %reldir%/dump.h \
	%reldir%/encode.h \
	%reldir%/fields.c %reldir%/fields.h \
	%reldir%/fold.c %reldir%/fold-emit.c %reldir%/fold-live.c %reldir%/fold.h %reldir%/fold-private.h \
	%reldir%/format.h \
	%reldir%/readahead.c \
	%reldir%/reader.c %reldir%/reader-blocks.c %reldir%/reader.h %reldir%/reader-private.h \
	%reldir%/writer.c %reldir%/writer-blocks.c %reldir%/writer-events.c %reldir%/writer.h %reldir%/writer-private.h
# end of lib_libmp_a_SOURCES for lib/format
