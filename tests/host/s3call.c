// SPDX-License-Identifier: GPL-2.0
/*
 * s3call - one synchronous S3 call of libs3c.a (client.c) from the command
 * line, for the host scripts (write_smoke.sh, s3rver_smoke.sh): the write
 * requests have no user in the daemon yet, and --selftest is the daemon's
 * read side only.
 *
 *   s3call [--endpoint URL] [--anonymous] [--attempts N] CMD ARGS...
 *
 *   put BUCKET KEY FILE OFFSET LENGTH [--if-none-match] [--if-match ETAG]
 *       [--type TYPE] [--meta NAME=VALUE]...        -> ETAG etag
 *   get BUCKET KEY                                  -> the body on stdout
 *   head BUCKET KEY                                 -> ETAG etag / SIZE n
 *   delete BUCKET KEY
 *   mpu-create BUCKET KEY [--type TYPE] [--meta NAME=VALUE]...
 *                                                   -> UPLOAD id
 *   mpu-part BUCKET KEY ID N FILE OFFSET LENGTH     -> ETAG etag
 *   mpu-complete BUCKET KEY ID N=ETAG... [--if-none-match] [--if-match ETAG]
 *                                                   -> ETAG etag
 *   mpu-abort BUCKET KEY ID
 *
 * Path-style addressing. Credentials from AWS_ACCESS_KEY_ID/
 * AWS_SECRET_ACCESS_KEY unless --anonymous. A failure prints
 * "ERR errno ERRNAME status code" on stdout and exits 1; usage errors
 * exit 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/client.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/s3.h"
#include "lib/xfer.h"
#include "lib/xml.h"

#define META_MAX	8

struct args {
	struct s3d_put_opts o;
	struct s3d_kv meta[META_MAX];
	char **pos;		/* what is left after the options */
	int npos;
};

static void usage(void)
{
	fprintf(stderr, "usage: s3call [--endpoint URL] [--anonymous] "
		"[--attempts N] CMD ARGS... (see tests/host/s3call.c)\n");
	exit(2);
}

/* The options of a command, anywhere after it; the rest in @a->pos. */
static void cmd_opts(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "if-none-match", no_argument, NULL, 'n' },
		{ "if-match", required_argument, NULL, 'm' },
		{ "type", required_argument, NULL, 't' },
		{ "meta", required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;	/* glibc: start over, at argv[1] */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *eq;

		switch (c) {
		case 'n':
			a->o.if_none_match = true;
			break;
		case 'm':
			a->o.if_match = optarg;
			break;
		case 't':
			a->o.content_type = optarg;
			break;
		case 'M':
			eq = strchr(optarg, '=');
			if (!eq || a->o.nmeta == META_MAX)
				usage();
			*eq = '\0';
			a->meta[a->o.nmeta++] = (struct s3d_kv){ optarg, eq + 1 };
			break;
		default:
			usage();
		}
	}
	a->o.meta = a->meta;
	a->pos = argv + optind;
	a->npos = argc - optind;
}

static uint64_t num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || !*s)
		usage();
	return v;
}

static size_t to_stdout(void *arg, const char *p, size_t n)
{
	(void)arg;
	return fwrite(p, 1, n, stdout);
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(path);
		exit(2);
	}
	return fd;
}

/* mpu-complete's "N=ETAG" arguments. */
static int complete(struct s3d_s3 *s3, struct args *a, char *etag,
		    struct s3d_call_err *ce)
{
	struct s3d_part parts[64];
	int i, n = a->npos - 3;

	if (n < 0 || n > (int)S3D_ARRAY_SIZE(parts))
		usage();
	for (i = 0; i < n; i++) {
		char *eq = strchr(a->pos[3 + i], '=');

		if (!eq)
			usage();
		*eq = '\0';
		parts[i] = (struct s3d_part){ (unsigned int)num(a->pos[3 + i]),
					      eq + 1 };
	}
	return s3d_call_mpu_complete(s3, a->pos[0], a->pos[1], a->pos[2],
				     parts, (size_t)n, &a->o, etag, ce);
}

static int run(struct s3d_s3 *s3, const char *cmd, struct args *a,
	       struct s3d_call_err *ce)
{
	char etag[S3D_ETAG_MAX + 1], id[S3D_UPLOAD_ID_MAX + 1];
	struct s3d_obj_info info;
	char **p = a->pos;
	int err, fd;

#define WANT(n) do { if (a->npos != (n)) usage(); } while (0)
	if (!strcmp(cmd, "put")) {
		WANT(5);
		fd = open_ro(p[2]);
		err = s3d_call_put(s3, p[0], p[1], fd, num(p[3]), num(p[4]),
				   &a->o, etag, ce);
		close(fd);
		if (!err)
			printf("ETAG %s\n", etag);
	} else if (!strcmp(cmd, "get")) {
		WANT(2);
		err = s3d_call_get(s3, p[0], p[1], NULL, to_stdout, NULL,
				   &info, ce);
		fflush(stdout);
	} else if (!strcmp(cmd, "head")) {
		WANT(2);
		err = s3d_call_head(s3, p[0], p[1], &info, ce);
		if (!err)
			printf("ETAG %s\nSIZE %" PRId64 "\n", info.etag,
			       info.size);
	} else if (!strcmp(cmd, "delete")) {
		WANT(2);
		err = s3d_call_delete(s3, p[0], p[1], ce);
	} else if (!strcmp(cmd, "mpu-create")) {
		WANT(2);
		err = s3d_call_mpu_create(s3, p[0], p[1], &a->o, id,
					  sizeof(id), ce);
		if (!err)
			printf("UPLOAD %s\n", id);
	} else if (!strcmp(cmd, "mpu-part")) {
		WANT(7);
		fd = open_ro(p[4]);
		err = s3d_call_mpu_part(s3, p[0], p[1], p[2],
					(unsigned int)num(p[3]), fd, num(p[5]),
					num(p[6]), etag, ce);
		close(fd);
		if (!err)
			printf("ETAG %s\n", etag);
	} else if (!strcmp(cmd, "mpu-complete")) {
		err = complete(s3, a, etag, ce);
		if (!err)
			printf("ETAG %s\n", etag);
	} else if (!strcmp(cmd, "mpu-abort")) {
		WANT(3);
		err = s3d_call_mpu_abort(s3, p[0], p[1], p[2], ce);
	} else {
		usage();
	}
#undef WANT
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "endpoint", required_argument, NULL, 'e' },
		{ "anonymous", no_argument, NULL, 'a' },
		{ "attempts", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct s3d_retry_policy pol = { 0 };
	const char *endpoint = NULL, *cmd;
	struct s3d_s3 s3 = { 0 };
	struct s3d_call_err ce = { 0 };
	bool anonymous = false;
	struct args a = { 0 };
	int c, err;

	/* Options up to the command; the command's own after it. */
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			endpoint = optarg;
			break;
		case 'a':
			anonymous = true;
			break;
		case 'A':
			pol.attempts = (unsigned int)num(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	cmd = argv[optind];
	cmd_opts(argc - optind, argv + optind, &a);

	s3d_log_level = S3D_LOG_WARN;
	if (s3d_s3_init(&s3, endpoint, "us-east-1", 1, anonymous))
		return 2;
	if (!anonymous && s3d_creds_from_env(&s3.creds)) {
		fprintf(stderr, "s3call: no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY\n");
		return 2;
	}
	if (s3d_engine_init(4, NULL))
		return 2;
	s3d_engine_set_retry(&pol);
	err = run(&s3, cmd, &a, &ce);
	if (err)
		printf("ERR %d %s %ld %s\n", err, strerrorname_np(-err),
		       ce.status, ce.code[0] ? ce.code : "-");
	s3d_engine_fini();
	s3d_s3_fini(&s3);
	return err ? 1 : 0;
}
