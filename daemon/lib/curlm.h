/* SPDX-License-Identifier: GPL-2.0 */
/*
 * curlm.c: a libcurl multi handle whose sockets and timeout are watched by
 * the event loop (loop.c).
 */
#ifndef S3D_CURLM_H
#define S3D_CURLM_H

#include <curl/curl.h>

#include "loop.h"

/**
 * struct s3d_curlm - a libcurl multi handle whose transfers run on the loop
 * @multi: where the owner adds its easy handles
 * @name: for log lines
 * @done: called from the loop as each transfer finishes; the owner removes
 *	it from @multi
 * @timer: libcurl's timeout
 */
struct s3d_curlm {
	CURLM *multi;
	const char *name;
	void (*done)(struct s3d_curlm *m, CURL *easy, CURLcode result);
	struct s3d_timer timer;
};

int s3d_curlm_init(struct s3d_curlm *m, const char *name,
		   void (*done)(struct s3d_curlm *m, CURL *easy,
				CURLcode result));
void s3d_curlm_fini(struct s3d_curlm *m);

#endif /* S3D_CURLM_H */
