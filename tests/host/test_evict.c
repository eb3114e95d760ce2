// SPDX-License-Identifier: GPL-2.0
/*
 * Eviction: which files go first (LRU by atime, ties by fetch time, empty
 * and busy files skipped, stop once enough is chosen), how much must go
 * (limit, low-water mark, free-space floor), size parsing, and the usage
 * scan of a cache directory, which leaves the loop to other work while it
 * goes on.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/stat.h>

#include "s3cachefsd.h"
#include "walk.h"
#include "tap.h"

#define MiB (1ULL << 20)

static void test_choose(void)
{
	struct s3d_evict_file f[] = {
		{ .path = "new", .bytes = 4 * MiB, .atime_ns = 500 },
		{ .path = "old", .bytes = 4 * MiB, .atime_ns = 100 },
		{ .path = "tie-late", .bytes = 1 * MiB, .atime_ns = 200,
		  .fetched_ms = 20 },
		{ .path = "tie-early", .bytes = 1 * MiB, .atime_ns = 200,
		  .fetched_ms = 10 },
		{ .path = "empty", .bytes = 0, .atime_ns = 1 },
		{ .path = "busy", .bytes = 8 * MiB, .atime_ns = 2, .busy = true },
	};
	size_t out[6], k;

	k = s3d_evict_choose(f, 6, 1, out);
	is_int(k, 1, "choose: one file covers 1 byte");
	is_str(f[out[0]].path, "old", "choose: the least recently used first (busy, empty skipped)");
	k = s3d_evict_choose(f, 6, 5 * MiB, out);
	is_int(k, 2, "choose: 5 MiB takes two files");
	is_str(f[out[1]].path, "tie-early", "choose: same atime: the one fetched first");
	k = s3d_evict_choose(f, 6, 6 * MiB, out);
	is_int(k, 3, "choose: 6 MiB takes three");
	is_str(f[out[2]].path, "tie-late", "choose: ... then the later fetch");
	k = s3d_evict_choose(f, 6, 100 * MiB, out);
	is_int(k, 4, "choose: more than there is: every evictable file");
	is_str(f[out[3]].path, "new", "choose: ... the most recent last");
	is_int(s3d_evict_choose(f, 6, 0, out), 0, "choose: nothing needed, nothing chosen");
	is_int(s3d_evict_choose(f, 0, 10, out), 0, "choose: no files");
}

static void test_need(void)
{
	struct s3d_cache_policy p = { .limit = 100 * MiB };

	is_int(s3d_evict_need(&p, 100 * MiB, 0, 0, true), 0, "need: at the limit: nothing");
	is_int(s3d_evict_need(&p, 101 * MiB, 0, 0, true), 6 * MiB,
	       "need: over the limit: down to the low-water mark (95%%)");
	is_int(s3d_evict_need(&p, 96 * MiB, 0, 0, false), 1 * MiB,
	       "need: a pass goes on above the low-water mark");
	is_int(s3d_evict_need(&p, 95 * MiB, 0, 0, false), 0, "need: ... and stops at it");
	p = (struct s3d_cache_policy){ 0 };
	is_int(s3d_evict_need(&p, 1ULL << 50, 0, 100, true), 0, "need: no limit, no floor: never");
	p.min_free = 10 * MiB;
	is_int(s3d_evict_need(&p, 50 * MiB, 4 * MiB, 1000 * MiB, true), 6 * MiB,
	       "need: under the free-space floor (bytes)");
	p.min_free_pct = 10;
	is_int(s3d_evict_need(&p, 50 * MiB, 90 * MiB, 1000 * MiB, true), 10 * MiB,
	       "need: under the free-space floor (percent)");
	is_int(s3d_evict_need(&p, 50 * MiB, 100 * MiB, 1000 * MiB, true), 0,
	       "need: at the floor: nothing");
}

static void test_parse(void)
{
	struct s3d_cache_policy p = { 0 };
	uint64_t v = 0;

	is_int(s3d_parse_size("123", &v), 0, "size: plain bytes");
	is_int(v, 123, "size: 123");
	s3d_parse_size("10G", &v);
	is_int(v, 10ULL << 30, "size: 10G");
	s3d_parse_size("512MiB", &v);
	is_int(v, 512ULL << 20, "size: 512MiB");
	s3d_parse_size("2k", &v);
	is_int(v, 2048, "size: 2k");
	is_int(s3d_parse_size("", &v), -EINVAL, "size: empty refused");
	is_int(s3d_parse_size("-1", &v), -EINVAL, "size: negative refused");
	is_int(s3d_parse_size("10X", &v), -EINVAL, "size: unknown unit refused");
	is_int(s3d_parse_size("99999999999E", &v), -ERANGE, "size: overflow refused");
	is_int(s3d_parse_min_free("5%", &p), 0, "min_free: percent");
	is_int(p.min_free_pct, 5, "min_free: 5%%");
	is_int(s3d_parse_min_free("100%", &p), -EINVAL, "min_free: 100%% refused");
	is_int(s3d_parse_min_free("1G", &p), 0, "min_free: bytes");
	ok(p.min_free == 1ULL << 30 && !p.min_free_pct, "min_free: 1G, percent cleared");
}

static uint64_t usage_of(const struct s3d_cache *c)
{
	uint64_t used, limit;

	s3d_cache_usage(c, &used, &limit);
	return used;
}

/* A broken scan must not hang the test: give up after 20 s. */
static uint64_t deadline;

static bool scanned(void *arg)
{
	struct { struct s3d_cache *c; uint64_t total; } *s = arg;

	return usage_of(s->c) >= s->total || s3d_now_ms() > deadline;
}

static void test_scan(void)
{
	char root[] = "/tmp/s3d-test-evict-XXXXXX", path[600];
	struct s3d_cache_policy pol = { 0 };
	struct s3d_cache *c;
	uint64_t used = 1, limit = 1;
	int rootfd, fd;
	char *buf;

	if (!mkdtemp(root)) {
		ok(0, "scan: mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "mkdir -p %s/a/b %s/.s3cachefs", root, root);
	if (system(path))
		ok(0, "scan: mkdir");
	buf = calloc(1, 1 << 20);
	snprintf(path, sizeof(path), "%s/a/b/f", root);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (write(fd, buf, 1 << 20) != 1 << 20)
		ok(0, "scan: write");
	close(fd);
	snprintf(path, sizeof(path), "%s/.s3cachefs/state", root);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (write(fd, buf, 1 << 20) != 1 << 20)
		ok(0, "scan: write");
	close(fd);
	snprintf(path, sizeof(path), "%s/sparse", root);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (ftruncate(fd, 1 << 30))
		ok(0, "scan: truncate");
	close(fd);
	free(buf);
	rootfd = open(root, O_PATH | O_DIRECTORY);
	c = s3d_cache_open(7, rootfd, &pol);
	ok(c != NULL, "scan: opened");
	{
		struct { struct s3d_cache *c; uint64_t total; } s = { c, 1 << 20 };

		deadline = s3d_now_ms() + 20000;
		s3d_loop_run(scanned, &s);
	}
	s3d_cache_usage(c, &used, &limit);
	ok(used >= 1 << 20 && used < (1 << 20) + (1 << 16),
	   "scan: usage counts allocated blocks of cached files only (%llu)",
	   (unsigned long long)used);
	is_int(limit, 0, "scan: no limit");
	/* A fetch into the sparse file: usage follows st_blocks. */
	snprintf(path, sizeof(path), "%s/sparse", root);
	fd = open(path, O_WRONLY);
	buf = calloc(1, 1 << 16);
	if (pwrite(fd, buf, 1 << 16, 1 << 20) != 1 << 16)
		ok(0, "scan: pwrite");
	free(buf);
	close(fd);
	s3d_cache_fetched(c, "sparse");
	s3d_cache_usage(c, &used, &limit);
	ok(used >= (1 << 20) + (1 << 16) && used < (1 << 20) + (2 << 16),
	   "scan: a FETCH updates usage (%llu)", (unsigned long long)used);
	unlink(path);
	s3d_cache_fetched(c, "sparse");
	s3d_cache_usage(c, &used, &limit);
	ok(used < (1 << 20) + (1 << 16), "scan: a vanished file leaves the count");
	s3d_cache_close(c);
	close(rootfd);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	if (system(path))
		diag("cleanup failed");
}

/*
 * A request (a pipe made readable by a timer, as the netlink socket is by
 * the kernel) arriving while a big cache is scanned is served before the
 * scan ends. The walk is slowed down on purpose (s3d_walk_delay_us).
 */
#define MANY	3000

static struct {
	struct s3d_cache *c;
	uint64_t total;		/* what the scan must end with */
	uint64_t seen;		/* usage when the request was served */
	bool served;
	int pfd[2];
	struct s3d_watch w;
	struct s3d_timer t;
} big;

static void big_request(struct s3d_watch *w, uint32_t events)
{
	char b;

	(void)events;
	if (read(w->fd, &b, 1) != 1)
		return;
	big.seen = usage_of(big.c);
	big.served = true;
}

static void big_send(struct s3d_timer *t)
{
	(void)t;
	if (write(big.pfd[1], "r", 1) != 1)
		diag("pipe write failed");
}

static bool big_done(void *arg)
{
	(void)arg;
	return (big.served && usage_of(big.c) >= big.total) ||
	       s3d_now_ms() > deadline;
}

static void test_scan_yields(void)
{
	char root[] = "/tmp/s3d-test-scan2-XXXXXX", path[600];
	struct s3d_cache_policy pol = { 0 };
	char blk[4096] = "x";
	struct stat st;
	int rootfd, fd, i;
	uint64_t t0;

	if (!mkdtemp(root)) {
		ok(0, "yield: mkdtemp");
		return;
	}
	for (i = 0; i < MANY; i++) {
		if (i % 100 == 0) {
			snprintf(path, sizeof(path), "%s/d%d", root, i / 100);
			mkdir(path, 0755);
		}
		snprintf(path, sizeof(path), "%s/d%d/f%d", root, i / 100, i);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0 || write(fd, blk, sizeof(blk)) != sizeof(blk))
			diag("yield: writing a file failed");
		if (fd >= 0 && !fstat(fd, &st))
			big.total += (uint64_t)st.st_blocks * 512;
		if (fd >= 0)
			close(fd);
	}
	if (pipe(big.pfd) || s3d_loop_watch(&big.w, big.pfd[0], EPOLLIN,
					    big_request)) {
		ok(0, "yield: pipe");
		return;
	}
	big.t.fn = big_send;
	s3d_walk_delay_us = 100;	/* >= 0.3 s for the whole walk */
	rootfd = open(root, O_PATH | O_DIRECTORY);
	t0 = s3d_now_ms();
	big.c = s3d_cache_open(8, rootfd, &pol);
	s3d_timer_arm(&big.t, 30);
	deadline = s3d_now_ms() + 20000;
	ok(big.c != NULL, "yield: opened a cache of %d files", MANY);
	s3d_loop_run(big_done, NULL);
	s3d_walk_delay_us = 0;
	ok(big.served && big.seen > 0 && big.seen < big.total,
	   "yield: a request 30 ms in is served while the scan goes on (%llu of %llu bytes counted then)",
	   (unsigned long long)big.seen, (unsigned long long)big.total);
	is_int(usage_of(big.c), big.total,
	       "yield: the scan still counts every file (%llu ms)",
	       (unsigned long long)(s3d_now_ms() - t0));
	s3d_loop_unwatch(&big.w);
	close(big.pfd[0]);
	close(big.pfd[1]);
	s3d_cache_close(big.c);
	close(rootfd);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	if (system(path))
		diag("cleanup failed");
}

int main(void)
{
	s3d_log_level = -1;
	if (s3d_loop_init(4, NULL)) {
		ok(0, "loop");
		return tap_done();
	}
	test_choose();
	test_need();
	test_parse();
	test_scan();
	test_scan_yields();
	s3d_loop_fini();
	return tap_done();
}
