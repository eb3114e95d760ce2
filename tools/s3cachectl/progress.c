// SPDX-License-Identifier: GPL-2.0
/* s3cachectl warm: the progress line. */
#include <stdio.h>

#include "progress.h"

/* 1023 B, 1.5 KiB, 12.0 MiB, 3.2 GiB ... */
void ctl_fmt_bytes(char *buf, size_t len, uint64_t n)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)n);
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[u]);
}

/* M:SS, or H:MM:SS from an hour; "?" when unknown. */
void ctl_fmt_duration(char *buf, size_t len, double secs)
{
	unsigned long long s;

	if (!(secs >= 0) || secs > 359999999.0) {
		snprintf(buf, len, "?");
		return;
	}
	s = (unsigned long long)(secs + 0.5);
	if (s >= 3600)
		snprintf(buf, len, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60,
			 s % 60);
	else
		snprintf(buf, len, "%llu:%02llu", s / 60, s % 60);
}

/*
 * "warm: 12.0 MiB / 100.0 MiB (12%), 3/10 files, 45.6 MiB/s, ETA 0:02";
 * the final line has the elapsed time instead of the ETA.
 */
void ctl_fmt_progress(char *buf, size_t len, uint64_t done, uint64_t total,
		      uint64_t files_done, uint64_t files, double secs,
		      int final)
{
	char d[32], t[32], r[32], e[32];
	double rate = secs > 0 ? (double)done / secs : 0;
	unsigned int pct = total ? (unsigned int)(done * 100 / total) : 100;

	ctl_fmt_bytes(d, sizeof(d), done);
	ctl_fmt_bytes(t, sizeof(t), total);
	if (final)
		ctl_fmt_duration(e, sizeof(e), secs);
	else if (done >= total)
		ctl_fmt_duration(e, sizeof(e), 0);
	else
		ctl_fmt_duration(e, sizeof(e), rate > 0 ?
				 (double)(total - done) / rate : -1);
	snprintf(r, sizeof(r), "%.1f", rate / (1024.0 * 1024.0));
	snprintf(buf, len, "warm: %s / %s (%u%%), %llu/%llu files, %s MiB/s, %s %s",
		 d, t, pct > 100 ? 100 : pct, (unsigned long long)files_done,
		 (unsigned long long)files, r, final ? "in" : "ETA", e);
}
