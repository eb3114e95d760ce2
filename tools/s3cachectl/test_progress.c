// SPDX-License-Identifier: GPL-2.0
/* Host test (TAP) of s3cachectl warm's progress formatting. */
#include <stdio.h>
#include <string.h>

#include "progress.h"

static int n, failed;

static void is(const char *got, const char *want, const char *what)
{
	n++;
	if (!strcmp(got, want)) {
		printf("ok %d - %s\n", n, what);
		return;
	}
	failed++;
	printf("not ok %d - %s\n#   got:  '%s'\n#   want: '%s'\n", n, what, got, want);
}

int main(void)
{
	char b[256];

	ctl_fmt_bytes(b, sizeof(b), 0);
	is(b, "0 B", "bytes 0");
	ctl_fmt_bytes(b, sizeof(b), 1023);
	is(b, "1023 B", "bytes 1023");
	ctl_fmt_bytes(b, sizeof(b), 1536);
	is(b, "1.5 KiB", "bytes 1536");
	ctl_fmt_bytes(b, sizeof(b), 12ULL << 20);
	is(b, "12.0 MiB", "bytes 12 MiB");
	ctl_fmt_bytes(b, sizeof(b), 5ULL << 40);
	is(b, "5.0 TiB", "bytes 5 TiB");
	ctl_fmt_duration(b, sizeof(b), 0);
	is(b, "0:00", "duration 0");
	ctl_fmt_duration(b, sizeof(b), 61.4);
	is(b, "1:01", "duration 61.4");
	ctl_fmt_duration(b, sizeof(b), 3600 * 2 + 5);
	is(b, "2:00:05", "duration 2h");
	ctl_fmt_duration(b, sizeof(b), -1);
	is(b, "?", "duration unknown");
	ctl_fmt_progress(b, sizeof(b), 10ULL << 20, 100ULL << 20, 3, 10, 2.0, 0);
	is(b, "warm: 10.0 MiB / 100.0 MiB (10%), 3/10 files, 5.0 MiB/s, ETA 0:18",
	   "progress line");
	ctl_fmt_progress(b, sizeof(b), 0, 100, 0, 1, 0.0, 0);
	is(b, "warm: 0 B / 100 B (0%), 0/1 files, 0.0 MiB/s, ETA ?",
	   "progress, no rate yet");
	ctl_fmt_progress(b, sizeof(b), 100ULL << 20, 100ULL << 20, 10, 10, 4.0, 1);
	is(b, "warm: 100.0 MiB / 100.0 MiB (100%), 10/10 files, 25.0 MiB/s, in 0:04",
	   "final line");
	ctl_fmt_progress(b, sizeof(b), 0, 0, 0, 0, 0.0, 1);
	is(b, "warm: 0 B / 0 B (100%), 0/0 files, 0.0 MiB/s, in 0:00",
	   "final, nothing to do");
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
