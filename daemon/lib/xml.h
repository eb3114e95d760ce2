/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xml.c: the S3 XML answers we read (ListObjectsV2 pages, errors, the
 * results of multipart uploads and copies), parsed with expat, and the
 * CompleteMultipartUpload body we send.
 */
#ifndef S3D_XML_H
#define S3D_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util.h"

/* Largest XML body (a write's result, an error) we accept. */
#define S3D_XML_MAX		(32U << 20)
/*
 * Largest ListObjectsV2 page we accept. A page holds 1000 entries at most
 * (max-keys' ceiling, Contents and CommonPrefixes together), and an entry
 * needs 8 KiB at most: a key of 1024 bytes is 3 KiB url-encoded (6 KiB as
 * XML entities, from a server that ignores encoding-type), its ETag 255
 * bytes at most, the rest (Size, LastModified, StorageClass, Owner,
 * checksums, the tags) well under 1 KiB. 1000 x 8 KiB leaves 196 KiB of
 * the 8 MiB for the page's own fields (Prefix, tokens).
 */
#define S3D_LIST_PAGE_MAX	(8U << 20)

struct s3d_obj {
	char *key;
	char *etag;
	uint64_t size;
	time_t mtime;
};

struct s3d_list_page {
	bool truncated;
	char *next_token;
	struct s3d_obj *objs;
	size_t nobjs;
	char **prefixes;
	size_t nprefixes;
	size_t nskipped;	/* entries left out: unusable (logged) */
};

struct s3d_s3error {
	char code[64];
	char message[256];
	char request_id[128];
};

int s3d_xml_parse_list(const char *xml, size_t len, struct s3d_list_page *pg,
		       char *why, size_t whylen);
void s3d_list_page_free(struct s3d_list_page *pg);
int s3d_xml_parse_error(const char *xml, size_t len, struct s3d_s3error *e);

/* S3's limits on a multipart upload's part numbers, and an UploadId we keep. */
#define S3D_PARTS_MAX		10000
#define S3D_UPLOAD_ID_MAX	1024

/* One part of a multipart upload: its number (1..) and the ETag S3 gave it. */
struct s3d_part {
	unsigned int number;
	const char *etag;
};

int s3d_xml_parse_initiate(const char *xml, size_t len, char *upload_id,
			   size_t idlen, char *why, size_t whylen);
int s3d_xml_parse_complete(const char *xml, size_t len, char *etag,
			   size_t etaglen, struct s3d_s3error *e, char *why,
			   size_t whylen);
int s3d_xml_parse_copy(const char *xml, size_t len, char *etag,
		       size_t etaglen, struct s3d_s3error *e, char *why,
		       size_t whylen);
int s3d_xml_build_complete(struct s3d_buf *out, const struct s3d_part *parts,
			   size_t n);

#endif /* S3D_XML_H */
