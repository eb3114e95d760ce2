// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for test-warm.sh: read() on a file whose path contains
 * $FAILREAD_MATCH fails with errno $FAILREAD_ERRNO (what a full cache
 * gives), so warm's stop-once behaviour can be tested without the module.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	const char *match = getenv("FAILREAD_MATCH");
	char p[64], target[4096];
	ssize_t len;

	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (match && *match) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		len = readlink(p, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			if (strstr(target, match)) {
				errno = atoi(getenv("FAILREAD_ERRNO") ?: "5");
				return -1;
			}
		}
	}
	return real(fd, buf, n);
}
