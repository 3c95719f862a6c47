# lib/serve: memprof serve's HTTP endpoints (lib/serve/README.md), on libmicrohttpd.
lib_libmp_a_SOURCES += \
	%reldir%/listen.c \
	%reldir%/render.c \
	%reldir%/serve.c %reldir%/serve.h %reldir%/serve-private.h
# end of lib_libmp_a_SOURCES for lib/serve
