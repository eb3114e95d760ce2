// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping between S3 keys and paths in the cache directory.
 *
 * Key PREFIX + "a/b/c" lives at <cache>/a/b/c. Only keys whose every
 * component is a usable file name are mapped; anything else (empty
 * components, ".", "..", over NAME_MAX, our own reserved names) is never
 * turned into a path, so nothing can ever land outside the cache root or on
 * top of the daemon's own files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "util.h"
#include "uapi/s3cachefs.h"

#define NAME_MAX_BYTES	255

static bool is_reserved(const char *name, size_t len, bool at_root)
{
	size_t hl = strlen(S3CFS_HIDDEN_PREFIX), ml = strlen(S3CFS_META_DIR);
	size_t ll = strlen(S3CFS_LOST_FOUND);

	if (len >= hl && !memcmp(name, S3CFS_HIDDEN_PREFIX, hl))
		return true;
	if (!at_root)
		return false;
	return (len == ml && !memcmp(name, S3CFS_META_DIR, ml)) ||
	       (len == ll && !memcmp(name, S3CFS_LOST_FOUND, ll));
}

/**
 * s3d_name_valid() - can this be one component of a cache path?
 * @name: the candidate (need not be NUL terminated)
 * @len: its length in bytes
 * @at_root: it would live directly in the cache root
 *
 * Return: true for a non-empty name of at most 255 bytes without '/' or NUL
 * that is not ".", "..", a daemon temporary (".s3cfs*") or, at the root,
 * the metadata directory or lost+found.
 */
bool s3d_name_valid(const char *name, size_t len, bool at_root)
{
	if (len == 0 || len > NAME_MAX_BYTES)
		return false;
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return false;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return false;
	return !is_reserved(name, len, at_root);
}

/**
 * s3d_path_valid() - is this a path the kernel may ask about?
 * @path: relative path, "" for the root
 *
 * Return: true if every component is a valid name (so no leading or
 * trailing '/', no empty, "." or ".." components) and the whole fits
 * S3CFS_PATH_MAX.
 */
bool s3d_path_valid(const char *path)
{
	const char *p = path, *slash;
	bool root = true;

	if (strlen(path) > S3CFS_PATH_MAX)
		return false;
	if (!*path)
		return true;
	for (;;) {
		slash = strchr(p, '/');
		if (!s3d_name_valid(p, slash ? (size_t)(slash - p) : strlen(p),
				    root))
			return false;
		if (!slash)
			return true;
		p = slash + 1;
		root = false;
	}
}

/**
 * s3d_key_of() - the S3 key of a cache path
 * @prefix: the mount's prefix ("" or ending in '/')
 * @path: the path ("" for the root)
 * @name: a component below @path, or NULL
 *
 * Return: a malloc'd key, or NULL with errno ENAMETOOLONG (over 1024 bytes)
 * or ENOMEM.
 */
char *s3d_key_of(const char *prefix, const char *path, const char *name)
{
	struct s3d_buf b;

	s3d_buf_init(&b, 0);
	s3d_buf_adds(&b, prefix);
	s3d_buf_adds(&b, path);
	if (name) {
		if (*path)
			s3d_buf_addc(&b, '/');
		s3d_buf_adds(&b, name);
	}
	if (b.err) {
		s3d_buf_free(&b);
		errno = ENOMEM;
		return NULL;
	}
	if (b.len > S3D_KEY_MAX) {
		s3d_buf_free(&b);
		errno = ENAMETOOLONG;
		return NULL;
	}
	return s3d_buf_steal(&b);
}

/**
 * s3d_list_prefix() - the ListObjectsV2 prefix that lists directory @path
 * @prefix: the mount's prefix
 * @path: the directory, "" for the root
 *
 * Return: PREFIX for the root, else PREFIX + PATH + "/"; malloc'd, or NULL
 * (errno as s3d_key_of()).
 */
char *s3d_list_prefix(const char *prefix, const char *path)
{
	char *lp, *key;

	if (!*path)
		return s3d_key_of(prefix, "", NULL);
	key = s3d_key_of(prefix, path, NULL);
	if (!key)
		return NULL;
	lp = malloc(strlen(key) + 2);
	if (!lp) {
		free(key);
		errno = ENOMEM;
		return NULL;
	}
	strcpy(lp, key);
	strcat(lp, "/");
	free(key);
	return lp;
}

/**
 * s3d_list_name() - the directory entry a listed key or common prefix makes
 * @lp: the listing prefix (s3d_list_prefix())
 * @key: a Contents key, or a CommonPrefixes prefix if @common
 * @common: @key is a common prefix (it ends in the '/' delimiter)
 * @len: set to the length of the name
 *
 * Return: pointer into @key at the name (not NUL terminated when @common),
 * or NULL if @key is not of the shape a delimiter listing of @lp produces.
 * The name still has to pass s3d_name_valid(); "" means the marker object
 * of the directory itself (key == @lp).
 */
const char *s3d_list_name(const char *lp, const char *key, bool common,
			  size_t *len)
{
	size_t lpl = strlen(lp), n;
	const char *rest;

	if (strncmp(key, lp, lpl))
		return NULL;
	rest = key + lpl;
	n = strlen(rest);
	if (common) {
		if (n == 0 || rest[n - 1] != '/')
			return NULL;
		n--;
	}
	if (memchr(rest, '/', n))
		return NULL;
	*len = n;
	return rest;
}

/* A mount prefix: "" or ending in '/', at most a key long, one line. */
bool s3d_prefix_valid(const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 0)
		return true;
	if (n > S3CFS_PREFIX_MAX || prefix[n - 1] != '/' || prefix[0] == '/')
		return false;
	return !strchr(prefix, '\n');
}

/*
 * Bucket names: 3-63 characters. Accept the legacy (pre-2018 us-east-1)
 * character set too, as S3-compatible servers do; never '/', never
 * control characters, so it is safe in a URL path and the format file.
 */
bool s3d_bucket_valid(const char *bucket)
{
	size_t n = strlen(bucket), i;

	if (n < 3 || n > S3CFS_BUCKET_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = bucket[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		      c == '_'))
			return false;
	}
	return true;
}
