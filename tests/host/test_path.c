// SPDX-License-Identifier: GPL-2.0
/*
 * Paths from the kernel and names from listings: what may become a path in
 * the cache directory, and how keys map to paths and back.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/path.h"
#include "uapi/s3cachefs.h"
#include "tap.h"

static void path(const char *p, bool want)
{
	ok(s3d_path_valid(p) == want, "path '%s' %s", p,
	   want ? "accepted" : "refused");
}

static void name(const char *n, size_t len, bool at_root, bool want,
		 const char *what)
{
	ok(s3d_name_valid(n, len, at_root) == want, "name %s %s%s", what,
	   want ? "accepted" : "refused", at_root ? " at the root" : "");
}

static void test_paths(void)
{
	char longp[S3CFS_PATH_MAX + 2], comp[300];

	path("", true);
	path("a", true);
	path("a/b/c.bin", true);
	path("dir with space/\xc3\xa9", true);
	path("sub/.s3cachefs", true);		/* only reserved at the root */
	path("..a/b..", true);
	path("/a", false);
	path("a/", false);
	path("a//b", false);
	path("..", false);
	path("a/../b", false);
	path("a/./b", false);
	path(".", false);
	path(".s3cachefs", false);
	path(".s3cachefs/format", false);
	path("lost+found", false);
	path("lost+found/x", false);
	path("sub/lost+found", true);
	path("a/.s3cfs.1.2", false);
	path(".s3cfsX", false);

	memset(comp, 'x', 256);
	comp[256] = '\0';
	path(comp, false);			/* component over NAME_MAX */
	comp[255] = '\0';
	path(comp, true);

	memset(longp, 'a', sizeof(longp));
	for (size_t i = 100; i < sizeof(longp) - 1; i += 101)
		longp[i] = '/';
	longp[S3CFS_PATH_MAX] = '\0';
	ok(s3d_path_valid(longp), "path of exactly S3CFS_PATH_MAX accepted");
	longp[S3CFS_PATH_MAX] = 'a';
	longp[S3CFS_PATH_MAX + 1] = '\0';
	ok(!s3d_path_valid(longp), "path over S3CFS_PATH_MAX refused");
}

static void test_names(void)
{
	name("a", 1, false, true, "'a'");
	name("", 0, false, false, "''");
	name(".", 1, false, false, "'.'");
	name("..", 2, false, false, "'..'");
	name("...", 3, false, true, "'...'");
	name("a/b", 3, false, false, "with '/'");
	name("a\0b", 3, false, false, "with NUL");
	name(".s3cachefs", 10, true, false, "'.s3cachefs'");
	name(".s3cachefs", 10, false, true, "'.s3cachefs'");
	name(".s3cachefsx", 11, true, true, "'.s3cachefsx'");
	name("lost+found", 10, true, false, "'lost+found'");
	name("lost+found", 10, false, true, "'lost+found'");
	name(".s3cfs", 6, false, false, "'.s3cfs'");
	name(".s3cfs.tmp", 10, true, false, "'.s3cfs.tmp'");
	name(".s3cf", 5, false, true, "'.s3cf'");
}

static void test_keys(void)
{
	char *k, big[S3D_KEY_MAX + 8];

	k = s3d_key_of("pre/", "a/b", NULL);
	is_str(k, "pre/a/b", "key of a file");
	free(k);
	k = s3d_key_of("pre/", "a", "c");
	is_str(k, "pre/a/c", "key of a name in a directory");
	free(k);
	k = s3d_key_of("pre/", "", "c");
	is_str(k, "pre/c", "key of a name at the root: no slash");
	free(k);
	k = s3d_key_of("", "", "c");
	is_str(k, "c", "key without prefix");
	free(k);
	memset(big, 'k', S3D_KEY_MAX + 1);
	big[S3D_KEY_MAX + 1] = '\0';
	errno = 0;
	ok(!s3d_key_of("", big, NULL) && errno == ENAMETOOLONG,
	   "key over 1024 bytes refused");
	big[S3D_KEY_MAX] = '\0';
	k = s3d_key_of("", big, NULL);
	ok(k && strlen(k) == S3D_KEY_MAX, "key of exactly 1024 bytes accepted");
	free(k);

	k = s3d_list_prefix("pre/", "");
	is_str(k, "pre/", "listing prefix of the root");
	free(k);
	k = s3d_list_prefix("", "");
	is_str(k, "", "listing prefix of the root without prefix");
	free(k);
	k = s3d_list_prefix("pre/", "a/b");
	is_str(k, "pre/a/b/", "listing prefix of a directory");
	free(k);
}

static void lname(const char *lp, const char *key, bool common,
		  const char *want)
{
	size_t len = 0;
	const char *n = s3d_list_name(lp, key, common, &len);
	char got[300] = "(null)";

	if (n)
		snprintf(got, sizeof(got), "%.*s", (int)len, n);
	is_str(got, want, "list name of %s '%s' under '%s'",
	       common ? "prefix" : "key", key, lp);
}

static void test_list_names(void)
{
	lname("pre/d/", "pre/d/file", false, "file");
	lname("pre/d/", "pre/d/sub/", true, "sub");
	lname("pre/d/", "pre/d/", false, "");		/* marker */
	lname("pre/d/", "pre/d//", true, "");		/* "d//x": empty name */
	lname("pre/d/", "pre/e/x", false, "(null)");	/* not under lp */
	lname("pre/d/", "pre/d/a/b", false, "(null)");	/* delimiter ignored */
	lname("pre/d/", "pre/d/noslash", true, "(null)");
	lname("", "top", false, "top");
	lname("", "dir/", true, "dir");
}

int main(void)
{
	test_paths();
	test_names();
	test_keys();
	test_list_names();
	return tap_done();
}
