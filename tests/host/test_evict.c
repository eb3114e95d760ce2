// SPDX-License-Identifier: GPL-2.0
/*
 * Eviction: which files go first (LRU by atime, ties by fetch time, empty
 * and busy files skipped, stop once enough is chosen), how much must go
 * (limit, low-water mark, free-space floor, inodes), size parsing, the
 * usage scan of a cache directory, which leaves the loop to other work
 * while it goes on, and passes on the event loop against a fake kernel:
 * the atime is read again at each pass, the pass runs in slices, an EVICT
 * whose ack never comes times out, a full device starts a pass.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <linux/falloc.h>
#include <sys/stat.h>

#include "evict.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "lib/xfer.h"
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

/* ---- the selection against a plain sort (what passes did before) ---- */

static int ref_cmp(const void *a, const void *b)
{
	const struct s3d_evict_file *x = *(const struct s3d_evict_file * const *)a;
	const struct s3d_evict_file *y = *(const struct s3d_evict_file * const *)b;

	if (x->atime_ns != y->atime_ns)
		return x->atime_ns < y->atime_ns ? -1 : 1;
	if (x->fetched_ms != y->fetched_ms)
		return x->fetched_ms < y->fetched_ms ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Sort everything, take the oldest until @need is covered. */
static size_t ref_choose(const struct s3d_evict_file *f, size_t n,
			 uint64_t need, size_t *out)
{
	const struct s3d_evict_file **v = malloc(n * sizeof(*v));
	uint64_t got = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		v[i] = &f[i];
	qsort(v, n, sizeof(*v), ref_cmp);
	for (i = 0; i < n && got < need; i++) {
		if (!v[i]->bytes || v[i]->busy)
			continue;
		out[k++] = (size_t)(v[i] - f);
		got += v[i]->bytes;
	}
	free(v);
	return k;
}

/* CPU time of this thread: what the loop spends, whoever else runs. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct s3d_evict_file *random_files(size_t n, char **names)
{
	struct s3d_evict_file *f = calloc(n, sizeof(*f));
	size_t i;

	*names = malloc(n * 24);
	for (i = 0; i < n; i++) {
		f[i].path = *names + i * 24;
		snprintf(f[i].path, 24, "f%zu", i);
		f[i].atime_ns = random() % (n / 4 + 1);	/* many ties */
		f[i].fetched_ms = random() % 1000;
		f[i].bytes = (random() % 8) * 4096;	/* some empty */
		f[i].busy = random() % 50 == 0;
	}
	return f;
}

static void test_sel_vs_sort(void)
{
	size_t n = 20000, *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	uint64_t needs[] = { 1, 4096, 1 << 20, 20 << 20, 1ULL << 40 };
	size_t i, j, ka, kb;
	char *names;
	struct s3d_evict_file *f = random_files(n, &names);
	bool same = true;

	for (j = 0; j < S3D_ARRAY_SIZE(needs); j++) {
		ka = s3d_evict_choose(f, n, needs[j], a);
		kb = ref_choose(f, n, needs[j], b);
		same = same && ka == kb;
		for (i = 0; same && i < ka; i++)
			same = a[i] == b[i];
	}
	ok(same, "selection: the heap chooses exactly what a full sort would, in order (20000 files, 5 needs)");
	free(f);
	free(names);
	free(a);
	free(b);
}

/*
 * A pass over 1e6 files: before, one qsort of all of them on the loop;
 * now the selection takes them a slice at a time. Measured, not asserted
 * against the old code: the bound is on the slice.
 */
static void test_sel_scale(void)
{
	size_t n = 1000000, slice = 4096, i, j, k, *out = calloc(n, sizeof(*out));
	uint64_t need = 64ULL << 20;
	double t, sort_s, max_slice = 0, all_s;
	struct s3d_evict_sel sel;
	char *names;
	struct s3d_evict_file *f = random_files(n, &names);

	t = now_s();
	k = ref_choose(f, n, need, out);
	sort_s = now_s() - t;
	s3d_evict_sel_init(&sel, need);
	all_s = now_s();
	for (i = 0; i < n; i += slice) {
		t = now_s();
		for (j = i; j < n && j < i + slice; j++)
			s3d_evict_sel_add(&sel, &f[j], j);
		t = now_s() - t;
		if (t > max_slice)
			max_slice = t;
	}
	is_int(s3d_evict_sel_finish(&sel), k, "scale: 1e6 files: the same number chosen as by a sort");
	all_s = now_s() - all_s;
	printf("# 1e6 files (CPU time): full sort %.1f ms on the loop; selection %.1f ms in all, longest slice of %zu files %.3f ms\n",
	       sort_s * 1e3, all_s * 1e3, slice, max_slice * 1e3);
	ok(max_slice < 0.020, "scale: no slice of %zu files takes 20 ms of CPU (%.3f ms)",
	   slice, max_slice * 1e3);
	s3d_evict_sel_free(&sel);
	free(out);
	free(f);
	free(names);
}

static void test_inodes(void)
{
	struct s3d_cache_policy p = { .min_free_pct = 10 };

	ok(s3d_evict_inodes_short(&p, 99, 1000, 1 << 30), "inodes: 10%%: 99 of 1000 free is short");
	ok(!s3d_evict_inodes_short(&p, 100, 1000, 1 << 30), "inodes: 10%%: 100 of 1000 free is enough");
	ok(!s3d_evict_inodes_short(&p, 0, 0, 1 << 30), "inodes: a device without inode counts never is");
	p = (struct s3d_cache_policy){ .min_free = 1 << 28 };	/* a quarter */
	ok(s3d_evict_inodes_short(&p, 249, 1000, 1 << 30), "inodes: bytes: the same share of inodes (249 < 250)");
	ok(!s3d_evict_inodes_short(&p, 250, 1000, 1 << 30), "inodes: bytes: 250 of 1000 is enough");
	p = (struct s3d_cache_policy){ .limit = 1 << 20 };
	ok(!s3d_evict_inodes_short(&p, 0, 1000, 1 << 30), "inodes: no floor: never short");
}

/* ---- passes on the loop, against a fake kernel ---- */

static struct {
	int rootfd;
	bool ack;		/* answer (else: the ack is "lost") */
	const char *busy;	/* answer -EBUSY for this file */
	int sent, sent_busy;
	char last[256];
	void (*done)(void *arg, int err);
	void *arg;
	struct s3d_timer t;	/* the ack, a turn of the loop later */
} fk;

static void fake_ack(struct s3d_timer *t)
{
	void (*done)(void *arg, int err) = fk.done;

	(void)t;
	fk.done = NULL;
	if (done)
		done(fk.arg, fk.busy && !strcmp(fk.last, fk.busy) ? -EBUSY : 0);
}

/* The kernel's part: punch the file; ack it unless told not to. */
static int fake_send(uint32_t mount_id, const char *path, uint64_t len,
		     void (*done)(void *arg, int err), void *arg)
{
	int fd = openat(fk.rootfd, path, O_WRONLY);

	(void)mount_id;
	if (fk.busy && !strcmp(path, fk.busy)) {
		fk.sent_busy++;
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			      (off_t)len ?: 1))
			printf("# punch %s: %m\n", path);
		close(fd);
	}
	fk.sent++;
	snprintf(fk.last, sizeof(fk.last), "%s", path);
	fk.done = done;
	fk.arg = arg;
	if (fk.ack)
		s3d_timer_arm(&fk.t, 0);
	return 0;
}

static bool fake_cancel(void (*done)(void *arg, int err), void *arg)
{
	if (fk.done != done || fk.arg != arg)
		return false;
	fk.done = NULL;
	s3d_timer_cancel(&fk.t);
	return true;
}

static bool deadline_hit;
static void deadline_fn(struct s3d_timer *t)
{
	(void)t;
	deadline_hit = true;
}

struct until_usage {
	struct s3d_cache *c;
	uint64_t at_most;
};

static bool usage_down(void *arg)
{
	struct until_usage *u = arg;
	uint64_t used, limit;

	s3d_cache_usage(u->c, &used, &limit);
	return deadline_hit || (!s3d_cache_scanning(u->c) && used <= u->at_most);
}

static bool scan_over(void *arg)
{
	return deadline_hit || !s3d_cache_scanning(arg);
}

/* Run the loop until the usage scan after s3d_cache_open() is over. */
static void wait_scan(struct s3d_cache *c)
{
	struct s3d_timer dl = { .fn = deadline_fn };

	deadline_hit = false;
	s3d_timer_arm(&dl, 20000);
	s3d_loop_run(scan_over, c);
	s3d_timer_cancel(&dl);
}

/* Run the loop until usage is at most @at_most or @ms pass. */
static void run_until(struct s3d_cache *c, uint64_t at_most, unsigned int ms)
{
	struct s3d_timer dl = { .fn = deadline_fn };
	struct until_usage u = { c, at_most };

	deadline_hit = false;
	s3d_timer_arm(&dl, ms);
	s3d_loop_run(usage_down, &u);
	s3d_timer_cancel(&dl);
}

static void put_file(const char *root, const char *name, size_t len,
		     time_t atime)
{
	char path[600], *buf = calloc(1, len ?: 1);
	struct timespec ts[2] = { { atime, 0 }, { 0, UTIME_OMIT } };
	int fd;

	memset(buf, 'x', len);
	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		printf("# writing %s failed\n", path);
	if (fd >= 0) {
		futimens(fd, ts);
		close(fd);
	}
	free(buf);
}

static void set_atime(const char *root, const char *name, time_t atime)
{
	struct timespec ts[2] = { { atime, 0 }, { 0, UTIME_OMIT } };
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	utimensat(AT_FDCWD, path, ts, 0);
}

static bool punched(const char *root, const char *name)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	return !stat(path, &st) && st.st_blocks == 0;
}

#define KiB64	(64 << 10)

/* A fresh cache root in @root (a mkdtemp template); its O_PATH fd. */
static int make_root(char *root)
{
	if (!mkdtemp(root))
		return -1;
	fk.rootfd = open(root, O_PATH | O_DIRECTORY);
	return fk.rootfd;
}

static void rm_root(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		diag("cleanup failed");
}

/*
 * A fresh cache root in @root holding @n files f0.. of 64 KiB, oldest
 * first, tracked as mount @id under @pol once the scan is over (reported
 * as @what). NULL if it could not be opened.
 */
static struct s3d_cache *open_files(char *root, int *rootfd, int n,
				    time_t t0, uint32_t id,
				    const struct s3d_cache_policy *pol,
				    const char *what)
{
	struct s3d_cache *c;
	char name[32];
	int i;

	*rootfd = make_root(root);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		put_file(root, name, KiB64, t0 + i * 100);
	}
	c = s3d_cache_open(id, *rootfd, pol);
	if (c)
		wait_scan(c);
	ok(c != NULL, "%s", what);
	return c;
}

/*
 * The LRU clock is read at the pass: files whose atime the kernel moved
 * after the daemon last looked (reads from the page cache fetch nothing)
 * are not the old ones any more.
 */
static void test_pass_lru(void)
{
	char root[] = "/tmp/s3d-test-lru-XXXXXX", name[32];
	struct s3d_cache_policy pol = { .limit = 9 * KiB64 };
	time_t t0 = time(NULL) - 10000;
	struct s3d_cache *c;
	int rootfd, i;

	rootfd = make_root(root);
	/* f0 .. f7 oldest first at the scan, plus many empty files */
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		put_file(root, name, KiB64, t0 + i * 100);
	}
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "empty%d", i);
		put_file(root, name, 0, t0);
	}
	c = s3d_cache_open(3, rootfd, &pol);
	if (c)
		wait_scan(c);
	ok(c != NULL, "pass: cache opened (8 x 64 KiB, limit 9 x 64 KiB)");
	if (!c)
		return;
	/* Since: f0 .. f3 were read (the kernel moved their atime). */
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		set_atime(root, name, t0 + 5000 + i);
	}
	/* A fetch into a new file takes the mount over its limit. */
	put_file(root, "new", 2 * KiB64, t0 + 9000);
	fk.sent = 0;
	s3d_evict_stats.slices = 0;
	s3d_cache_fetched(c, "new");
	run_until(c, 9 * KiB64 - 9 * KiB64 / 20, 5000);
	ok(!deadline_hit, "pass: usage back under the low-water mark (%d EVICTs)", fk.sent);
	ok(punched(root, "f4") && punched(root, "f5"),
	   "pass: the files not used since the scan (f4, f5) were evicted");
	ok(!punched(root, "f0") && !punched(root, "f1") && !punched(root, "f3"),
	   "pass: the files used since (f0, f1, f3), oldest at the scan, were kept");
	ok(!punched(root, "new"), "pass: the file just fetched was kept");
	ok(s3d_evict_stats.slices >= 3,
	   "pass: 3008 files were looked at in slices, the loop running between them (%llu slices, the longest %llu ms)",
	   (unsigned long long)s3d_evict_stats.slices,
	   (unsigned long long)s3d_evict_stats.slice_ms_max);
	s3d_cache_close(c);
	close(rootfd);
	rm_root(root);
}

/* An EVICT whose ack never comes times out, and the pass goes on. */
static void test_pass_timeout(void)
{
	char root[] = "/tmp/s3d-test-ack-XXXXXX";
	struct s3d_cache_policy pol = { .limit = 4 * KiB64 };
	time_t t0 = time(NULL) - 10000;
	uint64_t used, limit, timeouts = s3d_evict_stats.timeouts;
	struct s3d_cache *c;
	int rootfd;

	c = open_files(root, &rootfd, 4, t0, 4, &pol,
		       "timeout: cache opened at its limit");
	if (!c)
		return;
	fk.ack = false;		/* the kernel punches; the acks are dropped */
	fk.sent = 0;
	s3d_evict_timeout_ms = 100;
	put_file(root, "new", 2 * KiB64, t0 + 9000);
	s3d_cache_fetched(c, "new");
	is_int(fk.sent, 1, "timeout: the pass sent one EVICT");
	run_until(c, 4 * KiB64 - 4 * KiB64 / 20, 3000);
	s3d_cache_usage(c, &used, &limit);
	ok(fk.sent >= 2 && !deadline_hit,
	   "timeout: no ack: the EVICT timed out and the pass went on (%d EVICTs, %llu bytes in use)",
	   fk.sent, (unsigned long long)used);
	ok(s3d_evict_stats.timeouts > timeouts, "timeout: counted (%llu)",
	   (unsigned long long)(s3d_evict_stats.timeouts - timeouts));
	/* Later fetches still start passes: nothing is left "evicting". */
	fk.ack = true;
	fk.sent = 0;
	put_file(root, "new2", 4 * KiB64, t0 + 9500);
	s3d_cache_fetched(c, "new2");
	run_until(c, 4 * KiB64 - 4 * KiB64 / 20, 3000);
	ok(fk.sent >= 1 && !deadline_hit, "timeout: the next pass runs (%d EVICTs)", fk.sent);
	s3d_evict_timeout_ms = 30000;
	s3d_cache_close(c);
	close(rootfd);
	rm_root(root);
}

/*
 * Fetches that end while a pass is evicting are not in its choice; with no
 * fetch after them, the pass's end must look again (the reads are over).
 */
static void test_pass_again(void)
{
	char root[] = "/tmp/s3d-test-again-XXXXXX", name[32];
	struct s3d_cache_policy pol = { .limit = 4 * KiB64 };
	time_t t0 = time(NULL) - 10000;
	uint64_t used, limit, passes;
	struct s3d_cache *c;
	int rootfd, i;

	c = open_files(root, &rootfd, 4, t0, 5, &pol,
		       "again: cache opened at its limit");
	if (!c)
		return;
	fk.ack = false;		/* each EVICT waits out its timeout */
	fk.sent = 0;
	s3d_evict_timeout_ms = 100;
	passes = s3d_evict_stats.passes;
	put_file(root, "new", KiB64, t0 + 9000);
	s3d_cache_fetched(c, "new");
	is_int(fk.sent, 1, "again: a pass started (one EVICT out)");
	/* The reads go on while it waits: 6 more files, then no more. */
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		put_file(root, name, KiB64, t0 + 9100 + i);
		s3d_cache_fetched(c, name);
	}
	run_until(c, 4 * KiB64 - 4 * KiB64 / 20, 5000);
	s3d_cache_usage(c, &used, &limit);
	ok(!deadline_hit,
	   "again: usage came back under the low-water mark with no fetch after the pass (%llu bytes, %llu passes, %d EVICTs)",
	   (unsigned long long)used,
	   (unsigned long long)(s3d_evict_stats.passes - passes), fk.sent);
	ok(s3d_evict_stats.passes - passes >= 2,
	   "again: a second pass ran for the files fetched during the first");
	fk.ack = true;
	s3d_evict_timeout_ms = 30000;
	s3d_cache_close(c);
	close(rootfd);
	rm_root(root);
}

/* A file being fetched (-EBUSY) is not chosen again pass after pass. */
static void test_pass_busy(void)
{
	char root[] = "/tmp/s3d-test-busy-XXXXXX", name[32];
	struct s3d_cache_policy pol = { .limit = 8 * KiB64 };
	time_t t0 = time(NULL) - 10000;
	struct s3d_cache *c;
	int rootfd, i, late;
	uint64_t passes;

	rootfd = make_root(root);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		put_file(root, name, KiB64, t0 + i * 100);
	}
	c = s3d_cache_open(6, rootfd, &pol);
	if (c)
		wait_scan(c);
	ok(c != NULL, "busy: cache opened at its limit");
	if (!c)
		return;
	fk.ack = true;
	fk.busy = "f0";
	fk.sent = fk.sent_busy = 0;
	passes = s3d_evict_stats.passes;
	for (i = 0, late = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "new%d", i);
		put_file(root, name, 2 * KiB64, t0 + 9000 + i);
		s3d_cache_fetched(c, name);
		run_until(c, 8 * KiB64 - 8 * KiB64 / 20, 3000);
		late += deadline_hit;
	}
	ok(s3d_evict_stats.passes - passes == 3 && !late,
	   "busy: three passes, each back under the low-water mark (%d EVICTs)", fk.sent);
	is_int(fk.sent_busy, 1, "busy: the busy file was asked for once, then skipped");
	ok(!punched(root, "f0") && punched(root, "f1"), "busy: it was kept; the next oldest went");
	fk.busy = NULL;
	s3d_cache_close(c);
	close(rootfd);
	rm_root(root);
}

/* A write that found the device full starts a pass, limits or not. */
static void test_nospace(void)
{
	char root[] = "/tmp/s3d-test-nospace-XXXXXX";
	struct s3d_cache_policy pol = { 0 };
	time_t t0 = time(NULL) - 10000;
	uint64_t used0, used, limit;
	struct s3d_cache *c;
	int rootfd;

	c = open_files(root, &rootfd, 8, t0, 5, &pol,
		       "nospace: cache opened, no limit, no floor");
	if (!c)
		return;
	s3d_cache_usage(c, &used0, &limit);
	fk.ack = true;
	fk.sent = 0;
	s3d_cache_nospace(c, 4096);
	run_until(c, used0 - used0 / 20, 3000);
	s3d_cache_usage(c, &used, &limit);
	ok(fk.sent >= 1 && used < used0, "nospace: ENOSPC started a pass (%d EVICTs, %llu -> %llu bytes)",
	   fk.sent, (unsigned long long)used0, (unsigned long long)used);
	ok(punched(root, "f0") && !punched(root, "f7"), "nospace: least recently used first");
	s3d_cache_close(c);
	close(rootfd);
	rm_root(root);
}

int main(void)
{
	s3d_log_level = -1;
	if (s3d_engine_init(4, NULL)) {
		ok(0, "loop");
		return tap_done();
	}
	test_choose();
	test_need();
	test_inodes();
	test_parse();
	test_scan();
	test_scan_yields();
	test_sel_vs_sort();
	test_sel_scale();
	fk.t.fn = fake_ack;
	s3d_evict_send = fake_send;
	s3d_evict_cancel = fake_cancel;
	fk.ack = true;
	test_pass_lru();
	test_pass_timeout();
	test_pass_again();
	test_pass_busy();
	test_nospace();
	s3d_engine_fini();
	return tap_done();
}

