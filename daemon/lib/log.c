// SPDX-License-Identifier: GPL-2.0
/*
 * Logging: levels, to stderr (foreground) or syslog (daemonized), and a
 * "log once" filter for conditions that would otherwise repeat on every
 * listing of a directory (unmappable keys, file/directory clashes).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"
#include "util.h"

int s3d_log_level = S3D_LOG_INFO;
static bool use_syslog;

static const char *const level_name[] = {
	[S3D_LOG_ERR] = "error",
	[S3D_LOG_WARN] = "warning",
	[S3D_LOG_INFO] = "info",
	[S3D_LOG_DEBUG] = "debug",
};

static const int level_prio[] = {
	[S3D_LOG_ERR] = LOG_ERR,
	[S3D_LOG_WARN] = LOG_WARNING,
	[S3D_LOG_INFO] = LOG_INFO,
	[S3D_LOG_DEBUG] = LOG_DEBUG,
};

void s3d_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

/*
 * Every line goes through s3d_escape_mem(): keys, paths and servers' words
 * are formatted in with %s all over the daemon, and one of them with a
 * newline or an escape sequence must not forge a log line or drive the
 * terminal. The backslash is left alone (callers may have escaped).
 */
void s3d_log(int level, const char *fmt, ...)
{
	char line[1024], esc[4 * sizeof(line)], *big = NULL, *bigesc = NULL;
	const char *msg = esc;
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (level > s3d_log_level)
		return;
	if (level < S3D_LOG_ERR)
		level = S3D_LOG_ERR;
	if (level > S3D_LOG_DEBUG)
		level = S3D_LOG_DEBUG;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n < sizeof(line)) {
		s3d_escape_mem(line, n, esc, sizeof(esc), false);
	} else {
		big = malloc((size_t)n + 1);
		bigesc = malloc(4 * ((size_t)n + 1));
		if (big && bigesc) {
			va_start(ap, fmt);
			vsnprintf(big, (size_t)n + 1, fmt, ap);
			va_end(ap);
			s3d_escape_mem(big, n, bigesc, 4 * ((size_t)n + 1),
				       false);
			msg = bigesc;
		} else {
			/* Cut rather than lost. */
			s3d_escape_mem(line, sizeof(line) - 1, esc, sizeof(esc),
				       false);
		}
	}
	if (use_syslog) {
		syslog(level_prio[level], "%s", msg);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		fprintf(stderr, "%02d:%02d:%02d.%03ld s3cachefsd: %s: %s\n",
			tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
			level_name[level], msg);
	}
	free(big);
	free(bigesc);
}

/*
 * Keys already reported. Bounded, so a bucket with millions of bad keys
 * cannot grow the daemon without limit; past the bound we stop reporting
 * new ones (and say so once).
 */
#define LOG_ONCE_MAX	65536
static struct s3d_strset once;
static bool once_full;

bool s3d_log_once(const char *key)
{
	if (s3d_strset_get(&once, key, NULL))
		return false;
	if (once.count >= LOG_ONCE_MAX) {
		if (!once_full)
			s3d_warn("too many distinct problems to report; suppressing further ones");
		once_full = true;
		return false;
	}
	if (s3d_strset_put(&once, key, 1) < 0)
		return false;
	return true;
}

void s3d_log_once_reset(void)
{
	s3d_strset_free(&once);
	once_full = false;
}
