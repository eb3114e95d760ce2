// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachectl: look at and steer the cache of s3cachefs mounts.
 *
 *   status PATH...   how much of each file is cached (SEEK_DATA/SEEK_HOLE
 *                    on its lower file, found through
 *                    /sys/fs/s3cachefs/<dev>/cache_dir)
 *   evict PATH...    ask the kernel to punch the files out (EVICT; root)
 *   stats [MNT...]   the per-mount sysfs counters
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "s3cachefsd.h"

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

static int status_one(const char *path)
{
	struct target t;
	char lower[PATH_MAX * 2];
	struct stat lst;
	int64_t got;
	int fd;

	if (resolve(path, &t))
		return 1;
	if (!S_ISREG(t.st.st_mode)) {
		fprintf(stderr, "s3cachectl: %s: not a regular file\n", path);
		return 1;
	}
	snprintf(lower, sizeof(lower), "%s/%s", t.cache_dir, t.rel);
	fd = open(lower, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &lst)) {
		if (errno == ENOENT) {
			printf("%12d %12lld %5.1f%%  %s\n", 0,
			       (long long)t.st.st_size, 0.0, path);
			return 0;
		}
		fprintf(stderr, "s3cachectl: %s: lower file %s: %s\n", path,
			lower, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	got = cached_bytes(fd, lst.st_size);
	close(fd);
	if (got < 0) {
		fprintf(stderr, "s3cachectl: %s: %s\n", path, strerror((int)-got));
		return 1;
	}
	printf("%12lld %12lld %5.1f%%  %s\n", (long long)got,
	       (long long)lst.st_size,
	       lst.st_size ? 100.0 * (double)got / (double)lst.st_size : 100.0,
	       path);
	return 0;
}

static int cmd_status(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 1) {
		fprintf(stderr, "s3cachectl status: name at least one file\n");
		return 2;
	}
	printf("%12s %12s %6s  %s\n", "CACHED", "SIZE", "", "FILE");
	for (i = 0; i < argc; i++)
		rc |= status_one(argv[i]);
	return rc;
}

static int cmd_evict(int argc, char **argv)
{
	struct nl_sock *sk;
	int family, i, rc = 0, err;

	if (argc < 1) {
		fprintf(stderr, "s3cachectl evict: name at least one file\n");
		return 2;
	}
	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk) < 0) {
		fprintf(stderr, "s3cachectl: generic netlink socket failed\n");
		return 1;
	}
	family = genl_ctrl_resolve(sk, S3CFS_GENL_NAME);
	if (family < 0) {
		fprintf(stderr, "s3cachectl: s3cachefs module not loaded (%s)\n",
			nl_geterror(family));
		nl_socket_free(sk);
		return 1;
	}
	for (i = 0; i < argc; i++) {
		struct target t;
		struct nl_msg *msg;

		if (resolve(argv[i], &t)) {
			rc = 1;
			continue;
		}
		if (!S_ISREG(t.st.st_mode)) {
			fprintf(stderr, "s3cachectl: %s: not a regular file\n", argv[i]);
			rc = 1;
			continue;
		}
		msg = nlmsg_alloc();
		if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
					 NLM_F_ACK, S3CFS_CMD_EVICT,
					 S3CFS_GENL_VERSION) ||
		    nla_put_u32(msg, S3CFS_A_MOUNT_ID, t.mount_id) < 0 ||
		    nla_put_string(msg, S3CFS_A_PATH, t.rel) < 0 ||
		    nla_put_u64(msg, S3CFS_A_OFFSET, 0) < 0 ||
		    nla_put_u64(msg, S3CFS_A_LENGTH,
				(uint64_t)t.st.st_size ?: 1) < 0) {
			fprintf(stderr, "s3cachectl: out of memory\n");
			nlmsg_free(msg);
			rc = 1;
			break;
		}
		err = nl_send_auto(sk, msg);
		nlmsg_free(msg);
		if (err >= 0)
			err = nl_wait_for_ack(sk);
		if (err < 0) {
			fprintf(stderr, "s3cachectl: evict %s: %s%s\n", argv[i],
				nl_geterror(err),
				err == -NLE_PERM ? " (needs root)" :
				err == -NLE_BUSY ? " (being fetched; try again)" : "");
			rc = 1;
		} else {
			printf("evicted %s\n", argv[i]);
		}
	}
	nl_socket_free(sk);
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

static void usage(FILE *f)
{
	fprintf(f,
"Usage: s3cachectl COMMAND ARGS...\n"
"  status FILE...     how much of each file is cached\n"
"  evict FILE...      drop the files from the cache (root)\n"
"  stats [MNT...]     per-mount counters (all mounts by default)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "status"))
		return cmd_status(argc - 2, argv + 2);
	if (!strcmp(argv[1], "evict"))
		return cmd_evict(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 2, argv + 2);
	fprintf(stderr, "s3cachectl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
