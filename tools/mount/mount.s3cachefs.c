// SPDX-License-Identifier: GPL-2.0
/*
 * mount.s3cachefs - the helper mount(8) runs for -t s3cachefs
 *
 *   mount.s3cachefs SOURCE DIR [-sfnv] [-N NS] [-o OPTIONS] [-t TYPE]
 *
 * It mounts with the new mount API (fsopen, fsconfig, fsmount,
 * move_mount) rather than mount(2) because the module explains a refusal
 * in the fs_context log, which only the fs_context fd can read: with
 * mount(2) that text goes to dmesg and the user gets mount(8)'s generic
 * "wrong fs type, bad option" line (util-linux 2.38).
 *
 * Exit status as mount(8)'s: 0, 1 (usage), 2 (system error), 32 (the
 * mount failed).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mountopt.h"

#define FSTYPE		"s3cachefs"
#define UNIT		"s3cachefsd.service"
/* How long a started daemon has to register (its unit's start included). */
#define DAEMON_WAIT_MS	20000

enum { EX_USAGE = 1, EX_SYSERR = 2, EX_FAIL = 32 };

static bool verbose, sloppy;
static const char *prog = "mount." FSTYPE;

/*
 * Print what the kernel logged on @fd ("e|w|i TEXT" per read, until
 * ENODATA). Return: whether it said anything.
 */
static bool print_fs_log(int fd)
{
	char buf[8192];
	bool any = false;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			break;
		buf[n] = '\0';
		if (buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		/* "e " errors and "i " notes as they are; "w " warnings marked. */
		if (n > 2 && buf[1] == ' ')
			fprintf(stderr, "%s: %s%s\n", prog,
				buf[0] == 'w' ? "warning: " : "", buf + 2);
		else
			fprintf(stderr, "%s: %s\n", prog, buf);
		any = true;
	}
	return any;
}

/*
 * A step that failed: the kernel's own words if it left any, else
 * strerror. Return: EX_FAIL.
 */
static int fail(int fd, const char *what, int err)
{
	if (fd < 0 || !print_fs_log(fd))
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
	return EX_FAIL;
}

static bool systemd_running(void)
{
	struct stat st;

	return !lstat("/run/systemd/system", &st) && S_ISDIR(st.st_mode);
}

/* systemctl start UNIT; Return: whether it succeeded. */
static bool start_daemon(void)
{
	int status;
	pid_t pid;

	fprintf(stderr, "%s: s3cachefsd is not running: starting %s\n", prog, UNIT);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		/* Not by PATH: mount(8) may run us set-user-ID for a "user" mount. */
		execl("/bin/systemctl", "systemctl", "start", UNIT, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "%s: systemctl start %s failed (journalctl -u %s)\n",
			prog, UNIT, UNIT);
		return false;
	}
	return true;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The fsconfig() calls for @o's parameters on @fd. Return: 0 or EX_*. */
static int set_params(int fd, const struct s3m_opts *o)
{
	size_t i;

	for (i = 0; i < o->nparams; i++) {
		const struct s3m_param *p = &o->params[i];
		int r, err;

		if (verbose)
			fprintf(stderr, "%s: fsconfig %s%s%s\n", prog, p->key,
				p->value ? "=" : "", p->value ? p->value : "");
		if (p->value)
			r = fsconfig(fd, FSCONFIG_SET_STRING, p->key, p->value, 0);
		else
			r = fsconfig(fd, FSCONFIG_SET_FLAG, p->key, NULL, 0);
		if (!r)
			continue;
		err = errno;
		/* -s: an option this module does not know is left out. */
		if (sloppy && err == EINVAL) {
			char buf[512];
			ssize_t n = read(fd, buf, sizeof(buf) - 1);

			if (n > 0) {
				buf[n] = '\0';
				if (strstr(buf, "Unknown parameter")) {
					if (verbose)
						fprintf(stderr, "%s: -s: ignoring %s\n",
							prog, p->key);
					continue;
				}
				/* Not ours to skip: the module's words, as fail() gives. */
				fprintf(stderr, "%s: %s\n", prog,
					buf[1] == ' ' ? buf + 2 : buf);
				print_fs_log(fd);
				return EX_FAIL;
			}
		}
		return fail(fd, p->key, err);
	}
	return 0;
}

/*
 * One attempt at a new mount. Return: 0, EX_* or -ENOTCONN when no daemon
 * is registered (*@msgfd keeps the context for its message).
 */
static int try_mount(const char *source, const char *dir,
		     const struct s3m_opts *o, int *msgfd)
{
	int fd, mfd, ret;

	*msgfd = -1;
	fd = fsopen(FSTYPE, FSOPEN_CLOEXEC);
	if (fd < 0) {
		if (errno == ENODEV) {
			fprintf(stderr,
				"%s: the %s kernel module is not loaded and could not be loaded:\n"
				"%s: install the s3cachefs-dkms package (see `dkms status`) or\n"
				"%s: load it by hand (modprobe %s, or insmod s3cachefs.ko)\n",
				prog, FSTYPE, prog, prog, FSTYPE);
			return EX_FAIL;
		}
		if (errno == ENOSYS) {
			fprintf(stderr, "%s: this kernel has no fsopen() (5.2 or later needed)\n",
				prog);
			return EX_SYSERR;
		}
		return fail(-1, "fsopen", errno);
	}
	ret = fsconfig(fd, FSCONFIG_SET_STRING, "source", source, 0);
	if (ret) {
		ret = fail(fd, "source", errno);
		goto out_close;
	}
	ret = set_params(fd, o);
	if (ret)
		goto out_close;
	if (fsconfig(fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		if (errno == ENOTCONN) {
			*msgfd = fd;
			return -ENOTCONN;
		}
		ret = fail(fd, "creating the mount", errno);
		goto out_close;
	}
	print_fs_log(fd);	/* warnings of a mount that works */
	mfd = fsmount(fd, FSMOUNT_CLOEXEC, o->attr_set);
	if (mfd < 0) {
		ret = fail(fd, "fsmount", errno);
		goto out_close;
	}
	if (move_mount(mfd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH)) {
		fprintf(stderr, "%s: mounting on %s: %s\n", prog, dir,
			strerror(errno));
		ret = EX_FAIL;
	}
	close(mfd);
out_close:
	close(fd);
	return ret;
}

static int do_mount(const char *source, const char *dir,
		    const struct s3m_opts *o)
{
	unsigned int waited = 0, step = 250;
	bool started = false;
	int ret, fd;

	for (;;) {
		ret = try_mount(source, dir, o, &fd);
		if (ret != -ENOTCONN)
			return ret;
		/* First "s3cachefsd is not running", in the module's words. */
		if (!started || waited >= DAEMON_WAIT_MS)
			print_fs_log(fd);
		close(fd);
		if (started && waited >= DAEMON_WAIT_MS) {
			fprintf(stderr, "%s: %s started but s3cachefsd did not register within %u s (journalctl -u %s)\n",
				prog, UNIT, DAEMON_WAIT_MS / 1000, UNIT);
			return EX_FAIL;
		}
		if (!started) {
			if (!systemd_running() || !start_daemon()) {
				fprintf(stderr, "%s: start s3cachefsd first (systemctl start %s)\n",
					prog, UNIT);
				return EX_FAIL;
			}
			started = true;
		}
		sleep_ms(step);
		waited += step;
	}
}

/* -o remount: the module's knobs through fspick(), the mount's flags. */
static int do_remount(const char *dir, const struct s3m_opts *o)
{
	struct mount_attr attr = {
		.attr_set = o->attr_set,
		.attr_clr = o->attr_clr,
	};
	int fd, ret;

	fd = fspick(AT_FDCWD, dir, FSPICK_CLOEXEC);
	if (fd < 0)
		return fail(-1, dir, errno);
	ret = set_params(fd, o);
	if (!ret && fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0))
		ret = fail(fd, "remount", errno);
	close(fd);
	if (ret)
		return ret;
	if (o->atime_given)
		attr.attr_clr |= MOUNT_ATTR__ATIME;
	if ((attr.attr_set || attr.attr_clr) &&
	    mount_setattr(AT_FDCWD, dir, 0, &attr, sizeof(attr)))
		return fail(-1, "mount flags", errno);
	return 0;
}

/* -N: the mount namespace to mount in (a path, or a process id). */
static int enter_ns(const char *ns)
{
	char path[64];
	int fd;

	if (strspn(ns, "0123456789") == strlen(ns)) {
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", ns);
		ns = path;
	}
	fd = open(ns, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNS)) {
		fprintf(stderr, "%s: namespace %s: %s\n", prog, ns, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EX_SYSERR;
	}
	close(fd);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s SOURCE DIR [-sfnv] [-N NS] [-o OPTIONS] [-t TYPE]\n"
"  SOURCE   BUCKET[:PREFIX] or s3://BUCKET[/PREFIX]\n"
"  -o OPTS  the module's mount options (s3cachefs(5)) and the VFS's\n"
"           (ro, nosuid, noatime, ...); mount(8)'s own are ignored\n"
"  -s       ignore options the module does not know\n"
"  -f       check the arguments, mount nothing\n"
"  -n       accepted (no mtab is written)\n"
"  -v       print each step\n"
"  -N NS    mount in this mount namespace (path or process id)\n"
"  -t TYPE  s3cachefs\n"
"  -V       print the version\n", prog);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *optstr = NULL, *ns = NULL, *type = NULL;
	char err[256], *bucket = NULL, *prefix = NULL;
	bool fake = false;
	struct s3m_opts o;
	int c, ret;

	while ((c = getopt_long(argc, argv, "sfnvo:t:N:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			sloppy = true;
			break;
		case 'f':
			fake = true;
			break;
		case 'n':	/* no mtab is written anyway */
			break;
		case 'v':
			verbose = true;
			break;
		case 'o':
			optstr = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case 'N':
			ns = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s %s\n", prog, S3M_VERSION);
			return 0;
		default:
			usage(stderr);
			return EX_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return EX_USAGE;
	}
	/* "s3cachefs" or a subtype of it ("s3cachefs.x"), nothing else. */
	if (type && strcmp(type, FSTYPE) && strncmp(type, FSTYPE ".", sizeof(FSTYPE))) {
		fprintf(stderr, "%s: cannot mount type %s\n", prog, type);
		return EX_USAGE;
	}
	ret = s3m_parse_opts(optstr, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, ret == -ENOMEM ? strerror(ENOMEM) : err);
		ret = ret == -ENOMEM ? EX_SYSERR : EX_USAGE;
		goto out;
	}
	if (!o.remount) {
		ret = s3m_parse_source(argv[optind], &bucket, &prefix, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "%s: %s: %s\n", prog, argv[optind],
				ret == -ENOMEM ? strerror(ENOMEM) : err);
			ret = ret == -ENOMEM ? EX_SYSERR : EX_USAGE;
			goto out;
		}
	}
	if (verbose) {
		if (!o.remount)
			fprintf(stderr, "%s: bucket %s, prefix '%s'\n", prog, bucket, prefix);
		if (o.dropped)
			fprintf(stderr, "%s: not for the kernel: %s\n", prog, o.dropped);
	}
	ret = 0;
	if (fake)
		goto out;
	if (ns) {
		ret = enter_ns(ns);
		if (ret)
			goto out;
	}
	if (o.remount)
		ret = do_remount(argv[optind + 1], &o);
	else
		ret = do_mount(argv[optind], argv[optind + 1], &o);
out:
	free(bucket);
	free(prefix);
	s3m_free_opts(&o);
	return ret;
}
