// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachectl: look at and steer the cache of s3cachefs mounts.
 *
 *   status PATH...   how much of each file is cached and its upload state,
 *                    as the module says (S3CFS_IOC_STATE: the cache
 *                    directory is private, so any user may ask about the
 *                    files they can open); with an older module, from its
 *                    lower file (SEEK_DATA/SEEK_HOLE, root only); the
 *                    copies kept from its conflicts (root)
 *   conflicts [PATH...]  the copies kept from conflicts in the mounts'
 *                    caches (S3CFS_CONFLICTS_DIR)
 *   sync [PATH...]   upload what write-back mounts have queued and wait
 *   evict PATH...    ask the kernel to punch the files out (S3CFS_IOC_EVICT;
 *                    root)
 *   stats [MNT...]   the per-mount sysfs counters
 *   warm PATH...     read files so the cache holds them (warm.c)
 *   ls/head/cat s3://BUCKET/KEY   the S3 client of libs3c.a, directly
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "lib/client.h"
#include "lib/config.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "uapi/s3cachefs.h"

#define SYSFS	"/sys/fs/s3cachefs"

/* A file under an s3cachefs mount, and where its cache lives. */
struct target {
	char real[PATH_MAX];
	char mnt[PATH_MAX];
	const char *rel;	/* real relative to mnt; "" for the root */
	char sysdir[64];	/* /sys/fs/s3cachefs/MAJ:MIN */
	char cache_dir[PATH_MAX];
	uint32_t mount_id;
	struct stat st;
};

static int read_sys(const char *dir, const char *name, char *buf, size_t len)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n && (buf[n - 1] == '\n'))
		n--;
	buf[n] = '\0';
	return 0;
}

static int resolve(const char *path, struct target *t)
{
	struct stat up;
	char buf[32], *slash;
	size_t n;

	memset(t, 0, sizeof(*t));
	if (!realpath(path, t->real) || stat(t->real, &t->st)) {
		fprintf(stderr, "s3cachectl: %s: %s\n", path, strerror(errno));
		return -1;
	}
	snprintf(t->sysdir, sizeof(t->sysdir), SYSFS "/%u:%u",
		 major(t->st.st_dev), minor(t->st.st_dev));
	if (read_sys(t->sysdir, "cache_dir", t->cache_dir, sizeof(t->cache_dir)) ||
	    read_sys(t->sysdir, "mount_id", buf, sizeof(buf))) {
		fprintf(stderr, "s3cachectl: %s: not on an s3cachefs mount\n", path);
		return -1;
	}
	t->mount_id = (uint32_t)strtoul(buf, NULL, 10);
	/* The mount point: the highest ancestor on the same device. */
	strcpy(t->mnt, t->real);
	for (;;) {
		slash = strrchr(t->mnt, '/');
		if (!slash || slash == t->mnt) {
			char save = t->mnt[1];

			t->mnt[1] = '\0';
			if (stat(t->mnt, &up) || up.st_dev != t->st.st_dev)
				t->mnt[1] = save;
			break;
		}
		*slash = '\0';
		if (stat(t->mnt, &up) || up.st_dev != t->st.st_dev) {
			*slash = '/';
			break;
		}
	}
	n = strlen(t->mnt);
	t->rel = t->real + n;
	while (*t->rel == '/')
		t->rel++;
	return 0;
}

/* Bytes of data (cached) in @fd of @size. */
static int64_t cached_bytes(int fd, off_t size)
{
	off_t pos = 0, data, hole;
	int64_t sum = 0;

	while (pos < size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		sum += hole - data;
		pos = hole;
	}
	return sum;
}

static void fmt_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/*
 * The file's state from the module (S3CFS_IOC_STATE): "clean": a copy of
 * an object, or not cached; "local": written here, S3 has not had it;
 * "queued": acknowledged by a write-back mount, to be uploaded
 * ("retrying" once an upload of it failed); "uploading": with the daemon.
 */
static const char *file_state(const char *path, struct s3cfs_ioc_state *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	int err;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return NULL;
	err = ioctl(fd, S3CFS_IOC_STATE, st);
	close(fd);
	if (err)
		return NULL;
	if (st->flags & S3CFS_STATE_UPLOADING)
		return "uploading";
	if (st->flags & S3CFS_STATE_QUEUED)
		return st->tries ? "retrying" : "queued";
	if (st->flags & S3CFS_STATE_LOCAL)
		return "local";
	return "clean";
}

/*
 * Call @fn for each copy kept under the conflicts area of @t's cache
 * (S3CFS_XATTR_CONFLICT names the path it was written at; reading it takes
 * root, as trusted.* xattrs do). Return: copies seen, or -errno.
 */
static int each_conflict(const struct target *t,
			 void (*fn)(const char *kept, const char *path,
				    const struct stat *st, void *arg),
			 void *arg)
{
	char dir[PATH_MAX * 2], kept[PATH_MAX * 3], path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	ssize_t n;
	int seen = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/" S3CFS_CONFLICTS_DIR, t->cache_dir);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(kept, sizeof(kept), "%s/%s", dir, de->d_name);
		if (lstat(kept, &st) || !S_ISREG(st.st_mode))
			continue;
		n = lgetxattr(kept, S3CFS_XATTR_CONFLICT, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		fn(kept, n > 0 ? path : "?", &st, arg);
		seen++;
	}
	closedir(d);
	return seen;
}

struct conflict_match {
	const char *rel;
	int found;
};

static void conflict_of_file(const char *kept, const char *path,
			     const struct stat *st, void *arg)
{
	struct conflict_match *m = arg;
	char when[32];

	if (strcmp(path, m->rel))
		return;
	fmt_time(st->st_mtime, when, sizeof(when));
	printf("%12s %12s %6s  %-9s   our copy of %s UTC, kept as %s\n", "", "",
	       "", "conflict", when, kept);
	m->found++;
}

/* A line per copy kept from a conflict of @t's path. */
static void conflicts(const struct target *t)
{
	struct conflict_match m = { .rel = t->rel };

	each_conflict(t, conflict_of_file, &m);
}

static void conflict_line(const char *kept, const char *path,
			  const struct stat *st, void *arg)
{
	char when[32];

	(void)arg;
	fmt_time(st->st_mtime, when, sizeof(when));
	printf("%s  %12lld  %s  %s\n", when, (long long)st->st_size, path, kept);
}

/*
 * The copies kept from conflicts in the caches of the mounts of the named
 * paths: our bytes whose upload found the object changed in S3.
 */
static int cmd_conflicts(int argc, char **argv)
{
	const char *dflt[] = { "." };
	struct target t;
	int i, n, rc = 0;

	if (argc < 1) {
		argc = 1;
		argv = (char **)dflt;
	}
	printf("%-19s  %12s  %s  %s\n", "WHEN (UTC)", "SIZE", "PATH", "KEPT AS");
	for (i = 0; i < argc; i++) {
		if (resolve(argv[i], &t)) {
			rc = 1;
			continue;
		}
		n = each_conflict(&t, conflict_line, NULL);
		if (n < 0) {
			fprintf(stderr, "s3cachectl conflicts: %s: %s\n",
				argv[i], strerror(-n));
			rc = 1;
		}
	}
	return rc;
}

/* How much of @t's file an older module's cache holds: its lower file. */
static int lower_cached(const struct target *t, int64_t *got)
{
	char lower[PATH_MAX * 2];
	struct stat lst;
	int fd;

	snprintf(lower, sizeof(lower), "%s/%s", t->cache_dir, t->rel);
	fd = open(lower, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &lst)) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		if (err == ENOENT) {
			*got = 0;
			return 0;
		}
		fprintf(stderr, "s3cachectl: %s: lower file %s: %s\n", t->real,
			lower, strerror(err));
		return -1;
	}
	*got = cached_bytes(fd, lst.st_size < t->st.st_size ? lst.st_size :
			    t->st.st_size);
	close(fd);
	if (*got < 0) {
		fprintf(stderr, "s3cachectl: %s: %s\n", t->real,
			strerror((int)-*got));
		return -1;
	}
	return 0;
}

static int status_one(const char *path)
{
	struct target t;
	struct s3cfs_ioc_state st;
	const char *state;
	int64_t got;

	if (resolve(path, &t))
		return 1;
	if (!S_ISREG(t.st.st_mode)) {
		fprintf(stderr, "s3cachectl: %s: not a regular file\n", path);
		return 1;
	}
	state = file_state(t.real, &st);
	if (!state) {
		fprintf(stderr, "s3cachectl: %s: its state: %s\n", path,
			strerror(errno));
		return 1;
	}
	if (st.flags & S3CFS_STATE_CACHED)
		got = (int64_t)st.cached;
	else if (lower_cached(&t, &got))
		return 1;
	printf("%12lld %12lld %5.1f%%  %-9s %s", (long long)got,
	       (long long)t.st.st_size,
	       t.st.st_size ? 100.0 * (double)got / (double)t.st.st_size : 100.0,
	       state, path);
	if (st.flags & S3CFS_STATE_QUEUED)
		printf(" (for %llu s%s)", (unsigned long long)st.queued_ms / 1000,
		       st.tries ? ", uploads failed" : "");
	printf("\n");
	conflicts(&t);
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 1) {
		fprintf(stderr, "s3cachectl status: name at least one file\n");
		return 2;
	}
	printf("%12s %12s %6s  %-9s %s\n", "CACHED", "SIZE", "", "STATE", "FILE");
	for (i = 0; i < argc; i++)
		rc |= status_one(argv[i]);
	return rc;
}

/*
 * Upload what each named path's write-back mount has queued and wait
 * (S3CFS_IOC_SYNC): what a job runs before it exits.
 */
static int cmd_sync(int argc, char **argv)
{
	const char *dflt[] = { "." };
	int i, fd, rc = 0;

	if (argc < 1) {
		argc = 1;
		argv = (char **)dflt;
	}
	for (i = 0; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || ioctl(fd, S3CFS_IOC_SYNC) < 0) {
			fprintf(stderr, "s3cachectl sync: %s: %s\n", argv[i],
				errno == ENOTTY ? "not on an s3cachefs mount" :
				errno == EIO ? "an upload failed (still queued; see the kernel log)" :
				strerror(errno));
			rc = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

/*
 * EVICT by S3CFS_IOC_EVICT on the mount's root: the kernel takes netlink
 * EVICT from the registered daemon's socket only. The file is named by
 * its path in the mount and punched through its cache file, with no
 * lookup through the mount (as the daemon's EVICT).
 */
static int cmd_evict(int argc, char **argv)
{
	struct s3cfs_ioc_evict *arg;
	int i, rc = 0, fd;

	if (argc < 1) {
		fprintf(stderr, "s3cachectl evict: name at least one file\n");
		return 2;
	}
	arg = calloc(1, sizeof(*arg));
	if (!arg) {
		fprintf(stderr, "s3cachectl: out of memory\n");
		return 1;
	}
	for (i = 0; i < argc; i++) {
		struct target t;
		int err = 0;

		if (resolve(argv[i], &t)) {
			rc = 1;
			continue;
		}
		if (!S_ISREG(t.st.st_mode)) {
			fprintf(stderr, "s3cachectl: %s: not a regular file\n", argv[i]);
			rc = 1;
			continue;
		}
		memset(arg, 0, sizeof(*arg));
		arg->offset = 0;
		arg->length = (uint64_t)t.st.st_size ?: 1;
		if (strlen(t.rel) >= sizeof(arg->path)) {
			fprintf(stderr, "s3cachectl: evict %s: path too long\n", argv[i]);
			rc = 1;
			continue;
		}
		strcpy(arg->path, t.rel);
		fd = open(t.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, S3CFS_IOC_EVICT, arg))
			err = errno;
		if (fd >= 0)
			close(fd);
		if (err) {
			fprintf(stderr, "s3cachectl: evict %s: %s%s\n", argv[i],
				strerror(err),
				err == EPERM ? " (needs root)" :
				err == EBUSY ? " (being fetched, or written here; try again)" :
				err == ENOTTY ? " (the module is older than S3CFS_IOC_EVICT)" : "");
			rc = 1;
		} else {
			printf("evicted %s\n", argv[i]);
		}
	}
	free(arg);
	return rc;
}

static void stats_dir(const char *dir, const char *label)
{
	struct dirent **names;
	char val[4096];
	int n, i;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "s3cachectl: %s: %s\n", dir, strerror(errno));
		return;
	}
	printf("%s (%s)\n", label, dir);
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' &&
		    !read_sys(dir, names[i]->d_name, val, sizeof(val)))
			printf("  %-18s %s\n", names[i]->d_name, val);
		free(names[i]);
	}
	free(names);
}

static int cmd_stats(int argc, char **argv)
{
	struct dirent *de;
	struct target t;
	DIR *d;
	int i, rc = 0;

	if (argc) {
		for (i = 0; i < argc; i++) {
			if (resolve(argv[i], &t)) {
				rc = 1;
				continue;
			}
			stats_dir(t.sysdir, t.mnt);
		}
		return rc;
	}
	d = opendir(SYSFS);
	if (!d) {
		fprintf(stderr, "s3cachectl: %s: %s (module not loaded?)\n",
			SYSFS, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.' || !strchr(de->d_name, ':'))
			continue;
		snprintf(p, sizeof(p), SYSFS "/%s", de->d_name);
		stats_dir(p, de->d_name);
	}
	closedir(d);
	return 0;
}

/* ---- ls / head / cat: straight to S3 with the daemon's client ---- */

int cmd_warm(int argc, char **argv);

/* The flags of ls/head/cat; what they leave unset comes from the config. */
struct s3opts {
	const char *config;	/* --config, or NULL */
	struct s3d_conf_s3 over;	/* win over the config file's settings */
	bool recursive;		/* ls -r */
	bool verbose;
};

static struct s3d_s3 s3;

enum {
	O_ENDPOINT = 256, O_REGION, O_PATH_STYLE, O_VHOST, O_ANON, O_CA,
	O_CONFIG, O_PROFILE, O_ALLOW_HTTP,
};

static const struct option s3_long_opts[] = {
	{ "endpoint", required_argument, NULL, O_ENDPOINT },
	{ "region", required_argument, NULL, O_REGION },
	{ "path-style", no_argument, NULL, O_PATH_STYLE },
	{ "virtual-host", no_argument, NULL, O_VHOST },
	{ "anonymous", no_argument, NULL, O_ANON },
	{ "allow-http", no_argument, NULL, O_ALLOW_HTTP },
	{ "ca-bundle", required_argument, NULL, O_CA },
	{ "config", required_argument, NULL, O_CONFIG },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "recursive", no_argument, NULL, 'r' },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

/* s3://BUCKET[/KEY] -> bucket, key ("" when absent). */
static int parse_s3url(const char *url, char **bucket, const char **key)
{
	const char *b, *slash;

	if (strncmp(url, "s3://", 5)) {
		fprintf(stderr, "s3cachectl: '%s': want s3://BUCKET/KEY\n", url);
		return -1;
	}
	b = url + 5;
	slash = strchr(b, '/');
	*bucket = slash ? strndup(b, (size_t)(slash - b)) : strdup(b);
	*key = slash ? slash + 1 : "";
	if (!*bucket || !**bucket) {
		fprintf(stderr, "s3cachectl: '%s': no bucket\n", url);
		free(*bucket);
		return -1;
	}
	return 0;
}

static void report(const char *what, const char *bucket, const char *key,
		   int err, const struct s3d_call_err *ce)
{
	if (ce->code[0])
		fprintf(stderr, "s3cachectl: %s s3://%s/%s: %s%s%s (HTTP %ld, request id %s)\n",
			what, bucket, key, ce->code, ce->message[0] ? ": " : "",
			ce->message, ce->status,
			ce->request_id[0] ? ce->request_id : "-");
	else if (ce->status)
		fprintf(stderr, "s3cachectl: %s s3://%s/%s: HTTP %ld (request id %s)\n",
			what, bucket, key, ce->status,
			ce->request_id[0] ? ce->request_id : "-");
	else
		fprintf(stderr, "s3cachectl: %s s3://%s/%s: %s\n", what, bucket,
			key, ce->message[0] ? ce->message : strerror(-err));
}

static int ls_page(void *arg, const struct s3d_list_page *pg)
{
	size_t i;
	char t[32];

	(void)arg;
	for (i = 0; i < pg->nprefixes; i++)
		printf("%19s %12s %s\n", "", "PRE", pg->prefixes[i]);
	for (i = 0; i < pg->nobjs; i++) {
		fmt_time(pg->objs[i].mtime, t, sizeof(t));
		printf("%s %12" PRIu64 " %s\n", t, pg->objs[i].size,
		       pg->objs[i].key);
	}
	return ferror(stdout) ? -EPIPE : 0;
}

static size_t to_stdout(void *arg, const char *p, size_t n)
{
	(void)arg;
	return fwrite(p, 1, n, stdout);
}

/*
 * Set up the client for @bucket as s3cachefsd would: the config file's
 * [bucket] section, else [global], with the flags over both (here, unlike
 * in the daemon, the flags win over a bucket section: they are what the
 * user is trying out). Return: 0, or the exit code.
 */
static int s3_setup(const struct s3opts *o, const char *bucket)
{
	const char *path, *ca = getenv("AWS_CA_BUNDLE");
	struct s3d_conf *conf;
	struct s3d_conf_s3 set;
	struct s3d_buf errs;
	char why[1024], *profile;
	bool must_exist;
	int err;

	s3d_log_level = o->verbose ? S3D_LOG_DEBUG : -1;
	path = s3d_conf_path(o->config, &must_exist);
	s3d_buf_init(&errs, 0);
	err = s3d_conf_load(path, must_exist, &conf, &errs);
	if (err) {
		fprintf(stderr, "%s", s3d_buf_str(&errs));
		fprintf(stderr, "s3cachectl: %s: %s\n", path,
			err == -EINVAL ? "configuration has errors" :
			strerror(-err));
		s3d_buf_free(&errs);
		return 2;
	}
	s3d_buf_free(&errs);
	if (o->verbose)
		fprintf(stderr, "s3cachectl: configuration: %s\n",
			conf->file ?: "none");
	s3d_conf_settings(conf, bucket, &set);
	profile = o->over.profile ?: set.profile;
	if (profile) {
		profile = strdup(profile);	/* @conf's goes */
		if (!profile) {
			s3d_conf_free(conf);
			fprintf(stderr, "s3cachectl: out of memory\n");
			return 1;
		}
	}
	err = s3d_conf_s3_open(conf, bucket, &o->over, &s3, why, sizeof(why));
	s3d_conf_free(conf);
	if (err == -ENOENT)
		fprintf(stderr, "s3cachectl: no AWS credentials found%s%s%s (env, ~/.aws/credentials, web identity, container, IMDS); use --anonymous for public buckets\n  tried: %s\n",
			profile ? " for profile '" : "", profile ?: "",
			profile ? "'" : "", why);
	else if (err)
		fprintf(stderr, "s3cachectl: %s\n", why);
	if (err)
		goto fail;
	/* $AWS_CA_BUNDLE only ever names the CA file (as for the daemon). */
	if (s3d_engine_init(4, ca && *ca ? ca : NULL)) {
		fprintf(stderr, "s3cachectl: cannot set up libcurl\n");
		goto fail_s3;
	}
	/* A long cat may outlive temporary credentials: renew them. */
	if (s3.creds.expires && s3d_creds_watch(&s3.creds, profile)) {
		fprintf(stderr, "s3cachectl: out of memory\n");
		s3d_engine_fini();
		goto fail_s3;
	}
	free(profile);
	return 0;
fail_s3:
	s3d_s3_fini(&s3);
fail:
	free(profile);
	return 1;
}

static int cmd_s3(const char *cmd, int argc, char **argv)
{
	struct s3opts o = { 0 };
	struct s3d_call_err ce;
	struct s3d_obj_info info;
	const char *key;
	char *bucket, t[32];
	int c, err;

	o.over.path_style = -1;
	o.over.anonymous = -1;
	o.over.allow_http = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "rv", s3_long_opts, NULL)) != -1) {
		switch (c) {
		case O_ENDPOINT: o.over.endpoint = optarg; break;
		case O_REGION: o.over.region = optarg; break;
		case O_PATH_STYLE: o.over.path_style = 1; break;
		case O_VHOST: o.over.path_style = 0; break;
		case O_ANON: o.over.anonymous = 1; break;
		case O_ALLOW_HTTP: o.over.allow_http = 1; break;
		case O_CA: o.over.ca_bundle = optarg; break;
		case O_CONFIG: o.config = optarg; break;
		case O_PROFILE: o.over.profile = optarg; break;
		case 'r': o.recursive = true; break;
		case 'v': o.verbose = true; break;
		default: return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "s3cachectl %s: name one s3://BUCKET/%s\n", cmd,
			strcmp(cmd, "ls") ? "KEY" : "PREFIX");
		return 2;
	}
	if (parse_s3url(argv[optind], &bucket, &key))
		return 2;
	if (strcmp(cmd, "ls") && !*key) {
		fprintf(stderr, "s3cachectl %s: '%s': no key\n", cmd, argv[optind]);
		free(bucket);
		return 2;
	}
	err = s3_setup(&o, bucket);
	if (err) {
		free(bucket);
		return err;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "ls")) {
		err = s3d_call_list(&s3, bucket, key, o.recursive ? NULL : "/",
				    ls_page, NULL, &ce);
	} else if (!strcmp(cmd, "head")) {
		err = s3d_call_head(&s3, bucket, key, &info, &ce);
		if (!err) {
			fmt_time(info.mtime, t, sizeof(t));
			printf("Key: %s\nSize: %lld\nETag: %s\nLast-Modified: %s UTC\n",
			       key, (long long)info.size, info.etag, t);
		}
	} else {
		err = s3d_call_get(&s3, bucket, key, NULL, to_stdout, NULL,
				   &info, &ce);
	}
	if (fflush(stdout) && !err) {
		fprintf(stderr, "s3cachectl: %s: writing output: %s\n", cmd,
			strerror(errno));
		err = -EIO;
	} else if (err == -EPIPE) {
		fprintf(stderr, "s3cachectl: %s: writing output: %s\n", cmd,
			strerror(EPIPE));
	} else if (err) {
		report(strcmp(cmd, "ls") ? (strcmp(cmd, "head") ? "GET" : "HEAD")
		       : "LIST", bucket, key, err, &ce);
	}
	s3d_engine_fini();
	s3d_s3_fini(&s3);
	free(bucket);
	return err ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: s3cachectl COMMAND ARGS...\n"
"       s3cachectl --version\n"
"  status FILE...     how much of each file is cached, and its state:\n"
"                     clean (a copy of the object), local (written here,\n"
"                     not uploaded), queued (acknowledged by a write-back\n"
"                     mount, to be uploaded; retrying after a failure),\n"
"                     uploading; and copies kept from its conflicts\n"
"  conflicts [PATH...]  copies kept from conflicts (uploads that found the\n"
"                     object changed in S3) in the mounts' caches (root)\n"
"  sync [PATH...]     upload what PATH's write-back mount has queued and\n"
"                     wait (default: the current directory)\n"
"  evict FILE...      drop the files from the cache (root)\n"
"  stats [MNT...]     per-mount counters (all mounts by default)\n"
"  warm [-r] [-j N] PATH...  read files (-r: directories) into the cache\n"
"                     with N parallel readers (default 4)\n"
"  ls [-r] s3://BUCKET/PREFIX   list one level (-r: all keys below)\n"
"  head s3://BUCKET/KEY         object metadata\n"
"  cat s3://BUCKET/KEY          object bytes to stdout\n"
"S3 options (ls, head, cat), as s3cachefsd's:\n"
"  --config PATH   s3cachefsd's configuration file (default $S3CACHEFSD_CONFIG,\n"
"                  else " S3D_CONF_DEFAULT " if it exists): the bucket's\n"
"                  [bucket NAME] section, else [global]; the flags below win\n"
"  --endpoint URL  --region R  --path-style | --virtual-host  --anonymous\n"
"  --profile NAME  --ca-bundle PATH  -v (client debug log)\n"
"  --allow-http    allow an http:// endpoint (plain http: anyone on the path\n"
"                  can read and change the bytes; else refused)\n"
"Credentials: the AWS chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY\n"
"[/AWS_SESSION_TOKEN]; ~/.aws/credentials and ~/.aws/config (AWS_PROFILE, or\n"
"the profile asked for); web identity (AWS_WEB_IDENTITY_TOKEN_FILE +\n"
"AWS_ROLE_ARN); container (AWS_CONTAINER_CREDENTIALS_FULL_URI); EC2 IMDSv2\n"
"(1 s connect timeout off EC2; AWS_EC2_METADATA_DISABLED=true skips it).\n");
}

/*
 * S3 options may also come before the command ("s3cachectl --endpoint URL
 * ls s3://b/"): move the command word to the front.
 */
static void command_first(int argc, char **argv)
{
	int i, j;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--endpoint") || !strcmp(argv[i], "--region") ||
		    !strcmp(argv[i], "--ca-bundle") ||
		    !strcmp(argv[i], "--config") || !strcmp(argv[i], "--profile"))
			i++;	/* its value */
	}
	if (i <= 1 || i >= argc)
		return;
	{
		char *cmd = argv[i];

		for (j = i; j > 1; j--)
			argv[j] = argv[j - 1];
		argv[1] = cmd;
	}
}

int main(int argc, char **argv)
{
	if (argc >= 2 && argv[1][0] == '-' && strcmp(argv[1], "-h") &&
	    strcmp(argv[1], "--help") && strcmp(argv[1], "-V") &&
	    strcmp(argv[1], "--version"))
		command_first(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("s3cachectl %s\n", S3D_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "status"))
		return cmd_status(argc - 2, argv + 2);
	if (!strcmp(argv[1], "evict"))
		return cmd_evict(argc - 2, argv + 2);
	if (!strcmp(argv[1], "conflicts"))
		return cmd_conflicts(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sync"))
		return cmd_sync(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 2, argv + 2);
	if (!strcmp(argv[1], "warm"))
		return cmd_warm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ls") || !strcmp(argv[1], "head") ||
	    !strcmp(argv[1], "cat"))
		return cmd_s3(argv[1], argc - 1, argv + 1);
	fprintf(stderr, "s3cachectl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
