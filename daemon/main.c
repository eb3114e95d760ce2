// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefsd: the fill daemon of s3cachefs.
 *
 * Threading model
 * ---------------
 * One thread runs everything, driven by one epoll loop (lib/loop.c) that
 * watches the generic netlink socket, a signalfd and every libcurl socket,
 * with libcurl's timers and our retry back-offs folded into the epoll
 * timeout. Kernel requests become operations (ops.c, op_*.c) that own
 * their S3 transfers; a transfer progresses only through
 * curl_multi_socket_action(), so a slow or dead S3 connection never holds
 * up anything else, and many requests are in flight at once (up to
 * --max-inflight, FIFO beyond).
 *
 * Why one thread is enough: the daemon's work is waiting on S3 (tens of
 * milliseconds per request, far more for big ranges), and that waiting is
 * all asynchronous. What runs synchronously on the loop is local work:
 * netlink sends to the kernel, XML parsing of listing pages, metadata
 * calls on the cache directory, and O_DIRECT writes of at most one piece
 * (8 MiB) at a time to NVMe, all of which take microseconds to a few
 * milliseconds. With a single thread no state needs a lock, ordering is
 * easy to reason about (an operation's completion can never race its own
 * setup), and the lower-file rules (temp name, rename, never retag in
 * place) need no cross-thread coordination. The one bulk job, applying a
 * listing page of up to 1000 entries, is cut into slices run from a timer
 * so that FETCHes are served in between. libcurl may start short-lived
 * resolver threads internally; they touch none of our state, and signals
 * are blocked before any thread exists so only the signalfd sees them.
 * If NVMe writes ever show up as loop latency, they move to io_uring (or a
 * writer thread fed through an eventfd) without changing this structure.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>

#include "ctx.h"
#include "evict.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/retry.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "metrics.h"
#include "mount.h"
#include "netlink.h"
#include "ops.h"
#include "selftest.h"
#include "uapi/s3cachefs.h"

struct options {
	struct s3d_conf cli;	/* what the flags set: laid over [global] */
	const char *config;	/* --config, or NULL */
	bool check_config;
	bool daemonize;
	bool selftest;
};

/* The flags, kept to lay them over the file again at each reload. */
static struct options opts;
/* The configuration in force (the file's with the flags over it). */
static struct s3d_conf *conf;
static struct s3d_watch sigw;
static int sigfd = -1;

enum {
	OPT_ENDPOINT = 256,
	OPT_REGION,
	OPT_PATH_STYLE,
	OPT_VIRTUAL_HOST,
	OPT_MAX_INFLIGHT,
	OPT_ANONYMOUS,
	OPT_ALLOW_HTTP,
	OPT_CA_BUNDLE,
	OPT_SELFTEST,
	OPT_CACHE_LIMIT,
	OPT_MIN_FREE,
	OPT_METRICS,
	OPT_CONFIG,
	OPT_CHECK_CONFIG,
	OPT_STALL_TIMEOUT,
	OPT_TUNE,	/* S3D_TUNE_NR options from here */
};

static const struct option long_opts[] = {
	{ "endpoint", required_argument, NULL, OPT_ENDPOINT },
	{ "region", required_argument, NULL, OPT_REGION },
	{ "path-style", no_argument, NULL, OPT_PATH_STYLE },
	{ "virtual-host", no_argument, NULL, OPT_VIRTUAL_HOST },
	{ "max-inflight", required_argument, NULL, OPT_MAX_INFLIGHT },
	{ "anonymous", no_argument, NULL, OPT_ANONYMOUS },
	{ "allow-http", no_argument, NULL, OPT_ALLOW_HTTP },
	{ "ca-bundle", required_argument, NULL, OPT_CA_BUNDLE },
	{ "foreground", no_argument, NULL, 'f' },
	{ "daemonize", no_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "selftest", no_argument, NULL, OPT_SELFTEST },
	{ "cache-limit", required_argument, NULL, OPT_CACHE_LIMIT },
	{ "min-free", required_argument, NULL, OPT_MIN_FREE },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT },
	{ "retry-attempts", required_argument, NULL, OPT_TUNE + S3D_TUNE_RETRY_ATTEMPTS },
	{ "retry-max-time", required_argument, NULL, OPT_TUNE + S3D_TUNE_RETRY_MAX_TIME },
	{ "retry-base-ms", required_argument, NULL, OPT_TUNE + S3D_TUNE_RETRY_BASE_MS },
	{ "retry-max-delay-ms", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_RETRY_MAX_DELAY_MS },
	{ "retry-budget", required_argument, NULL, OPT_TUNE + S3D_TUNE_RETRY_BUDGET },
	{ "min-rate", required_argument, NULL, OPT_TUNE + S3D_TUNE_MIN_RATE },
	{ "evict-timeout", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_EVICT_TIMEOUT },
	{ "lookup-get-max", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_LOOKUP_GET_MAX },
	{ "list-ahead", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_LIST_AHEAD },
	{ "lookup-list-pages", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_LOOKUP_LIST_PAGES },
	{ "part-size", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_PART_SIZE },
	{ "upload-parallel", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_UPLOAD_PARALLEL },
	{ "require-conditions", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_REQUIRE_CONDITIONS },
	{ "list-max-pages", required_argument, NULL,
	  OPT_TUNE + S3D_TUNE_LIST_MAX_PAGES },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: s3cachefsd [options]\n"
"       s3cachefsd [options] --selftest COMMAND ARGS...\n"
"       s3cachefsd [--config PATH] --check-config\n"
"Fill daemon for the s3cachefs kernel module.\n"
"\n"
"  --config PATH        configuration file (default $S3CACHEFSD_CONFIG, else\n"
"                       " S3D_CONF_DEFAULT ", if it exists);\n"
"                       the flags below override its [global] section\n"
"  --check-config       check the configuration file, print its errors as\n"
"                       FILE:LINE: message; exit 0 if valid, 2 if not\n"
"  --endpoint URL       S3 endpoint (default https://s3.REGION.amazonaws.com)\n"
"  --region R           signing region (default $AWS_REGION, $AWS_DEFAULT_REGION,\n"
"                       us-east-1)\n"
"  --path-style         bucket in the path (default for non-AWS endpoints)\n"
"  --virtual-host       bucket in the host name (default for AWS)\n"
"  --anonymous          send unsigned requests (public buckets)\n"
"  --allow-http         allow an http:// endpoint (plain http: anyone on the\n"
"                       path can read and change objects; refused without it)\n"
"  --ca-bundle PATH     CA certificates for TLS (default $AWS_CA_BUNDLE, else\n"
"                       the system store)\n"
"  --max-inflight N     S3 requests in flight at most (default 64)\n"
"  --stall-timeout S    retry a transfer that moves less than --min-rate for\n"
"                       S seconds (1..3600, default 20)\n"
"  --min-rate B         bytes/s a transfer must move (1..2^30, default 1024)\n"
"  --retry-attempts N   attempts per S3 request at most (1..100, default 10)\n"
"  --retry-max-time S   no retry starts later than S seconds after a request's\n"
"                       first attempt or last progress (1..3600, default 35)\n"
"  --retry-base-ms MS   back-off base, full jitter (default 200; throttled:\n"
"                       five times it)\n"
"  --retry-max-delay-ms MS  back-off cap (default 10000)\n"
"  --retry-budget N     retry tokens per bucket context: a retry takes 5\n"
"                       (10 after a timeout), a success gives back (default 500)\n"
"  --cache-limit SIZE   per mount: evict least recently used files when its\n"
"                       cache holds more (bytes, or K/M/G/T; default unlimited)\n"
"  --min-free SIZE|N%%   per mount: also evict while the cache device has less\n"
"                       free space (or the same share of inodes) than this\n"
"                       (default none)\n"
"  --evict-timeout S    give an EVICT unanswered this long up (1..3600,\n"
"                       default 30)\n"
"  --lookup-get-max N   a lookup of a name not cached GETs the object's first\n"
"                       N bytes instead of a HEAD: objects that fit need no\n"
"                       second request (0..8388608, 0: HEAD; default 262144)\n"
"  --list-ahead N       after a listing, list its subdirectories (two levels)\n"
"                       in the background, N at a time per mount (0..64,\n"
"                       0: off; default 4)\n"
"  --lookup-list-pages N  the second name new to the cache looked up in a\n"
"                       directory within a minute has the directory listed\n"
"                       if it fits in N pages; its lookups wait for that\n"
"                       (0..100, 0: off; default 4)\n"
"  --list-max-pages N   a listing of more pages fails (EIO, logged), as do\n"
"                       listings that repeat a token or go back (1..1000000,\n"
"                       default 100000)\n"
"  --part-size N        files of more than N bytes are uploaded in parts of N\n"
"                       bytes (5242880..1073741824; default 16777216)\n"
"  --upload-parallel N  parts of one upload in flight at most (1..64;\n"
"                       default 4)\n"
"  --require-conditions 0|1  1: refuse writable mounts of servers that\n"
"                       ignore conditional writes (default 0: a warning)\n"
"  --metrics ADDR       serve Prometheus metrics on http://ADDR/metrics\n"
"                       (HOST:PORT, [V6]:PORT or PORT; use loopback, e.g.\n"
"                       127.0.0.1:9464; default off)\n"
"  -f, --foreground     stay in the foreground, log to stderr (default)\n"
"  -d, --daemonize      detach once registered, log to syslog\n"
"  -v, --verbose        debug logging\n"
"  -V, --version        print the version\n"
"\n"
"Credentials: the AWS chain, per config section: AWS_ACCESS_KEY_ID/\n"
"AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN] (skipped when the section names a\n"
"profile); ~/.aws/credentials and ~/.aws/config (the section's profile, else\n"
"AWS_PROFILE, else default); web identity; container; EC2 IMDSv2\n"
"(AWS_EC2_METADATA_DISABLED=true skips it). Temporary credentials are renewed\n"
"before they expire. SIGHUP re-reads the configuration and the credentials.\n"
"\n"
"--selftest (debugging without the module):\n"
"  list BUCKET PREFIX            list one level (all pages)\n"
"  head BUCKET KEY               object metadata\n"
"  get BUCKET KEY [OFF LEN]      object bytes to stdout\n"
"  cache BUCKET PREFIX DIR REQ...  run kernel requests against cache DIR:\n"
"        list:PATH  lookup:PATH:NAME  fetch:PATH:OFF:LEN[:ETAG]\n"
"        upload:PATH:new  upload:PATH:match:ETAG  (a LOCAL file, whole)\n"
"        (of mount 1; @N:REQ of mount N)  mount:N:BUCKET:DIR[:writable]\n"
"        sleep:MS\n"
"        cancel (the kernel gives the argument's last REQ up)  metrics\n"
"        (one argument at a time; REQ,REQ,... run concurrently)\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	unsigned long n;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	s3d_conf_init(&o->cli);
	while ((c = getopt_long(argc, argv, "+fdvhV", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_ENDPOINT:
			o->cli.global.endpoint = optarg;
			break;
		case OPT_REGION:
			o->cli.global.region = optarg;
			break;
		case OPT_PATH_STYLE:
			o->cli.global.path_style = 1;
			break;
		case OPT_VIRTUAL_HOST:
			o->cli.global.path_style = 0;
			break;
		case OPT_MAX_INFLIGHT:
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || *end || n < 1 || n > 4096) {
				fprintf(stderr, "s3cachefsd: --max-inflight: want 1..4096, got '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->cli.max_inflight = (unsigned int)n;
			break;
		case OPT_ALLOW_HTTP:
			o->cli.global.allow_http = 1;
			break;
		case OPT_ANONYMOUS:
			o->cli.global.anonymous = 1;
			break;
		case OPT_CA_BUNDLE:
			o->cli.global.ca_bundle = optarg;
			break;
		case OPT_CONFIG:
			o->config = optarg;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = true;
			break;
		case 'f':
			o->daemonize = false;
			break;
		case 'd':
			o->daemonize = true;
			break;
		case 'v':
			o->cli.log_level = S3D_LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("s3cachefsd %s (protocol %d)\n", S3D_VERSION,
			       S3CFS_GENL_VERSION);
			exit(0);
		case OPT_SELFTEST:
			o->selftest = true;
			break;
		case OPT_CACHE_LIMIT:
			o->cli.has_cache_limit = true;
			if (s3d_parse_size(optarg, &o->cli.cache.limit)) {
				fprintf(stderr, "s3cachefsd: --cache-limit: want bytes (e.g. 10G), got '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_MIN_FREE:
			o->cli.has_min_free = true;
			if (s3d_parse_min_free(optarg, &o->cli.cache)) {
				fprintf(stderr, "s3cachefsd: --min-free: want bytes or a percentage (e.g. 5%%), got '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_METRICS:
			s3d_metrics_addr = optarg;
			o->cli.metrics = optarg;
			break;
		case OPT_STALL_TIMEOUT:
			if (s3d_conf_parse_stall_timeout(optarg,
							 &o->cli.stall_timeout)) {
				fprintf(stderr, "s3cachefsd: --stall-timeout: want seconds, %u..%u, got '%s'\n",
					S3D_STALL_MIN, S3D_STALL_MAX, optarg);
				return -EINVAL;
			}
			break;
		default:
			if (c >= OPT_TUNE && c < OPT_TUNE + S3D_TUNE_NR) {
				const struct s3d_tune_info *t = &s3d_tunes[c - OPT_TUNE];

				if (s3d_conf_parse_tune(c - OPT_TUNE, optarg,
							&o->cli.tune[c - OPT_TUNE])) {
					fprintf(stderr, "s3cachefsd: --%s: want %u..%u, got '%s'\n",
						t->flag, t->min, t->max, optarg);
					return -EINVAL;
				}
				o->cli.tune_set[c - OPT_TUNE] = true;
				break;
			}
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!o->selftest && optind != argc) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/*
 * Read the configuration file and lay the flags over it. Every bad line
 * is reported as FILE:LINE: message: on stderr at start (and for
 * --check-config), in the log on a reload.
 *
 * Return: the configuration, or NULL (the errors were reported).
 */
static struct s3d_conf *conf_read(bool at_start)
{
	struct s3d_conf *c;
	struct s3d_buf errs;
	bool must_exist;
	const char *path = s3d_conf_path(opts.config, &must_exist);
	char *line, *save = NULL;
	int err;

	s3d_buf_init(&errs, 0);
	err = s3d_conf_load(path, must_exist, &c, &errs);
	if (!err)
		err = s3d_conf_override(c, &opts.cli);
	/* Every section's, not only those whose buckets get mounted. */
	if (!err)
		err = s3d_conf_check_http(c, &errs);
	if (err == -ENOMEM)
		s3d_buf_addf(&errs, "%s: out of memory\n", path);
	for (line = errs.p ? strtok_r(errs.p, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (at_start)
			fprintf(stderr, "%s\n", line);
		else
			s3d_err("%s", line);
	}
	s3d_buf_free(&errs);
	if (err) {
		s3d_conf_free(c);
		return NULL;
	}
	return c;
}

/* The limits of a new mount: its bucket's section's, else [global]'s. */
static const struct s3d_cache_policy *cache_policy(const char *bucket)
{
	static struct s3d_cache_policy pol;

	s3d_conf_cache_policy(conf, bucket, &pol);
	return &pol;
}

/* A writable mount's defaults: its bucket's section's, else [global]'s. */
static void mount_defaults(const char *bucket, int *writeback,
			   int *upload_delay)
{
	struct s3d_mount_defaults d;

	s3d_conf_mount_defaults(conf, bucket, &d);
	*writeback = d.writeback;
	*upload_delay = d.upload_delay;
}

/* What does not follow a reload: say so rather than ignore it quietly. */
static void conf_restart_only(const struct s3d_conf *o,
			      const struct s3d_conf *n)
{
	const char *a = o->metrics ?: "", *b = n->metrics ?: "";

	if (o->max_inflight != n->max_inflight)
		s3d_warn("reload: max_inflight changes on restart only");
	if (strcmp(a, b))
		s3d_warn("reload: metrics changes on restart only");
}

/* What a reload applies at once (to requests started after it). */
static void conf_apply_now(const struct s3d_conf *c)
{
	struct s3d_retry_policy rp;

	s3d_log_level = c->log_level >= 0 ? c->log_level : S3D_LOG_INFO;
	s3d_engine_set_stall_timeout(c->stall_timeout);
	s3d_engine_set_min_rate(c->tune[S3D_TUNE_MIN_RATE]);
	s3d_evict_timeout_ms = 1000ULL * (c->tune[S3D_TUNE_EVICT_TIMEOUT] ?:
					  S3D_EVICT_TIMEOUT_DEFAULT);
	s3d_conf_retry_policy(c, &rp);
	s3d_engine_set_retry(&rp);
	rp = *s3d_engine_retry();
	if (rp.max_time_s <= (c->stall_timeout ?: S3D_STALL_DEFAULT))
		s3d_warn("retry_max_time (%u s) is not above stall_timeout (%u s): a stalled transfer is never retried",
			 rp.max_time_s, c->stall_timeout ?: S3D_STALL_DEFAULT);
}

/*
 * SIGHUP: a valid file replaces the configuration for requests from now
 * on (those in flight finish with the contexts they hold) and brings
 * fresh credentials; an invalid one changes nothing.
 */
static void reload(void)
{
	struct s3d_conf *n = conf_read(false);
	int err;

	if (!n) {
		s3d_err("reload: configuration has errors; keeping the old one");
		return;
	}
	err = s3d_ops_set_conf(n);
	if (err) {
		s3d_err("reload: %s; keeping the old configuration",
			strerror(-err));
		s3d_conf_free(n);
		return;
	}
	conf_restart_only(conf, n);
	s3d_conf_free(conf);
	conf = n;
	conf_apply_now(conf);
	s3d_info("reloaded %s", conf->file ?: "the configuration (no file)");
}

static void on_signal(struct s3d_watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			s3d_info("SIGHUP: reloading the configuration and credentials");
			reload();
			break;
		default:
			s3d_info("%s: shutting down (%u requests unfinished; the kernel re-sends them to the next daemon)",
				 strsignal((int)si.ssi_signo), s3d_ops_pending());
			s3d_loop_stop();
		}
	}
}

static int signals_init(void)
{
	sigset_t set;
	int err;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0) {
		err = -errno;
		s3d_err("signalfd: %s", strerror(errno));
		return err;
	}
	err = s3d_loop_watch(&sigw, sigfd, EPOLLIN, on_signal);
	if (err)
		s3d_err("watching signals: %s", strerror(-err));
	return err;
}

static void signals_fini(void)
{
	if (sigfd < 0)
		return;
	s3d_loop_unwatch(&sigw);
	close(sigfd);
	sigfd = -1;
}

/*
 * Before anything can start a thread: block the signals we take through
 * the signalfd, and ignore SIGPIPE (a peer closing a socket is an error
 * return, not a reason to die).
 */
static void block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static const struct s3d_nl_hooks nl_hooks = {
	.request = s3d_req_handle,
	.replied = s3d_metrics_kreq,
	.acks_lost = s3d_cache_recheck_all,
};

static int run_daemon(const struct options *o)
{
	int err;

	err = signals_init();
	if (err)
		return err;
	/* The channel hands requests up; eviction sends EVICTs down it. */
	s3d_evict_send = s3d_nl_evict;
	s3d_evict_cancel = s3d_nl_evict_cancel;
	err = s3d_nl_init(&nl_hooks);
	if (err)
		goto out_sig;
	if (o->daemonize) {
		s3d_log_to_syslog("s3cachefsd");
		if (daemon(0, 0)) {
			err = -errno;
			s3d_err("daemon: %s", strerror(errno));
			goto out_nl;
		}
	}
	err = s3d_loop_run(NULL, NULL);
out_nl:
	s3d_nl_fini();
out_sig:
	signals_fini();
	return err;
}

/* --selftest list|head|get BUCKET ...: that bucket's settings. */
static int run_selftest(int argc, char **argv)
{
	struct s3d_ctx *ctx;
	int err;

	/* "cache" mounts its bucket as the kernel would: no wait here. */
	if (argc >= 1 && !strcmp(argv[0], "cache"))
		return s3d_selftest(NULL, argc, argv);
	ctx = s3d_ctx_get(argc >= 2 ? argv[1] : NULL, &err);
	if (!ctx)
		return err;
	err = s3d_ctx_wait(ctx);
	if (!err)
		err = s3d_selftest(s3d_ctx_s3(ctx), argc, argv);
	s3d_ctx_put(ctx);
	return err;
}

int main(int argc, char **argv)
{
	const char *ca;
	unsigned int inflight;
	int err;

	/*
	 * First of all, before credentials are loaded: no core file (it would
	 * hold the AWS keys, session tokens, object bytes), and no ptrace nor
	 * /proc/PID/{environ,mem} (the environment's keys) for other processes
	 * of the same user (tests/host/harden.sh checks both).
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		fprintf(stderr, "s3cachefsd: cannot make the process non-dumpable: %s\n",
			strerror(errno));
		return 1;
	}
	if (parse_args(argc, argv, &opts))
		return 2;
	conf = conf_read(true);
	if (!conf)
		return 2;
	if (opts.check_config) {
		printf("%s: OK\n", conf->file ?: "no configuration file");
		s3d_conf_free(conf);
		return 0;
	}
	conf_apply_now(conf);
	s3d_cache_policy_hook = cache_policy;
	s3d_mount_defaults_hook = mount_defaults;
	if (!s3d_metrics_addr)
		s3d_metrics_addr = conf->metrics;
	block_signals();
	srandom((unsigned int)(getpid() ^ s3d_now_ms()));

	/* $AWS_CA_BUNDLE only ever names the CA file; nothing else is read. */
	ca = conf->global.ca_bundle;
	if (!ca && getenv("AWS_CA_BUNDLE") && *getenv("AWS_CA_BUNDLE"))
		ca = getenv("AWS_CA_BUNDLE");
	inflight = conf->max_inflight ?: 64;
	err = s3d_engine_init(inflight, ca);
	if (err)
		goto out_conf;
	s3d_info("s3cachefsd %s: %s, %u in flight%s%s", S3D_VERSION,
		 conf->file ?: "no configuration file", inflight,
		 ca ? ", CA bundle " : "", ca ?: "");
	/* Makes the [global] context: its credentials must load. */
	err = s3d_ops_init(conf);
	if (err)
		goto out_loop;

	if (opts.selftest)
		err = run_selftest(argc - optind, argv + optind);
	else
		err = s3d_metrics_start(s3d_metrics_addr) ?: run_daemon(&opts);

	s3d_ops_fini();
out_loop:
	s3d_engine_fini();
out_conf:
	s3d_conf_free(conf);
	s3d_log_once_reset();
	return err ? 1 : 0;
}
