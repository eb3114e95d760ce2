// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink side: resolve the "s3cachefs" family, REGISTER, then
 * receive requests (kernel -> daemon unicast) and send replies.
 *
 * libnl's own receive machinery assumes request/response exchanges that
 * this socket does not have: requests arrive unsolicited with the kernel's
 * sequence numbers, and acks for our REGISTER can arrive after requests
 * the kernel sends from inside its REGISTER handler. So sequence checking
 * and auto-ack are off, and one NL_CB_MSG_IN callback sees every message
 * first (acks, errors and requests alike) and always answers NL_SKIP, so
 * that libnl never turns an NLMSG_ERROR about one reply into a failure of
 * the whole receive. nl_wait_for_ack() is not used for the same reason: it
 * returns after the first datagram, ack or not.
 *
 * Replies carry NLM_F_REQUEST and no NLM_F_ACK. The kernel still reports
 * a reply it refuses (an NLMSG_ERROR is sent for any error); a small ring of
 * recent replies turns its sequence number back into a request id for the
 * log.
 *
 * The module can come and go under a running daemon (rmmod, modprobe: a
 * DKMS upgrade). The socket also listens to the generic netlink
 * controller's "notify" group: CTRL_CMD_DELFAMILY for our family name
 * forgets the family id, CTRL_CMD_NEWFAMILY takes the new id and REGISTERs
 * again (the module announces its mounts from there, as after any
 * REGISTER). A daemon started before the module waits for NEWFAMILY. A
 * notification lost to a full receive queue is made up for by asking the
 * controller (CTRL_CMD_GETFAMILY, whose answer is a NEWFAMILY message).
 * Our family has no multicast groups, so there is nothing else to re-join.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "lib/base.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "netlink.h"
#include "req.h"
#include "uapi/s3cachefs.h"

#define RCVBUF_BYTES		(8 << 20)
#define REGISTER_TIMEOUT_MS	5000
#define SENT_RING		1024
#define EVICT_MAX		64
#define REREGISTER_MS		1000	/* after a refused REGISTER, doubling */
#define REREGISTER_MAX_MS	30000

static struct {
	struct s3d_nl_hooks hooks;
	struct nl_sock *sk;
	struct nl_cb *cb;	/* the socket's callbacks (a reference) */
	int family;
	struct s3d_watch w;
	bool watching;
	uint32_t register_seq;
	int register_state;	/* 0: waiting, 1: acked, <0: refused */
	bool register_sync;	/* s3d_nl_init() waits for the answer */
	bool ctrl_joined;	/* in nlctrl's "notify" group */
	uint32_t ctrl_seq;	/* our last CTRL_CMD_GETFAMILY */
	struct s3d_timer reregister;
	unsigned int reregister_ms;	/* the next wait */
	uint32_t version;	/* protocol version registered as */
	struct {
		uint32_t seq;
		uint64_t req_id;
		int cmd;
	} sent[SENT_RING];
	unsigned int sent_next;
	struct {			/* EVICTs waiting for their ack */
		uint32_t seq;
		void (*done)(void *arg, int err);
		void *arg;
	} evict[EVICT_MAX];
} nl = { .family = -1, .version = S3CFS_GENL_VERSION };

static struct nla_policy policy[S3CFS_A_MAX + 1] = {
	[S3CFS_A_VERSION] = { .type = NLA_U32 },
	[S3CFS_A_REQ_ID] = { .type = NLA_U64 },
	[S3CFS_A_STATUS] = { .type = NLA_U32 },
	[S3CFS_A_MOUNT_ID] = { .type = NLA_U32 },
	[S3CFS_A_BUCKET] = { .type = NLA_STRING, .maxlen = S3CFS_BUCKET_MAX + 1 },
	[S3CFS_A_PREFIX] = { .type = NLA_STRING, .maxlen = S3CFS_PREFIX_MAX + 1 },
	[S3CFS_A_CACHE_DIR] = { .type = NLA_STRING, .maxlen = PATH_MAX },
	[S3CFS_A_CHUNK_SIZE] = { .type = NLA_U32 },
	[S3CFS_A_PATH] = { .type = NLA_STRING, .maxlen = S3CFS_PATH_MAX + 1 },
	[S3CFS_A_NAME] = { .type = NLA_STRING, .maxlen = NAME_MAX + 1 },
	[S3CFS_A_OFFSET] = { .type = NLA_U64 },
	[S3CFS_A_LENGTH] = { .type = NLA_U64 },
	[S3CFS_A_ETAG] = { .type = NLA_STRING, .maxlen = S3CFS_ETAG_MAX + 1 },
	[S3CFS_A_PRIORITY] = { .type = NLA_U32 },
	[S3CFS_A_SIZE] = { .type = NLA_U64 },
	[S3CFS_A_FLAGS] = { .type = NLA_U32 },
	[S3CFS_A_INO] = { .type = NLA_U64 },
	[S3CFS_A_PATH2] = { .type = NLA_STRING, .maxlen = S3CFS_PATH_MAX + 1 },
	/* Binary, its length checked exactly by s3d_nl_parse_req(). */
	[S3CFS_A_POSIX] = { .type = NLA_UNSPEC },
	[S3CFS_A_STREAM] = { .type = NLA_U64 },
	[S3CFS_A_PARTS] = { .type = NLA_U32 },
	/* Binary, its length checked exactly by s3d_nl_parse_req(). */
	[S3CFS_A_TOKEN] = { .type = NLA_UNSPEC },
};

/* Which attributes each request must carry. */
static const struct {
	int cmd;
	const char *name;
	uint32_t need;	/* bit per attribute */
} cmds[] = {
#define A(x) (1u << S3CFS_A_##x)
	{ S3CFS_CMD_MOUNT, "MOUNT", A(REQ_ID) | A(MOUNT_ID) | A(BUCKET) |
		A(PREFIX) | A(CACHE_DIR) | A(CHUNK_SIZE) },
	{ S3CFS_CMD_UMOUNT, "UMOUNT", A(MOUNT_ID) },
	{ S3CFS_CMD_FETCH, "FETCH", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(OFFSET) | A(LENGTH) | A(ETAG) },
	{ S3CFS_CMD_LOOKUP, "LOOKUP", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(NAME) },
	{ S3CFS_CMD_LIST, "LIST", A(REQ_ID) | A(MOUNT_ID) | A(PATH) },
	{ S3CFS_CMD_CANCEL, "CANCEL", A(REQ_ID) | A(MOUNT_ID) },
	{ S3CFS_CMD_UPLOAD, "UPLOAD", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(INO) | A(SIZE) | A(FLAGS) },
	{ S3CFS_CMD_MKDIR, "MKDIR", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(NAME) },
	{ S3CFS_CMD_DELETE, "DELETE", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(NAME) | A(FLAGS) },
	{ S3CFS_CMD_RENAME, "RENAME", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(PATH2) | A(ETAG) | A(SIZE) },
	/* ETAG: not for a directory's (S3CFS_SETMETA_DIR, op_setmeta.c). */
	{ S3CFS_CMD_SETMETA, "SETMETA", A(REQ_ID) | A(MOUNT_ID) | A(PATH) |
		A(SIZE) | A(POSIX) },
#undef A
};

static const char *cmd_name(int cmd)
{
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(cmds); i++)
		if (cmds[i].cmd == cmd)
			return cmds[i].name;
	return "?";
}

/* A string attribute, NUL terminated exactly at its end. */
static int get_str(struct nlattr **tb, int type, char **out)
{
	if (!tb[type])
		return 0;
	if (strnlen(nla_data(tb[type]), nla_len(tb[type])) !=
	    (size_t)nla_len(tb[type]) - 1)
		return -EINVAL;
	*out = strdup(nla_data(tb[type]));
	return *out ? 0 : -ENOMEM;
}

/* The POSIX attribute: exactly one struct s3cfs_posix, or invalid. */
static int get_posix(struct nlattr **tb, struct s3d_req *r)
{
	if (!tb[S3CFS_A_POSIX])
		return 0;
	if (nla_len(tb[S3CFS_A_POSIX]) != sizeof(r->posix))
		return -EINVAL;
	memcpy(&r->posix, nla_data(tb[S3CFS_A_POSIX]), sizeof(r->posix));
	r->has_posix = true;
	return 0;
}

/* The TOKEN attribute: exactly S3CFS_TOKEN_LEN bytes, or invalid. */
static int get_token(struct nlattr **tb, struct s3d_req *r)
{
	if (!tb[S3CFS_A_TOKEN])
		return 0;
	if (nla_len(tb[S3CFS_A_TOKEN]) != sizeof(r->token))
		return -EINVAL;
	memcpy(r->token, nla_data(tb[S3CFS_A_TOKEN]), sizeof(r->token));
	r->has_token = true;
	return 0;
}

/**
 * s3d_nl_parse_req() - turn a kernel request into a struct s3d_req
 * @nlh: the message (of our family)
 * @out: the request (free with s3d_req_free()); on -EINVAL, possibly a
 *	request with only id and mount id set, to be answered -EINVAL
 *
 * Return: 0, -EINVAL (malformed; logged) or -ENOMEM.
 */
int s3d_nl_parse_req(struct nlmsghdr *nlh, struct s3d_req **out)
{
	struct nlattr *tb[S3CFS_A_MAX + 1];
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct s3d_req *r;
	uint32_t have = 0, need = 0;
	size_t i;
	int err;

	*out = NULL;
	err = genlmsg_parse(nlh, 0, tb, S3CFS_A_MAX, policy);
	if (err < 0) {
		s3d_err("malformed request (command %d): %s", gh->cmd,
			nl_geterror(err));
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cmd = gh->cmd;
	for (i = 0; i <= S3CFS_A_MAX; i++)
		if (tb[i])
			have |= 1u << i;
	if (tb[S3CFS_A_REQ_ID])
		r->id = nla_get_u64(tb[S3CFS_A_REQ_ID]);
	if (tb[S3CFS_A_MOUNT_ID])
		r->mount_id = nla_get_u32(tb[S3CFS_A_MOUNT_ID]);
	if (tb[S3CFS_A_OFFSET])
		r->off = nla_get_u64(tb[S3CFS_A_OFFSET]);
	if (tb[S3CFS_A_LENGTH])
		r->len = nla_get_u64(tb[S3CFS_A_LENGTH]);
	if (tb[S3CFS_A_CHUNK_SIZE])
		r->chunk = nla_get_u32(tb[S3CFS_A_CHUNK_SIZE]);
	if (tb[S3CFS_A_PRIORITY])
		r->prio = nla_get_u32(tb[S3CFS_A_PRIORITY]);
	if (tb[S3CFS_A_INO])
		r->ino = nla_get_u64(tb[S3CFS_A_INO]);
	if (tb[S3CFS_A_SIZE])
		r->size = nla_get_u64(tb[S3CFS_A_SIZE]);
	if (tb[S3CFS_A_FLAGS])
		r->flags = nla_get_u32(tb[S3CFS_A_FLAGS]);
	if (tb[S3CFS_A_STREAM])
		r->stream = nla_get_u64(tb[S3CFS_A_STREAM]);
	if (tb[S3CFS_A_PARTS])
		r->parts = nla_get_u32(tb[S3CFS_A_PARTS]);
	err = get_str(tb, S3CFS_A_PATH, &r->path);
	err = err ?: get_str(tb, S3CFS_A_NAME, &r->name);
	err = err ?: get_str(tb, S3CFS_A_ETAG, &r->etag);
	err = err ?: get_str(tb, S3CFS_A_BUCKET, &r->bucket);
	err = err ?: get_str(tb, S3CFS_A_PREFIX, &r->prefix);
	err = err ?: get_str(tb, S3CFS_A_CACHE_DIR, &r->cache_dir);
	err = err ?: get_str(tb, S3CFS_A_PATH2, &r->path2);
	if (!err && get_posix(tb, r)) {
		s3d_err("%s request %llu: POSIX attribute of %d bytes, not %zu",
			cmd_name(r->cmd), (unsigned long long)r->id,
			nla_len(tb[S3CFS_A_POSIX]), sizeof(r->posix));
		err = -EINVAL;
	}
	if (!err && get_token(tb, r)) {
		s3d_err("%s request %llu: TOKEN attribute of %d bytes, not %zu",
			cmd_name(r->cmd), (unsigned long long)r->id,
			nla_len(tb[S3CFS_A_TOKEN]), sizeof(r->token));
		err = -EINVAL;
	}
	for (i = 0; i < S3D_ARRAY_SIZE(cmds); i++)
		if (cmds[i].cmd == r->cmd)
			need = cmds[i].need;
	if (!err && (have & need) != need) {
		s3d_err("%s request %llu lacks attributes (has %#x, needs %#x)",
			cmd_name(r->cmd), (unsigned long long)r->id, have, need);
		err = -EINVAL;
	}
	if (err == -EINVAL && !(have & (1u << S3CFS_A_REQ_ID))) {
		s3d_req_free(r);	/* cannot even be answered */
		return err;
	}
	if (err == -ENOMEM) {
		s3d_req_free(r);
		return err;
	}
	*out = r;
	return err;
}

/**
 * s3d_nl_build_reply() - the reply to @r
 * @r: the request
 * @status: 0 or -errno
 * @family: the family id
 *
 * Return: the message (nlmsg_free() it) or NULL without memory.
 */
struct nl_msg *s3d_nl_build_reply(const struct s3d_req *r, int status,
				  int family)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 (uint8_t)r->cmd, S3CFS_GENL_VERSION))
		goto fail;
	if (nla_put_u64(msg, S3CFS_A_REQ_ID, r->id) < 0 ||
	    nla_put_u32(msg, S3CFS_A_MOUNT_ID, r->mount_id) < 0 ||
	    nla_put_s32(msg, S3CFS_A_STATUS, status) < 0)
		goto fail;
	if (r->cmd == S3CFS_CMD_FETCH &&
	    (nla_put_u64(msg, S3CFS_A_OFFSET, r->off) < 0 ||
	     nla_put_u64(msg, S3CFS_A_LENGTH, r->len) < 0))
		goto fail;
	if ((r->cmd == S3CFS_CMD_UPLOAD || r->cmd == S3CFS_CMD_RENAME ||
	     r->cmd == S3CFS_CMD_SETMETA) && !status && r->reply_etag &&
	    nla_put_string(msg, S3CFS_A_ETAG, r->reply_etag) < 0)
		goto fail;
	/* Version 1 kernels refuse attributes they do not know. */
	if (r->cmd == S3CFS_CMD_FETCH && status == -EINPROGRESS && r->done &&
	    nl.version >= 2 && nla_put_u64(msg, S3CFS_A_DONE, r->done) < 0)
		goto fail;
	/* ... and kernels before 7 a MOUNT's defaults. */
	if (r->cmd == S3CFS_CMD_MOUNT && !status && r->reply_defaults &&
	    nl.version >= 7 &&
	    (nla_put_u32(msg, S3CFS_A_FLAGS, r->reply_flags) < 0 ||
	     (r->reply_upload_delay >= 0 &&
	      nla_put_u32(msg, S3CFS_A_UPLOAD_DELAY,
			  (uint32_t)r->reply_upload_delay) < 0)))
		goto fail;
	/* ... and kernels before 6 a LIST's (a report's, or its answer's). */
	if (r->cmd == S3CFS_CMD_LIST && (status == -EINPROGRESS || !status) &&
	    r->done && r->ino && nl.version >= 6 &&
	    (nla_put_u64(msg, S3CFS_A_DONE, r->done) < 0 ||
	     nla_put_u64(msg, S3CFS_A_INO, r->ino) < 0))
		goto fail;
	return msg;
fail:
	nlmsg_free(msg);
	return NULL;
}

/* The protocol version registered as (the kernel's, when older). */
unsigned int s3d_nl_version(void)
{
	return nl.version;
}

/**
 * s3d_nl_build_evict() - an EVICT message
 * @mount_id: the mount
 * @path: the file, relative to the cache root
 * @off: chunk aligned start
 * @len: length (may run past EOF)
 * @family: the family id
 *
 * Return: the message (with NLM_F_ACK; nlmsg_free() it) or NULL.
 */
struct nl_msg *s3d_nl_build_evict(uint32_t mount_id, const char *path,
				  uint64_t off, uint64_t len, int family)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK,
			 S3CFS_CMD_EVICT, S3CFS_GENL_VERSION) ||
	    nla_put_u32(msg, S3CFS_A_MOUNT_ID, mount_id) < 0 ||
	    nla_put_string(msg, S3CFS_A_PATH, path) < 0 ||
	    nla_put_u64(msg, S3CFS_A_OFFSET, off) < 0 ||
	    nla_put_u64(msg, S3CFS_A_LENGTH, len) < 0) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/**
 * s3d_nl_evict() - ask the kernel to punch a whole cached file
 * @mount_id: the mount
 * @path: the file, relative to the cache root
 * @len: its size
 * @done: called from the loop with the kernel's answer (0, -EBUSY, ...)
 * @arg: for @done
 *
 * Return: 0 (@done will be called) or -errno (it will not).
 */
int s3d_nl_evict(uint32_t mount_id, const char *path, uint64_t len,
		 void (*done)(void *arg, int err), void *arg)
{
	struct nl_msg *msg;
	unsigned int i;
	int err;

	if (!nl.sk || nl.family < 0)
		return -ENOTCONN;
	for (i = 0; i < EVICT_MAX && nl.evict[i].done; i++)
		;
	if (i == EVICT_MAX)
		return -EBUSY;
	msg = s3d_nl_build_evict(mount_id, path, 0, len ?: 1, nl.family);
	if (!msg)
		return -ENOMEM;
	err = nl_send_auto(nl.sk, msg);
	if (err >= 0) {
		nl.evict[i].seq = nlmsg_hdr(msg)->nlmsg_seq;
		nl.evict[i].done = done;
		nl.evict[i].arg = arg;
	}
	nlmsg_free(msg);
	return err < 0 ? -EIO : 0;
}

static bool evict_acked(uint32_t seq, int error)
{
	unsigned int i;

	for (i = 0; i < EVICT_MAX; i++) {
		void (*done)(void *arg, int err) = nl.evict[i].done;

		if (!done || nl.evict[i].seq != seq)
			continue;
		nl.evict[i].done = NULL;
		done(nl.evict[i].arg, error);
		return true;
	}
	return false;
}

/**
 * s3d_nl_evict_cancel() - stop waiting for an EVICT's ack
 * @done: the callback it was sent with
 * @arg: and its argument
 *
 * Frees the slot; @done is not called (an ack that comes later is
 * ignored).
 *
 * Return: true if such an EVICT was waiting.
 */
bool s3d_nl_evict_cancel(void (*done)(void *arg, int err), void *arg)
{
	unsigned int i;

	for (i = 0; i < EVICT_MAX; i++) {
		if (nl.evict[i].done == done && nl.evict[i].arg == arg) {
			nl.evict[i].done = NULL;
			return true;
		}
	}
	return false;
}

/*
 * The receive queue overflowed: any ack may have been dropped. The owners
 * of the EVICTs waiting stop waiting (they stat the file again) and every
 * mount is checked again. Snapshot first: an owner may send the next one.
 */
static void evicts_lost(void)
{
	unsigned int i, n = 0;
	struct {
		void (*done)(void *arg, int err);
		void *arg;
	} lost[EVICT_MAX];

	for (i = 0; i < EVICT_MAX; i++) {
		if (!nl.evict[i].done)
			continue;
		lost[n].done = nl.evict[i].done;
		lost[n++].arg = nl.evict[i].arg;
		nl.evict[i].done = NULL;
	}
	for (i = 0; i < n; i++)
		lost[i].done(lost[i].arg, -ENOBUFS);
	if (nl.hooks.acks_lost)
		nl.hooks.acks_lost();
}

static void nl_reply(struct s3d_req *r, int status)
{
	struct nl_msg *msg;
	int err;

	if (nl.hooks.replied)
		nl.hooks.replied(r, status);
	if (nl.family < 0) {
		/* The module went away with the request; no one waits. */
		s3d_dbg("%s reply to request %llu dropped: no module",
			cmd_name(r->cmd), (unsigned long long)r->id);
		s3d_req_free(r);
		return;
	}
	msg = s3d_nl_build_reply(r, status, nl.family);
	if (!msg) {
		s3d_err("%s reply to request %llu: out of memory",
			cmd_name(r->cmd), (unsigned long long)r->id);
		s3d_req_free(r);
		return;
	}
	err = nl_send_auto(nl.sk, msg);
	if (err < 0) {
		s3d_err("%s reply to request %llu: %s", cmd_name(r->cmd),
			(unsigned long long)r->id, nl_geterror(err));
	} else {
		unsigned int i = nl.sent_next++ % SENT_RING;

		nl.sent[i].seq = nlmsg_hdr(msg)->nlmsg_seq;
		nl.sent[i].req_id = r->id;
		nl.sent[i].cmd = r->cmd;
	}
	nlmsg_free(msg);
	s3d_req_free(r);
}

/* A progress report: the reply message with -EINPROGRESS; @r lives on. */
static void nl_progress(struct s3d_req *r)
{
	struct nl_msg *msg;
	int err;

	if (nl.family < 0)
		return;
	msg = s3d_nl_build_reply(r, -EINPROGRESS, nl.family);
	if (!msg)
		return;		/* the next tick tries again */
	err = nl_send_auto(nl.sk, msg);
	if (err < 0)
		s3d_dbg("%s progress report for request %llu: %s",
			cmd_name(r->cmd), (unsigned long long)r->id,
			nl_geterror(err));
	nlmsg_free(msg);
}

static void on_request(struct nlmsghdr *nlh)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct s3d_req *r;
	int err;

	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return;
	if (gh->version != nl.version && s3d_log_once("genl-version"))
		s3d_warn("kernel speaks protocol version %u, we registered as %u",
			 gh->version, nl.version);
	err = s3d_nl_parse_req(nlh, &r);
	if (!r)
		return;
	r->reply = nl_reply;
	r->progress = nl_progress;
	if (err) {
		r->reply(r, err);
		return;
	}
	s3d_dbg("%s request %llu mount %u path '%s'", cmd_name(r->cmd),
		(unsigned long long)r->id, r->mount_id, r->path ?: "");
	nl.hooks.request(r);
}

/* The text of an extended ack, if the kernel attached one. */
static const char *extack_msg(struct nlmsghdr *nlh)
{
	struct nlmsgerr *e = nlmsg_data(nlh);
	size_t off = sizeof(*e);
	struct nlattr *a;
	int rem;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	if (NLMSG_HDRLEN + off >= nlh->nlmsg_len)
		return NULL;
	rem = (int)(nlh->nlmsg_len - NLMSG_HDRLEN - off);
	nla_for_each_attr(a, (struct nlattr *)((char *)e + off), rem, rem) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG && nla_len(a) > 0 &&
		    ((char *)nla_data(a))[nla_len(a) - 1] == '\0')
			return nla_data(a);
	}
	return NULL;
}

static int send_register(void);

/* The answer to a REGISTER sent from the loop (the module came back). */
static void register_answered(int error)
{
	if (!error) {
		s3d_info("registered with the s3cachefs module (family %d, protocol %u)",
			 nl.family, nl.version);
		nl.reregister_ms = REREGISTER_MS;
		return;
	}
	if (error == -EPROTO && nl.version > S3CFS_GENL_VERSION_MIN) {
		s3d_info("the loaded module predates protocol %u; trying %u",
			 nl.version, nl.version - 1);
		nl.version--;
		if (!send_register())
			return;
	}
	/* Another daemon, or a module not ready yet: try again later. */
	s3d_timer_arm(&nl.reregister, nl.reregister_ms);
	nl.reregister_ms = S3D_MIN(nl.reregister_ms * 2, REREGISTER_MAX_MS);
}

static void on_error(struct nlmsghdr *nlh)
{
	struct nlmsgerr *e = nlmsg_data(nlh);
	const char *ext;
	unsigned int i;

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return;
	ext = extack_msg(nlh);
	if (e->msg.nlmsg_seq == nl.register_seq && nl.register_state == 0) {
		nl.register_state = e->error ? e->error : 1;
		if (e->error == -EPROTO && nl.version > S3CFS_GENL_VERSION_MIN)
			;	/* an older module: tried again with less */
		else if (e->error)
			s3d_err("REGISTER refused by the kernel: %s%s%s",
				strerror(-e->error), ext ? ": " : "", ext ?: "");
		if (!nl.register_sync)
			register_answered(e->error);
		return;
	}
	if (nl.ctrl_seq && e->msg.nlmsg_seq == nl.ctrl_seq) {
		/* -ENOENT: no module yet; its NEWFAMILY will come. */
		nl.ctrl_seq = 0;
		return;
	}
	if (evict_acked(e->msg.nlmsg_seq, e->error))
		return;
	if (!e->error)
		return;
	for (i = 0; i < SENT_RING; i++) {
		if (nl.sent[i].seq != e->msg.nlmsg_seq)
			continue;
		/* -ENOENT: the request timed out or was cancelled; routine. */
		s3d_log(e->error == -ENOENT ? S3D_LOG_DEBUG : S3D_LOG_WARN,
			"kernel refused the %s reply to request %llu: %s%s%s",
			cmd_name(nl.sent[i].cmd),
			(unsigned long long)nl.sent[i].req_id,
			strerror(-e->error), ext ? ": " : "", ext ?: "");
		return;
	}
	s3d_warn("kernel reported an error for message %u: %s%s%s",
		 e->msg.nlmsg_seq, strerror(-e->error), ext ? ": " : "",
		 ext ?: "");
}

/* Ask the controller about our family; the answer is a NEWFAMILY. */
static void ask_family(void)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return;
	if (genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0,
			CTRL_CMD_GETFAMILY, 1) &&
	    nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, S3CFS_GENL_NAME) >= 0 &&
	    nl_send_auto(nl.sk, msg) >= 0)
		nl.ctrl_seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
}

/* Forget a family that is gone: nothing sent to it can be answered. */
static void family_gone(void)
{
	unsigned int i;

	s3d_timer_cancel(&nl.reregister);
	nl.family = -1;
	nl.register_state = 0;
	for (i = 0; i < EVICT_MAX; i++)
		if (nl.evict[i].done)
			evict_acked(nl.evict[i].seq, -ECANCELED);
}

/* A controller notification (or our GETFAMILY's answer). */
static void on_ctrl(struct nlmsghdr *nlh)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const char *name;
	int id;

	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN) ||
	    (gh->cmd != CTRL_CMD_NEWFAMILY && gh->cmd != CTRL_CMD_DELFAMILY) ||
	    genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, NULL) < 0 ||
	    !tb[CTRL_ATTR_FAMILY_NAME] || !tb[CTRL_ATTR_FAMILY_ID] ||
	    nla_len(tb[CTRL_ATTR_FAMILY_ID]) < 2)
		return;
	name = nla_data(tb[CTRL_ATTR_FAMILY_NAME]);
	if (strnlen(name, nla_len(tb[CTRL_ATTR_FAMILY_NAME])) !=
	    strlen(S3CFS_GENL_NAME) || strcmp(name, S3CFS_GENL_NAME))
		return;
	id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (gh->cmd == CTRL_CMD_DELFAMILY) {
		if (id != nl.family)
			return;
		s3d_warn("the s3cachefs module went away (family %d); waiting for it to come back",
			 id);
		family_gone();
		return;
	}
	if (id == nl.family)
		return;		/* known (the answer to a GETFAMILY) */
	if (nl.family >= 0)
		family_gone();	/* its DELFAMILY was lost */
	s3d_info("the s3cachefs module appeared (family %d); registering", id);
	nl.family = id;
	nl.version = S3CFS_GENL_VERSION;
	nl.reregister_ms = REREGISTER_MS;
	if (send_register())
		s3d_timer_arm(&nl.reregister, REREGISTER_MS);
}

static void reregister(struct s3d_timer *t)
{
	(void)t;
	if (nl.family >= 0 && nl.register_state != 1 && send_register())
		s3d_timer_arm(&nl.reregister, REREGISTER_MS);
}

static int on_msg_in(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct sockaddr_nl *src = nlmsg_get_src(msg);

	(void)arg;
	if (src && src->nl_pid != 0) {
		/* Only the kernel may talk to us (root could try otherwise). */
		s3d_warn("ignoring netlink message from port %u", src->nl_pid);
		return NL_SKIP;
	}
	switch (nlh->nlmsg_type) {
	case NLMSG_ERROR:
		on_error(nlh);
		break;
	case NLMSG_NOOP:
	case NLMSG_DONE:
		break;
	case NLMSG_OVERRUN:
		s3d_err("netlink overrun reported");
		break;
	default:
		if (nlh->nlmsg_type == nl.family)
			on_request(nlh);
		else if (nlh->nlmsg_type == GENL_ID_CTRL)
			on_ctrl(nlh);
		else
			s3d_dbg("ignoring netlink message of type %u",
				nlh->nlmsg_type);
	}
	return NL_SKIP;
}

static int send_register(void)
{
	struct nl_msg *msg = nlmsg_alloc();
	int err;

	if (!msg)
		return -NLE_NOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl.family, 0,
			 NLM_F_ACK, S3CFS_CMD_REGISTER, (uint8_t)nl.version) ||
	    nla_put_u32(msg, S3CFS_A_VERSION, nl.version) < 0) {
		nlmsg_free(msg);
		return -NLE_NOMEM;
	}
	err = nl_send_auto(nl.sk, msg);
	if (err >= 0) {
		nl.register_seq = nlmsg_hdr(msg)->nlmsg_seq;
		nl.register_state = 0;
	}
	nlmsg_free(msg);
	return err < 0 ? err : 0;
}

/* Read whatever is queued; false if the socket failed for good. */
static bool drain(void)
{
	int n;

	for (;;) {
		n = nl_recvmsgs_report(nl.sk, nl.cb);
		if (n > 0)
			continue;
		/* Drained: libnl reports EAGAIN as 0 or -NLE_AGAIN by version. */
		if (n == 0 || n == -NLE_AGAIN)
			return true;
		if (n == -NLE_NOMEM) {
			/*
			 * ENOBUFS: the queue was full and the kernel could not
			 * deliver a request. It saw -EAGAIN for that send and
			 * sends it again shortly, so no request is lost; a
			 * bigger queue (or a faster daemon) avoids the delay.
			 * Acks are not sent again: re-check evictions.
			 */
			s3d_warn("netlink receive queue overflowed; the kernel re-sends what did not fit");
			/* A controller notification may be lost: ask. */
			if (nl.ctrl_joined)
				ask_family();
			evicts_lost();
			continue;
		}
		s3d_err("netlink receive: %s", nl_geterror(n));
		return n != -NLE_BAD_SOCK;
	}
}

static void on_readable(struct s3d_watch *w, uint32_t events)
{
	(void)w;
	(void)events;
	if (!drain()) {
		s3d_err("netlink socket unusable; stopping");
		s3d_loop_stop();
	}
}

static int wait_registered(void)
{
	uint64_t deadline = s3d_now_ms() + REGISTER_TIMEOUT_MS;
	struct pollfd pfd = { .fd = nl_socket_get_fd(nl.sk), .events = POLLIN };

	while (nl.register_state == 0) {
		uint64_t now = s3d_now_ms();

		if (now >= deadline) {
			s3d_err("REGISTER: no answer from the kernel within %d ms",
				REGISTER_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR)
			return -errno;
		if (!drain())
			return -EIO;
	}
	return nl.register_state < 0 ? nl.register_state : 0;
}

static int set_sockopts(void)
{
	int fd = nl_socket_get_fd(nl.sk), one = 1, size = RCVBUF_BYTES, err;

	/*
	 * A burst of requests (a re-registration re-sends every pending one)
	 * must not overflow the queue: ask for a big one, past rmem_max.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size))) {
		err = nl_socket_set_buffer_size(nl.sk, RCVBUF_BYTES, 0);
		if (err < 0)
			s3d_warn("netlink receive buffer: %s", nl_geterror(err));
	}
	/* Refusals come with the kernel's reason, without our message. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	err = nl_socket_set_nonblocking(nl.sk);
	if (err < 0) {
		s3d_err("netlink socket: %s", nl_geterror(err));
		return -EIO;
	}
	return 0;
}

static int resolve_family(void)
{
	int err;

	err = genl_connect(nl.sk);
	if (err < 0) {
		s3d_err("generic netlink socket: %s", nl_geterror(err));
		return -EIO;
	}
	nl.family = genl_ctrl_resolve(nl.sk, S3CFS_GENL_NAME);
	if (nl.family == -NLE_OBJ_NOTFOUND) {
		nl.family = -1;
		return -ENOENT;
	}
	if (nl.family < 0) {
		s3d_err("resolving generic netlink family \"%s\": %s",
			S3CFS_GENL_NAME, nl_geterror(nl.family));
		return -EIO;
	}
	return 0;
}

/* Hear of the module's coming and going (see the top of this file). */
static int join_ctrl_notify(void)
{
	int grp, err;

	grp = genl_ctrl_resolve_grp(nl.sk, "nlctrl", "notify");
	if (grp < 0) {
		s3d_err("generic netlink controller's notify group: %s",
			nl_geterror(grp));
		return -EIO;
	}
	err = nl_socket_add_membership(nl.sk, grp);
	if (err < 0) {
		s3d_err("joining the controller's notify group: %s",
			nl_geterror(err));
		return -EIO;
	}
	nl.ctrl_joined = true;
	return 0;
}

/**
 * s3d_nl_init() - connect to the module and register as its daemon
 * @hooks: what becomes of the requests that come in (copied)
 *
 * Requests may already be handled (and S3 transfers queued) before this
 * returns, so the loop and the operations must be set up first.
 *
 * Without the module, the daemon waits for it (see the top of this file).
 *
 * Return: 0 or -errno (logged).
 */
int s3d_nl_init(const struct s3d_nl_hooks *hooks)
{
	int err;

	nl.hooks = *hooks;
	nl.sk = nl_socket_alloc();
	if (!nl.sk) {
		s3d_err("netlink: out of memory");
		return -ENOMEM;
	}
	nl.reregister.fn = reregister;
	/* Resolve first: libnl's resolver needs the default callbacks. */
	err = resolve_family();
	if (err && err != -ENOENT)
		goto fail;
	err = join_ctrl_notify();
	if (err)
		goto fail;
	nl_socket_disable_seq_check(nl.sk);
	nl_socket_disable_auto_ack(nl.sk);
	nl_socket_modify_cb(nl.sk, NL_CB_MSG_IN, NL_CB_CUSTOM, on_msg_in, NULL);
	nl.cb = nl_socket_get_cb(nl.sk);
	err = set_sockopts();
	if (err)
		goto fail;
	err = s3d_loop_watch(&nl.w, nl_socket_get_fd(nl.sk), EPOLLIN,
			     on_readable);
	if (err) {
		s3d_err("watching the netlink socket: %s", strerror(-err));
		goto fail;
	}
	nl.watching = true;
	if (nl.family < 0) {
		s3d_info("s3cachefs module not loaded (no generic netlink family \"%s\"); waiting for it (modprobe s3cachefs)",
			 S3CFS_GENL_NAME);
		/* It may have come between the resolve and the join. */
		ask_family();
		return 0;
	}
	/*
	 * Newest protocol first; a module loaded before the daemon was
	 * upgraded may speak only version 1 (then fetches land whole).
	 */
	nl.register_sync = true;
	for (nl.version = S3CFS_GENL_VERSION;; nl.version--) {
		err = send_register();
		if (err < 0) {
			s3d_err("REGISTER: %s", nl_geterror(err));
			err = -EIO;
			goto fail;
		}
		err = wait_registered();
		if (err != -EPROTO || nl.version <= S3CFS_GENL_VERSION_MIN)
			break;
		s3d_info("the loaded module predates protocol %u; trying %u",
			 nl.version, nl.version - 1);
	}
	nl.register_sync = false;
	if (err)
		goto fail;
	s3d_info("registered with the s3cachefs module (family %d, protocol %u)",
		 nl.family, nl.version);
	return 0;
fail:
	s3d_nl_fini();
	return err;
}

/* Closing the socket tells the kernel we are gone; it keeps the requests. */
void s3d_nl_fini(void)
{
	unsigned int i;

	s3d_timer_cancel(&nl.reregister);
	nl.register_sync = false;
	nl.ctrl_joined = false;
	/* EVICTs never answered: their owners stop waiting. */
	for (i = 0; i < EVICT_MAX; i++)
		if (nl.evict[i].done)
			evict_acked(nl.evict[i].seq, -ECANCELED);
	if (nl.watching)
		s3d_loop_unwatch(&nl.w);
	nl.watching = false;
	if (nl.cb)
		nl_cb_put(nl.cb);
	nl.cb = NULL;
	if (nl.sk)
		nl_socket_free(nl.sk);
	nl.sk = NULL;
	nl.family = -1;
}
