// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: the generic netlink family.
 *
 * Commands and attributes are in uapi/s3cachefs.h. Everything the daemon
 * sends needs CAP_SYS_ADMIN (and CAP_NET_ADMIN through GENL_ADMIN_PERM),
 * comes from the initial network namespace, and is validated strictly
 * against a per-command policy; answers and EVICT are accepted only from
 * the registered daemon socket (the socket itself, not its port id), and
 * what the module sends goes to that socket only (s3cfs_daemon_pin()).
 */
#include "s3cachefs.h"
#include <net/genetlink.h>
#include <linux/netlink.h>
#include <linux/module.h>

static const struct nla_policy s3cfs_register_policy[S3CFS_A_MAX + 1] = {
	[S3CFS_A_VERSION]	= { .type = NLA_U32 },
};

static const struct nla_policy s3cfs_reply_policy[S3CFS_A_MAX + 1] = {
	[S3CFS_A_REQ_ID]	= { .type = NLA_U64 },
	[S3CFS_A_STATUS]	= NLA_POLICY_RANGE(NLA_S32, -MAX_ERRNO, 0),
	[S3CFS_A_MOUNT_ID]	= { .type = NLA_U32 },
	[S3CFS_A_OFFSET]	= { .type = NLA_U64 },
	[S3CFS_A_LENGTH]	= { .type = NLA_U64 },
	[S3CFS_A_DONE]		= { .type = NLA_U64 },
	[S3CFS_A_ETAG]		= { .type = NLA_NUL_STRING, .len = S3CFS_ETAG_MAX },
	[S3CFS_A_INO]		= { .type = NLA_U64 },
	[S3CFS_A_FLAGS]		= { .type = NLA_U32 },
	[S3CFS_A_UPLOAD_DELAY]	= NLA_POLICY_MAX(NLA_U32, S3CFS_UPLOAD_DELAY_MAX),
};

static const struct nla_policy s3cfs_evict_policy[S3CFS_A_MAX + 1] = {
	[S3CFS_A_MOUNT_ID]	= { .type = NLA_U32 },
	[S3CFS_A_PATH]		= { .type = NLA_NUL_STRING, .len = S3CFS_PATH_MAX },
	[S3CFS_A_OFFSET]	= { .type = NLA_U64 },
	[S3CFS_A_LENGTH]	= { .type = NLA_U64 },
};

static struct genl_family s3cfs_genl_family;

static int s3cfs_nl_register(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *ver = info->attrs[S3CFS_A_VERSION];
	int err;

	if (!netlink_capable(skb, CAP_SYS_ADMIN))
		return -EPERM;
	if (!ver) {
		GENL_SET_ERR_MSG(info, "REGISTER needs S3CFS_A_VERSION");
		return -EINVAL;
	}
	if (nla_get_u32(ver) < S3CFS_GENL_VERSION_MIN ||
	    nla_get_u32(ver) > S3CFS_GENL_VERSION) {
		GENL_SET_ERR_MSG(info, "protocol version mismatch");
		return -EPROTO;
	}
	err = s3cfs_upcall_register(NETLINK_CB(skb).sk, info->snd_portid,
				    nla_get_u32(ver));
	if (err == -EBUSY)
		GENL_SET_ERR_MSG(info, "another s3cachefsd is registered");
	return err;
}

static int s3cfs_nl_reply(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct s3cfs_reply r = { .cmd = info->genlhdr->cmd };
	int err;

	if (!netlink_capable(skb, CAP_SYS_ADMIN))
		return -EPERM;
	if (!s3cfs_daemon_is(NETLINK_CB(skb).sk)) {
		GENL_SET_ERR_MSG(info, "not the registered daemon");
		return -EPERM;
	}
	if (!a[S3CFS_A_REQ_ID] || !a[S3CFS_A_MOUNT_ID] || !a[S3CFS_A_STATUS]) {
		GENL_SET_ERR_MSG(info, "answer needs REQ_ID, MOUNT_ID and STATUS");
		return -EINVAL;
	}
	r.id = nla_get_u64(a[S3CFS_A_REQ_ID]);
	r.mount_id = nla_get_u32(a[S3CFS_A_MOUNT_ID]);
	r.status = nla_get_s32(a[S3CFS_A_STATUS]);
	if (r.cmd == S3CFS_CMD_MOUNT && r.id == 0) {
		/* Answer to a mount announced after REGISTER. */
		if (r.status)
			pr_err("daemon refused mount %u when it registered (%d%s): the mount's requests fail until it is unmounted\n",
			       r.mount_id, r.status,
			       r.status == -ESTALE || r.status == -ELOOP ?
			       ": its cache directory is not the one mounted" :
			       "");
		return 0;
	}
	r.has_offset = a[S3CFS_A_OFFSET];
	if (r.has_offset)
		r.offset = nla_get_u64(a[S3CFS_A_OFFSET]);
	r.has_length = a[S3CFS_A_LENGTH];
	if (r.has_length)
		r.length = nla_get_u64(a[S3CFS_A_LENGTH]);
	r.has_done = a[S3CFS_A_DONE];
	if (r.has_done)
		r.done = nla_get_u64(a[S3CFS_A_DONE]);
	r.has_ino = a[S3CFS_A_INO];
	if (r.has_ino)
		r.ino = nla_get_u64(a[S3CFS_A_INO]);
	if (a[S3CFS_A_ETAG])
		r.etag = nla_data(a[S3CFS_A_ETAG]);
	r.has_flags = a[S3CFS_A_FLAGS];
	if (r.has_flags)
		r.flags = nla_get_u32(a[S3CFS_A_FLAGS]);
	r.has_upload_delay = a[S3CFS_A_UPLOAD_DELAY];
	if (r.has_upload_delay)
		r.upload_delay = nla_get_u32(a[S3CFS_A_UPLOAD_DELAY]);
	err = s3cfs_upcall_reply(&r);
	if (err == -ENOENT)
		GENL_SET_ERR_MSG(info, "no such request pending");
	else if (err)
		GENL_SET_ERR_MSG(info, "answer does not match the request");
	return err;
}

static int s3cfs_nl_evict(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct s3cfs_sb_info *sbi;
	int err;

	if (!netlink_capable(skb, CAP_SYS_ADMIN))
		return -EPERM;
	/* Any other root process: S3CFS_IOC_EVICT on a file of the mount. */
	if (!s3cfs_daemon_is(NETLINK_CB(skb).sk)) {
		GENL_SET_ERR_MSG(info, "not the registered daemon");
		return -EPERM;
	}
	if (!a[S3CFS_A_MOUNT_ID] || !a[S3CFS_A_PATH] || !a[S3CFS_A_OFFSET] ||
	    !a[S3CFS_A_LENGTH]) {
		GENL_SET_ERR_MSG(info, "EVICT needs MOUNT_ID, PATH, OFFSET, LENGTH");
		return -EINVAL;
	}
	sbi = s3cfs_get_mount(nla_get_u32(a[S3CFS_A_MOUNT_ID]));
	if (!sbi) {
		GENL_SET_ERR_MSG(info, "no such mount");
		return -ENODEV;
	}
	err = s3cfs_evict(sbi, nla_data(a[S3CFS_A_PATH]),
			  nla_get_u64(a[S3CFS_A_OFFSET]),
			  nla_get_u64(a[S3CFS_A_LENGTH]));
	s3cfs_put_mount(sbi);
	if (err == -EBUSY)
		GENL_SET_ERR_MSG(info,
				 "a fetch is in flight in that range, or the file is written here");
	/* Tests: netlink_rcv_skb() sends no ack for -EINTR. */
	if (s3cfs_fault("evict_noack"))
		return -EINTR;
	return err;
}

#define S3CFS_REPLY_OP(c) {						\
	.cmd = (c),							\
	.doit = s3cfs_nl_reply,						\
	.policy = s3cfs_reply_policy,					\
	.maxattr = S3CFS_A_MAX,						\
	.flags = GENL_ADMIN_PERM,					\
}

static const struct genl_ops s3cfs_genl_ops[] = {
	{
		.cmd = S3CFS_CMD_REGISTER,
		.doit = s3cfs_nl_register,
		.policy = s3cfs_register_policy,
		.maxattr = S3CFS_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	S3CFS_REPLY_OP(S3CFS_CMD_MOUNT),
	S3CFS_REPLY_OP(S3CFS_CMD_FETCH),
	S3CFS_REPLY_OP(S3CFS_CMD_LOOKUP),
	S3CFS_REPLY_OP(S3CFS_CMD_LIST),
	S3CFS_REPLY_OP(S3CFS_CMD_UPLOAD),
	S3CFS_REPLY_OP(S3CFS_CMD_MKDIR),
	S3CFS_REPLY_OP(S3CFS_CMD_DELETE),
	S3CFS_REPLY_OP(S3CFS_CMD_RENAME),
	S3CFS_REPLY_OP(S3CFS_CMD_SETMETA),
	{
		.cmd = S3CFS_CMD_EVICT,
		.doit = s3cfs_nl_evict,
		.policy = s3cfs_evict_policy,
		.maxattr = S3CFS_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family s3cfs_genl_family __ro_after_init = {
	.name		= S3CFS_GENL_NAME,
	.version	= S3CFS_GENL_VERSION,
	.maxattr	= S3CFS_A_MAX,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= s3cfs_genl_ops,
	.n_ops		= ARRAY_SIZE(s3cfs_genl_ops),
	.resv_start_op	= S3CFS_CMD_REGISTER,
};

static size_t s3cfs_str_size(const char *s)
{
	return s ? nla_total_size(strlen(s) + 1) : 0;
}

/*
 * Room for the fixed-size attributes of any one request: at most
 * S3CFS_NL_U64S 64-bit ones (an UPLOAD of a stream's file: REQ_ID, INO,
 * SIZE, STREAM, LENGTH) and S3CFS_NL_U32S 32-bit ones (MOUNT_ID, FLAGS,
 * PRIORITY, PARTS; a MOUNT: MOUNT_ID, CHUNK_SIZE, FLAGS). Strings and
 * POSIX are counted by the caller. Counting too few passed unnoticed
 * where the skb's slab rounding left room, and failed where it did not.
 */
#define S3CFS_NL_U64S	6
#define S3CFS_NL_U32S	6

static struct sk_buff *s3cfs_nl_new(u8 cmd, size_t payload, void **hdr)
{
	struct sk_buff *skb;

	skb = genlmsg_new(payload +
			  S3CFS_NL_U64S * nla_total_size_64bit(sizeof(u64)) +
			  S3CFS_NL_U32S * nla_total_size(sizeof(u32)),
			  GFP_KERNEL);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &s3cfs_genl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

/*
 * Send @skb to the daemon at @portid, its socket pinned meanwhile so
 * that the port id cannot pass to another socket (s3cfs_daemon_pin()).
 * Return: 0 or a negative errno (-ECONNREFUSED: not the daemon's, or
 * its socket is going away).
 */
static int s3cfs_nl_unicast(struct sk_buff *skb, u32 portid)
{
	struct file *pin = s3cfs_daemon_pin(portid);
	int err;

	if (!pin) {
		nlmsg_free(skb);
		return -ECONNREFUSED;
	}
	err = genlmsg_unicast(&init_net, skb, portid);
	s3cfs_daemon_unpin(pin);
	return err;
}

/*
 * MOUNT's FLAGS: none for a read-only mount (what version 1 knows). The
 * request asks for indexes (dir_index); an announcement after REGISTER
 * (@announce) keeps what the first answer gave: a mount whose first
 * daemon made none reads lower directories that hold every object.
 */
static int s3cfs_nl_put_mount_flags(struct sk_buff *skb,
				    const struct s3cfs_sb_info *sbi,
				    bool announce)
{
	const struct s3cfs_mount_opts *o = &sbi->opts;
	bool index = announce ? sbi->index : o->dir_index;
	u32 flags = (o->writable ? S3CFS_MOUNT_WRITABLE : 0) |
		    (o->posix_meta ? S3CFS_MOUNT_POSIX : 0) |
		    (index ? S3CFS_MOUNT_INDEX : 0);

	return flags ? nla_put_u32(skb, S3CFS_A_FLAGS, flags) : 0;
}

/**
 * s3cfs_nl_send_mount() - send a MOUNT request or announcement
 * @sbi: the mount
 * @id: request id, 0 for an announcement after REGISTER
 * @portid: the daemon
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_nl_send_mount(struct s3cfs_sb_info *sbi, u64 id, u32 portid)
{
	struct sk_buff *skb;
	void *hdr;

	skb = s3cfs_nl_new(S3CFS_CMD_MOUNT, s3cfs_str_size(sbi->bucket) +
			   s3cfs_str_size(sbi->prefix) +
			   s3cfs_str_size(sbi->cache_path) +
			   nla_total_size(sizeof(sbi->token)), &hdr);
	if (!skb)
		return -ENOMEM;
	if (nla_put_u64_64bit(skb, S3CFS_A_REQ_ID, id, S3CFS_A_PAD) ||
	    nla_put_u32(skb, S3CFS_A_MOUNT_ID, sbi->mount_id) ||
	    nla_put_string(skb, S3CFS_A_BUCKET, sbi->bucket) ||
	    nla_put_string(skb, S3CFS_A_PREFIX, sbi->prefix) ||
	    nla_put_string(skb, S3CFS_A_CACHE_DIR, sbi->cache_path) ||
	    nla_put_u32(skb, S3CFS_A_CHUNK_SIZE, sbi->opts.chunk_size) ||
	    nla_put(skb, S3CFS_A_TOKEN, sizeof(sbi->token), sbi->token) ||
	    s3cfs_nl_put_mount_flags(skb, sbi, !id)) {
		nlmsg_free(skb);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return s3cfs_nl_unicast(skb, portid);
}

/**
 * s3cfs_nl_send_umount() - tell the daemon a mount is gone
 * @sbi: the mount
 * @portid: the daemon
 */
void s3cfs_nl_send_umount(struct s3cfs_sb_info *sbi, u32 portid)
{
	struct sk_buff *skb;
	void *hdr;

	skb = s3cfs_nl_new(S3CFS_CMD_UMOUNT, 0, &hdr);
	if (!skb)
		return;
	if (nla_put_u32(skb, S3CFS_A_MOUNT_ID, sbi->mount_id)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	s3cfs_nl_unicast(skb, portid);
}

/**
 * s3cfs_nl_send_cancel() - tell the daemon nobody waits for a request
 * @req: the request, already out of the table
 * @portid: the daemon
 */
void s3cfs_nl_send_cancel(struct s3cfs_req *req, u32 portid)
{
	struct sk_buff *skb;
	void *hdr;

	skb = s3cfs_nl_new(S3CFS_CMD_CANCEL, 0, &hdr);
	if (!skb)
		return;
	if (nla_put_u64_64bit(skb, S3CFS_A_REQ_ID, req->id, S3CFS_A_PAD) ||
	    nla_put_u32(skb, S3CFS_A_MOUNT_ID, req->sbi->mount_id)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	s3cfs_nl_unicast(skb, portid);
}

/**
 * s3cfs_nl_send() - send a request to the daemon
 * @req: the request
 * @portid: the daemon
 *
 * Return: 0, or -EAGAIN (socket full), -ECONNREFUSED (socket gone),
 * -ENOMEM, -EMSGSIZE.
 */
int s3cfs_nl_send(struct s3cfs_req *req, u32 portid)
{
	struct sk_buff *skb;
	void *hdr;

	if (req->cmd == S3CFS_CMD_MOUNT)
		return s3cfs_nl_send_mount(req->sbi, req->id, portid);
	skb = s3cfs_nl_new(req->cmd, s3cfs_str_size(req->path) +
			   s3cfs_str_size(req->name) +
			   s3cfs_str_size(req->etag) +
			   s3cfs_str_size(req->path2) +
			   nla_total_size(sizeof(req->posix)), &hdr);
	if (!skb)
		return -ENOMEM;
	if (nla_put_u64_64bit(skb, S3CFS_A_REQ_ID, req->id, S3CFS_A_PAD) ||
	    nla_put_u32(skb, S3CFS_A_MOUNT_ID, req->sbi->mount_id) ||
	    (req->path && nla_put_string(skb, S3CFS_A_PATH, req->path)) ||
	    (req->name && nla_put_string(skb, S3CFS_A_NAME, req->name)))
		goto too_big;
	if (req->cmd == S3CFS_CMD_FETCH &&
	    (nla_put_u64_64bit(skb, S3CFS_A_OFFSET, req->offset, S3CFS_A_PAD) ||
	     nla_put_u64_64bit(skb, S3CFS_A_LENGTH, req->length, S3CFS_A_PAD) ||
	     nla_put_string(skb, S3CFS_A_ETAG, req->etag) ||
	     nla_put_u32(skb, S3CFS_A_PRIORITY, req->prio)))
		goto too_big;
	if (req->cmd == S3CFS_CMD_UPLOAD &&
	    (nla_put_u64_64bit(skb, S3CFS_A_INO, req->ino, S3CFS_A_PAD) ||
	     nla_put_u64_64bit(skb, S3CFS_A_SIZE, req->size, S3CFS_A_PAD) ||
	     nla_put_u32(skb, S3CFS_A_FLAGS, req->up_flags) ||
	     nla_put_u32(skb, S3CFS_A_PRIORITY, req->prio) ||
	     (req->etag && nla_put_string(skb, S3CFS_A_ETAG, req->etag))))
		goto too_big;
	/* A stream (version 8; stream.c sends them to no older daemon). */
	if (req->cmd == S3CFS_CMD_UPLOAD && req->stream &&
	    (nla_put_u64_64bit(skb, S3CFS_A_STREAM, req->stream, S3CFS_A_PAD) ||
	     nla_put_u32(skb, S3CFS_A_PARTS, req->parts) ||
	     nla_put_u64_64bit(skb, S3CFS_A_LENGTH, req->length, S3CFS_A_PAD)))
		goto too_big;
	if ((req->cmd == S3CFS_CMD_DELETE ||
	     (req->cmd == S3CFS_CMD_LOOKUP && req->up_flags)) &&
	    nla_put_u32(skb, S3CFS_A_FLAGS, req->up_flags))
		goto too_big;
	if (req->cmd == S3CFS_CMD_SETMETA &&
	    ((req->etag && nla_put_string(skb, S3CFS_A_ETAG, req->etag)) ||
	     nla_put_u64_64bit(skb, S3CFS_A_SIZE, req->size, S3CFS_A_PAD) ||
	     (req->up_flags &&
	      nla_put_u32(skb, S3CFS_A_FLAGS, req->up_flags))))
		goto too_big;
	/* Older daemons would ignore it: sent to those that know it. */
	if (req->posix.flags && s3cfs_daemon_version() >= 5 &&
	    nla_put(skb, S3CFS_A_POSIX, sizeof(req->posix), &req->posix))
		goto too_big;
	if (req->cmd == S3CFS_CMD_RENAME &&
	    (nla_put_string(skb, S3CFS_A_PATH2, req->path2) ||
	     nla_put_string(skb, S3CFS_A_ETAG, req->etag) ||
	     nla_put_u64_64bit(skb, S3CFS_A_SIZE, req->size, S3CFS_A_PAD)))
		goto too_big;
	genlmsg_end(skb, hdr);
	return s3cfs_nl_unicast(skb, portid);

too_big:
	nlmsg_free(skb);
	return -EMSGSIZE;
}

static int s3cfs_nl_notify(struct notifier_block *nb, unsigned long state,
			   void *data)
{
	struct netlink_notify *n = data;

	if (state == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC &&
	    net_eq(n->net, &init_net))
		s3cfs_upcall_daemon_gone(n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block s3cfs_nl_notifier = {
	.notifier_call = s3cfs_nl_notify,
};

/**
 * s3cfs_netlink_init() - register the family and the socket-release notifier
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_netlink_init(void)
{
	int err;

	err = netlink_register_notifier(&s3cfs_nl_notifier);
	if (err)
		return err;
	err = genl_register_family(&s3cfs_genl_family);
	if (err)
		netlink_unregister_notifier(&s3cfs_nl_notifier);
	return err;
}

/**
 * s3cfs_netlink_exit() - undo s3cfs_netlink_init()
 */
void s3cfs_netlink_exit(void)
{
	genl_unregister_family(&s3cfs_genl_family);
	netlink_unregister_notifier(&s3cfs_nl_notifier);
}

MODULE_ALIAS_GENL_FAMILY(S3CFS_GENL_NAME);
