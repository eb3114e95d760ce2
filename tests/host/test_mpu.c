// SPDX-License-Identifier: GPL-2.0
/*
 * The arithmetic of a multipart upload (mpu.c): the part size, so that
 * any object up to S3's 5 TiB fits in 10 000 parts, and the ETag S3 gives
 * the object (what tells a lost Complete answer from a conflict).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "mpu.h"
#include "tap.h"

#define MIB (1ULL << 20)

static unsigned long long nparts(uint64_t size, uint64_t part)
{
	return (size + part - 1) / part;
}

int main(void)
{
	static const char *const two[] = { "\"ffc88b4ca90a355f8ddba6b2c3b2af5c\"",
			      "d067a0fa9dc61a6e7195ca99696b5a89" };
	static const char *const kms[] = { "\"ffc88b4ca90a355f8ddba6b2c3b2af5c\"",
			      "\"not-an-md5\"" };
	char etag[S3D_ETAG_MAX + 1];
	uint64_t p;

	is_int(s3d_mpu_part_size(20 * MIB, 16 * MIB), 16 * MIB,
	       "a 20 MiB object: the configured 16 MiB parts");
	is_int(s3d_mpu_part_size(20 * MIB, MIB), 5 * MIB,
	       "parts are never below S3's 5 MiB");
	p = s3d_mpu_part_size(S3D_OBJECT_MAX, 16 * MIB);
	is_int(p, 525 * MIB, "a 5 TiB object: 525 MiB parts");
	ok(nparts(S3D_OBJECT_MAX, p) <= S3D_PARTS_MAX,
	   "... %llu parts, within S3's 10 000", nparts(S3D_OBJECT_MAX, p));
	p = s3d_mpu_part_size(160000 * MIB + 1, 16 * MIB);
	ok(nparts(160000 * MIB + 1, p) <= S3D_PARTS_MAX && p % MIB == 0,
	   "one byte more than 10 000 parts of 16 MiB: bigger whole-MiB parts (%llu MiB)",
	   (unsigned long long)(p / MIB));

	is_int(s3d_mpu_etag(two, 2, etag), 0, "the ETag of two parts");
	is_str(etag, "\"620e8b191a353bdc9189840bb3904928-2\"",
	       "... is the MD5 of their MD5s, \"-2\" (quoted or not)");
	is_int(s3d_mpu_etag(kms, 2, etag), -EINVAL,
	       "a part ETag that is not an MD5: unknown in advance (-EINVAL)");
	is_str(etag, "", "... and nothing is made up");
	return tap_done();
}
