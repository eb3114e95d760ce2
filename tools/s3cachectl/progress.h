/* SPDX-License-Identifier: GPL-2.0 */
/* s3cachectl warm: the progress line (pure, unit tested). */
#ifndef S3CACHECTL_PROGRESS_H
#define S3CACHECTL_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

void ctl_fmt_bytes(char *buf, size_t len, uint64_t n);
void ctl_fmt_duration(char *buf, size_t len, double secs);
void ctl_fmt_progress(char *buf, size_t len, uint64_t done, uint64_t total,
		      uint64_t files_done, uint64_t files, double secs,
		      int final);

#endif
