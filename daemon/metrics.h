/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics.c: the Prometheus endpoint of s3cachefsd (--metrics ADDR), and
 * the text exposition helpers it is built from (tests drive them).
 */
#ifndef S3D_METRICS_H
#define S3D_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct s3d_buf;
struct s3d_req;

/* Most connections served at once; more are answered 503 and closed. */
#define S3D_METRICS_CONNS	16
/* Largest request head (request line and headers) read. */
#define S3D_METRICS_REQ_MAX	8192
/* A connection not done by then is closed (slow or stuck clients). */
#define S3D_METRICS_TIMEOUT_MS	10000

/* ---- exposition format 0.0.4 ---- */
struct s3d_prom_label {
	const char *name;
	const char *value;
};

void s3d_prom_escape(struct s3d_buf *b, const char *s, bool label);
void s3d_prom_family(struct s3d_buf *b, const char *name, const char *type,
		     const char *help);
void s3d_prom_u64(struct s3d_buf *b, const char *name,
		  const struct s3d_prom_label *l, size_t nl, uint64_t v);
void s3d_prom_double(struct s3d_buf *b, const char *name,
		     const struct s3d_prom_label *l, size_t nl, double v);
void s3d_prom_histogram(struct s3d_buf *b, const char *name,
			const struct s3d_prom_label *l, size_t nl,
			const double *bounds, const uint64_t *counts,
			size_t nbounds, double sum);

/* ---- the endpoint ---- */

/* --metrics ADDR (or the config's metrics = ADDR); NULL: no endpoint. */
extern const char *s3d_metrics_addr;
/* S3D_METRICS_TIMEOUT_MS; tests shorten it. */
extern unsigned int s3d_metrics_timeout_ms;

int s3d_metrics_start(const char *addr);
void s3d_metrics_stop(void);
int s3d_metrics_port(void);
int s3d_metrics_render(struct s3d_buf *b);
void s3d_metrics_kreq(const struct s3d_req *r, int status);

#endif /* S3D_METRICS_H */
