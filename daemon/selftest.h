/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftest.c: s3cachefsd --selftest, the operations driven from the
 * command line against a real S3 endpoint, without the kernel.
 */
#ifndef S3D_SELFTEST_H
#define S3D_SELFTEST_H

struct s3d_s3;

int s3d_selftest(struct s3d_s3 *s3, int argc, char **argv);

#endif /* S3D_SELFTEST_H */
