# share/templates: the HTML report templates, expanded by the reporters (share/templates/README.md).
templatesdir = $(pkgdatadir)/templates
dist_templates_DATA = \
	%reldir%/templates/chart.js \
	%reldir%/templates/common.css \
	%reldir%/templates/common.js \
	%reldir%/templates/flamegraph.html \
	%reldir%/templates/flamegraph.js \
	%reldir%/templates/head.html \
	%reldir%/templates/table.html \
	%reldir%/templates/table.js
# end of dist_templates_DATA
EXTRA_DIST += %reldir%/templates/README.md
