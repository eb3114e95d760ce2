// SPDX-License-Identifier: GPL-2.0
/*
 * The writer token: x-amz-meta-s3cfs-writer on every object an UPLOAD
 * writes, a hash of this machine's id, the cache file (inode number and
 * birth time: a new file at the same inode has another), the bucket and
 * key, and the ETag the upload was conditional on ("new" for a create;
 * for a streamed upload, created before the close names its condition,
 * the base version the file's LOCAL tag named then: stream.c). A copy
 * does not carry it along: SETMETA drops it, and a RENAME's copy is at
 * another key.
 *
 * Why: a PUT or Complete can take effect while the kernel hears that the
 * upload failed (its answer lost after the last retry, or the kernel gave
 * the request up). The file then stays LOCAL, based on the old version,
 * and its next upload fails its condition on our own object. Its bytes
 * differ (the file changed since), so comparing them cannot tell this
 * from a conflict; the token can. An object with our token was written
 * by an upload of this very file, based on the version this upload is
 * based on: nobody else changed the object since the kernel last knew
 * it, and replacing it (If-Match its ETag) loses nobody's write. Two
 * clones of one machine image (same machine id, same cache file) upload
 * under the same token: each may take the other's object for its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "lib/path.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "writer.h"

/* /etc/machine-id, else the host name: read once. */
static const char *machine_id(void)
{
	static char id[128];
	static bool read;
	FILE *f;

	if (read)
		return id;
	read = true;
	f = fopen("/etc/machine-id", "re");
	if (!f || !fgets(id, sizeof(id), f) || ferror(f))
		id[0] = '\0';
	if (f)
		fclose(f);
	id[strcspn(id, "\n")] = '\0';
	if (!id[0] && gethostname(id, sizeof(id) - 1))
		id[0] = '\0';
	return id;
}

/**
 * s3d_writer_token() - the token of an upload of the file @fd
 * @fd: the cache file
 * @bucket: the bucket
 * @key: the object's key
 * @base: the ETag the upload is conditional on, or NULL for a create
 * @out: the token, S3D_WRITER_TOKEN_LEN hex digits
 *
 * Return: 0, or -errno (no token: the upload goes without one).
 */
int s3d_writer_token(int fd, const char *bucket, const char *key,
		     const char *base, char out[S3D_WRITER_TOKEN_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char buf[S3D_KEY_MAX + 512], bare[S3D_ETAG_MAX + 1];
	struct statx stx;
	int n;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_BTIME))
		return -EOPNOTSUPP;
	if (base)
		s3d_etag_bare(base, bare, sizeof(bare));
	n = snprintf(buf, sizeof(buf), "%s|%llu|%lld.%u|%s|%s|%s", machine_id(),
		     (unsigned long long)stx.stx_ino,
		     (long long)stx.stx_btime.tv_sec, stx.stx_btime.tv_nsec,
		     base ? bare : "new", bucket, key);
	if (n < 0 || (size_t)n >= sizeof(buf) ||
	    !EVP_Digest(buf, (size_t)n, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen < S3D_WRITER_TOKEN_LEN / 2)
		return -EIO;
	s3d_hex(md, S3D_WRITER_TOKEN_LEN / 2, out);
	out[S3D_WRITER_TOKEN_LEN] = '\0';
	return 0;
}

/**
 * s3d_writer_is() - does a response carry the writer token @token?
 * @hdrs: its headers, "name\0value\0" (struct s3d_xfer.hdrs)
 * @token: ours ("" never matches)
 */
bool s3d_writer_is(const struct s3d_buf *hdrs, const char *token)
{
	const char *p = hdrs->p, *end = p + hdrs->len;

	if (!token[0] || hdrs->err)
		return false;
	while (p < end) {
		const char *name = p, *value = name + strlen(name) + 1;

		if (value >= end)
			break;
		if (!strcasecmp(name, S3D_WRITER_HDR))
			return !strcmp(value, token);
		p = value + strlen(value) + 1;
	}
	return false;
}
