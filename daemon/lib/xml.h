/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xml.c: the S3 XML answers we read (ListObjectsV2 pages, errors), parsed
 * with expat.
 */
#ifndef S3D_XML_H
#define S3D_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Largest XML body (listing page or error) we accept. */
#define S3D_XML_MAX		(32U << 20)

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

#endif /* S3D_XML_H */
