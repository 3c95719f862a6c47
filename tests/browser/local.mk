# tests/browser: the headless Chromium harness of the HTML tests, its data generator and renderer.
EXTRA_DIST += \
	%reldir%/bench.py \
	%reldir%/bench_capture.py \
	%reldir%/cdp.py \
	%reldir%/check_capture.py \
	%reldir%/check_embed.py \
	%reldir%/check_flamegraph.py \
	%reldir%/check_flamegraph_diff.py \
	%reldir%/check_flamegraph_frames.py \
	%reldir%/check_processes.py \
	%reldir%/check_render.py \
	%reldir%/check_sampled.py \
	%reldir%/check_table.py \
	%reldir%/expect.py \
	%reldir%/gen_data.py \
	%reldir%/render.py \
	%reldir%/report_data.py \
	%reldir%/reportlib.py

# Sizes and timings of the HTML reports in headless Chromium (numbers, not a test).
bench-html:
	python3 $(srcdir)/%reldir%/bench.py --templates $(srcdir)/share/templates --out tests/bench-html
.PHONY: bench-html
# The same figures for reports memprof writes itself, from a capture of 100,000 unique stacks.
bench-html-capture: all tests/tools/mkcapture
	python3 $(srcdir)/%reldir%/bench_capture.py --memprof ./memprof \
		--mkcapture tests/tools/mkcapture --out tests/bench-html-capture
.PHONY: bench-html-capture
