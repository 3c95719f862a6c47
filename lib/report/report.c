/* Output names and metadata wording shared by the reports. */
#include <config.h>
#include "lib/report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/report/render-text.h"
#include "lib/symbols/cxxname.h"
#include "lib/util/xalloc.h"

/*
 * Split path into its directory part (with the slash, or "") and its file
 * name. A capture read from standard input ("-", /dev/stdin) is "stdin", and
 * one read through another descriptor (/dev/fd/63, /proc/self/fd/5) is
 * named after it, in the working directory: never next to it in /dev.
 */
static void split_path(const char *path, struct strbuf *dir, const char **name)
{
	static const char *const stdin_names[] = { "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0" };
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	for (size_t i = 0; i < sizeof(stdin_names) / sizeof(stdin_names[0]); i++)
		if (!strcmp(path, stdin_names[i]))
			*name = "stdin";
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) || !strcmp(*name, "stdin"))
		return;
	if (slash)
		strbuf_add(dir, path, (size_t)(slash - path + 1));
}

char *mp_report_output_path(const char *capture, const char *reporter, const char *ext)
{
	struct strbuf sb = STRBUF_INIT;
	const char *name, *dot;
	size_t len;
	split_path(capture, &sb, &name);
	if (!strncmp(name, "memprof-", 8) && name[8])
		name += 8;
	dot = strrchr(name, '.');
	len = dot && dot != name ? (size_t)(dot - name) : strlen(name);
	strbuf_addf(&sb, "memprof-%s-", reporter);
	strbuf_add(&sb, name, len);
	strbuf_addstr(&sb, ext);
	return strbuf_detach(&sb, NULL);
}

char *mp_report_stats_path(const char *capture)
{
	struct strbuf sb = STRBUF_INIT;
	const char *name;
	split_path(capture, &sb, &name);
	strbuf_addf(&sb, "memprof-stats-%s.json", name);
	return strbuf_detach(&sb, NULL);
}

int mp_report_write_file(const char *path, const void *data, size_t len, bool force,
			 struct strbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0666);
	const char *p = data;
	if (fd < 0) {
		if (errno == EEXIST)
			strbuf_addf(err, "'%s' already exists (use -f to overwrite it)", path);
		else
			strbuf_addf(err, "cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			strbuf_addf(err, "cannot write '%s': %s", path,
				    n < 0 ? strerror(errno) : "short write");
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0) {
		strbuf_addf(err, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./=:,+@%", *s))
			return true;
	return false;
}

void mp_report_command_line(const struct mp_analysis *a, bool quote, struct strbuf *sb)
{
	for (size_t i = 0; i < a->header.argc; i++) {
		const char *arg = a->header.argv[i];
		if (i)
			strbuf_addch(sb, ' ');
		if (!quote || !needs_quotes(arg)) {
			strbuf_addstr(sb, arg);
			continue;
		}
		strbuf_addch(sb, '\'');
		for (const char *c = arg; *c; c++) {
			if (*c == '\'')
				strbuf_addstr(sb, "'\\''");
			else
				strbuf_addch(sb, *c);
		}
		strbuf_addch(sb, '\'');
	}
}

const char *mp_signal_name(int sig)
{
	static const char *const names[] = {
		NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
		"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
		"SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN",
		"SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
		"SIGIO", "SIGPWR", "SIGSYS",
	};
	static __thread char buf[24];
	if (sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]))
		return names[sig];
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/* How a capture's process ended, by its trailer (or its EXIT record, when it has no trailer). */
static void exit_status(const struct mp_trailer *t, bool has_marker, int64_t marker,
			struct strbuf *sb)
{
	if (t->present && t->has_exit_code) {
		strbuf_addf(sb, "%d", t->exit_code);
	} else if (t->present && t->has_exit_signal) {
		strbuf_addf(sb, "killed by signal %d (%s)%s", t->exit_signal,
			    mp_signal_name(t->exit_signal), t->core_dumped ? ", core dumped" : "");
	} else if (t->present && t->end_reason == MP_END_DETACH) {
		strbuf_addstr(sb, "unknown: tracking stopped before the process ended (detach or stop)");
	} else if (t->present && t->end_reason == MP_END_SNAPSHOT) {
		strbuf_addstr(sb, "unknown: a snapshot, taken while the process ran");
	} else if (t->present && t->end_reason == MP_END_EXEC) {
		strbuf_addstr(sb, "none: the process went on as another program (exec)");
	} else if (t->present) {
		strbuf_addstr(sb, "unknown: the stream ended without an exit status");
	} else if (has_marker) {
		strbuf_addf(sb, "%lld (the argument of exit(); the capture has no trailer)",
			    (long long)marker);
	} else {
		strbuf_addstr(sb, "unknown: the capture has no trailer (it was cut short)");
	}
}

void mp_report_exit_status(const struct mp_analysis *a, struct strbuf *sb)
{
	exit_status(&a->trailer, a->has_exit_marker, a->exit_marker_status, sb);
}

void mp_report_process_exit(const struct mp_analysis *a, uint32_t process, struct strbuf *sb)
{
	exit_status(&a->processes[process].trailer, false, 0, sb);
}

void mp_report_peak_time(const struct mp_analysis *a, struct strbuf *sb)
{
	if (a->totals.peak_ticks) {
		strbuf_addstr(sb, "at ");
		mp_format_duration(sb, a->totals.peak_time_us);
	} else {
		strbuf_addstr(sb, "before the first sample");
	}
}

static void amount(struct strbuf *sb, struct mp_counts c)
{
	mp_format_size(sb, c.bytes);
	strbuf_addf(sb, " in %llu allocation%s", (unsigned long long)c.count,
		    c.count == 1 ? "" : "s");
}

void mp_report_view_title(const struct mp_analysis *a, enum mp_view view, struct strbuf *sb)
{
	struct mp_counts c = mp_analysis_view_total(a, view);
	switch (view) {
	case MP_VIEW_PEAK:
		strbuf_addstr(sb, "Peak memory: ");
		amount(sb, c);
		strbuf_addstr(sb, ", ");
		mp_report_peak_time(a, sb);
		break;
	case MP_VIEW_LEAKS:
		strbuf_addstr(sb, "Leaked memory (still allocated at the end): ");
		amount(sb, c);
		break;
	case MP_VIEW_TEMPORARY:
		strbuf_addf(sb, "Temporary allocations (freed by their thread within %llu other allocation%s): ",
			    (unsigned long long)a->opts.temporary_threshold,
			    a->opts.temporary_threshold == 1 ? "" : "s");
		amount(sb, c);
		break;
	case MP_VIEW_ALLOCATED:
		strbuf_addstr(sb, "All allocations: ");
		amount(sb, c);
		break;
	}
	if (a->nprocesses > 1)
		strbuf_addf(sb, ", in %zu processes", a->nprocesses);
	if (a->attached)
		strbuf_addstr(sb, " (since attach)");
	if (a->opts.flags & MP_ANALYSIS_NO_MMAP)
		strbuf_addstr(sb, " (mappings left out)");
	if (mp_analysis_estimated(a)) {
		strbuf_addstr(sb, " (");
		mp_report_estimated(a, sb);
		strbuf_addch(sb, ')');
	}
}

void mp_report_estimated(const struct mp_analysis *a, struct strbuf *sb)
{
	if (!mp_analysis_estimated(a))
		return;
	strbuf_addstr(sb, "estimated from a sample, one allocation per ");
	if (a->sampling_mixed)
		strbuf_addstr(sb, "up to ");
	mp_format_size(sb, a->sampling_interval);
	strbuf_addstr(sb, a->sampling_mixed ? " allocated, each capture by its own" : " allocated");
}

void mp_report_name(const char *fn, bool full, struct strbuf *sb)
{
	struct strbuf tmp = STRBUF_INIT;
	if (full || !mp_cxx_is_name(fn)) {
		mp_text_addstr_safe(sb, fn);
		return;
	}
	mp_cxx_shorten(fn, &tmp);
	mp_text_add_safe(sb, tmp.buf, tmp.len);
	strbuf_release(&tmp);
}

void mp_report_function(const struct mp_analysis *a, uint32_t loc, bool full, struct strbuf *sb)
{
	const struct mp_location *l = mp_analysis_location(a, loc);
	/* Python's names, and a process's ("cc1 (pid 12)"), are not C++. */
	mp_report_name(mp_analysis_string(a, l->function),
		       full || (l->flags & (MP_LOC_PYTHON | MP_LOC_PROCESS)), sb);
}

void mp_report_location(const struct mp_analysis *a, uint32_t loc, enum mp_location_style style,
			bool full, struct strbuf *sb)
{
	const struct mp_location *l = mp_analysis_location(a, loc);
	mp_report_function(a, loc, full, sb);
	if (!l->file)
		return;
	strbuf_addstr(sb, style == MP_LOC_STYLE_COLON ? ":" : " at ");
	mp_text_addstr_safe(sb, mp_analysis_string(a, l->file));
	if (l->line && style != MP_LOC_STYLE_AT_FILE)
		strbuf_addf(sb, ":%u", l->line);
}

void mp_report_site(const struct mp_analysis *a, uint32_t site, uint32_t caller,
		    enum mp_location_style style, bool full, struct strbuf *sb)
{
	mp_report_location(a, site, style, full, sb);
	if (caller == MP_NONE)
		return;
	strbuf_addstr(sb, " called from ");
	mp_report_location(a, caller, style, full, sb);
}
