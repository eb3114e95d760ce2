// SPDX-License-Identifier: GPL-2.0
/*
 * --selftest: drive the S3 client and the request handlers without the
 * kernel module, against a real endpoint (s3rver in the smoke test). The
 * "cache" command feeds ops.c exactly what netlink.c would, with replies
 * printed instead of sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "lib/base.h"
#include "lib/client.h"
#include "lib/loop.h"
#include "lib/posix.h"
#include "lib/s3.h"
#include "lib/xml.h"
#include "metrics.h"
#include "mount.h"
#include "ops.h"
#include "req.h"
#include "selftest.h"
#include "store.h"
#include "uapi/s3cachefs.h"

/* ---- list / head / get: the synchronous client (client.c) ---- */
struct list_tally {
	unsigned int pages;
	uint64_t nobjs, nprefixes;
};

static int list_page(void *arg, const struct s3d_list_page *pg)
{
	struct list_tally *t = arg;
	size_t i;

	t->pages++;
	for (i = 0; i < pg->nprefixes; i++)
		printf("PRE %s\n", pg->prefixes[i]);
	for (i = 0; i < pg->nobjs; i++)
		printf("OBJ %s %" PRIu64 " %s %lld\n", pg->objs[i].key,
		       pg->objs[i].size, pg->objs[i].etag,
		       (long long)pg->objs[i].mtime);
	t->nobjs += pg->nobjs;
	t->nprefixes += pg->nprefixes;
	return 0;
}

static int run_list(struct s3d_s3 *s3, const char *bucket, const char *prefix)
{
	struct list_tally t = { 0 };
	int err;

	err = s3d_call_list(s3, bucket, prefix, "/", list_page, &t, NULL);
	if (!err)
		printf("TOTAL %" PRIu64 " objects, %" PRIu64 " prefixes, %u pages\n",
		       t.nobjs, t.nprefixes, t.pages);
	return err;
}

static int run_head(struct s3d_s3 *s3, const char *bucket, const char *key)
{
	struct s3d_obj_info i;
	int err;

	err = s3d_call_head(s3, bucket, key, &i, NULL);
	if (!err)
		printf("ETAG %s\nSIZE %lld\nMTIME %lld\n", i.etag,
		       (long long)i.size, (long long)i.mtime);
	return err;
}

static size_t to_stdout(void *arg, const char *p, size_t n)
{
	(void)arg;
	return fwrite(p, 1, n, stdout);
}

static int run_get(struct s3d_s3 *s3, const char *bucket, const char *key,
		   const char *range)
{
	struct s3d_obj_info i;
	int err;

	err = s3d_call_get(s3, bucket, key, range, to_stdout, NULL, &i, NULL);
	if (!err) {
		fflush(stdout);
		fprintf(stderr, "GET: HTTP %ld, %" PRIu64 " bytes, ETag %s\n",
			i.status, i.bytes, i.etag);
	}
	return err;
}

/* ---- cache: the request handlers against a cache directory ---- */

static unsigned int replies_due;
/*
 * Mount ids whose MOUNT is not answered yet: a request for one waits for
 * it, as the kernel's requests come after their mount's (a new MOUNT
 * checks its bucket first); requests for other mounts go on meanwhile.
 */
static uint32_t mounts_due[16];

static bool mount_due(uint32_t id)
{
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(mounts_due); i++)
		if (mounts_due[i] == id)
			return true;
	return false;
}

static void mount_due_set(uint32_t id, bool due)
{
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(mounts_due); i++) {
		if (due ? !mounts_due[i] : mounts_due[i] == id) {
			mounts_due[i] = due ? id : 0;
			return;
		}
	}
}

static bool mount_answered(void *arg)
{
	return !mount_due(*(uint32_t *)arg);
}

/* Wait for the MOUNT of @id, if one is on its way. Return: 0 or -errno. */
static int mount_wait(uint32_t id)
{
	return mount_due(id) ? s3d_loop_run(mount_answered, &id) : 0;
}

static void st_reply(struct s3d_req *r, int status)
{
	if (r->cmd == S3CFS_CMD_MOUNT)
		mount_due_set(r->mount_id, false);
	printf("REPLY %s -> %d%s%s%s%s\n", (char *)r->priv, status,
	       status ? " " : "", status ? strerror(-status) : "",
	       r->reply_etag ? " etag " : "",
	       r->reply_etag ? r->reply_etag : "");
	fflush(stdout);
	free(r->priv);
	s3d_req_free(r);
	replies_due--;
}

/* Progress reports, as netlink.c would send them (the tests count them). */
static void st_progress(struct s3d_req *r)
{
	printf("PROGRESS %s done %llu\n", (char *)r->priv,
	       (unsigned long long)r->done);
	fflush(stdout);
}

static bool all_replied(void *arg)
{
	(void)arg;
	return replies_due == 0;
}

static char *etag_of(const char *dir, const char *path)
{
	char file[8192], etag[S3CFS_ETAG_MAX + 1];
	int fd, err;

	snprintf(file, sizeof(file), "%s/%s", dir, path);
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return strdup("\"none\"");
	err = s3d_store_get_etag(fd, etag, sizeof(etag));
	close(fd);
	return strdup(err ? "\"none\"" : etag);
}

/*
 * "posix=MODE/UID/GID/MTIME": the attributes as the x-amz-meta-* values
 * would be written (an empty one: that field absent). Return: 0, -EINVAL.
 */
static int parse_posix(const char *spec, struct s3cfs_posix *p)
{
	struct s3d_posix_hdrs t = { 0 };
	const char *v = spec + strlen("posix=");
	int i;

	for (i = 0; i < S3D_POSIX_NF; i++) {
		size_t len = strcspn(v, "/");

		if (len >= S3D_POSIX_VAL_MAX ||
		    (i < S3D_POSIX_NF - 1 && !v[len]))
			return -EINVAL;
		memcpy(t.v[i], v, len);
		v += len + (v[len] ? 1 : 0);
	}
	return *v || s3d_posix_parse(&t, p) ? -EINVAL : 0;
}

/*
 * The inode number, and the size unless @size is NULL, of PATH in the
 * cache DIR (what UPLOAD names).
 */
static int file_of(const char *dir, const char *path, uint64_t *ino,
		   uint64_t *size)
{
	struct stat st;
	char *file;
	int err;

	if (asprintf(&file, "%s/%s", dir, path) < 0)
		return -ENOMEM;
	err = stat(file, &st);
	if (err)
		perror(file);
	free(file);
	if (err)
		return -ENOENT;
	*ino = st.st_ino;
	if (size)
		*size = (uint64_t)st.st_size;
	return 0;
}

/*
 * "list:PATH" "lookup:PATH:NAME" "fetch:PATH:OFF:LEN[:ETAG]"
 * "upload:PATH:new" "upload:PATH:match:ETAG" (either with a last
 * ":stream=ID/PARTS/PART-SIZE": a streamed file's close)
 * "part:PATH:STREAM:PARTS:PART-SIZE" (PARTS 0: abort) "mkdir:PARENT:NAME"
 * "delete:PARENT:NAME[:dir]" "rename:SRC:DST:SIZE:ETAG"
 * "setmeta:PATH:SIZE:ETAG:posix=..." "setmeta:DIR:dir:posix=..." (a
 * directory's marker) of mount 1, or of mount N with a
 * leading "@N:"; upload and mkdir take a last ":posix=..." too (see
 * parse_posix()). "mount:N:BUCKET:DIR[:writable][:posix]" mounts BUCKET
 * (prefix "") cached in DIR as mount N.
 */
static struct s3d_req *parse_req(const char *spec, const char *dir)
{
	struct s3d_req *r = calloc(1, sizeof(*r));
	char *s = strdup(spec), *f[8] = { 0 }, *save = NULL, *t = s;
	char *mdir = NULL;
	struct s3d_mount *m;
	uint32_t mount_id = 1;
	int n = 0;

	if (!r || !s)
		goto bad;
	if (*t == '@') {
		mount_id = (uint32_t)strtoul(t + 1, &t, 10);
		if (*t++ != ':')
			goto syntax;
	}
	for (; n < 8; n++) {
		f[n] = strsep(&t, ":");
		if (!t) {
			n++;
			break;
		}
	}
	if (t)
		goto syntax;	/* more fields than any request has */
	/* A streamed file's close: stream=ID/PARTS/PART-SIZE. */
	if (n > 1 && !strncmp(f[n - 1], "stream=", 7)) {
		if (sscanf(f[n - 1] + 7, "%" SCNu64 "/%" SCNu32 "/%" SCNu64,
			   &r->stream, &r->parts, &r->len) != 3)
			goto syntax;
		n--;
	}
	if (n > 1 && !strncmp(f[n - 1], "posix=", 6)) {
		if (parse_posix(f[n - 1], &r->posix))
			goto syntax;
		r->has_posix = true;
		n--;
	}
	(void)save;
	/* Files of another mount are in its own cache directory. */
	m = mount_id != 1 ? s3d_mount_get(mount_id) : NULL;
	if (m) {
		dir = mdir = strdup(m->cache_dir);
		s3d_mount_put(m);
		if (!dir)
			goto bad;
	}
	r->mount_id = mount_id;
	r->id = (uint64_t)random();
	r->priv = strdup(spec);
	r->reply = st_reply;
	r->progress = st_progress;
	if (!strcmp(f[0], "list") && n == 2) {
		r->cmd = S3CFS_CMD_LIST;
		r->path = strdup(f[1]);
	} else if (!strcmp(f[0], "lookup") && n == 3) {
		r->cmd = S3CFS_CMD_LOOKUP;
		r->path = strdup(f[1]);
		r->name = strdup(f[2]);
	} else if (!strcmp(f[0], "fetch") && (n == 4 || n == 5)) {
		r->cmd = S3CFS_CMD_FETCH;
		r->path = strdup(f[1]);
		r->off = strtoull(f[2], NULL, 0);
		r->len = strtoull(f[3], NULL, 0);
		r->etag = n == 5 ? strdup(f[4]) : etag_of(dir, f[1]);
	} else if (!strcmp(f[0], "upload") &&
		   ((n == 3 && !strcmp(f[2], "new")) ||
		    (n == 4 && !strcmp(f[2], "match")))) {
		/* The whole file as it is, as the kernel would send it. */
		r->cmd = S3CFS_CMD_UPLOAD;
		r->path = strdup(f[1]);
		r->flags = n == 3 ? S3CFS_UP_NEW : S3CFS_UP_MATCH;
		r->etag = n == 4 ? strdup(f[3]) : NULL;
		if (file_of(dir, f[1], &r->ino, &r->size))
			goto bad;
	} else if (!strcmp(f[0], "part") && n == 5) {
		/* Parts 1..PARTS of a file being written (stream.c). */
		r->cmd = S3CFS_CMD_UPLOAD;
		r->flags = S3CFS_UP_PART;
		r->path = strdup(f[1]);
		r->stream = strtoull(f[2], NULL, 0);
		r->parts = (uint32_t)strtoul(f[3], NULL, 0);
		r->len = strtoull(f[4], NULL, 0);
		r->size = r->parts * r->len;
		if (file_of(dir, f[1], &r->ino, NULL))
			goto bad;
	} else if (!strcmp(f[0], "mkdir") && n == 3) {
		r->cmd = S3CFS_CMD_MKDIR;
		r->path = strdup(f[1]);
		r->name = strdup(f[2]);
	} else if (!strcmp(f[0], "delete") &&
		   (n == 3 || (n == 4 && !strcmp(f[3], "dir")))) {
		r->cmd = S3CFS_CMD_DELETE;
		r->path = strdup(f[1]);
		r->name = strdup(f[2]);
		r->flags = n == 4 ? S3CFS_DEL_DIR : 0;
	} else if (!strcmp(f[0], "rename") && n == 5) {
		/* The source's size and ETag, as the kernel knows them. */
		r->cmd = S3CFS_CMD_RENAME;
		r->path = strdup(f[1]);
		r->path2 = strdup(f[2]);
		r->size = strtoull(f[3], NULL, 0);
		r->etag = strdup(f[4]);
	} else if (!strcmp(f[0], "setmeta") && n == 3 &&
		   !strcmp(f[2], "dir") && r->has_posix) {
		/* A directory's: its marker (S3CFS_SETMETA_DIR). */
		r->cmd = S3CFS_CMD_SETMETA;
		r->path = strdup(f[1]);
		r->flags = S3CFS_SETMETA_DIR;
	} else if (!strcmp(f[0], "setmeta") && n == 4 && r->has_posix) {
		/* The object's size and ETag, as the kernel knows them. */
		r->cmd = S3CFS_CMD_SETMETA;
		r->path = strdup(f[1]);
		r->size = strtoull(f[2], NULL, 0);
		r->etag = strdup(f[3]);
	} else if (!strcmp(f[0], "mount") && n >= 4) {
		for (; n > 4; n--) {
			if (!strcmp(f[n - 1], "writable"))
				r->flags |= S3CFS_MOUNT_WRITABLE;
			else if (!strcmp(f[n - 1], "posix"))
				r->flags |= S3CFS_MOUNT_POSIX;
			else
				goto syntax;
		}
		r->cmd = S3CFS_CMD_MOUNT;
		r->mount_id = (uint32_t)strtoul(f[1], NULL, 10);
		r->bucket = strdup(f[2]);
		r->prefix = strdup("");
		r->cache_dir = realpath(f[3], NULL);
		r->chunk = S3CFS_CHUNK_DEFAULT;
		if (!r->cache_dir) {
			perror(f[3]);
			goto bad;
		}
	} else {
syntax:
		fprintf(stderr, "bad request '%s'\n", spec);
		goto bad;
	}
	free(s);
	free(mdir);
	return r;
bad:
	free(s);
	free(mdir);
	if (r)
		free(r->priv);
	s3d_req_free(r);
	return NULL;
}

static bool slept;

static void sleep_over(struct s3d_timer *t)
{
	(void)t;
	slept = true;
}

static bool sleep_done(void *arg)
{
	(void)arg;
	return slept;
}

/* "sleep:MS" in a group: serve what is under way for MS ms, then go on. */
static int run_sleep(const char *ms)
{
	struct s3d_timer t = { .fn = sleep_over };

	s3d_list_init(&t.node);
	slept = false;
	s3d_timer_arm(&t, strtoull(ms, NULL, 10));
	s3d_loop_run(sleep_done, NULL);
	s3d_timer_cancel(&t);
	return 0;
}

/* "metrics" in a group: the exposition now, each line after "METRIC ". */
static void run_metrics(void)
{
	struct s3d_buf b;
	const char *p, *nl;

	s3d_buf_init(&b, 0);
	s3d_metrics_render(&b);
	for (p = s3d_buf_str(&b); *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		printf("METRIC %.*s\n", (int)(nl - p), p);
	}
	fflush(stdout);
	s3d_buf_free(&b);
}

/*
 * "cancel" in a group: the kernel gives the group's last request up, as a
 * CANCEL does (no reply comes for it).
 */
static void run_cancel(uint32_t mount_id, uint64_t id, const char *spec)
{
	if (!s3d_req_cancel(mount_id, id))
		return;
	printf("CANCELLED %s\n", spec);
	fflush(stdout);
	replies_due--;
}

static int run_reqs(const char *group, const char *dir)
{
	char *g = strdup(group), *t = g, *spec, *last = NULL;
	uint32_t last_mount = 0;
	uint64_t last_id = 0;
	int err = 0;

	if (!g)
		return -ENOMEM;
	while ((spec = strsep(&t, ","))) {
		struct s3d_req *r;

		if (!strncmp(spec, "sleep:", 6)) {
			run_sleep(spec + 6);
			continue;
		}
		if (!strcmp(spec, "metrics")) {
			run_metrics();
			continue;
		}
		if (!strcmp(spec, "cancel") && last) {
			run_cancel(last_mount, last_id, last);
			continue;
		}
		/* Its mount's MOUNT first ("@ID:" names another than 1). */
		err = mount_wait(*spec == '@' ?
				 (uint32_t)strtoul(spec + 1, NULL, 10) : 1);
		if (err)
			break;
		r = parse_req(spec, dir);

		if (!r) {
			err = -EINVAL;
			break;
		}
		last = spec;
		last_mount = r->mount_id;
		last_id = r->id;
		replies_due++;
		if (r->cmd == S3CFS_CMD_MOUNT)
			mount_due_set(r->mount_id, true);
		s3d_req_handle(r);
	}
	free(g);
	return err ?: s3d_loop_run(all_replied, NULL);
}

static int run_cache(struct s3d_s3 *s3, int argc, char **argv)
{
	struct s3d_req *r;
	int i, err = 0;

	(void)s3;	/* the mount's bucket picks its own (main.c set up ops) */
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cmd = S3CFS_CMD_MOUNT;
	r->id = 1;
	r->mount_id = 1;
	r->bucket = strdup(argv[0]);
	r->prefix = strdup(argv[1]);
	r->cache_dir = realpath(argv[2], NULL);
	r->chunk = S3CFS_CHUNK_DEFAULT;
	r->priv = strdup("mount");
	r->reply = st_reply;
	if (!r->cache_dir) {
		perror(argv[2]);
		free(r->priv);
		s3d_req_free(r);
		return -ENOENT;
	}
	replies_due++;
	mount_due_set(r->mount_id, true);
	s3d_req_handle(r);
	for (i = 3; i < argc && !err; i++)
		err = run_reqs(argv[i], argv[2]);
	return err;
}

/**
 * s3d_selftest() - run one --selftest command
 * @s3: the client
 * @argc: argument count
 * @argv: COMMAND ARGS...
 *
 * Return: 0 or -errno.
 */
int s3d_selftest(struct s3d_s3 *s3, int argc, char **argv)
{
	char range[64];

	if (argc == 3 && !strcmp(argv[0], "list"))
		return run_list(s3, argv[1], argv[2]);
	if (argc == 3 && !strcmp(argv[0], "head"))
		return run_head(s3, argv[1], argv[2]);
	if ((argc == 3 || argc == 5) && !strcmp(argv[0], "get")) {
		if (argc == 5) {
			unsigned long long off = strtoull(argv[3], NULL, 0);
			unsigned long long len = strtoull(argv[4], NULL, 0);

			if (!len)
				return -EINVAL;
			snprintf(range, sizeof(range), "bytes=%llu-%llu", off,
				 off + len - 1);
		}
		return run_get(s3, argv[1], argv[2], argc == 5 ? range : NULL);
	}
	if (argc >= 4 && !strcmp(argv[0], "cache"))
		return run_cache(s3, argc - 1, argv + 1);
	fprintf(stderr, "s3cachefsd --selftest: unknown command or wrong arguments (see --help)\n");
	return -EINVAL;
}
