// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachectl warm PATH... [-r] [-j N]: read files (under an s3cachefs
 * mount) to nowhere with N reader threads, so the cache holds them.
 * A full cache (ENOSPC, or EIO from a fill that could not be written)
 * stops every reader at once with one message, not one per file.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "progress.h"

#define WARM_BUF	(1U << 20)

struct wfile {
	char *path;
	uint64_t size;
};

static struct {
	struct wfile *f;
	size_t n, cap;
	uint64_t total;
	atomic_size_t next;
	atomic_uint_fast64_t done_bytes;
	atomic_uint_fast64_t done_files;
	atomic_int failed;
	atomic_int stop;	/* errno that stopped everything, or 0 */
	atomic_int running;	/* readers not yet finished */
	bool tty;		/* stderr is a terminal: \r progress */
} w;

/* Clears the progress line on a terminal before a message. */
#define CLR()	(w.tty ? "\r\033[K" : "")

static int add_file(const char *path, const struct stat *st)
{
	if (w.n == w.cap) {
		size_t cap = w.cap ? w.cap * 2 : 256;
		struct wfile *f = realloc(w.f, cap * sizeof(*f));

		if (!f)
			return -1;
		w.f = f;
		w.cap = cap;
	}
	w.f[w.n].path = strdup(path);
	if (!w.f[w.n].path)
		return -1;
	w.f[w.n].size = (uint64_t)st->st_size;
	w.total += (uint64_t)st->st_size;
	w.n++;
	return 0;
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		return add_file(path, st) ? FTW_STOP : FTW_CONTINUE;
	if (type == FTW_DNR || type == FTW_NS) {
		fprintf(stderr, "s3cachectl warm: %s: cannot read\n", path);
		atomic_store(&w.failed, 1);
	}
	return FTW_CONTINUE;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool cache_full(int e)
{
	return e == ENOSPC || e == EIO || e == EDQUOT;
}

static void fail(const char *path, int e)
{
	if (cache_full(e)) {
		int zero = 0;

		/* The first one says it; the others just stop. */
		if (atomic_compare_exchange_strong(&w.stop, &zero, e))
			fprintf(stderr, "%ss3cachectl warm: %s: %s: stopping (cache full or fill failing)\n",
				CLR(), path, strerror(e));
	} else if (!atomic_load(&w.stop)) {
		fprintf(stderr, "%ss3cachectl warm: %s: %s\n", CLR(), path,
			strerror(e));
	}
	atomic_store(&w.failed, 1);
}

static void *reader(void *arg)
{
	char *buf = malloc(WARM_BUF);
	size_t i;

	(void)arg;
	if (!buf) {
		fail("reader", ENOMEM);
		atomic_fetch_sub(&w.running, 1);
		return NULL;
	}
	while (!atomic_load(&w.stop) &&
	       (i = atomic_fetch_add(&w.next, 1)) < w.n) {
		int fd = open(w.f[i].path, O_RDONLY | O_CLOEXEC);
		ssize_t r = 0;

		if (fd < 0) {
			fail(w.f[i].path, errno);
			continue;
		}
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		while (!atomic_load(&w.stop) &&
		       (r = read(fd, buf, WARM_BUF)) != 0) {
			if (r < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			atomic_fetch_add(&w.done_bytes, (uint64_t)r);
		}
		if (r < 0)
			fail(w.f[i].path, errno);
		else if (!atomic_load(&w.stop))
			atomic_fetch_add(&w.done_files, 1);
		close(fd);
	}
	free(buf);
	atomic_fetch_sub(&w.running, 1);
	return NULL;
}

static void show(bool tty, double t0, bool final)
{
	char line[256];

	ctl_fmt_progress(line, sizeof(line), atomic_load(&w.done_bytes),
			 w.total, atomic_load(&w.done_files), w.n,
			 now_s() - t0, final);
	if (tty)
		fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
	else if (final)
		fprintf(stderr, "%s\n", line);
}

static void warm_usage(FILE *f)
{
	fprintf(f, "Usage: s3cachectl warm [-r] [-j N] PATH...\n"
		"  read the files (directories with -r) so the cache holds them\n"
		"  -r       recurse into directories\n"
		"  -j N     N files read in parallel (default 4)\n");
}

int cmd_warm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool recursive = false, tty = isatty(STDERR_FILENO);
	unsigned long jobs = 4;
	pthread_t *th;
	double t0;
	char *end;
	int c, i;
	unsigned long k;

	w.tty = tty;
	optind = 1;
	while ((c = getopt_long(argc, argv, "rj:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			recursive = true;
			break;
		case 'j':
			jobs = strtoul(optarg, &end, 10);
			if (*end || !jobs || jobs > 1024) {
				fprintf(stderr, "s3cachectl warm: -j wants 1..1024\n");
				return 2;
			}
			break;
		case 'h':
			warm_usage(stdout);
			return 0;
		default:
			warm_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		warm_usage(stderr);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "s3cachectl warm: %s: %s\n", argv[i],
				strerror(errno));
			atomic_store(&w.failed, 1);
		} else if (S_ISDIR(st.st_mode)) {
			if (!recursive) {
				fprintf(stderr, "s3cachectl warm: %s: a directory (use -r)\n",
					argv[i]);
				atomic_store(&w.failed, 1);
			} else if (nftw(argv[i], walk_one, 64,
					FTW_PHYS | FTW_ACTIONRETVAL) < 0) {
				fprintf(stderr, "s3cachectl warm: %s: %s\n",
					argv[i], strerror(errno));
				atomic_store(&w.failed, 1);
			}
		} else if (S_ISREG(st.st_mode)) {
			if (add_file(argv[i], &st)) {
				fprintf(stderr, "s3cachectl warm: out of memory\n");
				return 1;
			}
		} else {
			fprintf(stderr, "s3cachectl warm: %s: not a file or directory\n",
				argv[i]);
			atomic_store(&w.failed, 1);
		}
	}
	if (jobs > w.n)
		jobs = w.n ? w.n : 1;
	th = calloc(jobs, sizeof(*th));
	if (!th)
		return 1;
	t0 = now_s();
	for (k = 0; k < jobs; k++) {
		atomic_fetch_add(&w.running, 1);
		if (pthread_create(&th[k], NULL, reader, NULL)) {
			fprintf(stderr, "s3cachectl warm: cannot start a reader\n");
			atomic_fetch_sub(&w.running, 1);
			atomic_store(&w.failed, 1);
			break;
		}
	}
	jobs = k;
	if (tty) {
		/* Update about five times a second until the readers finish. */
		while (atomic_load(&w.running) > 0) {
			struct timespec d = { 0, 200 * 1000 * 1000 };

			show(true, t0, false);
			nanosleep(&d, NULL);
		}
	}
	for (k = 0; k < jobs; k++)
		pthread_join(th[k], NULL);
	show(tty, t0, true);
	free(th);
	for (k = 0; k < w.n; k++)
		free(w.f[k].path);
	free(w.f);
	return atomic_load(&w.failed) ? 1 : 0;
}
