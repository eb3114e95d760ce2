/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netlink.c: the generic netlink channel to the kernel: requests in,
 * replies, progress reports and EVICTs out.
 */
#ifndef S3D_NETLINK_H
#define S3D_NETLINK_H

#include <stdbool.h>
#include <stdint.h>

#include "req.h"

struct nlmsghdr;
struct nl_msg;

/**
 * struct s3d_nl_hooks - what the layers above do with the channel's events
 * @request: a request came in (parsed; @r->reply and @r->progress set)
 * @replied: optional; a reply is about to be sent (metrics count it)
 * @acks_lost: optional; the receive queue overflowed: EVICT acks may have
 *	been lost (each EVICT in flight was given up first)
 */
struct s3d_nl_hooks {
	void (*request)(struct s3d_req *r);
	void (*replied)(const struct s3d_req *r, int status);
	void (*acks_lost)(void);
};

int s3d_nl_init(const struct s3d_nl_hooks *hooks);
unsigned int s3d_nl_version(void);
void s3d_nl_fini(void);
int s3d_nl_parse_req(struct nlmsghdr *nlh, struct s3d_req **out);
struct nl_msg *s3d_nl_build_reply(const struct s3d_req *r, int status,
				  int family);
struct nl_msg *s3d_nl_build_evict(uint32_t mount_id, const char *path,
				  uint64_t off, uint64_t len, int family);
int s3d_nl_evict(uint32_t mount_id, const char *path, uint64_t len,
		 void (*done)(void *arg, int err), void *arg);
bool s3d_nl_evict_cancel(void (*done)(void *arg, int err), void *arg);

#endif /* S3D_NETLINK_H */
