# tests/data: golden captures with their expected dumps (tests/data/README), and render fixtures.
EXTRA_DIST += \
	%reldir%/README \
	%reldir%/app.txt \
	%reldir%/basic.txt \
	%reldir%/huge.txt \
	%reldir%/noevents.txt \
	%reldir%/plugins.txt \
	%reldir%/basic.mprof %reldir%/basic.expected \
	%reldir%/basic-v2.mprof %reldir%/basic-v2.expected \
	%reldir%/basic-v1.mprof %reldir%/basic-v1.expected \
	%reldir%/raw.mprof %reldir%/raw.expected \
	%reldir%/basic-v3.mprof %reldir%/basic-v3.expected \
	%reldir%/raw-v3.mprof %reldir%/raw-v3.expected \
	%reldir%/raw-v2.mprof %reldir%/raw-v2.expected \
	%reldir%/render/a.css \
	%reldir%/render/b.js \
	%reldir%/render/c.html \
	%reldir%/render/data.json \
	%reldir%/render/expected.html \
	%reldir%/render/page.html
