// SPDX-License-Identifier: GPL-2.0
/*
 * The log escapes what it is given from outside: a key with a newline, an
 * escape sequence, a C1 control or bytes that are not UTF-8 stays on its
 * one line, as \xNN, whichever caller formats it in with %s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "tap.h"

/* What s3d_err(fmt, arg) writes to stderr (the line, without the prefix). */
static char *logged(const char *fmt, const char *arg)
{
	static char out[65536];
	char tmpl[] = "/tmp/s3d-log.XXXXXX";
	int fd = mkstemp(tmpl), saved = dup(2);
	ssize_t n = -1;
	char *p;

	out[0] = '\0';
	if (fd < 0 || saved < 0)
		return out;
	fflush(stderr);
	dup2(fd, 2);
	s3d_err(fmt, arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (lseek(fd, 0, SEEK_SET) == 0)
		n = read(fd, out, sizeof(out) - 1);
	close(fd);
	unlink(tmpl);
	out[n > 0 ? n : 0] = '\0';
	p = strstr(out, "s3cachefsd: error: ");
	return p ? p + strlen("s3cachefsd: error: ") : out;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_log_line(void)
{
	const char *key = "a\nfake: error: forged\r\x1b[2J\x1b]0;t\x07\x7f.bin";
	char big[3000];
	const char *got;

	got = logged("GET s3://b/%s: HTTP 404", key);
	is_int(lines(got), 1, "a key with a newline: still one log line");
	is_str(got, "GET s3://b/a\\x0afake: error: forged\\x0d\\x1b[2J\\x1b]0;t\\x07\\x7f.bin: HTTP 404\n",
	       "newline, CR, ESC, BEL and DEL as \\xNN");
	ok(!strchr(got, '\x1b'), "no raw escape character reaches the terminal");

	got = logged("key %s", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 back\\slash");
	is_str(got, "key caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 back\\slash\n",
	       "valid UTF-8 and the backslash are kept");

	got = logged("key %s", "x\xc2\x9b" "31m\xff\xc0\xaf\xed\xa0\x80\xe2\x82y");
	is_str(got, "key x\\xc2\\x9b31m\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82y\n",
	       "C1 CSI, invalid, overlong, surrogate and cut UTF-8 as \\xNN");

	memset(big, 'k', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	big[2000] = '\n';
	got = logged("long %s", big);
	is_int(lines(got), 1, "a long line (past the buffer) is escaped too");
	is_int((long long)strlen(got), (long long)(5 + sizeof(big) - 1 + 3 + 1),
	       "... whole");
}

static void test_escape(void)
{
	char esc[64];

	s3d_escape("a\\b\n\xc3\xa9\xc2\x85\xfe", esc, sizeof(esc));
	is_str(esc, "a\\x5cb\\x0a\xc3\xa9\\xc2\\x85\\xfe",
	       "s3d_escape: backslash, control, C1 and a non-UTF-8 byte");
	s3d_escape("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", esc, 9);
	is_str(esc, "\xe2\x82\xac...", "s3d_escape: cut between characters");
}

int main(void)
{
	s3d_log_level = S3D_LOG_ERR;
	test_log_line();
	test_escape();
	return tap_done();
}
