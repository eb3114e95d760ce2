// SPDX-License-Identifier: GPL-2.0
/*
 * mkdata - write SIZE bytes of pseudo-random data, the same for the same
 * SEED string, to stdout. Test fixtures at memory speed (xorshift64*; the
 * openssl fallback in tests/lib/fixture.sh crawls under TCG).
 *
 *   mkdata SIZE SEED
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static uint64_t buf[1 << 16];
	unsigned long long size;
	uint64_t s = 0xcbf29ce484222325ULL;	/* FNV-1a of the seed */
	const char *p;
	char *end;

	if (argc != 3)
		goto usage;
	size = strtoull(argv[1], &end, 0);
	if (*end || !*argv[1])
		goto usage;
	for (p = argv[2]; *p; p++)
		s = (s ^ (unsigned char)*p) * 0x100000001b3ULL;
	if (!s)
		s = 1;
	while (size) {
		size_t n = size < sizeof(buf) ? size : sizeof(buf), i, off = 0;

		for (i = 0; i < (n + 7) / 8; i++) {
			s ^= s >> 12;
			s ^= s << 25;
			s ^= s >> 27;
			buf[i] = s * 2685821657736338717ULL;
		}
		while (off < n) {
			ssize_t w = write(1, (char *)buf + off, n - off);

			if (w <= 0) {
				perror("mkdata: write");
				return 1;
			}
			off += w;
		}
		size -= n;
	}
	return 0;
usage:
	fprintf(stderr, "usage: mkdata SIZE SEED\n");
	return 2;
}
