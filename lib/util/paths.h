/*
 * Where memprof finds its files at run time: templates, the tracker library
 * and man pages. Environment variables win; a binary run from its build tree
 * uses the tree; otherwise the configured installation paths.
 */
#ifndef MEMPROF_LIB_UTIL_PATHS_H
#define MEMPROF_LIB_UTIL_PATHS_H

/* $MEMPROF_DATADIR, else the source tree's share/ when run from the build tree, else $(pkgdatadir). */
const char *mp_datadir(void);
/* Directory holding libmemprof.so: $MEMPROF_LIBDIR, else the build tree's .libs, else $(pkglibdir). */
const char *mp_libdir(void);
/* Path of a man page source ("memprof-run.1"), or NULL when only the installed man database has it. */
char *mp_manpage_path(const char *page);
/* True when this binary runs from its build tree. */
int mp_in_build_tree(void);
/* The tracker library: <libdir>/libmemprof.so. */
char *mp_tracker_path(void);

#endif
