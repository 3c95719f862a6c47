# examples: the demo program; `make demo` profiles it and reports on it into demo/.
# examples/demo is built like a user's program (-O2 -g).
examples_demo_SOURCES = %reldir%/demo.c
examples_demo_CFLAGS = $(AM_CFLAGS) -O2 -g
demo: all %reldir%/demo$(EXEEXT)
	@mkdir -p demo
	./memprof run -f -o demo/demo.mprof %reldir%/demo$(EXEEXT) 200
	./memprof stats demo/demo.mprof
	./memprof summary --leaks -r 5 demo/demo.mprof
	./memprof tree -b 3 demo/demo.mprof
	./memprof flamegraph -f -o demo/flamegraph.html demo/demo.mprof
	./memprof flamegraph -f --leaks -o demo/leaks.html demo/demo.mprof
	./memprof table -f -o demo/table.html demo/demo.mprof
	@echo
	@echo "demo: the capture and the HTML reports are in $$(pwd)/demo/:"
	@ls -l demo
EXTRA_PROGRAMS += %reldir%/demo
CLEANFILES += %reldir%/demo$(EXEEXT)
clean-local: clean-demo
clean-demo:
	-rm -rf demo
.PHONY: demo clean-demo
