/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctx.c: the S3 context of each config section (client, credentials,
 * per-bucket cap on requests in flight, throttling, retry budget).
 */
#ifndef S3D_CTX_H
#define S3D_CTX_H

#include "lib/config.h"
#include "lib/s3.h"
#include "lib/xfer.h"

struct s3d_ctx;

int s3d_ctx_init(const struct s3d_conf *c);
int s3d_ctx_set_conf(const struct s3d_conf *c);
void s3d_ctx_fini(void);
const struct s3d_conf *s3d_ctx_conf(unsigned int *gen);
struct s3d_ctx *s3d_ctx_get(const char *bucket, int *err);
void s3d_ctx_hold(struct s3d_ctx *c);
void s3d_ctx_put(struct s3d_ctx *c);
int s3d_ctx_ready(struct s3d_ctx *c,
		  void (*go)(void *arg, struct s3d_ctx *c, int err), void *arg);
int s3d_ctx_wait(struct s3d_ctx *c);
struct s3d_s3 *s3d_ctx_s3(struct s3d_ctx *c);
const char *s3d_ctx_section(const struct s3d_ctx *c);
unsigned int s3d_ctx_inflight(const struct s3d_ctx *c);
void s3d_ctx_submit(struct s3d_ctx *c, struct s3d_xfer *x);
void s3d_ctx_release(struct s3d_xfer *x);

#endif /* S3D_CTX_H */
