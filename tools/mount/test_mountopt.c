// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of mount.s3cachefs's parsing (mountopt.c): the sources
 * the module takes and refuses, and where each option of a -o string goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "mountopt.h"
#include "tap.h"

static void source_ok(const char *src, const char *bucket, const char *prefix)
{
	char err[256] = "", *b, *p;
	int r = s3m_parse_source(src, &b, &p, err, sizeof(err));

	if (!ok(r == 0, "source '%s' accepted", src)) {
		printf("#   %s\n", err);
		return;
	}
	is_str(b, bucket, "source '%s': bucket", src);
	is_str(p, prefix, "source '%s': prefix", src);
	free(b);
	free(p);
}

static void source_bad(const char *src, const char *why)
{
	char err[256] = "", *b, *p;
	int r = s3m_parse_source(src, &b, &p, err, sizeof(err));

	ok(r == -EINVAL && strstr(err, why), "source '%s' refused: %s", src, why);
	if (r != -EINVAL || !strstr(err, why))
		printf("#   got %d '%s'\n", r, err);
	if (!r) {
		free(b);
		free(p);
	}
}

/* @want: the fsconfig parameters as "k=v,flag,..." */
static void params_are(const struct s3m_opts *o, const char *want,
		       const char *what)
{
	char got[1024] = "";
	size_t i;

	for (i = 0; i < o->nparams; i++) {
		if (i)
			strcat(got, ",");
		strcat(got, o->params[i].key);
		if (o->params[i].value) {
			strcat(got, "=");
			strcat(got, o->params[i].value);
		}
	}
	is_str(got, want, "%s: fsconfig parameters", what);
}

int main(void)
{
	char err[256], longb[80], longp[1100];
	struct s3m_opts o;

	/* Sources: the two forms the module takes, its refusals. */
	source_ok("bucket", "bucket", "");
	source_ok("bucket:", "bucket", "");
	source_ok("bucket:data/train", "bucket", "data/train/");
	source_ok("my-bucket.v2_x:data/", "my-bucket.v2_x", "data/");
	source_ok("s3://bucket", "bucket", "");
	source_ok("s3://bucket/", "bucket", "");
	source_ok("s3://bucket/data/train", "bucket", "data/train/");
	source_ok("s3://bucket//data", "bucket", "data/");
	source_ok("s3://b/a:b", "b", "a:b/");
	/* The scheme in any case, as in the module ("S3://" is no bucket "S3"). */
	source_ok("S3://bucket/data", "bucket", "data/");
	source_bad("", "no source");
	source_bad(":prefix", "1..63");
	source_bad("s3://", "1..63");
	source_bad("s3:///x", "1..63");
	memset(longb, 'a', 64);
	longb[64] = '\0';
	source_bad(longb, "1..63");
	longb[63] = '\0';
	source_ok(longb, longb, "");
	source_bad("buck et", "bad character ' '");
	source_bad("bucket:a//b", "empty, '.' or '..'");
	source_bad("bucket:a/../b", "empty, '.' or '..'");
	source_bad("s3://bucket/..", "empty, '.' or '..'");
	source_bad("bucket:./a", "empty, '.' or '..'");
	source_bad("bucket:a/.", "empty, '.' or '..'");
	memset(longp, 'k', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	memcpy(longp, "b:", 2);
	source_bad(longp, "prefix longer than 1023");

	/* Options: the module's go to fsconfig as given, in order. */
	ok(!s3m_parse_opts("cache=/var/cache/s3cachefs/a,chunk=4M,writable,nodir_index,uid=1000",
			   &o, err, sizeof(err)), "module options parse");
	params_are(&o, "cache=/var/cache/s3cachefs/a,chunk=4M,writable,nodir_index,uid=1000",
		   "module options");
	is_int(o.attr_set, 0, "module options: no mount attributes");
	s3m_free_opts(&o);

	/* An option the module does not know still reaches it (its message). */
	ok(!s3m_parse_opts("bogus=1,alsobogus", &o, err, sizeof(err)),
	   "unknown options parse");
	params_are(&o, "bogus=1,alsobogus", "unknown options");
	s3m_free_opts(&o);

	/* mount(8)'s own options and fstab's are dropped. */
	ok(!s3m_parse_opts("defaults,_netdev,nofail,x-systemd.requires=s3cachefsd.service,noauto,user,comment=x,X-mount.mkdir,cache=/c",
			   &o, err, sizeof(err)), "userspace options parse");
	params_are(&o, "cache=/c", "userspace options");
	is_str(o.dropped, "defaults,_netdev,nofail,x-systemd.requires=s3cachefsd.service,noauto,user,comment=x,X-mount.mkdir",
	       "userspace options: listed as dropped");
	s3m_free_opts(&o);

	/* Per-mount flags go to fsmount(); ro and rw to both. */
	ok(!s3m_parse_opts("ro,nosuid,nodev,noexec,noatime,nodiratime,cache=/c",
			   &o, err, sizeof(err)), "VFS options parse");
	params_are(&o, "ro,cache=/c", "VFS options");
	is_int(o.attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	       MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOATIME | MOUNT_ATTR_NODIRATIME,
	       "VFS options: mount attributes");
	s3m_free_opts(&o);

	/* The last of a pair wins; one atime policy. */
	ok(!s3m_parse_opts("nosuid,suid,noatime,strictatime,ro,rw,sync",
			   &o, err, sizeof(err)), "opposite options parse");
	is_int(o.attr_set, MOUNT_ATTR_STRICTATIME, "opposite options: the last wins");
	is_int(o.attr_clr, MOUNT_ATTR_NOSUID | MOUNT_ATTR_RDONLY,
	       "opposite options: cleared on remount");
	ok(o.atime_given, "opposite options: atime given");
	params_are(&o, "ro,rw,sync", "superblock flags");
	s3m_free_opts(&o);

	/* Quoting: a comma inside quotes belongs to the value. */
	ok(!s3m_parse_opts("cache=\"/mnt/a,b\",chunk=1M", &o, err, sizeof(err)),
	   "quoted value parses");
	params_are(&o, "cache=/mnt/a,b,chunk=1M", "quoted value");
	is_int(o.nparams, 2, "quoted value: two parameters");
	s3m_free_opts(&o);
	ok(s3m_parse_opts("cache=\"/mnt/a", &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "unterminated quote"), "an unterminated quote is refused");
	s3m_free_opts(&o);

	/* Empty items, no string at all, remount. */
	ok(!s3m_parse_opts(",,cache=/c,,", &o, err, sizeof(err)), "empty items parse");
	params_are(&o, "cache=/c", "empty items");
	s3m_free_opts(&o);
	ok(!s3m_parse_opts(NULL, &o, err, sizeof(err)) && !o.nparams,
	   "no -o: nothing to set");
	s3m_free_opts(&o);
	ok(!s3m_parse_opts("remount,fetch_timeout=30,ro", &o, err, sizeof(err)) &&
	   o.remount, "remount is seen");
	params_are(&o, "fetch_timeout=30,ro", "remount");
	s3m_free_opts(&o);

	/* What mount(8) does itself is refused, not passed on. */
	ok(s3m_parse_opts("bind", &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "'bind'"), "bind is refused");
	s3m_free_opts(&o);
	ok(s3m_parse_opts("cache=/c,loop", &o, err, sizeof(err)) == -EINVAL,
	   "loop is refused");
	s3m_free_opts(&o);
	return tap_done();
}
