# tests/e2e: shell scenarios, one behaviour each (exit 0 pass, 77 skip, 99 hard error).
E2E_TESTS = \
	%reldir%/attach-again.sh \
	%reldir%/attach-basic.sh \
	%reldir%/attach-cycles.sh \
	%reldir%/attach-errors.sh \
	%reldir%/attach-fork.sh \
	%reldir%/attach-gdb.sh \
	%reldir%/attach-real.sh \
	%reldir%/dispatch.sh \
	%reldir%/flamegraph-allocs.sh \
	%reldir%/flamegraph-temporal.sh \
	%reldir%/flamegraph-threads.sh \
	%reldir%/help.sh \
	%reldir%/html-embed.sh \
	%reldir%/html-errors.sh \
	%reldir%/html-flamegraph-threads.sh \
	%reldir%/html-flamegraph.sh \
	%reldir%/html-hostile.sh \
	%reldir%/html-output.sh \
	%reldir%/html-render.sh \
	%reldir%/html-table.sh \
	%reldir%/html-temporal.sh \
	%reldir%/inject-basic.sh \
	%reldir%/inject-errors.sh \
	%reldir%/inject-gdb.sh \
	%reldir%/inject-repeat.sh \
	%reldir%/layout.sh \
	%reldir%/parse-errors.sh \
	%reldir%/parse-golden.sh \
	%reldir%/reports-run.sh \
	%reldir%/reports-symbolize.sh \
	%reldir%/run-allocs.sh \
	%reldir%/run-crash.sh \
	%reldir%/run-cxx.sh \
	%reldir%/run-dlopen.sh \
	%reldir%/run-errors.sh \
	%reldir%/run-exec.sh \
	%reldir%/run-fork.sh \
	%reldir%/run-options.sh \
	%reldir%/run-oracle.sh \
	%reldir%/run-preload.sh \
	%reldir%/run-real.sh \
	%reldir%/run-reporter.sh \
	%reldir%/run-serials.sh \
	%reldir%/run-threads.sh \
	%reldir%/run-transparent.sh \
	%reldir%/run-unwind.sh \
	%reldir%/stats-attach.sh \
	%reldir%/stats-errors.sh \
	%reldir%/stats-escape.sh \
	%reldir%/stats-json.sh \
	%reldir%/stats-text.sh \
	%reldir%/summary-errors.sh \
	%reldir%/summary-table.sh \
	%reldir%/summary-tty.sh \
	%reldir%/table-workloads.sh \
	%reldir%/tree-errors.sh \
	%reldir%/tree-text.sh \
	%reldir%/tree-tty.sh
# end of E2E_TESTS
EXTRA_DIST += $(E2E_TESTS) \
	%reldir%/attach-init.sh \
	%reldir%/html-lib.sh \
	%reldir%/init.sh \
	%reldir%/inject-init.sh \
	%reldir%/reports.sh \
	%reldir%/heaptrack_totals.py
