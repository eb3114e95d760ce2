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

#include "s3cachefsd.h"

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

void s3d_log(int level, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (level > s3d_log_level)
		return;
	if (level < S3D_LOG_ERR)
		level = S3D_LOG_ERR;
	if (level > S3D_LOG_DEBUG)
		level = S3D_LOG_DEBUG;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(level_prio[level], fmt, ap);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		fprintf(stderr, "%02d:%02d:%02d.%03ld s3cachefsd: %s: ",
			tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
			level_name[level]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
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
