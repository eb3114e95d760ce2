/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ops.c: what the daemon does for the kernel's requests, from the outside:
 * start under a configuration, hand requests in, reload, stop.
 */
#ifndef S3D_OPS_H
#define S3D_OPS_H

#include "lib/config.h"
#include "req.h"

int s3d_ops_init(const struct s3d_conf *c);
int s3d_ops_set_conf(const struct s3d_conf *c);
void s3d_ops_fini(void);
unsigned int s3d_ops_pending(void);
void s3d_req_handle(struct s3d_req *r);

#endif /* S3D_OPS_H */
