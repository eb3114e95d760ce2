// SPDX-License-Identifier: GPL-2.0
/*
 * nlfuzz - talk to the s3cachefs generic netlink family the way a broken or
 * hostile daemon would, and check the module refuses it.
 *
 *   nlfuzz unpriv        (run as an unprivileged user) REGISTER and every
 *                        kind of reply must fail with EPERM
 *   nlfuzz malformed     (root, no daemon registered) bad REGISTERs, then a
 *                        valid one, then replies with unknown ids, missing,
 *                        mistyped, oversized and unknown attributes, unknown
 *                        commands, a truncated attribute: all refused
 *   nlfuzz fake-daemon [--seconds N] [--stall | --stall-fetch | --exit-on-fetch]
 *                        (root) register and serve requests for N seconds
 *                        (default 60, or until SIGTERM): MOUNT is accepted;
 *                        every LOOKUP/LIST/FETCH first gets replies that do
 *                        not match it (wrong mount id, wrong command, wrong
 *                        offset/length, status out of range), which must be
 *                        refused, then a valid error reply (LOOKUP -ENOENT,
 *                        LIST and FETCH -EIO), which must be taken, then the
 *                        same reply again, which must be refused. --stall:
 *                        accept MOUNTs, never answer anything else.
 *                        --stall-fetch: never answer a FETCH (the rest as
 *                        above). --exit-on-fetch: exit, releasing the
 *                        socket, as soon as a FETCH arrives.
 *   nlfuzz hostile MOUNT_ID PATH REGISTER_ERRNO IDS
 *                        (any user; not the registered daemon's socket)
 *                        REGISTER must fail with REGISTER_ERRNO (1 EPERM,
 *                        16 EBUSY), EVICT of PATH and an answer and a
 *                        progress report of every command for each of the
 *                        request ids IDS (comma-separated) with EPERM
 *   nlfuzz listen-port PORT SECONDS
 *                        (any user) bind port id PORT as soon as it is
 *                        free and listen: a request of the family
 *                        arriving there (meant for the daemon that had the
 *                        port) is a failure
 *   nlfuzz evict MOUNT_ID PATH OFFSET LENGTH
 *                        (root) send one EVICT the way the daemon does: by
 *                        path in the cache directory, with no lookup
 *                        through the mount; prints the ack's error (the
 *                        module takes it from the registered daemon only)
 *   nlfuzz evict-ioctl MNT PATH OFFSET LENGTH
 *                        (root) the same by S3CFS_IOC_EVICT on the mount's
 *                        root, which is how any other root process evicts
 *
 * Prints one line per check ("ok ..." or "FAIL ..."); the exit status is the
 * number of failed checks (0: all good), 100 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "uapi/s3cachefs.h"

static int family;
static int failures;
static volatile sig_atomic_t stop;

/* Requests the kernel sent while we were waiting for an ack. */
#define QMAX 64
static struct nlmsghdr *queue[QMAX];
static int qlen;

static void report(int good, const char *what, int err)
{
	printf("%s %s: %s (%d)\n", good ? "ok" : "FAIL", what,
	       err ? strerror(-err) : "accepted", err);
	fflush(stdout);
	if (!good)
		failures++;
}

static struct nl_sock *open_sock(void)
{
	struct timeval tv = { .tv_sec = 5 };
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk || genl_connect(sk)) {
		fprintf(stderr, "nlfuzz: cannot open a generic netlink socket\n");
		exit(100);
	}
	nl_socket_set_buffer_size(sk, 1 << 20, 1 << 20);
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!family) {
		family = genl_ctrl_resolve(sk, S3CFS_GENL_NAME);
		if (family < 0) {
			fprintf(stderr, "nlfuzz: family %s not found: %s (module not loaded?)\n",
				S3CFS_GENL_NAME, nl_geterror(family));
			exit(100);
		}
	}
	return sk;
}

static struct nl_msg *new_msg(int cmd)
{
	struct nl_msg *msg = nlmsg_alloc_size(S3CFS_PATH_MAX * 2 + 4096);

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
				 cmd, S3CFS_GENL_VERSION)) {
		fprintf(stderr, "nlfuzz: out of memory\n");
		exit(100);
	}
	return msg;
}

/*
 * Send msg (freed), wait for its ack; queue kernel requests seen meanwhile.
 * Return: the ack's error (0 or -errno), -ETIMEDOUT without an ack.
 */
static int send_wait(struct nl_sock *sk, struct nl_msg *msg)
{
	struct nlmsghdr *hdr;
	unsigned int seq;
	int ret;

	nl_complete_msg(sk, msg);
	hdr = nlmsg_hdr(msg);
	hdr->nlmsg_flags |= NLM_F_ACK;
	seq = hdr->nlmsg_seq;
	ret = nl_send(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	for (;;) {
		struct sockaddr_nl peer;
		unsigned char *buf = NULL;
		int n = nl_recv(sk, &peer, &buf, NULL);

		if (n <= 0) {
			free(buf);
			return -ETIMEDOUT;
		}
		for (hdr = (struct nlmsghdr *)buf; nlmsg_ok(hdr, n); hdr = nlmsg_next(hdr, &n)) {
			if (hdr->nlmsg_type == NLMSG_ERROR && hdr->nlmsg_seq == seq) {
				struct nlmsgerr *e = nlmsg_data(hdr);

				ret = e->error;
				free(buf);
				return ret;
			}
			if (hdr->nlmsg_type == family && qlen < QMAX) {
				queue[qlen] = malloc(hdr->nlmsg_len);
				memcpy(queue[qlen++], hdr, hdr->nlmsg_len);
			}
		}
		free(buf);
	}
}

/* A request from the kernel, parsed. */
struct req {
	int cmd;
	uint64_t id, off, len;
	uint32_t mount;
	int has_id, has_mount;
};

static int next_request(struct nl_sock *sk, struct req *r)
{
	struct nlattr *tb[S3CFS_A_MAX + 1];
	struct nlmsghdr *hdr = NULL;
	struct genlmsghdr *g;

	while (!qlen && !stop) {
		struct sockaddr_nl peer;
		unsigned char *buf = NULL;
		int n = nl_recv(sk, &peer, &buf, NULL);

		if (n <= 0) {
			free(buf);
			return 0;	/* timeout: let the caller look at the clock */
		}
		for (hdr = (struct nlmsghdr *)buf; nlmsg_ok(hdr, n); hdr = nlmsg_next(hdr, &n)) {
			if (hdr->nlmsg_type == family && qlen < QMAX) {
				queue[qlen] = malloc(hdr->nlmsg_len);
				memcpy(queue[qlen++], hdr, hdr->nlmsg_len);
			}
		}
		free(buf);
	}
	if (!qlen)
		return 0;
	hdr = queue[0];
	memmove(queue, queue + 1, --qlen * sizeof(queue[0]));
	g = nlmsg_data(hdr);
	memset(r, 0, sizeof(*r));
	r->cmd = g->cmd;
	if (genlmsg_parse(hdr, 0, tb, S3CFS_A_MAX, NULL) == 0) {
		if (tb[S3CFS_A_REQ_ID] && nla_len(tb[S3CFS_A_REQ_ID]) == 8) {
			r->id = nla_get_u64(tb[S3CFS_A_REQ_ID]);
			r->has_id = 1;
		}
		if (tb[S3CFS_A_MOUNT_ID] && nla_len(tb[S3CFS_A_MOUNT_ID]) == 4) {
			r->mount = nla_get_u32(tb[S3CFS_A_MOUNT_ID]);
			r->has_mount = 1;
		}
		if (tb[S3CFS_A_OFFSET] && nla_len(tb[S3CFS_A_OFFSET]) == 8)
			r->off = nla_get_u64(tb[S3CFS_A_OFFSET]);
		if (tb[S3CFS_A_LENGTH] && nla_len(tb[S3CFS_A_LENGTH]) == 8)
			r->len = nla_get_u64(tb[S3CFS_A_LENGTH]);
	}
	free(hdr);
	return 1;
}

/* What goes into a reply; a field < 0 / flag 0 leaves the attribute out. */
struct reply {
	int cmd;
	int id_size;		/* 8 normally, 4 for a mistyped id, 0 to omit */
	uint64_t id;
	int has_mount;
	uint32_t mount;
	int has_status;
	int32_t status;
	int has_range;
	uint64_t off, len;
	int has_done;		/* a DONE attribute (FETCH progress, version 2) */
	uint64_t done;
	size_t path_len;	/* > 0: a PATH attribute of that many bytes */
	int extra_attr;		/* > 0: an attribute of that (unknown) type */
};

static struct nl_msg *build(const struct reply *r)
{
	struct nl_msg *msg = new_msg(r->cmd);

	if (r->id_size == 8)
		nla_put_u64(msg, S3CFS_A_REQ_ID, r->id);
	else if (r->id_size == 4)
		nla_put_u32(msg, S3CFS_A_REQ_ID, (uint32_t)r->id);
	if (r->has_mount)
		nla_put_u32(msg, S3CFS_A_MOUNT_ID, r->mount);
	if (r->has_status)
		nla_put_s32(msg, S3CFS_A_STATUS, r->status);
	if (r->has_range) {
		nla_put_u64(msg, S3CFS_A_OFFSET, r->off);
		nla_put_u64(msg, S3CFS_A_LENGTH, r->len);
	}
	if (r->has_done)
		nla_put_u64(msg, S3CFS_A_DONE, r->done);
	if (r->path_len) {
		char *p = malloc(r->path_len + 1);

		memset(p, 'a', r->path_len);
		p[r->path_len] = 0;
		nla_put_string(msg, S3CFS_A_PATH, p);
		free(p);
	}
	if (r->extra_attr)
		nla_put_u32(msg, r->extra_attr, 1);
	return msg;
}

static void expect_refused(struct nl_sock *sk, const char *what, const struct reply *r)
{
	int err = send_wait(sk, build(r));

	report(err < 0 && err != -ETIMEDOUT, what, err);
}

static int do_register(struct nl_sock *sk, int version)
{
	struct nl_msg *msg = new_msg(S3CFS_CMD_REGISTER);

	if (version >= 0)
		nla_put_u32(msg, S3CFS_A_VERSION, version);
	return send_wait(sk, msg);
}

static struct reply valid_reply(int cmd, uint64_t id, uint32_t mount, int status)
{
	struct reply r = {
		.cmd = cmd, .id_size = 8, .id = id, .has_mount = 1, .mount = mount,
		.has_status = 1, .status = status,
	};
	return r;
}

static int mode_unpriv(void)
{
	static const int cmds[] = { S3CFS_CMD_MOUNT, S3CFS_CMD_FETCH,
				    S3CFS_CMD_LOOKUP, S3CFS_CMD_LIST };
	struct nl_sock *sk = open_sock();
	char what[128];
	unsigned int i;
	int err;

	err = do_register(sk, S3CFS_GENL_VERSION);
	report(err == -EPERM, "unprivileged REGISTER is refused with EPERM", err);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct reply r = valid_reply(cmds[i], 1, 1, 0);

		r.has_range = cmds[i] == S3CFS_CMD_FETCH;
		r.len = S3CFS_CHUNK_DEFAULT;
		snprintf(what, sizeof(what), "unprivileged reply (cmd %d) is refused with EPERM", cmds[i]);
		err = send_wait(sk, build(&r));
		report(err == -EPERM, what, err);
	}
	nl_socket_free(sk);
	return failures;
}

static int mode_malformed(void)
{
	struct nl_sock *sk = open_sock(), *sk2;
	struct reply r;
	struct nl_msg *msg;
	struct nlattr *bad;
	int err;

	err = do_register(sk, 0);
	report(err < 0, "REGISTER with version 0 is refused", err);
	err = do_register(sk, 9999);
	report(err < 0, "REGISTER with version 9999 is refused", err);
	err = do_register(sk, -1);
	report(err < 0, "REGISTER without a version is refused", err);
	err = do_register(sk, S3CFS_GENL_VERSION + 1);
	report(err < 0, "REGISTER with a version newer than the module's is refused", err);
	/* A daemon of the oldest protocol still registers (then goes away). */
	sk2 = open_sock();
	err = do_register(sk2, S3CFS_GENL_VERSION_MIN);
	report(err == 0, "REGISTER with the oldest accepted version is accepted", err);
	nl_socket_free(sk2);
	err = do_register(sk, S3CFS_GENL_VERSION);
	report(err == 0, "REGISTER with the right version is accepted", err);

	r = valid_reply(S3CFS_CMD_FETCH, 0x7fffdeadbeefULL, 1, 0);
	r.has_range = 1;
	r.len = S3CFS_CHUNK_DEFAULT;
	expect_refused(sk, "FETCH reply for an unknown request id", &r);
	r.id_size = 0;
	expect_refused(sk, "FETCH reply without REQ_ID", &r);
	r.id_size = 4;
	expect_refused(sk, "FETCH reply with a 4-byte REQ_ID", &r);
	r.id_size = 8;
	r.has_status = 0;
	expect_refused(sk, "FETCH reply without STATUS", &r);
	r.has_status = 1;
	r.has_mount = 0;
	expect_refused(sk, "FETCH reply without MOUNT_ID", &r);

	r = valid_reply(S3CFS_CMD_LOOKUP, 1, 1, 0);
	r.path_len = S3CFS_PATH_MAX + 100;
	expect_refused(sk, "LOOKUP reply with an oversized PATH", &r);
	r = valid_reply(S3CFS_CMD_LIST, 1, 1, 0);
	r.extra_attr = S3CFS_A_MAX + 7;
	expect_refused(sk, "LIST reply with an unknown attribute", &r);
	r = valid_reply(S3CFS_CMD_LIST, 1, 1, 4096);
	expect_refused(sk, "LIST reply with a positive STATUS", &r);
	r = valid_reply(S3CFS_CMD_MOUNT, 1, 1, 0);
	expect_refused(sk, "MOUNT reply for an unknown request id", &r);
	r = valid_reply(S3CFS_CMD_UMOUNT, 1, 1, 0);
	expect_refused(sk, "UMOUNT sent to the kernel", &r);
	r = valid_reply(S3CFS_CMD_MAX + 1, 1, 1, 0);
	expect_refused(sk, "an unknown command", &r);
	r = valid_reply(S3CFS_CMD_UNSPEC, 1, 1, 0);
	expect_refused(sk, "command 0 (UNSPEC)", &r);
	r = (struct reply){ .cmd = S3CFS_CMD_FETCH };
	expect_refused(sk, "FETCH reply with no attributes", &r);

	/* An attribute whose length runs past the end of the message. */
	msg = new_msg(S3CFS_CMD_FETCH);
	nla_put_u64(msg, S3CFS_A_REQ_ID, 1);
	bad = (struct nlattr *)((char *)nlmsg_tail(nlmsg_hdr(msg)) - NLA_HDRLEN - 8);
	bad->nla_len = 0x7ff0;
	err = send_wait(sk, msg);
	report(err < 0 && err != -ETIMEDOUT, "an attribute longer than the message", err);

	/* Informational: the contract does not say what a second daemon gets. */
	sk2 = open_sock();
	err = do_register(sk2, S3CFS_GENL_VERSION);
	printf("info: REGISTER from a second socket while one is registered: %s (%d)\n",
	       err ? strerror(-err) : "accepted", err);
	nl_socket_free(sk2);
	nl_socket_free(sk);
	return failures;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * fake-daemon: @stall answers nothing but MOUNT; @stall_fetch answers
 * everything but FETCH; @exit_on_fetch exits (its socket released) as soon
 * as a FETCH arrives.
 */
static int mode_fake_daemon(int seconds, int stall, int stall_fetch,
			    int exit_on_fetch)
{
	struct nl_sock *sk = open_sock();
	time_t end = time(NULL) + seconds;
	struct req q;
	char what[160];
	int err, served = 0;

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	err = do_register(sk, S3CFS_GENL_VERSION);
	report(err == 0, "fake daemon registers", err);
	if (err)
		return failures;
	printf("info: fake daemon ready%s, port %u\n", stall ? " (stalling)" : "",
	       nl_socket_get_local_port(sk));
	fflush(stdout);
	while (!stop && time(NULL) < end) {
		struct reply r;
		int final;

		if (!next_request(sk, &q))
			continue;
		printf("info: request cmd %d id %llu mount %u off %llu len %llu\n", q.cmd,
		       (unsigned long long)q.id, q.mount, (unsigned long long)q.off,
		       (unsigned long long)q.len);
		if (q.cmd == S3CFS_CMD_UMOUNT)
			continue;
		if (!q.has_id || !q.has_mount) {
			report(0, "kernel request carries REQ_ID and MOUNT_ID", -EINVAL);
			continue;
		}
		if (q.cmd == S3CFS_CMD_MOUNT) {
			r = valid_reply(q.cmd, q.id, q.mount + 1000, 0);
			snprintf(what, sizeof(what), "MOUNT %llu: reply with another mount id is refused",
				 (unsigned long long)q.id);
			expect_refused(sk, what, &r);
			r = valid_reply(q.cmd, q.id, q.mount, 0);
			err = send_wait(sk, build(&r));
			report(err == 0, "MOUNT: a valid reply is accepted", err);
			continue;
		}
		if (q.cmd == S3CFS_CMD_FETCH && exit_on_fetch) {
			printf("info: FETCH received: exiting\n");
			fflush(stdout);
			break;
		}
		if (stall || (stall_fetch && q.cmd == S3CFS_CMD_FETCH))
			continue;
		served++;
		final = q.cmd == S3CFS_CMD_LOOKUP ? -ENOENT : -EIO;

#define REFUSED(desc, ...) do {						\
		r = valid_reply(q.cmd, q.id, q.mount, final);			\
		r.has_range = q.cmd == S3CFS_CMD_FETCH;				\
		r.off = q.off;							\
		r.len = q.len;							\
		__VA_ARGS__;							\
		snprintf(what, sizeof(what), "cmd %d id %llu: %s is refused",	\
			 q.cmd, (unsigned long long)q.id, desc);		\
		expect_refused(sk, what, &r);					\
	} while (0)

		REFUSED("a reply with another mount id", r.mount = q.mount + 1000);
		REFUSED("a reply with another command",
			r.cmd = q.cmd == S3CFS_CMD_LIST ? S3CFS_CMD_LOOKUP : S3CFS_CMD_LIST;
			r.has_range = 0);
		REFUSED("a reply with STATUS 1", r.status = 1);
		REFUSED("a reply with STATUS -100000", r.status = -100000);
		if (q.cmd == S3CFS_CMD_FETCH) {
			REFUSED("a reply with another OFFSET", r.off = q.off + S3CFS_CHUNK_MAX);
			REFUSED("a reply with another LENGTH", r.len = q.len + 1);
			REFUSED("a reply without OFFSET/LENGTH", r.has_range = 0);
			REFUSED("a progress report with DONE past LENGTH",
				r.status = -EINPROGRESS; r.has_done = 1;
				r.done = q.len + 1);
			REFUSED("a final reply with DONE", r.has_done = 1;
				r.done = q.len);
			/* Claims a chunk it never wrote: nothing counts as cached. */
			r = valid_reply(q.cmd, q.id, q.mount, -EINPROGRESS);
			r.has_range = 1;
			r.off = q.off;
			r.len = q.len;
			r.has_done = 1;
			r.done = S3CFS_CHUNK_MIN < q.len ? S3CFS_CHUNK_MIN : q.len;
			err = send_wait(sk, build(&r));
			snprintf(what, sizeof(what), "cmd %d id %llu: a progress report with DONE is accepted",
				 q.cmd, (unsigned long long)q.id);
			report(err == 0, what, err);
		} else {
			REFUSED("a progress report with DONE", r.status = -EINPROGRESS;
				r.has_done = 1; r.done = 1);
		}
		r = valid_reply(q.cmd, q.id, q.mount, final);
		r.has_range = q.cmd == S3CFS_CMD_FETCH;
		r.off = q.off;
		r.len = q.len;
		err = send_wait(sk, build(&r));
		snprintf(what, sizeof(what), "cmd %d id %llu: the valid reply (status %d) is accepted",
			 q.cmd, (unsigned long long)q.id, final);
		report(err == 0, what, err);
		snprintf(what, sizeof(what), "cmd %d id %llu: the same reply again is refused",
			 q.cmd, (unsigned long long)q.id);
		expect_refused(sk, what, &r);
	}
	printf("info: fake daemon served %d requests\n", served);
	nl_socket_free(sk);
	return failures;
}

/*
 * hostile: what a socket that is not the registered daemon's may try,
 * each of which must be refused with EPERM (the sender is checked before
 * anything else, so ENOENT "no such request" or ENODEV "no such mount"
 * would mean it got past that check): EVICT of @path in mount @mount_id,
 * and an answer of every command to the request ids @ids (those of
 * pending requests, or made up). REGISTER must fail with @reg_err.
 */
static int mode_hostile(uint32_t mount_id, const char *path, int reg_err,
			const char *ids)
{
	static const int cmds[] = {
		S3CFS_CMD_UPLOAD, S3CFS_CMD_MKDIR, S3CFS_CMD_DELETE,
		S3CFS_CMD_RENAME, S3CFS_CMD_SETMETA, S3CFS_CMD_FETCH,
		S3CFS_CMD_LOOKUP, S3CFS_CMD_LIST, S3CFS_CMD_MOUNT,
	};
	struct nl_sock *sk = open_sock();
	char what[160], *list, *tok, *save = NULL;
	struct nl_msg *msg;
	unsigned int i;
	int err;

	err = do_register(sk, S3CFS_GENL_VERSION);
	snprintf(what, sizeof(what), "REGISTER fails with %s", strerror(-reg_err));
	report(err == reg_err, what, err);

	msg = new_msg(S3CFS_CMD_EVICT);
	nla_put_u32(msg, S3CFS_A_MOUNT_ID, mount_id);
	nla_put_string(msg, S3CFS_A_PATH, path);
	nla_put_u64(msg, S3CFS_A_OFFSET, 0);
	nla_put_u64(msg, S3CFS_A_LENGTH, 1ULL << 40);
	err = send_wait(sk, msg);
	snprintf(what, sizeof(what), "EVICT of %s in mount %u is refused with EPERM",
		 path, mount_id);
	report(err == -EPERM, what, err);

	list = strdup(ids);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t id = strtoull(tok, NULL, 0);

		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			struct reply r = valid_reply(cmds[i], id, mount_id, 0);

			r.has_range = cmds[i] == S3CFS_CMD_FETCH;
			r.len = S3CFS_CHUNK_DEFAULT;
			err = send_wait(sk, build(&r));
			snprintf(what, sizeof(what),
				 "answer (cmd %d) to request %llu is refused with EPERM",
				 cmds[i], (unsigned long long)id);
			report(err == -EPERM, what, err);
			/* A progress report too: it would restart the timeout. */
			r.status = -EINPROGRESS;
			err = send_wait(sk, build(&r));
			snprintf(what, sizeof(what),
				 "progress report (cmd %d) for request %llu is refused with EPERM",
				 cmds[i], (unsigned long long)id);
			report(err == -EPERM, what, err);
		}
	}
	free(list);
	nl_socket_free(sk);
	return failures;
}

/*
 * listen-port: bind a socket to port id @port as soon as it is free (the
 * daemon's, once it exits), within @seconds, then listen until then. Any
 * message of the family is a request meant for the daemon: a failure.
 */
static int mode_listen_port(uint32_t port, int seconds)
{
	struct timeval tv = { .tv_usec = 200000 };
	time_t end = time(NULL) + seconds;
	struct nl_sock *sk = nl_socket_alloc();
	int got = 0, bound = 0;

	open_sock();	/* resolves the family id (a socket of its own) */
	while (time(NULL) < end) {
		nl_socket_set_local_port(sk, port);
		if (!nl_connect(sk, NETLINK_GENERIC)) {
			bound = 1;
			break;
		}
		usleep(20000);
	}
	if (!bound) {
		printf("FAIL could not bind port %u within %d s\n", port, seconds);
		return 100;
	}
	printf("info: bound to port %u\n", port);
	fflush(stdout);
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (time(NULL) < end) {
		struct sockaddr_nl peer;
		unsigned char *buf = NULL;
		struct nlmsghdr *hdr;
		int n = nl_recv(sk, &peer, &buf, NULL);

		for (hdr = (struct nlmsghdr *)buf; n > 0 && nlmsg_ok(hdr, n);
		     hdr = nlmsg_next(hdr, &n)) {
			if (hdr->nlmsg_type != family)
				continue;
			printf("FAIL received a request meant for the daemon: cmd %d, %u bytes\n",
			       ((struct genlmsghdr *)nlmsg_data(hdr))->cmd,
			       hdr->nlmsg_len);
			got++;
		}
		free(buf);
	}
	if (!got)
		printf("ok nothing of the family reached port %u\n", port);
	nl_socket_free(sk);
	return got ? 1 : 0;
}

static int mode_evict(char **argv)
{
	struct nl_sock *sk = open_sock();
	struct nl_msg *msg = new_msg(S3CFS_CMD_EVICT);
	int err;

	if (nla_put_u32(msg, S3CFS_A_MOUNT_ID, strtoul(argv[0], NULL, 0)) < 0 ||
	    nla_put_string(msg, S3CFS_A_PATH, argv[1]) < 0 ||
	    nla_put_u64(msg, S3CFS_A_OFFSET, strtoull(argv[2], NULL, 0)) < 0 ||
	    nla_put_u64(msg, S3CFS_A_LENGTH, strtoull(argv[3], NULL, 0)) < 0) {
		fprintf(stderr, "nlfuzz: out of memory\n");
		return 100;
	}
	err = send_wait(sk, msg);
	printf("evict %s: %s (%d)\n", argv[1], err ? strerror(-err) : "done", err);
	nl_socket_free(sk);
	return err ? 1 : 0;
}

/* The same by S3CFS_IOC_EVICT on the mount's root: MNT PATH OFFSET LENGTH. */
static int mode_evict_ioctl(char **argv)
{
	struct s3cfs_ioc_evict *arg = calloc(1, sizeof(*arg));
	int fd, err = 0;

	if (!arg || strlen(argv[1]) >= sizeof(arg->path)) {
		fprintf(stderr, "nlfuzz: bad arguments\n");
		return 100;
	}
	strcpy(arg->path, argv[1]);
	arg->offset = strtoull(argv[2], NULL, 0);
	arg->length = strtoull(argv[3], NULL, 0);
	fd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (fd < 0 || ioctl(fd, S3CFS_IOC_EVICT, arg))
		err = -errno;
	if (fd >= 0)
		close(fd);
	printf("evict %s: %s (%d)\n", argv[1], err ? strerror(-err) : "done", err);
	free(arg);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	int seconds = 60, stall = 0, stall_fetch = 0, exit_on_fetch = 0, i;

	if (argc == 6 && !strcmp(argv[1], "evict"))
		return mode_evict(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "evict-ioctl"))
		return mode_evict_ioctl(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "hostile"))
		return mode_hostile(strtoul(argv[2], NULL, 0), argv[3],
				    -atoi(argv[4]), argv[5]) > 99 ? 99 : failures;
	if (argc == 4 && !strcmp(argv[1], "listen-port"))
		return mode_listen_port(strtoul(argv[2], NULL, 0), atoi(argv[3]));
	if (argc < 2)
		goto usage;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--stall"))
			stall = 1;
		else if (!strcmp(argv[i], "--stall-fetch"))
			stall_fetch = 1;
		else if (!strcmp(argv[i], "--exit-on-fetch"))
			exit_on_fetch = 1;
		else
			goto usage;
	}
	if (!strcmp(argv[1], "unpriv"))
		return mode_unpriv();
	if (!strcmp(argv[1], "malformed"))
		return mode_malformed();
	if (!strcmp(argv[1], "fake-daemon"))
		return mode_fake_daemon(seconds, stall, stall_fetch,
					exit_on_fetch) > 99 ? 99 : failures;
usage:
	fprintf(stderr, "usage: nlfuzz unpriv | malformed | fake-daemon [--seconds N] [--stall | --stall-fetch | --exit-on-fetch] |\n"
		"       evict MOUNT_ID PATH OFFSET LENGTH | evict-ioctl MNT PATH OFFSET LENGTH |\n"
		"       hostile MOUNT_ID PATH REGISTER_ERRNO IDS | listen-port PORT SECONDS\n");
	return 100;
}
