/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mount.s3cachefs: what needs no kernel (the mount source, the -o string
 * split into what goes to fsconfig(), to fsmount() and nowhere), so that
 * it is tested on the host (test_mountopt.c).
 */
#ifndef S3M_MOUNTOPT_H
#define S3M_MOUNTOPT_H

#include <stdbool.h>
#include <stddef.h>

/* One fsconfig() parameter: a flag when @value is NULL. */
struct s3m_param {
	char *key;
	char *value;
};

/**
 * struct s3m_opts - a parsed -o string
 * @params: for fsconfig(), in the order given (the module's options and the
 *	superblock flags the VFS takes: ro, rw, sync, async, dirsync, lazytime)
 * @nparams: how many
 * @attr_set: MOUNT_ATTR_* for fsmount() / mount_setattr()
 * @attr_clr: MOUNT_ATTR_* cleared by mount_setattr() on a remount
 * @atime_given: an atime option was given (MOUNT_ATTR__ATIME is set)
 * @remount: -o remount
 * @dropped: mount(8)'s own options that the kernel never sees (defaults,
 *	_netdev, nofail, x-*, ...), comma-separated, for -v
 * @buf: storage of the strings above
 */
struct s3m_opts {
	struct s3m_param *params;
	size_t nparams;
	unsigned int attr_set;
	unsigned int attr_clr;
	bool atime_given;
	bool remount;
	char *dropped;
	char *buf;
};

int s3m_parse_opts(const char *optstr, struct s3m_opts *o, char *err,
		   size_t errlen);
void s3m_free_opts(struct s3m_opts *o);
int s3m_parse_source(const char *src, char **bucket, char **prefix,
		     char *err, size_t errlen);

#endif
