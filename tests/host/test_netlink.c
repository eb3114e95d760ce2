// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink messages without a kernel: requests built the way the module
 * builds them (libnl standing in for genlmsg_put/nla_put_*, including the
 * PAD attributes nla_put_u64_64bit() inserts) are parsed into requests;
 * malformed ones are refused; replies carry what the protocol header says.
 * Then the requests that are answered without S3 (mounts, validation,
 * stale cache files) go through ops.c as netlink.c would hand them over.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "lib/config.h"
#include "lib/log.h"
#include "netlink.h"
#include "ops.h"
#include "req.h"
#include "uapi/s3cachefs.h"
#include "tap.h"

#define FAMILY	0x1d

static struct nl_msg *kmsg(int cmd)
{
	struct nl_msg *m = nlmsg_alloc();

	genlmsg_put(m, 0, 7, FAMILY, 0, 0, (uint8_t)cmd, S3CFS_GENL_VERSION);
	return m;
}

/* nla_put_u64_64bit() may put an empty PAD attribute first. */
static void put_u64_padded(struct nl_msg *m, int type, uint64_t v)
{
	nla_put(m, S3CFS_A_PAD, 0, NULL);
	nla_put_u64(m, type, v);
}

static struct s3d_req *parse(struct nl_msg *m, int *err)
{
	struct s3d_req *r = NULL;

	*err = s3d_nl_parse_req(nlmsg_hdr(m), &r);
	nlmsg_free(m);
	return r;
}

static void test_parse(void)
{
	struct nl_msg *m;
	struct s3d_req *r;
	int err;

	m = kmsg(S3CFS_CMD_FETCH);
	put_u64_padded(m, S3CFS_A_REQ_ID, 0x1122334455667788ULL);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
	nla_put_string(m, S3CFS_A_PATH, "dir/file.bin");
	put_u64_padded(m, S3CFS_A_OFFSET, 1 << 20);
	put_u64_padded(m, S3CFS_A_LENGTH, 4 << 20);
	nla_put_string(m, S3CFS_A_ETAG, "\"abc-2\"");
	nla_put_u32(m, 200, 1);		/* from a newer kernel: ignored */
	r = parse(m, &err);
	is_int(err, 0, "parse: FETCH");
	ok(r && r->cmd == S3CFS_CMD_FETCH && r->id == 0x1122334455667788ULL &&
	   r->mount_id == 3 && r->off == 1 << 20 && r->len == 4 << 20,
	   "parse: FETCH numbers (u64 after PAD)");
	ok(r && !strcmp(r->path, "dir/file.bin") && !strcmp(r->etag, "\"abc-2\""),
	   "parse: FETCH strings");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_UPLOAD);
	put_u64_padded(m, S3CFS_A_REQ_ID, 12);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
	nla_put_string(m, S3CFS_A_PATH, "dir/new.bin");
	put_u64_padded(m, S3CFS_A_INO, 0xabcdef123ULL);
	put_u64_padded(m, S3CFS_A_SIZE, 5ULL << 30);
	nla_put_u32(m, S3CFS_A_FLAGS, S3CFS_UP_MATCH);
	nla_put_string(m, S3CFS_A_ETAG, "\"base\"");
	r = parse(m, &err);
	ok(!err && r && r->cmd == S3CFS_CMD_UPLOAD && r->ino == 0xabcdef123ULL &&
	   r->size == 5ULL << 30 && r->flags == S3CFS_UP_MATCH &&
	   !strcmp(r->path, "dir/new.bin") && !strcmp(r->etag, "\"base\""),
	   "parse: UPLOAD (protocol 3)");
	s3d_req_free(r);
	m = kmsg(S3CFS_CMD_UPLOAD);
	put_u64_padded(m, S3CFS_A_REQ_ID, 13);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
	nla_put_string(m, S3CFS_A_PATH, "dir/new.bin");
	put_u64_padded(m, S3CFS_A_SIZE, 1);
	r = parse(m, &err);
	ok(err == -EINVAL && r && r->id == 13,
	   "parse: UPLOAD without INO and FLAGS is answered -EINVAL");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_LIST);
	nla_put_u64(m, S3CFS_A_REQ_ID, 9);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 1);
	nla_put_string(m, S3CFS_A_PATH, "");
	r = parse(m, &err);
	ok(!err && r && r->path && !*r->path, "parse: LIST of the root (\"\")");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_MOUNT);
	nla_put_u64(m, S3CFS_A_REQ_ID, 1);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 1);
	nla_put_string(m, S3CFS_A_BUCKET, "bkt");
	nla_put_string(m, S3CFS_A_PREFIX, "");
	nla_put_string(m, S3CFS_A_CACHE_DIR, "/cache");
	nla_put_u32(m, S3CFS_A_CHUNK_SIZE, 1 << 20);
	r = parse(m, &err);
	ok(!err && r && !strcmp(r->bucket, "bkt") && !strcmp(r->prefix, "") &&
	   !strcmp(r->cache_dir, "/cache") && r->chunk == 1 << 20,
	   "parse: MOUNT");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_UMOUNT);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 4);
	r = parse(m, &err);
	ok(!err && r && r->mount_id == 4, "parse: UMOUNT (no request id)");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_LOOKUP);
	nla_put_u64(m, S3CFS_A_REQ_ID, 5);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 1);
	nla_put_string(m, S3CFS_A_PATH, "d");
	r = parse(m, &err);
	ok(err == -EINVAL && r && r->id == 5,
	   "parse: LOOKUP without NAME is answered -EINVAL");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_LIST);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 1);
	nla_put_string(m, S3CFS_A_PATH, "d");
	r = parse(m, &err);
	ok(err == -EINVAL && !r, "parse: without REQ_ID it cannot be answered");

	m = kmsg(S3CFS_CMD_LIST);
	nla_put_u64(m, S3CFS_A_REQ_ID, 6);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 1);
	nla_put(m, S3CFS_A_PATH, 3, "abc");	/* no NUL */
	r = parse(m, &err);
	ok(err == -EINVAL, "parse: unterminated string refused");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_LIST);
	nla_put_u64(m, S3CFS_A_REQ_ID, 6);
	nla_put_u32(m, S3CFS_A_MOUNT_ID, 1);
	nla_put(m, S3CFS_A_PATH, 4, "a\0b");	/* NUL inside */
	r = parse(m, &err);
	ok(err == -EINVAL, "parse: embedded NUL refused");
	s3d_req_free(r);

	m = kmsg(S3CFS_CMD_FETCH);
	nla_put_u64(m, S3CFS_A_REQ_ID, 6);
	nla_put_u16(m, S3CFS_A_MOUNT_ID, 1);	/* too short for a u32 */
	r = parse(m, &err);
	ok(err == -EINVAL, "parse: short integer attribute refused");
	s3d_req_free(r);

	/* Protocol 5: POSIX in UPLOAD, MKDIR, SETMETA; exactly one struct. */
	{
		struct s3cfs_posix px = { .flags = S3CFS_POSIX_MODE |
					  S3CFS_POSIX_MTIME, .mode = 0100600,
					  .mtime = 1700000000, .mtime_nsec = 9 };
		char longer[sizeof(px) + 4] = { 0 };

		m = kmsg(S3CFS_CMD_SETMETA);
		put_u64_padded(m, S3CFS_A_REQ_ID, 21);
		nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
		nla_put_string(m, S3CFS_A_PATH, "d/f");
		nla_put_string(m, S3CFS_A_ETAG, "\"e1\"");
		put_u64_padded(m, S3CFS_A_SIZE, 42);
		nla_put(m, S3CFS_A_POSIX, sizeof(px), &px);
		r = parse(m, &err);
		ok(!err && r && r->cmd == S3CFS_CMD_SETMETA && r->has_posix &&
		   !memcmp(&r->posix, &px, sizeof(px)) && r->size == 42 &&
		   !strcmp(r->etag, "\"e1\"") && !strcmp(r->path, "d/f"),
		   "parse: SETMETA with POSIX (protocol 5)");
		s3d_req_free(r);

		m = kmsg(S3CFS_CMD_SETMETA);
		put_u64_padded(m, S3CFS_A_REQ_ID, 22);
		nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
		nla_put_string(m, S3CFS_A_PATH, "d/f");
		nla_put_string(m, S3CFS_A_ETAG, "\"e1\"");
		put_u64_padded(m, S3CFS_A_SIZE, 42);
		r = parse(m, &err);
		ok(err == -EINVAL && r && r->id == 22,
		   "parse: SETMETA without POSIX is answered -EINVAL");
		s3d_req_free(r);

		m = kmsg(S3CFS_CMD_MKDIR);
		put_u64_padded(m, S3CFS_A_REQ_ID, 23);
		nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
		nla_put_string(m, S3CFS_A_PATH, "d");
		nla_put_string(m, S3CFS_A_NAME, "sub");
		nla_put(m, S3CFS_A_POSIX, sizeof(px) - 1, &px);
		r = parse(m, &err);
		ok(err == -EINVAL && r && r->id == 23,
		   "parse: a short POSIX is answered -EINVAL");
		s3d_req_free(r);

		memcpy(longer, &px, sizeof(px));
		m = kmsg(S3CFS_CMD_UPLOAD);
		put_u64_padded(m, S3CFS_A_REQ_ID, 24);
		nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
		nla_put_string(m, S3CFS_A_PATH, "d/f");
		put_u64_padded(m, S3CFS_A_INO, 5);
		put_u64_padded(m, S3CFS_A_SIZE, 1);
		nla_put_u32(m, S3CFS_A_FLAGS, S3CFS_UP_NEW);
		nla_put(m, S3CFS_A_POSIX, sizeof(longer), longer);
		r = parse(m, &err);
		ok(err == -EINVAL && r && r->id == 24,
		   "parse: a long POSIX is answered -EINVAL");
		s3d_req_free(r);

		m = kmsg(S3CFS_CMD_MKDIR);
		put_u64_padded(m, S3CFS_A_REQ_ID, 25);
		nla_put_u32(m, S3CFS_A_MOUNT_ID, 3);
		nla_put_string(m, S3CFS_A_PATH, "d");
		nla_put_string(m, S3CFS_A_NAME, "sub");
		r = parse(m, &err);
		ok(!err && r && !r->has_posix,
		   "parse: MKDIR without POSIX (an older kernel) has none");
		s3d_req_free(r);
	}

	{
		char big[S3CFS_ETAG_MAX + 2];

		memset(big, 'e', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		m = kmsg(S3CFS_CMD_FETCH);
		nla_put_u64(m, S3CFS_A_REQ_ID, 6);
		nla_put_string(m, S3CFS_A_ETAG, big);
		r = parse(m, &err);
		ok(err == -EINVAL, "parse: over-long ETag refused");
		s3d_req_free(r);
	}
}

static void test_reply(void)
{
	struct s3d_req r = { .cmd = S3CFS_CMD_FETCH, .id = 0xfeedULL << 32,
			     .mount_id = 12, .off = 3 << 20, .len = 1 << 20 };
	struct nlattr *tb[S3CFS_A_MAX + 1];
	struct nl_msg *m;
	struct genlmsghdr *gh;

	m = s3d_nl_build_reply(&r, -ESTALE, FAMILY);
	ok(m != NULL, "reply: built");
	gh = nlmsg_data(nlmsg_hdr(m));
	ok(nlmsg_hdr(m)->nlmsg_type == FAMILY && gh->cmd == S3CFS_CMD_FETCH &&
	   gh->version == S3CFS_GENL_VERSION,
	   "reply: same family and command, our version");
	ok(!(nlmsg_hdr(m)->nlmsg_flags & NLM_F_ACK), "reply: no ack requested");
	is_int(genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL), 0,
	       "reply: parses");
	ok(tb[S3CFS_A_REQ_ID] && nla_get_u64(tb[S3CFS_A_REQ_ID]) == r.id &&
	   tb[S3CFS_A_MOUNT_ID] && nla_get_u32(tb[S3CFS_A_MOUNT_ID]) == 12,
	   "reply: REQ_ID and MOUNT_ID echoed");
	ok(tb[S3CFS_A_STATUS] && nla_len(tb[S3CFS_A_STATUS]) == 4 &&
	   nla_get_s32(tb[S3CFS_A_STATUS]) == -ESTALE, "reply: STATUS is s32");
	ok(tb[S3CFS_A_OFFSET] && nla_get_u64(tb[S3CFS_A_OFFSET]) == 3 << 20 &&
	   tb[S3CFS_A_LENGTH] && nla_get_u64(tb[S3CFS_A_LENGTH]) == 1 << 20,
	   "reply: FETCH echoes OFFSET and LENGTH");
	nlmsg_free(m);

	/* Progress of a FETCH: DONE (protocol 2), and only there. */
	r.done = 2 << 20;
	m = s3d_nl_build_reply(&r, -EINPROGRESS, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(tb[S3CFS_A_DONE] && nla_get_u64(tb[S3CFS_A_DONE]) == 2 << 20 &&
	   nla_get_s32(tb[S3CFS_A_STATUS]) == -EINPROGRESS,
	   "progress report: FETCH carries DONE");
	nlmsg_free(m);
	m = s3d_nl_build_reply(&r, 0, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(!tb[S3CFS_A_DONE], "final reply: no DONE (the kernel refuses it)");
	nlmsg_free(m);
	r.done = 0;
	m = s3d_nl_build_reply(&r, -EINPROGRESS, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(!tb[S3CFS_A_DONE], "progress report with nothing written: no DONE");
	nlmsg_free(m);

	r.cmd = S3CFS_CMD_LOOKUP;
	m = s3d_nl_build_reply(&r, 0, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(!tb[S3CFS_A_OFFSET] && !tb[S3CFS_A_LENGTH] && tb[S3CFS_A_STATUS] &&
	   nla_get_s32(tb[S3CFS_A_STATUS]) == 0,
	   "reply: LOOKUP carries no OFFSET/LENGTH");
	nlmsg_free(m);

	r.cmd = S3CFS_CMD_UPLOAD;
	r.reply_etag = "\"new\"";
	m = s3d_nl_build_reply(&r, 0, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(tb[S3CFS_A_ETAG] && !strcmp(nla_get_string(tb[S3CFS_A_ETAG]), "\"new\"") &&
	   !tb[S3CFS_A_OFFSET], "reply: UPLOAD carries the new ETag");
	nlmsg_free(m);
	m = s3d_nl_build_reply(&r, -EEXIST, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(!tb[S3CFS_A_ETAG], "reply: a failed UPLOAD carries none");
	nlmsg_free(m);
	r.cmd = S3CFS_CMD_SETMETA;
	m = s3d_nl_build_reply(&r, 0, FAMILY);
	genlmsg_parse(nlmsg_hdr(m), 0, tb, S3CFS_A_MAX, NULL);
	ok(tb[S3CFS_A_ETAG] && !strcmp(nla_get_string(tb[S3CFS_A_ETAG]), "\"new\""),
	   "reply: SETMETA carries the new ETag");
	nlmsg_free(m);
	r.reply_etag = NULL;
}

/* ---- requests answered without S3 ---- */

static int last_status;
static int replies;

static void capture(struct s3d_req *r, int status)
{
	last_status = status;
	replies++;
	s3d_req_free(r);
}

static int handle(int cmd, uint32_t mount, const char *path, const char *name,
		  const char *etag, uint64_t off, uint64_t len)
{
	struct s3d_req *r = calloc(1, sizeof(*r));
	int before = replies;

	r->cmd = cmd;
	r->id = 77;
	r->mount_id = mount;
	r->path = path ? strdup(path) : NULL;
	r->name = name ? strdup(name) : NULL;
	r->etag = etag ? strdup(etag) : NULL;
	r->off = off;
	r->len = len;
	r->reply = capture;
	s3d_req_handle(r);
	return replies == before + 1 ? last_status : 1000;
}

static int do_mount(uint32_t id, const char *bucket, const char *prefix,
		    const char *dir, uint32_t chunk)
{
	struct s3d_req *r = calloc(1, sizeof(*r));
	int before = replies;

	r->cmd = S3CFS_CMD_MOUNT;
	/*
	 * Announced (REQ_ID 0), as after a daemon restart: a new mount's
	 * bucket check (bucket.c) needs S3, which this test has not.
	 */
	r->id = 0;
	r->mount_id = id;
	r->bucket = strdup(bucket);
	r->prefix = strdup(prefix);
	r->cache_dir = strdup(dir);
	r->chunk = chunk;
	r->reply = capture;
	s3d_req_handle(r);
	return replies == before + 1 ? last_status : 1000;
}

/* A SETMETA of @size bytes with @px (NULL: without POSIX). */
static int setmeta(uint64_t size, const struct s3cfs_posix *px)
{
	struct s3d_req *r = calloc(1, sizeof(*r));
	int before = replies;

	r->cmd = S3CFS_CMD_SETMETA;
	r->id = 78;
	r->mount_id = 1;
	r->path = strdup("obj");
	r->etag = strdup("\"new\"");
	r->size = size;
	r->has_posix = px;
	if (px)
		r->posix = *px;
	r->reply = capture;
	s3d_req_handle(r);
	return replies == before + 1 ? last_status : 1000;
}

static void test_ops(void)
{
	char dir[] = "/tmp/s3d-test-nl-XXXXXX", file[600], other[600];
	struct s3d_conf conf;
	int fd;

	if (!mkdtemp(dir))
		return;
	s3d_conf_init(&conf);
	conf.global.endpoint = "http://127.0.0.1:1";
	conf.global.region = "us-east-1";
	conf.global.anonymous = 1;
	conf.global.allow_http = 1;
	s3d_ops_init(&conf);

	is_int(handle(S3CFS_CMD_FETCH, 1, "a", NULL, "\"e\"", 0, 4096), -ENODEV,
	       "ops: unknown mount");
	is_int(do_mount(1, "bkt", "pre/", "relative/dir", 1 << 20), -EINVAL,
	       "ops: MOUNT with a relative cache dir");
	is_int(do_mount(1, "bkt", "pre/", dir, 3 << 20), -EINVAL,
	       "ops: MOUNT with a chunk size not a power of two");
	is_int(do_mount(1, "bkt", "pre", dir, 1 << 20), -EINVAL,
	       "ops: MOUNT with a prefix not ending in '/'");
	is_int(do_mount(1, "b/k", "", dir, 1 << 20), -EINVAL,
	       "ops: MOUNT with an impossible bucket name");
	is_int(do_mount(1, "bkt", "pre/", "/nonexistent/cache", 1 << 20),
	       -ENOENT, "ops: MOUNT of a missing cache dir");
	is_int(do_mount(1, "bkt", "pre/", dir, 1 << 20), 0, "ops: MOUNT");
	is_int(do_mount(1, "bkt", "pre/", dir, 1 << 20), 0,
	       "ops: MOUNT again for the same id (daemon restart) replaces it");
	is_int(do_mount(2, "another", "pre/", dir, 1 << 20), -EXDEV,
	       "ops: MOUNT of a cache that belongs to another bucket");

	is_int(handle(S3CFS_CMD_LIST, 1, "../x", NULL, NULL, 0, 0), -EINVAL,
	       "ops: path with .. refused");
	is_int(handle(S3CFS_CMD_LIST, 1, "/abs", NULL, NULL, 0, 0), -EINVAL,
	       "ops: absolute path refused");
	is_int(handle(S3CFS_CMD_LOOKUP, 1, "a//b", NULL, "x", 0, 0), -EINVAL,
	       "ops: empty component refused");
	is_int(handle(S3CFS_CMD_LOOKUP, 1, "", ".s3cachefs", NULL, 0, 0),
	       -ENOENT, "ops: LOOKUP of .s3cachefs at the root: ENOENT, no S3");
	is_int(handle(S3CFS_CMD_LOOKUP, 1, "d", ".s3cfs.1.2", NULL, 0, 0),
	       -ENOENT, "ops: LOOKUP of a daemon temporary: ENOENT");
	is_int(handle(S3CFS_CMD_LOOKUP, 1, "d", "..", NULL, 0, 0), -ENOENT,
	       "ops: LOOKUP of ..: ENOENT");
	is_int(handle(99, 1, "", NULL, NULL, 0, 0), -EOPNOTSUPP,
	       "ops: unknown command");
	{
		struct s3cfs_posix px = { .flags = S3CFS_POSIX_MODE,
					  .mode = 0200000 };

		is_int(setmeta(1, &px), -EINVAL,
		       "ops: SETMETA with a mode out of range: EINVAL, no S3");
		px.flags = S3CFS_POSIX_MTIME;
		px.mtime_nsec = 1000000000;
		is_int(setmeta(1, &px), -EINVAL,
		       "ops: ... nanoseconds out of range: EINVAL");
		px.flags = 0x20;
		is_int(setmeta(1, &px), -EINVAL, "ops: ... unknown flags: EINVAL");
		is_int(setmeta(1, NULL), -EINVAL,
		       "ops: SETMETA without POSIX: EINVAL");
		px.flags = S3CFS_POSIX_UID;
		is_int(setmeta((5ULL << 30) + 1, &px), -EXDEV,
		       "ops: SETMETA of more than 5 GiB: EXDEV, no S3");
	}

	snprintf(file, sizeof(file), "%s/obj", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	if (ftruncate(fd, 3 << 20) ||
	    fsetxattr(fd, S3CFS_XATTR_ETAG, "\"new\"", 5, 0))
		diag("setting up obj failed");
	close(fd);
	snprintf(other, sizeof(other), "%s/notafile", dir);
	mkdir(other, 0755);

	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"old\"", 0, 1 << 20),
	       -ESTALE, "ops: FETCH for an older ETag than the file's: ESTALE");
	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"new\"", 4096, 1 << 20),
	       -EINVAL, "ops: FETCH at an offset that is not chunk aligned");
	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"new\"", 0, 0),
	       -EINVAL, "ops: FETCH of length 0");
	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"new\"", 0, 12345),
	       -EINVAL, "ops: FETCH that ends inside a chunk before EOF");
	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"new\"", 4 << 20,
		      1 << 20), 0, "ops: FETCH past EOF: nothing to do");
	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"new\"",
		      UINT64_MAX - (1 << 20) + 1, 1 << 20), -EINVAL,
	       "ops: FETCH whose end overflows");
	is_int(handle(S3CFS_CMD_FETCH, 1, "notafile", NULL, "\"new\"", 0,
		      1 << 20), -EISDIR, "ops: FETCH of a directory");
	is_int(handle(S3CFS_CMD_FETCH, 1, "", NULL, "\"new\"", 0, 1 << 20),
	       -EINVAL, "ops: FETCH of the root");

	is_int(handle(S3CFS_CMD_UMOUNT, 1, NULL, NULL, NULL, 0, 0), 1000,
	       "ops: UMOUNT gets no reply");
	is_int(handle(S3CFS_CMD_FETCH, 1, "obj", NULL, "\"new\"", 0, 1 << 20),
	       -ENODEV, "ops: requests after UMOUNT: unknown mount");
	is_int(s3d_ops_pending(), 0, "ops: nothing left pending");

	s3d_ops_fini();
	snprintf(file, sizeof(file), "rm -rf '%s'", dir);
	if (system(file))
		diag("cleanup failed");
}

int main(void)
{
	s3d_log_level = -1;
	test_parse();
	test_reply();
	test_ops();
	return tap_done();
}
