// SPDX-License-Identifier: GPL-2.0
/*
 * The cache directory: format marker, confinement beneath the root, lower
 * files (new file per ETag, kept when the ETag matches), directory/file
 * replacement, pruning. Needs trusted.* xattrs (root) and O_TMPFILE on the
 * filesystem holding $TMPDIR (ext4, xfs, tmpfs); skipped otherwise.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "lib/log.h"
#include "lib/posix.h"
#include "store.h"
#include "uapi/s3cachefs.h"
#include "tap.h"

static char root[] = "/tmp/s3d-test-store-XXXXXX";
static int rootfd = -1;

static char *at(const char *rel)
{
	static char p[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", root, rel);
	return p[i];
}

static bool exists(const char *rel)
{
	struct stat st;

	return !lstat(at(rel), &st);
}

static bool is_dir(const char *rel)
{
	struct stat st;

	return !lstat(at(rel), &st) && S_ISDIR(st.st_mode);
}

static ino_t ino(const char *rel)
{
	struct stat st;

	return lstat(at(rel), &st) ? 0 : st.st_ino;
}

static const char *xattr(const char *rel, const char *name)
{
	static char v[300];
	ssize_t n = lgetxattr(at(rel), name, v, sizeof(v) - 1);

	if (n < 0)
		return NULL;
	v[n] = '\0';
	return v;
}

/* The compact tags of @rel, "ETAG SIZE MTIME", or NULL. */
static const char *meta(const char *rel)
{
	static char out[S3CFS_ETAG_MAX + 64];
	char etag[S3CFS_ETAG_MAX + 1];
	uint8_t v[S3CFS_META_MAX + 1];
	uint64_t size;
	int64_t mtime;
	ssize_t n = lgetxattr(at(rel), S3CFS_XATTR_META, v, sizeof(v));

	if (n < 0 || s3d_meta_decode(v, (size_t)n, etag, &size, &mtime))
		return NULL;
	snprintf(out, sizeof(out), "%s %llu %lld", etag,
		 (unsigned long long)size, (long long)mtime);
	return out;
}

/* Give @rel the tags an older cache wrote (NULL @size: none). */
static void old_form(const char *rel, const char *etag, const char *mtime,
		     const char *size)
{
	removexattr(at(rel), S3CFS_XATTR_META);
	setxattr(at(rel), S3CFS_XATTR_ETAG, etag, strlen(etag), 0);
	setxattr(at(rel), S3CFS_XATTR_MTIME, mtime, strlen(mtime), 0);
	if (size)
		setxattr(at(rel), S3CFS_XATTR_SIZE, size, strlen(size), 0);
	else
		removexattr(at(rel), S3CFS_XATTR_SIZE);
}

static void rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd))
		diag("rm -rf failed");
}

static bool supported(void)
{
	int fd = open(root, O_TMPFILE | O_RDWR, 0600);
	bool ok = fd >= 0 && !fsetxattr(fd, S3CFS_XATTR_ETAG, "x", 1, 0);

	if (fd >= 0)
		close(fd);
	return ok;
}

static void test_format(void)
{
	is_int(s3d_store_check_format(rootfd, "bkt", "pre/"), 0,
	       "format: a new cache is claimed");
	ok(is_dir(".s3cachefs"), "format: .s3cachefs is a directory");
	is_int(s3d_store_check_format(rootfd, "bkt", "pre/"), 0,
	       "format: same bucket and prefix accepted again");
	is_int(s3d_store_check_format(rootfd, "other", "pre/"), -EXDEV,
	       "format: another bucket refused");
	is_int(s3d_store_check_format(rootfd, "bkt", ""), -EXDEV,
	       "format: another prefix refused");
}

static unsigned int mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 01000000 : st.st_mode & 07777;
}

static void put_file(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		diag("writing a file failed");
	if (fd >= 0)
		close(fd);
}

/*
 * Claiming: a directory holding anything but lost+found is refused and
 * left as it was; a symlink on the way to the root, or a root without the
 * mount's token, is not opened.
 */
static void test_claim(void)
{
	char dir[] = "/tmp/s3d-test-claim-XXXXXX";
	uint8_t token[S3CFS_TOKEN_LEN] = "0123456789abcde";
	uint8_t other[S3CFS_TOKEN_LEN] = "edcba9876543210";
	char p[600], q[700];
	int fd = -1;
	struct stat st;

	if (!mkdtemp(dir)) {
		diag("mkdtemp failed");
		return;
	}
	snprintf(p, sizeof(p), "%s/thesis.txt", dir);
	put_file(p, "chapter 1\n");
	snprintf(p, sizeof(p), "%s/projects", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/projects/x", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/projects/x/main.c", dir);
	put_file(p, "int main(void) { return 0; }\n");
	is_int(s3d_store_open_root(dir, NULL, &fd), 0,
	       "claim: a populated directory opens");
	is_int(s3d_store_check_format(fd, "bkt", ""), -ENOTEMPTY,
	       "claim: but is refused as a cache (-ENOTEMPTY)");
	snprintf(p, sizeof(p), "%s/projects/x/main.c", dir);
	snprintf(q, sizeof(q), "%s/thesis.txt", dir);
	ok(!stat(p, &st) && st.st_size == 29 && !stat(q, &st) &&
	   st.st_size == 10, "claim: its files are intact");
	snprintf(p, sizeof(p), "%s/" S3CFS_META_DIR, dir);
	ok(stat(p, &st) && errno == ENOENT,
	   "claim: and nothing was made in it");
	close(fd);
	snprintf(p, sizeof(p), "rm -rf '%s'/* && mkdir '%s/lost+found'", dir,
		 dir);
	if (system(p))
		diag("emptying failed");
	s3d_store_open_root(dir, NULL, &fd);
	is_int(s3d_store_check_format(fd, "bkt", ""), 0,
	       "claim: a directory holding only lost+found is claimed");
	snprintf(p, sizeof(p), "%s/" S3CFS_FORMAT_FILE, dir);
	is_int(mode_of(p), 0600, "claim: the format marker is 0600");
	snprintf(p, sizeof(p), "%s/" S3CFS_META_DIR, dir);
	is_int(mode_of(p), 0700, "claim: .s3cachefs is 0700");
	snprintf(p, sizeof(p), "%s/late.txt", dir);
	put_file(p, "x");
	is_int(s3d_store_check_format(fd, "bkt", ""), 0,
	       "claim: a cache (marked) stays one whatever it holds");
	close(fd);

	/* Tied: the token, and no symlink on the way. */
	if (setxattr(dir, S3CFS_XATTR_TOKEN, token, sizeof(token), 0))
		diag("setxattr of the token failed");
	is_int(s3d_store_open_root(dir, token, &fd), 0,
	       "tie: a root with the mount's token opens");
	close(fd);
	is_int(s3d_store_open_root(dir, other, &fd), -ESTALE,
	       "tie: another token: -ESTALE");
	is_int(s3d_store_open_root(root, token, &fd), -ESTALE,
	       "tie: no token: -ESTALE");
	snprintf(p, sizeof(p), "%s-link", dir);
	if (symlink(dir, p))
		diag("symlink failed");
	is_int(s3d_store_open_root(p, token, &fd), -ELOOP,
	       "tie: a symlink to the root is not followed (-ELOOP)");
	is_int(s3d_store_open_root(p, NULL, &fd), -ELOOP,
	       "tie: not even without a token");
	snprintf(q, sizeof(q), "%s/lost+found", p);
	is_int(s3d_store_open_root(q, NULL, &fd), -ELOOP,
	       "tie: nor a symlink above the root");
	unlink(p);
	rm_rf(dir);
}

static void test_confinement(void)
{
	int fd = -1;

	if (symlink("/etc", at("evil")) || symlink("..", at("up")))
		diag("symlink failed");
	ok(s3d_store_open_dir(rootfd, "evil", false, &fd) < 0,
	   "confinement: a symlinked directory is not followed");
	ok(s3d_store_open_file(rootfd, "evil/passwd", O_RDONLY, &fd) < 0,
	   "confinement: nor a file through it");
	ok(s3d_store_open_dir(rootfd, "up", false, &fd) < 0,
	   "confinement: nor a symlink to ..");
	ok(s3d_store_open_dir(rootfd, "evil/x", true, &fd) < 0 &&
	   !exists("../etc/x"), "confinement: mkdir -p does not go through it");
	unlink(at("evil"));
	unlink(at("up"));
}

static void test_dirs(void)
{
	int fd = -1, sub = -1;

	is_int(s3d_store_open_dir(rootfd, "a/b/c", false, &fd), -ENOENT,
	       "open_dir: missing without create");
	is_int(s3d_store_open_dir(rootfd, "a/b/c", true, &fd), 0,
	       "open_dir: created along the way");
	ok(is_dir("a/b/c"), "open_dir: a/b/c exists");
	is_int(mode_of(at("a/b/c")), 0700, "open_dir: directories made 0700");
	close(fd);
	is_int(s3d_store_open_dir(rootfd, "", false, &fd), 0,
	       "open_dir: the root itself");
	is_int(s3d_store_set_listed(fd, 1234567890), 0, "set_listed");
	is_str(xattr("", S3CFS_XATTR_LISTED), "1234567890",
	       "set_listed: decimal seconds");
	is_int(s3d_store_get_listed(rootfd, ""), 1234567890,
	       "get_listed: what set_listed wrote");
	is_int(s3d_store_get_listed(rootfd, "a/b/c"), 0,
	       "get_listed: never listed: 0");
	is_int(s3d_store_get_listed(rootfd, "no/such"), 0,
	       "get_listed: no such directory: 0");
	if (setxattr(at("a/b"), S3CFS_XATTR_LISTED, "12x", 3, 0))
		diag("setxattr failed");
	is_int(s3d_store_get_listed(rootfd, "a/b"), 0,
	       "get_listed: a bad value: 0");

	if (close(open(at("a/file"), O_CREAT | O_WRONLY, 0644)))
		diag("create failed");
	is_int(s3d_store_open_dir(rootfd, "a/file/x", true, &sub), -ENOTDIR,
	       "open_dir: a file in the way is not replaced");
	s3d_store_open_dir(rootfd, "a", false, &sub);
	is_int(s3d_store_ensure_dir(sub, "file", false), -ENOTDIR,
	       "ensure_dir: a file in the way stays unless told");
	is_int(s3d_store_ensure_dir(sub, "file", true), 1,
	       "ensure_dir: replaces a file (directory wins)");
	ok(is_dir("a/file"), "ensure_dir: it is a directory now");
	is_int(s3d_store_ensure_dir(sub, "file", true), 0,
	       "ensure_dir: existing directory kept");
	close(sub);
	close(fd);
}

static void test_files(void)
{
	struct s3d_meta m1 = { "\"etag-1\"", 3 << 20, 1700000000, NULL };
	struct s3d_meta m2 = { "\"etag-2\"", 5000, 1700000001, NULL };
	char buf[4096] = "cached!", back[16] = "";
	int dfd, fd, old;
	ino_t i1;

	s3d_store_open_dir(rootfd, "f", true, &dfd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m1, NULL, false), 1,
	       "ensure_file: creates");
	is_str(meta("f/obj"), "\"etag-1\" 3145728 1700000000",
	       "ensure_file: ETag (raw, with quotes), size and mtime in one xattr");
	ok(!xattr("f/obj", S3CFS_XATTR_ETAG) && !xattr("f/obj", S3CFS_XATTR_SIZE) &&
	   !xattr("f/obj", S3CFS_XATTR_MTIME),
	   "ensure_file: none of the older form's xattrs");
	fd = open(at("f/obj"), O_RDONLY);
	is_int(lseek(fd, 0, SEEK_END), 3 << 20, "ensure_file: sized");
	ok(lseek(fd, 0, SEEK_DATA) < 0 && errno == ENXIO,
	   "ensure_file: sparse, no data");
	close(fd);
	is_int(mode_of(at("f/obj")), 0600, "ensure_file: files made 0600");
	is_int(s3d_store_open_file(rootfd, "f/obj", O_RDWR | O_DIRECT, &fd), 0,
	       "open_file: O_DIRECT");
	{
		void *al;

		if (posix_memalign(&al, 4096, 4096))
			al = NULL;
		memcpy(al, buf, sizeof(buf));
		is_int(pwrite(fd, al, 4096, 0), 4096, "O_DIRECT write of a block");
		free(al);
	}
	close(fd);
	i1 = ino("f/obj");

	is_int(s3d_store_ensure_file(dfd, "obj", &m1, NULL, false), 0,
	       "ensure_file: same ETag keeps the file");
	ok(ino("f/obj") == i1, "ensure_file: same inode");
	fd = open(at("f/obj"), O_RDONLY);
	ok(read(fd, back, 7) == 7 && !memcmp(back, "cached!", 7),
	   "ensure_file: cached data survives");
	close(fd);

	old = open(at("f/obj"), O_RDONLY);
	is_int(s3d_store_ensure_file(dfd, "obj", &m2, NULL, false), 1,
	       "ensure_file: new ETag makes a new file");
	ok(ino("f/obj") != i1, "ensure_file: different inode");
	ok(meta("f/obj") && !strncmp(meta("f/obj"), "\"etag-2\" ", 9),
	   "ensure_file: new ETag");
	fd = open(at("f/obj"), O_RDONLY);
	ok(lseek(fd, 0, SEEK_END) == 5000 && lseek(fd, 0, SEEK_DATA) < 0,
	   "ensure_file: new size, no data");
	close(fd);
	memset(back, 0, sizeof(back));
	ok(pread(old, back, 7, 0) == 7 && !memcmp(back, "cached!", 7) &&
	   !s3d_store_get_etag(old, back, sizeof(back)) &&
	   !strcmp(back, "\"etag-1\""),
	   "ensure_file: an open old file keeps its data and its ETag");
	close(old);

	mkdir(at("f/dir"), 0755);
	close(open(at("f/dir/inner"), O_CREAT | O_WRONLY, 0644));
	is_int(s3d_store_ensure_file(dfd, "dir", &m1, NULL, false), -EISDIR,
	       "ensure_file: leaves a directory alone unless told");
	is_int(s3d_store_ensure_file(dfd, "dir", &m1, NULL, true), 1,
	       "ensure_file: replaces a directory tree when told");
	ok(!is_dir("f/dir") && exists("f/dir"), "ensure_file: now a file");

	if (symlink("/etc/passwd", at("f/link")))
		diag("symlink failed");
	is_int(s3d_store_ensure_file(dfd, "link", &m1, NULL, false), 1,
	       "ensure_file: a symlink is replaced, not followed");
	ok(!xattr("/etc/passwd", S3CFS_XATTR_META),
	   "ensure_file: nothing written through the link");

	/* A FETCH's renewal after another one renewed it: kept. */
	i1 = ino("f/obj");
	is_int(s3d_store_ensure_file(dfd, "obj", &m2, NULL, false), 0,
	       "ensure_file: a file renewed already is kept");
	ok(ino("f/obj") == i1, "ensure_file: ... the same inode");

	/* A LOOKUP answered from a directory's index (op_lookup.c). */
	is_int(s3d_store_add_new(dfd, "fromindex", &m1), 0,
	       "add_new: a file made for a free name is 0 (success), not 1");
	ok(meta("f/fromindex") && !strncmp(meta("f/fromindex"), "\"etag-1\" ", 9),
	   "add_new: its tags");
	is_int(s3d_store_add_new(dfd, "fromindex", &m2), -EEXIST,
	       "add_new: a taken name is -EEXIST, the file kept");
	close(dfd);
}

/* The object's size is the xattr, not the i_size; older files lack it. */
/* A small object's bytes given with its metadata (LOOKUP's GET). */
static void test_data(void)
{
	static char obj[100 * 1024 + 3], back[sizeof(obj) + 16];
	struct s3d_meta m = { "\"etag-d\"", sizeof(obj), 1700000000, NULL };
	struct s3d_meta e = { "\"etag-e\"", 0, 1700000000, NULL };
	struct s3d_meta m2 = { "\"etag-d2\"", sizeof(obj), 1700000001, NULL };
	int dfd, fd;
	ino_t i1;
	size_t i;

	for (i = 0; i < sizeof(obj); i++)
		obj[i] = (char)(i * 7 + 1);
	s3d_store_open_dir(rootfd, "d", true, &dfd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, obj, false), 2,
	       "data: a new file holds the object");
	fd = open(at("d/obj"), O_RDONLY);
	is_int(lseek(fd, 0, SEEK_END), sizeof(obj),
	       "data: the object's size, not rounded up to the block");
	is_int(lseek(fd, 0, SEEK_HOLE), sizeof(obj),
	       "data: data from 0 to its end (its chunk is present)");
	ok(pread(fd, back, sizeof(back), 0) == sizeof(obj) &&
	   !memcmp(back, obj, sizeof(obj)), "data: its bytes");
	close(fd);
	is_str(meta("d/obj"), "\"etag-d\" 102403 1700000000", "data: its tags");
	i1 = ino("d/obj");
	obj[0] ^= 0xff;
	is_int(s3d_store_ensure_file(dfd, "obj", &m, obj, false), 0,
	       "data: a current file is kept, the bytes given are not written");
	fd = open(at("d/obj"), O_RDONLY);
	ok(ino("d/obj") == i1 && pread(fd, back, 1, 0) == 1 &&
	   back[0] == (char)1, "data: ... its own bytes stay");
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m2, obj, false), 2,
	       "data: a changed object: a new file with the new bytes");
	fd = open(at("d/obj"), O_RDONLY);
	ok(ino("d/obj") != i1 && pread(fd, back, sizeof(back), 0) == sizeof(obj) &&
	   !memcmp(back, obj, sizeof(obj)), "data: ... the new bytes");
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "empty", &e, obj, false), 1,
	       "data: a zero-byte object: an empty file, nothing to write");
	fd = open(at("d/empty"), O_RDONLY);
	is_int(fd >= 0 ? (int)lseek(fd, 0, SEEK_END) : -1, 0,
	       "data: ... of size 0");
	close(fd);
	close(dfd);
}

static void test_sizes(void)
{
	struct s3d_meta m = { "\"etag-s\"", 10000, 1700000000, NULL };
	uint64_t size = 0;
	int dfd, fd;
	ino_t i1;

	s3d_store_open_dir(rootfd, "s", true, &dfd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 1,
	       "sizes: created");
	i1 = ino("s/obj");
	/* A crash between the rounded last piece and the truncate back. */
	is_int(truncate(at("s/obj"), 12288), 0, "sizes: i_size rounded up");
	fd = open(at("s/obj"), O_RDONLY);
	is_int(s3d_store_get_size(fd, &size), 0, "get_size: reads the xattr");
	ok(size == 10000, "get_size: the object's size, not the i_size");
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 0,
	       "sizes: a longer file with the right size xattr is kept");
	ok(ino("s/obj") == i1, "sizes: same inode");

	/* An older cache: no size xattr. */
	old_form("s/obj", "\"etag-s\"", "1700000000", NULL);
	fd = open(at("s/obj"), O_RDONLY);
	is_int(s3d_store_get_size(fd, &size), -ENODATA,
	       "get_size: -ENODATA without the xattr");
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 1,
	       "sizes: an old file whose i_size is not the object's is renewed");
	ok(ino("s/obj") != i1, "sizes: new inode");
	i1 = ino("s/obj");
	old_form("s/obj", "\"etag-s\"", "1700000000", NULL);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 0,
	       "sizes: an old file of the right i_size is kept");
	ok(ino("s/obj") == i1, "sizes: same inode");
	is_str(meta("s/obj"), "\"etag-s\" 10000 1700000000",
	       "sizes: and gets its tags, size included, in the compact form");

	old_form("s/obj", "\"etag-s\"", "1700000000", "12x");
	fd = open(at("s/obj"), O_RDONLY);
	is_int(s3d_store_get_size(fd, &size), -EINVAL,
	       "get_size: -EINVAL for a value that is not a number");
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 1,
	       "sizes: a file with a bad size xattr is renewed");
	close(dfd);
}

/* The compact form: encoding, decoding, older files rewritten. */
static void test_meta(void)
{
	static const char md5[] = "\"0123456789abcdef0123456789abcdef\"";
	static const char mp[] = "\"0123456789abcdef0123456789abcdef-1234\"";
	struct s3d_meta m = { md5, 1ULL << 40, -5, NULL };
	char etag[S3CFS_ETAG_MAX + 1], long_etag[S3CFS_ETAG_MAX + 2];
	uint8_t v[S3CFS_META_MAX];
	uint64_t size;
	int64_t mtime;
	int n, dfd, fd;
	ino_t i1;

	n = s3d_meta_encode(&m, false, v);
	is_int(n, S3CFS_META_OFF_ETAG + 16,
	       "meta: a quoted MD5 ETag takes 16 bytes");
	ok(!s3d_meta_decode(v, n, etag, &size, &mtime) && !strcmp(etag, md5) &&
	   size == 1ULL << 40 && mtime == -5, "meta: and decodes back");
	m.etag = mp;
	n = s3d_meta_encode(&m, false, v);
	is_int(n, S3CFS_META_OFF_ETAG + 16 + 5, "meta: a multipart tail follows");
	ok(!s3d_meta_decode(v, n, etag, &size, &mtime) && !strcmp(etag, mp),
	   "meta: multipart decodes back");
	n = s3d_meta_encode(&m, true, v);
	ok(n == (int)(S3CFS_META_OFF_ETAG + strlen(mp)) &&
	   !s3d_meta_decode(v, n, etag, &size, &mtime) && !strcmp(etag, mp),
	   "meta: raw form of the same ETag decodes the same");
	m.etag = "\"0123456789ABCDEF0123456789abcdef\"";
	n = s3d_meta_encode(&m, false, v);
	ok(n == (int)(S3CFS_META_OFF_ETAG + strlen(m.etag)) &&
	   !s3d_meta_decode(v, n, etag, &size, &mtime) && !strcmp(etag, m.etag),
	   "meta: other ETags (upper case hex) are kept as text");
	m.etag = "";
	is_int(s3d_meta_encode(&m, false, v), -EINVAL, "meta: no ETag refused");
	memset(long_etag, 'e', sizeof(long_etag) - 1);
	long_etag[sizeof(long_etag) - 1] = '\0';
	m.etag = long_etag;
	is_int(s3d_meta_encode(&m, false, v), -EINVAL,
	       "meta: an ETag over S3CFS_ETAG_MAX refused");
	m.etag = md5;
	n = s3d_meta_encode(&m, false, v);
	is_int(s3d_meta_decode(v, S3CFS_META_OFF_ETAG - 1, etag, &size, &mtime),
	       -EINVAL, "meta: truncated header refused");
	is_int(s3d_meta_decode(v, S3CFS_META_OFF_ETAG + 15, etag, &size, &mtime),
	       -EINVAL, "meta: truncated MD5 refused");
	v[0] = 2;
	is_int(s3d_meta_decode(v, n, etag, &size, &mtime), -EINVAL,
	       "meta: another version refused");
	m.etag = "\"ab\"";
	n = s3d_meta_encode(&m, false, v);
	v[S3CFS_META_OFF_ETAG + 1] = 0;
	is_int(s3d_meta_decode(v, n, etag, &size, &mtime), -EINVAL,
	       "meta: a NUL inside the ETag refused");

	/* An older file whose tags S3 still agrees with is rewritten. */
	m = (struct s3d_meta){ md5, 4096, 1700000000, NULL };
	s3d_store_open_dir(rootfd, "m", true, &dfd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 1, "meta: created");
	i1 = ino("m/obj");
	/* Its own ETag text without quotes: kept as it is (s3d_etag_eq). */
	old_form("m/obj", "0123456789abcdef0123456789abcdef", "1600000000",
		 "4096");
	fd = open(at("m/obj"), O_RDONLY);
	ok(!s3d_store_get_etag(fd, etag, sizeof(etag)) &&
	   !strcmp(etag, "0123456789abcdef0123456789abcdef") &&
	   !s3d_store_get_size(fd, &size) && size == 4096,
	   "meta: the older form is read");
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 0,
	       "meta: an older file S3 agrees with is kept");
	ok(ino("m/obj") == i1, "meta: same inode");
	is_str(meta("m/obj"), "0123456789abcdef0123456789abcdef 4096 1600000000",
	       "meta: rewritten compactly with its own ETag and mtime");
	ok(!xattr("m/obj", S3CFS_XATTR_ETAG) && !xattr("m/obj", S3CFS_XATTR_SIZE) &&
	   !xattr("m/obj", S3CFS_XATTR_MTIME), "meta: the older xattrs are gone");
	setxattr(at("m/obj"), S3CFS_XATTR_META, "\x01", 1, 0);
	is_int(s3d_store_ensure_file(dfd, "obj", &m, NULL, false), 1,
	       "meta: a file with a bad value is renewed");
	close(dfd);
}

static bool keep_listed(const char *name, void *arg)
{
	const char *const *names = arg;

	for (; *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

static void test_prune(void)
{
	static const char *const listed[] = { "keep", "keepdir", NULL };
	int dfd;
	DIR *d;
	struct dirent *de;
	int n = 0;

	s3d_store_open_dir(rootfd, "p", true, &dfd);
	close(open(at("p/keep"), O_CREAT | O_WRONLY, 0644));
	close(open(at("p/gone"), O_CREAT | O_WRONLY, 0644));
	close(open(at("p/.s3cfs.123.4"), O_CREAT | O_WRONLY, 0644));
	mkdir(at("p/keepdir"), 0755);
	mkdir(at("p/gonedir"), 0755);
	mkdir(at("p/gonedir/deeper"), 0755);
	for (int i = 0; i < 300; i++) {
		char n2[64];

		snprintf(n2, sizeof(n2), "p/gonedir/deeper/f%d", i);
		close(open(at(n2), O_CREAT | O_WRONLY, 0644));
	}
	if (symlink("/etc", at("p/gonelink")))
		diag("symlink failed");
	is_int(s3d_store_prune(dfd, false, keep_listed, (void *)listed), 0,
	       "prune: runs");
	ok(exists("p/keep") && is_dir("p/keepdir"), "prune: listed entries kept");
	ok(!exists("p/gone") && !exists("p/gonedir") && !exists("p/gonelink"),
	   "prune: unlisted file, tree and symlink removed");
	ok(!exists("p/.s3cfs.123.4"), "prune: stale temporary removed");
	ok(access("/etc/passwd", F_OK) == 0,
	   "prune: the symlink target is untouched");
	d = opendir(at("p"));
	while ((de = readdir(d)))
		n++;
	closedir(d);
	is_int(n, 4, "prune: exactly . .. keep keepdir remain");
	close(dfd);

	s3d_store_open_dir(rootfd, "", false, &dfd);
	mkdir(at("lost+found"), 0700);
	close(open(at("lost+found/#1234"), O_CREAT | O_WRONLY, 0644));
	is_int(s3d_store_prune(dfd, true, keep_listed, (void *)listed), 0,
	       "prune: at the root");
	ok(is_dir(".s3cachefs") && exists(".s3cachefs/format"),
	   "prune: .s3cachefs survives at the root");
	ok(is_dir("lost+found") && exists("lost+found/#1234"),
	   "prune: lost+found and what it holds survive at the root");
	ok(!exists("a") && !exists("f"), "prune: the rest of the root went");
	close(dfd);
}

/* Make @rel a LOCAL file (the kernel's tag: version 2, S3CFS_META_LOCAL). */
static void make_local(const char *rel, const char *data)
{
	uint8_t v[S3CFS_META_OFF_ETAG] = { S3CFS_META_VERSION_LOCAL,
					   S3CFS_META_LOCAL };
	int fd = open(at(rel), O_CREAT | O_WRONLY | O_TRUNC, 0600);

	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data) ||
	    fsetxattr(fd, S3CFS_XATTR_META, v, sizeof(v), 0))
		diag("making a LOCAL file failed");
	if (fd >= 0)
		close(fd);
}

/* Files written on this node (LOCAL): nothing the daemon does removes them. */
static void test_local(void)
{
	static const char *const none[] = { NULL };
	struct s3d_meta m = { "\"0123456789abcdef0123456789abcdef\"", 5, 1700000000, NULL };
	int dfd, fd;

	s3d_store_open_dir(rootfd, "loc/sub", true, &dfd);
	close(dfd);
	s3d_store_open_dir(rootfd, "loc", false, &dfd);
	make_local("loc/mine", "ours");
	make_local("loc/sub/deep", "deep");
	close(open(at("loc/sub/clean"), O_CREAT | O_WRONLY, 0644));
	fd = open(at("loc/mine"), O_RDONLY);
	ok(fd >= 0 && s3d_store_is_local(fd), "local: the kernel's tag is read as LOCAL");
	if (fd >= 0)
		close(fd);
	fd = open(at("loc/sub/clean"), O_RDONLY);
	ok(fd >= 0 && !s3d_store_is_local(fd), "local: an untagged file is not");
	if (fd >= 0)
		close(fd);
	is_int(s3d_store_ensure_file(dfd, "mine", &m, NULL, true), 0,
	       "local: ensure_file of another version keeps it");
	ok(!meta("loc/mine") && exists("loc/mine"),
	   "local: its tag is untouched (not a copy's)");
	is_int(s3d_store_ensure_dir(dfd, "mine", true), -EEXIST,
	       "local: a common prefix of its name does not replace it");
	is_int(s3d_store_remove(dfd, "mine"), 0, "local: remove (a negative LOOKUP)");
	ok(exists("loc/mine"), "local: ... leaves it");
	is_int(s3d_store_prune(dfd, false, keep_listed, (void *)none), 0,
	       "local: prune with nothing listed");
	ok(exists("loc/mine") && exists("loc/sub/deep") && !exists("loc/sub/clean"),
	   "local: prune keeps LOCAL files, and the directory holding one, and removes the rest");
	close(dfd);

	/* Two levels down: the directories on the way are kept too. */
	s3d_store_open_dir(rootfd, "loc2/a/b", true, &dfd);
	close(dfd);
	make_local("loc2/a/b/new", "new");
	close(open(at("loc2/a/old"), O_CREAT | O_WRONLY, 0644));
	s3d_store_open_dir(rootfd, "loc2", false, &dfd);
	is_int(s3d_store_prune(dfd, false, keep_listed, (void *)none), 0,
	       "local: prune of a tree with a LOCAL file two levels down ends");
	ok(exists("loc2/a/b/new") && !exists("loc2/a/old"),
	   "local: ... keeps it and removes the rest");
	is_int(s3d_store_remove(dfd, "a"), 0, "local: remove of that tree");
	ok(exists("loc2/a/b/new"), "local: ... keeps it");
	is_int(s3d_store_ensure_file(dfd, "a", &m, NULL, true), -EEXIST,
	       "local: an object of the tree's name does not replace it");
	ok(exists("loc2/a/b/new"), "local: ... which keeps the file");
	close(dfd);
}

/*
 * The kernel's flock (kmod/local.c): while another open file description
 * holds LOCK_SH on a cache file (the kernel making it LOCAL, or renaming
 * over it), nothing of the daemon replaces, removes or fills it; a LOCAL
 * file is never filled; a file of another version is not filled.
 */
static void test_held(void)
{
	static const char *const none[] = { NULL };
	struct s3d_meta m1 = { "\"0123456789abcdef0123456789abcdef\"", 5, 1700000000, NULL };
	struct s3d_meta m2 = { "\"fedcba9876543210fedcba9876543210\"", 7, 1700000001, NULL };
	int dfd, held, fd;
	ino_t before;

	s3d_store_open_dir(rootfd, "held", true, &dfd);
	is_int(s3d_store_ensure_file(dfd, "f", &m1, NULL, false), 1,
	       "held: a copy of version 1");
	before = ino("held/f");
	held = open(at("held/f"), O_RDONLY);
	ok(held >= 0 && !flock(held, LOCK_SH | LOCK_NB), "held: the kernel's LOCK_SH taken");
	is_int(s3d_store_ensure_file(dfd, "f", &m2, NULL, false), 0,
	       "held: ensure_file of version 2 keeps the held file");
	ok(ino("held/f") == before, "held: ... the same file at the name");
	is_int(s3d_store_remove(dfd, "f"), 0, "held: remove (a negative LOOKUP)");
	ok(exists("held/f"), "held: ... leaves it");
	is_int(s3d_store_prune(dfd, false, keep_listed, (void *)none), 0,
	       "held: prune with nothing listed");
	ok(exists("held/f"), "held: ... leaves it");
	fd = open(at("held/f"), O_RDWR);
	is_int(s3d_store_lock_fill(fd, m1.etag), -EAGAIN,
	       "held: a fetched piece is not written into it (EAGAIN)");
	close(held);
	is_int(s3d_store_lock_fill(fd, m2.etag), -ESTALE,
	       "released: a piece of another version is not written (ESTALE)");
	is_int(s3d_store_lock_fill(fd, m1.etag), 0,
	       "released: a piece of its version is (lock taken)");
	s3d_store_unlock_fill(fd);
	close(fd);
	is_int(s3d_store_ensure_file(dfd, "f", &m2, NULL, false), 1,
	       "released: ensure_file of version 2 replaces it");
	ok(ino("held/f") != before, "released: ... a new file at the name");
	make_local("held/l", "ours");
	fd = open(at("held/l"), O_RDWR);
	is_int(s3d_store_lock_fill(fd, ""), -EAGAIN,
	       "local: a fetched piece is never written into a LOCAL file");
	close(fd);
	close(dfd);
}

/* The mtime as the record of the last check: set by a LOOKUP, kept by removals. */
static void test_checked(void)
{
	const struct timespec old[2] = { { .tv_sec = 1000 }, { .tv_sec = 2000 } };
	struct stat st;
	int dfd = -1;

	s3d_store_open_dir(rootfd, "chk/sub", true, &dfd);
	close(dfd);
	s3d_store_open_dir(rootfd, "chk", false, &dfd);
	if (close(open(at("chk/f"), O_CREAT | O_WRONLY, 0644)) ||
	    utimensat(AT_FDCWD, at("chk/f"), old, 0) ||
	    utimensat(AT_FDCWD, at("chk/sub"), old, 0) ||
	    utimensat(AT_FDCWD, at("chk"), old, 0))
		diag("setting up chk/ failed");
	is_int(s3d_store_set_checked(dfd, "f"), 0, "set_checked: a file");
	ok(!stat(at("chk/f"), &st) && st.st_mtime > 2000 && st.st_atime == 1000,
	   "set_checked: its mtime is now, its atime (the LRU clock) kept");
	is_int(s3d_store_set_checked(dfd, "sub"), 0, "set_checked: a directory");
	ok(!stat(at("chk/sub"), &st) && st.st_mtime > 2000,
	   "set_checked: its mtime is now");
	is_int(s3d_store_set_checked(dfd, "nope"), -ENOENT, "set_checked: no such entry");
	is_int(s3d_store_remove(dfd, "f"), 0, "remove: a file");
	is_int(s3d_store_remove(dfd, "sub"), 0, "remove: a directory");
	ok(!stat(at("chk"), &st) && st.st_mtime == 2000,
	   "remove: the parent's mtime (its last check) kept");
	if (close(open(at("chk/g"), O_CREAT | O_WRONLY, 0644)) ||
	    utimensat(AT_FDCWD, at("chk"), old, 0))
		diag("setting up chk/g failed");
	is_int(s3d_store_prune(dfd, false, keep_listed, (void *)(const char *[]){ NULL }), 0,
	       "prune: chk/g not listed");
	ok(!exists("chk/g") && !stat(at("chk"), &st) && st.st_mtime == 2000,
	   "prune: gone, the directory's mtime kept");
	close(dfd);
}

/* The S3CFS_XATTR_POSIX of @rel decoded; -errno without a usable one. */
static int posix_of(const char *rel, struct s3cfs_posix *p)
{
	uint8_t v[64];
	ssize_t n = getxattr(at(rel), S3CFS_XATTR_POSIX, v, sizeof(v));

	return n < 0 ? -errno : s3d_posix_decode(v, (size_t)n, p);
}

/*
 * A LOOKUP on a posix_meta mount (@m->posix): a new file has the object's
 * attributes before its link, a kept one gets them in place (same inode),
 * a held or LOCAL one never; without @m->posix nothing is written.
 */
static void test_posix(void)
{
	struct s3cfs_posix a = { .flags = S3CFS_POSIX_ALL, .mode = 0100640,
				 .uid = 7, .gid = 8, .mtime = 1700000000 };
	struct s3cfs_posix b = { .flags = S3CFS_POSIX_MODE, .mode = 0100600 };
	struct s3cfs_posix none = { 0 }, got;
	struct s3d_meta m = { "\"0123456789abcdef0123456789abcdef\"", 5,
			      1700000000, &a };
	struct s3d_meta plain = m;
	int dfd, held;
	ino_t before;

	plain.posix = NULL;
	s3d_store_open_dir(rootfd, "px", true, &dfd);
	is_int(s3d_store_ensure_file(dfd, "f", &m, NULL, false), 1,
	       "posix: a new file");
	ok(!posix_of("px/f", &got) && got.flags == S3CFS_POSIX_ALL &&
	   got.mode == 0100640 && got.uid == 7 && got.gid == 8 &&
	   got.mtime == 1700000000, "posix: ... carries the attributes");
	before = ino("px/f");
	m.posix = &b;
	is_int(s3d_store_ensure_file(dfd, "f", &m, NULL, false), 0,
	       "posix: the same version, other attributes: kept");
	ok(ino("px/f") == before && !posix_of("px/f", &got) &&
	   got.flags == S3CFS_POSIX_MODE && got.mode == 0100600 && !got.uid,
	   "posix: ... the same file, its attributes replaced in place");
	is_int(s3d_store_ensure_file(dfd, "f", &plain, NULL, false), 0,
	       "posix: without posix_meta: kept");
	ok(!posix_of("px/f", &got) && got.mode == 0100600,
	   "posix: ... and its attributes left alone");
	held = open(at("px/f"), O_RDONLY);
	ok(held >= 0 && !flock(held, LOCK_SH | LOCK_NB), "posix: the kernel's LOCK_SH taken");
	m.posix = &none;
	is_int(s3d_store_ensure_file(dfd, "f", &m, NULL, false), 0,
	       "posix: a held file: kept");
	ok(!posix_of("px/f", &got) && got.mode == 0100600,
	   "posix: ... its attributes not touched under the kernel's lock");
	if (held >= 0)
		close(held);
	is_int(s3d_store_ensure_file(dfd, "f", &m, NULL, false), 0,
	       "posix: released: an object without attributes");
	ok(!posix_of("px/f", &got) && got.flags == 0, "posix: ... flags 0");
	make_local("px/loc", "ours");
	is_int(s3d_store_ensure_file(dfd, "loc", &m, NULL, false), 0,
	       "posix: a LOCAL file: kept");
	is_int(posix_of("px/loc", &got), -ENODATA, "posix: ... never gets attributes");
	is_int(s3d_store_ensure_file(dfd, "g", &plain, NULL, false), 1,
	       "posix: a new file without posix_meta");
	is_int(posix_of("px/g", &got), -ENODATA, "posix: ... has none");
	close(dfd);
}

int main(void)
{
	s3d_log_level = -1;
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	if (!supported()) {
		ok(1, "# SKIP store tests: no O_TMPFILE or trusted.* xattrs here (need root)");
		rm_rf(root);
		return tap_done();
	}
	if (s3d_store_open_root(root, NULL, &rootfd)) {
		perror(root);
		return 1;
	}
	test_claim();
	test_format();
	test_confinement();
	test_dirs();
	test_files();
	test_data();
	test_sizes();
	test_meta();
	test_prune();
	test_checked();
	test_local();
	test_held();
	test_posix();
	close(rootfd);
	rm_rf(root);
	return tap_done();
}
