// SPDX-License-Identifier: GPL-2.0
/*
 * verify-read - read FILE through one kernel read path and compare every
 * byte with EXPECTED (a local copy of the object).
 *
 *   verify-read FILE EXPECTED [--mode read|pread|mmap|sendfile|splice]
 *               [--bs BYTES] [--count N] [--seed S]
 *
 *   read      sequential read(2) in --bs pieces (default 131072), then EOF
 *   pread     --count (default 256) pread(2)s at random offsets and lengths
 *             (page-unaligned, straddling chunk edges, past EOF)
 *   mmap      mmap(2) the whole file: a sequential pass, then --count
 *             random single-byte probes
 *   sendfile  sendfile(2) into a pipe in --bs pieces (max 65536)
 *   splice    splice(2) into a pipe in --bs pieces (max 65536)
 *
 * Also checks that fstat's size equals EXPECTED's. Exit status: 0 equal,
 * 1 different (the first differing offset is printed), 2 an I/O error (the
 * errno is printed: the tests look for EIO).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *path;
static int fd, efd;
static off_t size;
static uint64_t rng;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from --seed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static void io_fail(const char *what, off_t off)
{
	int e = errno;

	fprintf(stderr, "verify-read: %s: %s at offset %lld: %s (errno %d)\n",
		path, what, (long long)off, strerror(e), e);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		perror("malloc");
		exit(2);
	}
	return p;
}

/* Compare len bytes read at off with the expected file. */
static void compare(const unsigned char *got, off_t off, size_t len)
{
	static unsigned char *want;
	static size_t cap;
	size_t done = 0, i;

	if (cap < len) {
		free(want);
		cap = len;
		want = xmalloc(cap);
	}
	while (done < len) {
		ssize_t n = pread(efd, want + done, len - done, off + done);

		if (n <= 0) {
			fprintf(stderr, "verify-read: expected file is short at %lld\n",
				(long long)(off + done));
			exit(2);
		}
		done += n;
	}
	if (!memcmp(got, want, len))
		return;
	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	fprintf(stderr, "verify-read: %s differs at offset %lld: got 0x%02x, want 0x%02x\n",
		path, (long long)(off + i), got[i], want[i]);
	exit(1);
}

static void eof_check(off_t off)
{
	char c;
	ssize_t n = pread(fd, &c, 1, off);

	if (n < 0)
		io_fail("pread at EOF", off);
	if (n) {
		fprintf(stderr, "verify-read: %s: data past EOF at %lld\n", path, (long long)off);
		exit(1);
	}
}

static void mode_read(size_t bs)
{
	unsigned char *buf = xmalloc(bs);
	off_t off = 0;

	for (;;) {
		ssize_t n = read(fd, buf, bs);

		if (n < 0)
			io_fail("read", off);
		if (!n)
			break;
		if (off + n > size) {
			fprintf(stderr, "verify-read: %s: read past the size\n", path);
			exit(1);
		}
		compare(buf, off, n);
		off += n;
	}
	if (off != size) {
		fprintf(stderr, "verify-read: %s: EOF at %lld, size %lld\n",
			path, (long long)off, (long long)size);
		exit(1);
	}
	free(buf);
}

static void mode_pread(long count)
{
	size_t max = 3 << 20;
	unsigned char *buf = xmalloc(max);
	long i;

	for (i = 0; i < count; i++) {
		off_t off;
		size_t len;
		ssize_t n, want;

		switch (i % 4) {
		case 0:		/* anywhere, any length */
			off = size ? rnd() % size : 0;
			len = 1 + rnd() % max;
			break;
		case 1:		/* small, unaligned */
			off = size ? rnd() % size : 0;
			len = 1 + rnd() % 5000;
			break;
		case 2:		/* straddling a 1 MiB boundary */
			off = (size >> 20) ? ((off_t)(rnd() % (size >> 20)) << 20) - (rnd() % 4096) : 0;
			if (off < 0)
				off = 0;
			len = 1 + rnd() % 16384;
			break;
		default:	/* the tail, running past EOF */
			off = size > 4096 ? size - 1 - rnd() % 4096 : 0;
			len = 8192;
			break;
		}
		n = pread(fd, buf, len, off);
		if (n < 0)
			io_fail("pread", off);
		want = off >= size ? 0 : (size - off < (off_t)len ? size - off : (off_t)len);
		if (n != want) {
			/* a short read is allowed by POSIX but not by us on a local fs */
			fprintf(stderr, "verify-read: %s: pread(%zu @ %lld) returned %zd, want %zd\n",
				path, len, (long long)off, n, want);
			exit(1);
		}
		compare(buf, off, n);
	}
	eof_check(size);
	free(buf);
}

static void mode_mmap(long count)
{
	unsigned char *map;
	off_t off;
	long i;

	if (!size)
		return;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		io_fail("mmap", 0);
	for (off = 0; off < size; off += 1 << 20) {
		size_t len = size - off < (1 << 20) ? size - off : 1 << 20;

		compare(map + off, off, len);
	}
	for (i = 0; i < count; i++) {
		off = rnd() % size;
		compare(map + off, off, 1);
	}
	munmap(map, size);
}

static void mode_pipe(int use_splice, size_t bs)
{
	unsigned char *buf;
	int p[2];
	off_t off = 0;

	if (bs > 65536)
		bs = 65536;	/* one pipe's worth: never blocks */
	buf = xmalloc(bs);
	if (pipe(p))
		io_fail("pipe", 0);
	for (;;) {
		loff_t loff = off;
		off_t soff = off;
		ssize_t n, got = 0;

		if (use_splice)
			n = splice(fd, &loff, p[1], NULL, bs, 0);
		else
			n = sendfile(p[1], fd, &soff, bs);
		if (n < 0)
			io_fail(use_splice ? "splice" : "sendfile", off);
		if (!n)
			break;
		while (got < n) {
			ssize_t r = read(p[0], buf + got, n - got);

			if (r <= 0)
				io_fail("read from the pipe", off);
			got += r;
		}
		compare(buf, off, n);
		off += n;
	}
	if (off != size) {
		fprintf(stderr, "verify-read: %s: EOF at %lld, size %lld\n",
			path, (long long)off, (long long)size);
		exit(1);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "bs", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ }
	};
	const char *mode = "read";
	size_t bs = 131072;
	long count = 256;
	struct stat st, est;
	int c;

	rng = 0x9e3779b97f4a7c15ULL;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'b': bs = strtoul(optarg, NULL, 0); break;
		case 'c': count = strtol(optarg, NULL, 0); break;
		case 's': rng ^= strtoull(optarg, NULL, 0) * 0xff51afd7ed558ccdULL; break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || !bs)
		goto usage;
	path = argv[optind];
	fd = open(path, O_RDONLY);
	if (fd < 0)
		io_fail("open", 0);
	efd = open(argv[optind + 1], O_RDONLY);
	if (efd < 0) {
		perror(argv[optind + 1]);
		return 2;
	}
	if (fstat(fd, &st) || fstat(efd, &est))
		io_fail("fstat", 0);
	size = st.st_size;
	if (st.st_size != est.st_size) {
		fprintf(stderr, "verify-read: %s: size %lld, want %lld\n",
			path, (long long)st.st_size, (long long)est.st_size);
		return 1;
	}
	if (!strcmp(mode, "read"))
		mode_read(bs);
	else if (!strcmp(mode, "pread"))
		mode_pread(count);
	else if (!strcmp(mode, "mmap"))
		mode_mmap(count);
	else if (!strcmp(mode, "sendfile"))
		mode_pipe(0, bs);
	else if (!strcmp(mode, "splice"))
		mode_pipe(1, bs);
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr, "usage: verify-read FILE EXPECTED [--mode read|pread|mmap|sendfile|splice]\n"
			"                   [--bs BYTES] [--count N] [--seed S]\n");
	return 2;
}
