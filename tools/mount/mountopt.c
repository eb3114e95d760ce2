// SPDX-License-Identifier: GPL-2.0
/*
 * mount.s3cachefs: the mount source and the -o string.
 *
 * mount(8) hands a helper everything after its own parsing: the module's
 * options, the VFS's (ro, nosuid, noatime, ...) and some of its own
 * (_netdev, nofail, x-systemd.*, depending on the util-linux version).
 * The module's options are not listed here on purpose: they go to the
 * kernel as they are, so that an option the module gains later works and
 * a wrong one gets the module's own message.
 */
#include "mountopt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>

#include "uapi/s3cachefs.h"

/* Per-mount attributes of fsmount(): name, set, cleared by the "no" form. */
static const struct {
	const char *name;
	unsigned int set;
	unsigned int clr;
} s3m_attrs[] = {
	{ "ro",		MOUNT_ATTR_RDONLY,	0 },
	{ "rw",		0,			MOUNT_ATTR_RDONLY },
	{ "nosuid",	MOUNT_ATTR_NOSUID,	0 },
	{ "suid",	0,			MOUNT_ATTR_NOSUID },
	{ "nodev",	MOUNT_ATTR_NODEV,	0 },
	{ "dev",	0,			MOUNT_ATTR_NODEV },
	{ "noexec",	MOUNT_ATTR_NOEXEC,	0 },
	{ "exec",	0,			MOUNT_ATTR_NOEXEC },
	{ "nodiratime",	MOUNT_ATTR_NODIRATIME,	0 },
	{ "diratime",	0,			MOUNT_ATTR_NODIRATIME },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0 },
	{ "symfollow",	0,			MOUNT_ATTR_NOSYMFOLLOW },
};

/* The access time policy: exactly one of them (MOUNT_ATTR__ATIME). */
static const struct {
	const char *name;
	unsigned int attr;
} s3m_atime[] = {
	{ "noatime",	 MOUNT_ATTR_NOATIME },
	{ "relatime",	 MOUNT_ATTR_RELATIME },
	{ "strictatime", MOUNT_ATTR_STRICTATIME },
	{ "atime",	 MOUNT_ATTR_RELATIME },	/* mount(2)'s default */
};

/* Superblock flags the VFS parses itself (fs/fs_context.c). */
static const char *const s3m_sb_flags[] = {
	"ro", "rw", "sync", "async", "dirsync", "lazytime", "nolazytime",
};

/* mount(8)'s and fstab's own options, never the kernel's. */
static const char *const s3m_userspace[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner",
	"group", "nofail", "_netdev", "silent", "loud",
};

static const char *const s3m_userspace_prefix[] = {
	"x-", "X-", "comment=", "user=", "helper=",
};

/* What mount(8) does without a helper, or what makes no sense here. */
static const char *const s3m_refused[] = {
	"bind", "rbind", "move", "loop", "shared", "private", "slave",
	"unbindable", "rshared", "rprivate", "rslave", "runbindable",
};

#define S3M_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define S3M_IN(list, s) s3m_in(list, S3M_ARRAY_SIZE(list), s)

static bool s3m_in(const char *const *list, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

static __attribute__((format(printf, 3, 4)))
void s3m_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Cut the next option off *@p at a comma outside double quotes, removing
 * the quotes (mount(8)'s quoting: cache="/a,b"). Return: the option, or
 * NULL at the end; *@bad on an unterminated quote.
 */
static char *s3m_next(char **p, bool *bad)
{
	char *start = *p, *r, *w;
	bool quoted = false;

	if (!start)
		return NULL;
	for (r = w = start; *r; r++) {
		if (*r == '"') {
			quoted = !quoted;
			continue;
		}
		if (*r == ',' && !quoted)
			break;
		*w++ = *r;
	}
	if (quoted)
		*bad = true;
	*p = *r ? r + 1 : NULL;
	*w = '\0';
	return start;
}

static int s3m_add_param(struct s3m_opts *o, char *opt)
{
	struct s3m_param *np;
	char *eq = strchr(opt, '=');

	np = realloc(o->params, (o->nparams + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	o->params = np;
	np[o->nparams].key = opt;
	np[o->nparams].value = NULL;
	if (eq) {
		*eq = '\0';
		np[o->nparams].value = eq + 1;
	}
	o->nparams++;
	return 0;
}

static int s3m_add_dropped(struct s3m_opts *o, const char *opt)
{
	size_t len = o->dropped ? strlen(o->dropped) : 0;
	char *d = realloc(o->dropped, len + strlen(opt) + 2);

	if (!d)
		return -ENOMEM;
	if (len)
		d[len++] = ',';
	strcpy(d + len, opt);
	o->dropped = d;
	return 0;
}

/**
 * s3m_parse_opts() - split a -o string
 * @optstr: the string, or NULL
 * @o: filled; s3m_free_opts() it whatever the result
 * @err: a message on failure
 * @errlen: its size
 *
 * Return: 0, -EINVAL (@err says why) or -ENOMEM.
 */
int s3m_parse_opts(const char *optstr, struct s3m_opts *o, char *err,
		   size_t errlen)
{
	char *p, *opt;
	bool bad = false;
	size_t i;
	int ret;

	memset(o, 0, sizeof(*o));
	o->buf = strdup(optstr ? optstr : "");
	if (!o->buf)
		return -ENOMEM;
	p = o->buf;
	while ((opt = s3m_next(&p, &bad))) {
		bool userspace = false, attr = false;

		if (bad) {
			s3m_err(err, errlen, "unterminated quote in option '%s'", opt);
			return -EINVAL;
		}
		if (!*opt)
			continue;
		if (!strcmp(opt, "remount")) {
			o->remount = true;
			continue;
		}
		if (S3M_IN(s3m_refused, opt)) {
			s3m_err(err, errlen, "option '%s' is not for mount.s3cachefs", opt);
			return -EINVAL;
		}
		for (i = 0; i < S3M_ARRAY_SIZE(s3m_userspace_prefix); i++)
			if (!strncmp(opt, s3m_userspace_prefix[i],
				     strlen(s3m_userspace_prefix[i])))
				userspace = true;
		if (userspace || S3M_IN(s3m_userspace, opt)) {
			ret = s3m_add_dropped(o, opt);
			if (ret)
				return ret;
			continue;
		}
		for (i = 0; i < S3M_ARRAY_SIZE(s3m_atime); i++) {
			if (strcmp(opt, s3m_atime[i].name))
				continue;
			o->attr_set = (o->attr_set & ~MOUNT_ATTR__ATIME) |
				      s3m_atime[i].attr;
			o->atime_given = true;
			attr = true;
		}
		for (i = 0; i < S3M_ARRAY_SIZE(s3m_attrs); i++) {
			if (strcmp(opt, s3m_attrs[i].name))
				continue;
			/* The last one given wins, as with mount(2). */
			o->attr_set = (o->attr_set & ~s3m_attrs[i].clr) |
				      s3m_attrs[i].set;
			o->attr_clr = (o->attr_clr & ~s3m_attrs[i].set) |
				      s3m_attrs[i].clr;
			attr = true;
		}
		/* ro and rw are both: the superblock's flag and the mount's. */
		if (attr && !S3M_IN(s3m_sb_flags, opt))
			continue;
		ret = s3m_add_param(o, opt);
		if (ret)
			return ret;
	}
	return 0;
}

void s3m_free_opts(struct s3m_opts *o)
{
	free(o->params);
	free(o->dropped);
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

static bool s3m_bad_component(const char *p, size_t plen)
{
	return strstr(p, "//") || !strcmp(p, ".") || !strcmp(p, "..") ||
	       !strncmp(p, "./", 2) || !strncmp(p, "../", 3) ||
	       strstr(p, "/./") || strstr(p, "/../") ||
	       (plen >= 2 && !strcmp(p + plen - 2, "/.")) ||
	       (plen >= 3 && !strcmp(p + plen - 3, "/.."));
}

/**
 * s3m_parse_source() - split a mount source as the module does
 * @src: "BUCKET[:PREFIX]" or "s3://BUCKET[/PREFIX]"
 * @bucket: set to a malloc'ed bucket name
 * @prefix: set to a malloc'ed prefix, "" or ending in '/'
 * @err: a message on failure
 * @errlen: its size
 *
 * The same rules as s3cfs_parse_source() in kmod/params.c, so that a bad
 * source is reported before the module is even needed.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int s3m_parse_source(const char *src, char **bucket, char **prefix,
		     char *err, size_t errlen)
{
	const char *sep, *p;
	size_t blen, plen;

	*bucket = *prefix = NULL;
	if (!src || !*src) {
		s3m_err(err, errlen, "no source: give BUCKET[:PREFIX] or s3://BUCKET/PREFIX");
		return -EINVAL;
	}
	if (!strncasecmp(src, "s3://", 5)) {
		src += 5;
		sep = strchr(src, '/');
	} else {
		sep = strchr(src, ':');
	}
	blen = sep ? (size_t)(sep - src) : strlen(src);
	if (blen < 1 || blen > S3CFS_BUCKET_MAX) {
		s3m_err(err, errlen, "bucket name must be 1..%d characters",
			S3CFS_BUCKET_MAX);
		return -EINVAL;
	}
	for (p = src; p < src + blen; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_')
			continue;
		s3m_err(err, errlen, "bad character '%c' in the bucket name", *p);
		return -EINVAL;
	}
	p = sep ? sep + 1 : "";
	while (*p == '/')
		p++;
	plen = strlen(p);
	if (plen > S3CFS_PREFIX_MAX - 1) {
		s3m_err(err, errlen, "prefix longer than %d bytes",
			S3CFS_PREFIX_MAX - 1);
		return -EINVAL;
	}
	if (s3m_bad_component(p, plen)) {
		s3m_err(err, errlen, "prefix '%s' has empty, '.' or '..' components", p);
		return -EINVAL;
	}
	*bucket = strndup(src, blen);
	*prefix = calloc(1, plen + 2);
	if (!*bucket || !*prefix) {
		free(*bucket);
		free(*prefix);
		*bucket = *prefix = NULL;
		return -ENOMEM;
	}
	memcpy(*prefix, p, plen);
	if (plen && p[plen - 1] != '/')
		(*prefix)[plen] = '/';
	return 0;
}
