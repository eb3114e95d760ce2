/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.c: log lines to stderr or syslog, by level, each line escaped.
 */
#ifndef S3D_LOG_H
#define S3D_LOG_H

#include <stdbool.h>

enum s3d_log_level {
	S3D_LOG_ERR,
	S3D_LOG_WARN,
	S3D_LOG_INFO,
	S3D_LOG_DEBUG,
};

extern int s3d_log_level;
void s3d_log_to_syslog(const char *ident);
void s3d_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool s3d_log_once(const char *key);
void s3d_log_once_reset(void);

#define s3d_err(...)	s3d_log(S3D_LOG_ERR, __VA_ARGS__)
#define s3d_warn(...)	s3d_log(S3D_LOG_WARN, __VA_ARGS__)
#define s3d_info(...)	s3d_log(S3D_LOG_INFO, __VA_ARGS__)
#define s3d_dbg(...)						\
	do {							\
		if (s3d_log_level >= S3D_LOG_DEBUG)		\
			s3d_log(S3D_LOG_DEBUG, __VA_ARGS__);	\
	} while (0)

#endif /* S3D_LOG_H */
