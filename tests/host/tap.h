/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP for the daemon's host unit tests: "ok N - name" /
 * "not ok N - name" with a diagnostic, the plan at the end, exit status 1
 * if anything failed.
 */
#ifndef S3D_TAP_H
#define S3D_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline void tap_vok(int pass, const char *fmt, va_list ap)
{
	printf("%s %d - ", pass ? "ok" : "not ok", ++tap_n);
	vprintf(fmt, ap);
	putchar('\n');
	if (!pass)
		tap_failed++;
	fflush(stdout);
}

static inline __attribute__((format(printf, 2, 3)))
int ok(int pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vok(pass, fmt, ap);
	va_end(ap);
	return pass;
}

static inline __attribute__((format(printf, 3, 4)))
int is_str(const char *got, const char *want, const char *fmt, ...)
{
	int pass = got && want && !strcmp(got, want);
	va_list ap;

	va_start(ap, fmt);
	tap_vok(pass, fmt, ap);
	va_end(ap);
	if (!pass) {
		printf("#   got:  '%s'\n", got ? got : "(null)");
		printf("#   want: '%s'\n", want ? want : "(null)");
	}
	return pass;
}

static inline __attribute__((format(printf, 3, 4)))
int is_int(long long got, long long want, const char *fmt, ...)
{
	int pass = got == want;
	va_list ap;

	va_start(ap, fmt);
	tap_vok(pass, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got %lld, want %lld\n", got, want);
	return pass;
}

static inline void diag(const char *s)
{
	printf("# %s\n", s);
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}

#endif
