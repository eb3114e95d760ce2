// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics endpoint (daemon/metrics.c): the exposition format, real
 * HTTP scrapes served by the event loop (a client thread talks to it while
 * the main thread runs s3d_loop_run()), refusals (404, 405, oversized
 * request, too many connections), and counters that move when real
 * transfers run through the engine: GETs against the endpoint itself (a
 * local HTTP server on the same loop) and against a closed port.
 *
 * S3D_METRICS_DUMP=FILE writes the last scrape there (daemon/README.md's
 * example comes from it).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "evict.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/retry.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "metrics.h"
#include "req.h"
#include "uapi/s3cachefs.h"
#include "tap.h"

#define ATTEMPTS	3

/* ---- a small exposition parser, to check the whole text ---- */

/* Every sample's family has HELP and TYPE before it; histograms are sane. */
static int check_exposition(const char *text, char *why, size_t len)
{
	char fam[128] = "", type[16] = "", hkey[512] = "";
	double last_le = -1, last_cum = -1, inf_cum = -1;
	const char *p = text;
	bool help = false;

	while (*p) {
		const char *eol = strchr(p, '\n');
		char line[1024], name[128], *sp, *br;
		double v;

		if (!eol || (size_t)(eol - p) >= sizeof(line)) {
			snprintf(why, len, "unterminated or long line");
			return -1;
		}
		memcpy(line, p, (size_t)(eol - p));
		line[eol - p] = '\0';
		p = eol + 1;
		if (!strncmp(line, "# HELP ", 7)) {
			sscanf(line + 7, "%127s", fam);
			help = true;
			type[0] = '\0';
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			if (sscanf(line + 7, "%127s %15s", name, type) != 2 ||
			    strcmp(name, fam) || !help) {
				snprintf(why, len, "TYPE without HELP: %s", line);
				return -1;
			}
			continue;
		}
		sp = strrchr(line, ' ');
		if (!sp || sscanf(sp + 1, "%lf", &v) != 1) {
			snprintf(why, len, "no value: %s", line);
			return -1;
		}
		*sp = '\0';
		br = strchr(line, '{');
		snprintf(name, sizeof(name), "%.*s",
			 (int)(br ? br - line : (long)strlen(line)), line);
		if (strncmp(name, "s3cachefsd_", 11) || !type[0] ||
		    strncmp(name, fam, strlen(fam))) {
			snprintf(why, len, "sample outside its family: %s", line);
			return -1;
		}
		if (strcmp(type, "histogram"))
			continue;
		if (strstr(name, "_bucket")) {
			char *le = strstr(line, "le=\""), key[512];
			double b;

			if (!le) {
				snprintf(why, len, "bucket without le: %s", line);
				return -1;
			}
			snprintf(key, sizeof(key), "%.*s", (int)(le - line), line);
			if (strcmp(key, hkey)) {	/* a new series */
				snprintf(hkey, sizeof(hkey), "%s", key);
				last_le = -1;
				last_cum = -1;
				inf_cum = -1;
			}
			b = !strncmp(le + 4, "+Inf", 4) ? 1e308 : atof(le + 4);
			if (b <= last_le || v < last_cum) {
				snprintf(why, len, "not monotonic: %s", line);
				return -1;
			}
			last_le = b;
			last_cum = v;
			if (b == 1e308)
				inf_cum = v;
		} else if (strstr(name, "_count")) {
			if (inf_cum < 0 || v != inf_cum) {
				snprintf(why, len, "_count %g != +Inf bucket %g",
					 v, inf_cum);
				return -1;
			}
		}
	}
	return 0;
}

static bool has_line(const char *text, const char *line)
{
	const char *p = text;
	size_t n = strlen(line);

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
		p += n;
	}
	return false;
}

static char *render(void)
{
	struct s3d_buf b;

	s3d_buf_init(&b, 0);
	if (s3d_metrics_render(&b)) {
		s3d_buf_free(&b);
		return NULL;
	}
	return s3d_buf_steal(&b);
}

static void test_format(void)
{
	static const double bounds[] = { 0.1, 1 };
	static const uint64_t counts[] = { 1, 2, 3 };
	struct s3d_prom_label l[2] = {
		{ "op", "GET" }, { "path", "a\\b\"c\nd" },
	};
	struct s3d_buf b;
	char why[256] = "";
	char *text;

	s3d_buf_init(&b, 0);
	s3d_prom_family(&b, "s3cachefsd_x_total", "counter",
			"a \"quoted\" \\ help\nline");
	is_str(s3d_buf_str(&b),
	       "# HELP s3cachefsd_x_total a \"quoted\" \\\\ help\\nline\n"
	       "# TYPE s3cachefsd_x_total counter\n",
	       "HELP escapes backslash and newline, not quotes");
	s3d_buf_reset(&b);
	s3d_prom_u64(&b, "s3cachefsd_x_total", l, 2, 18446744073709551615ULL);
	is_str(s3d_buf_str(&b),
	       "s3cachefsd_x_total{op=\"GET\",path=\"a\\\\b\\\"c\\nd\"} 18446744073709551615\n",
	       "label values escaped; counters printed exactly");
	s3d_buf_reset(&b);
	s3d_prom_u64(&b, "s3cachefsd_up", NULL, 0, 1);
	is_str(s3d_buf_str(&b), "s3cachefsd_up 1\n", "no labels: no braces");
	s3d_buf_reset(&b);
	s3d_prom_histogram(&b, "s3cachefsd_h", l, 1, bounds, counts, 2, 1.5);
	is_str(s3d_buf_str(&b),
	       "s3cachefsd_h_bucket{op=\"GET\",le=\"0.1\"} 1\n"
	       "s3cachefsd_h_bucket{op=\"GET\",le=\"1\"} 3\n"
	       "s3cachefsd_h_bucket{op=\"GET\",le=\"+Inf\"} 6\n"
	       "s3cachefsd_h_sum{op=\"GET\"} 1.5\n"
	       "s3cachefsd_h_count{op=\"GET\"} 6\n",
	       "histogram: cumulative buckets, +Inf, _sum, _count");
	s3d_buf_free(&b);

	/* The checker itself must catch a broken histogram. */
	ok(check_exposition("# HELP s3cachefsd_h h\n# TYPE s3cachefsd_h histogram\n"
			    "s3cachefsd_h_bucket{le=\"1\"} 3\n"
			    "s3cachefsd_h_bucket{le=\"2\"} 2\n", why,
			    sizeof(why)) < 0, "checker: a falling bucket is caught");

	why[0] = '\0';
	/* Observations in every latency bucket, including overflow. */
	{
		struct s3d_op_stats *st = &s3d_stats.op[S3D_OP_HEAD];
		size_t i;

		for (i = 0; i <= S3D_LAT_NR; i++)
			st->lat[i] += i + 1;
		st->lat_sum_us += 123456789;
	}
	text = render();
	ok(text && !check_exposition(text, why, sizeof(why)),
	   "whole exposition: families declared, histograms monotonic, +Inf == _count%s%s",
	   why[0] ? ": " : "", why);
	ok(text && has_line(text, "s3cachefsd_s3_request_duration_seconds_bucket{op=\"HEAD\",le=\"0.001\"} 1") &&
	   has_line(text, "s3cachefsd_s3_request_duration_seconds_bucket{op=\"HEAD\",le=\"60\"} 136") &&
	   has_line(text, "s3cachefsd_s3_request_duration_seconds_bucket{op=\"HEAD\",le=\"+Inf\"} 153") &&
	   has_line(text, "s3cachefsd_s3_request_duration_seconds_count{op=\"HEAD\"} 153") &&
	   has_line(text, "s3cachefsd_s3_request_duration_seconds_sum{op=\"HEAD\"} 123.456789"),
	   "latency histogram: 1 ms first, 60 s last, overflow in +Inf only");
	s3d_creds_stats.refreshes += 3;
	s3d_creds_stats.refresh_failures += 1;
	ok(text && has_line(text, "s3cachefsd_credential_refreshes_total{result=\"ok\"} 0") &&
	   has_line(text, "s3cachefsd_credential_refreshes_total{result=\"failed\"} 0"),
	   "credential refreshes: ok and failed");
	free(text);
	text = render();
	ok(text && has_line(text, "s3cachefsd_credential_refreshes_total{result=\"ok\"} 3") &&
	   has_line(text, "s3cachefsd_credential_refreshes_total{result=\"failed\"} 1"),
	   "credential refresh counters move");
	ok(text && strstr(text, "\ns3cachefsd_resident_memory_bytes ") &&
	   !strstr(text, "\ns3cachefsd_resident_memory_bytes 0\n") &&
	   strstr(text, "\ns3cachefsd_uptime_seconds "),
	   "resident memory and uptime present");
	free(text);
	memset(&s3d_stats.op[S3D_OP_HEAD], 0, sizeof(s3d_stats.op[0]));
}

/* ---- kernel requests and per-mount cache usage ---- */

/* The usage scan runs from the loop: until it counted @arg's bytes. */
static struct s3d_cache *scanning;
static uint64_t scan_deadline;

static bool scan_counted(void *arg)
{
	uint64_t used, limit;

	s3d_cache_usage(scanning, &used, &limit);
	return used >= *(uint64_t *)arg || s3d_now_ms() > scan_deadline;
}

static void test_kernel_and_cache(void)
{
	struct s3d_cache_policy pol = { .limit = 1 << 20 };
	struct s3d_req r = { .cmd = S3CFS_CMD_FETCH };
	char root[] = "/tmp/s3d-metrics-XXXXXX", line[256], buf[8192];
	struct s3d_cache *c;
	struct stat st;
	char *text;
	int rootfd, fd;

	s3d_metrics_kreq(&r, 0);
	s3d_metrics_kreq(&r, 0);
	s3d_metrics_kreq(&r, -EIO);
	r.cmd = S3CFS_CMD_LOOKUP;
	s3d_metrics_kreq(&r, -ENOENT);

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return;
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	fd = openat(rootfd, "f.bin", O_CREAT | O_WRONLY, 0644);
	memset(buf, 'x', sizeof(buf));
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd) ||
	    fstat(fd, &st)) {
		ok(0, "writing a cached file");
		return;
	}
	close(fd);
	c = s3d_cache_open(7, rootfd, &pol);
	if (c) {
		uint64_t want = (uint64_t)st.st_blocks * 512;

		scanning = c;
		scan_deadline = s3d_now_ms() + 20000;
		s3d_loop_run(scan_counted, &want);
	}
	r = (struct s3d_req){ .cmd = S3CFS_CMD_MOUNT, .mount_id = 7,
			      .bucket = "my-bucket" };
	s3d_metrics_kreq(&r, 0);

	text = render();
	ok(text && has_line(text, "s3cachefsd_kernel_requests_total{cmd=\"FETCH\",result=\"ok\"} 2") &&
	   has_line(text, "s3cachefsd_kernel_requests_total{cmd=\"FETCH\",result=\"EIO\"} 1") &&
	   has_line(text, "s3cachefsd_kernel_requests_total{cmd=\"LOOKUP\",result=\"ENOENT\"} 1") &&
	   has_line(text, "s3cachefsd_kernel_requests_total{cmd=\"MOUNT\",result=\"ok\"} 1"),
	   "kernel requests by command and errno name");
	snprintf(line, sizeof(line),
		 "s3cachefsd_cache_used_bytes{mount=\"7\",bucket=\"my-bucket\"} %llu",
		 (unsigned long long)st.st_blocks * 512);
	ok(c && text && has_line(text, line) && st.st_blocks > 0 &&
	   has_line(text, "s3cachefsd_cache_limit_bytes{mount=\"7\",bucket=\"my-bucket\"} 1048576"),
	   "cache used and limit per mount, labelled with the bucket");
	free(text);

	s3d_cache_close(c);
	text = render();
	ok(text && !strstr(text, "mount=\"7\"") &&
	   strstr(text, "# TYPE s3cachefsd_cache_used_bytes gauge\n"),
	   "an unmounted cache disappears from the exposition");
	free(text);
	unlinkat(rootfd, "f.bin", 0);
	close(rootfd);
	rmdir(root);
}

/* ---- HTTP, against the loop ---- */

struct client {
	int port;
	volatile bool done;
	/* results, checked on the main thread */
	long scrape_code;
	char ctype[128];
	char *body;
	bool slow_ok;
	char post[256], notfound[256], big[256], busy[256], after[256];
};

static size_t curl_sink(char *p, size_t size, size_t n, void *arg)
{
	struct s3d_buf *b = arg;

	s3d_buf_add(b, p, size * n);
	return size * n;
}

static int tcp_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send @req (may be NULL), read the reply's first line into @out. */
static void raw(int port, const char *req, size_t len, char *out, size_t olen)
{
	int fd = tcp_connect(port);
	size_t got = 0;
	ssize_t n;

	out[0] = '\0';
	if (fd < 0)
		return;
	if (req && !len)
		len = strlen(req);
	if (req && send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		snprintf(out, olen, "send failed");
		close(fd);
		return;
	}
	while (got + 1 < olen && (n = recv(fd, out + got, olen - 1 - got, 0)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
}

static long curl_get(int port, const char *path, struct s3d_buf *body,
		     char *ctype, size_t clen)
{
	char url[128];
	long code = 0;
	char *ct = NULL;
	CURL *e = curl_easy_init();

	if (!e)
		return -1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(e) == CURLE_OK) {
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct);
		if (ctype)
			snprintf(ctype, clen, "%s", ct ?: "");
	}
	curl_easy_cleanup(e);
	return code;
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct s3d_buf body;
	char *big, line[64];
	int slow, idle[S3D_METRICS_CONNS], i, n;
	size_t blen = S3D_METRICS_REQ_MAX * 2;

	/* A slow client holds a connection open mid-request meanwhile. */
	slow = tcp_connect(cl->port);
	if (slow >= 0)
		send(slow, "GET /metr", 9, MSG_NOSIGNAL);
	s3d_buf_init(&body, 0);
	cl->scrape_code = curl_get(cl->port, "/metrics", &body, cl->ctype,
				   sizeof(cl->ctype));
	cl->body = s3d_buf_steal(&body);
	if (slow >= 0) {
		/* ... and is still served once it finishes its request. */
		send(slow, "ics HTTP/1.0\r\n\r\n", 16, MSG_NOSIGNAL);
		n = (int)recv(slow, line, sizeof(line) - 1, 0);
		cl->slow_ok = n > 12 && !strncmp(line, "HTTP/1.1 200", 12);
		close(slow);
	}

	raw(cl->port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
	    0, cl->post, sizeof(cl->post));
	raw(cl->port, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 0, cl->notfound,
	    sizeof(cl->notfound));

	big = malloc(blen);
	if (big) {
		memset(big, 'a', blen);
		memcpy(big, "GET /metrics HTTP/1.1\r\nX-Big: ", 30);
		raw(cl->port, big, blen, cl->big, sizeof(cl->big));
		free(big);
	}

	/* Fill every slot with idle connections: the next one is refused. */
	for (i = 0; i < S3D_METRICS_CONNS; i++)
		idle[i] = tcp_connect(cl->port);
	usleep(200 * 1000);	/* let the loop accept them all */
	raw(cl->port, "GET /metrics HTTP/1.0\r\n\r\n", 0, cl->busy,
	    sizeof(cl->busy));
	for (i = 0; i < S3D_METRICS_CONNS; i++)
		if (idle[i] >= 0)
			close(idle[i]);
	/* Slots come back once the server sees those closes. */
	for (i = 0; i < 50; i++) {
		usleep(20 * 1000);
		raw(cl->port, "GET /metrics HTTP/1.0\r\n\r\n", 0, cl->after,
		    sizeof(cl->after));
		if (!strncmp(cl->after, "HTTP/1.1 200", 12))
			break;
	}
	cl->done = true;
	return NULL;
}

static struct s3d_timer tick;
static uint64_t deadline_ms;

static void tick_fn(struct s3d_timer *t)
{
	s3d_timer_arm(t, 10);	/* wake the loop to look at the flags */
}

static bool until_flag(void *arg)
{
	return *(volatile bool *)arg || s3d_now_ms() > deadline_ms;
}

static void run_loop_until(volatile bool *flag, unsigned int secs)
{
	deadline_ms = s3d_now_ms() + secs * 1000;
	tick.fn = tick_fn;
	s3d_timer_arm(&tick, 10);
	s3d_loop_run(until_flag, (void *)flag);
	s3d_timer_cancel(&tick);
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void test_http(int port)
{
	struct client cl = { .port = port };
	char why[256] = "";
	pthread_t th;

	if (pthread_create(&th, NULL, client_main, &cl)) {
		ok(0, "client thread");
		return;
	}
	run_loop_until(&cl.done, 30);
	pthread_join(th, NULL);

	is_int(cl.scrape_code, 200, "GET /metrics: 200");
	ok(starts(cl.ctype, "text/plain; version=0.0.4"),
	   "Content-Type text/plain; version=0.0.4 (got '%s')", cl.ctype);
	ok(cl.body && strstr(cl.body, "# TYPE s3cachefsd_s3_requests_total counter\n") &&
	   strstr(cl.body, "# TYPE s3cachefsd_s3_request_duration_seconds histogram\n") &&
	   !check_exposition(cl.body, why, sizeof(why)),
	   "scraped body is a valid exposition%s%s", why[0] ? ": " : "", why);
	ok(cl.slow_ok, "a client slow to send its request neither blocks others nor is lost");
	ok(starts(cl.post, "HTTP/1.1 405") && strstr(cl.post, "\r\nAllow: GET, HEAD\r\n"),
	   "POST: 405 with Allow");
	ok(starts(cl.notfound, "HTTP/1.1 404"), "other path: 404");
	ok(starts(cl.big, "HTTP/1.1 431"), "oversized request head: 431 (got '%.40s')",
	   cl.big);
	ok(!starts(cl.busy, "HTTP/1.1 200"),
	   "connection over the limit of %d is not served (got '%.30s')",
	   S3D_METRICS_CONNS, cl.busy);
	ok(starts(cl.after, "HTTP/1.1 200"), "served again once slots are free");
	free(cl.body);
}

/* A client that never finishes its request is cut off. */
struct stall {
	int port;
	volatile bool done;
	long eof_ms;		/* until the server closed; -1: never */
};

static void *stall_main(void *arg)
{
	struct stall *s = arg;
	uint64_t t0 = s3d_now_ms();
	char c;
	int fd = tcp_connect(s->port);

	s->eof_ms = -1;
	if (fd >= 0) {
		send(fd, "GET /metrics HTTP/1.1\r\n", 24, MSG_NOSIGNAL);
		/* SO_RCVTIMEO is 5 s: a server that never closes fails. */
		if (recv(fd, &c, 1, 0) == 0)
			s->eof_ms = (long)(s3d_now_ms() - t0);
		close(fd);
	}
	s->done = true;
	return NULL;
}

static void test_stall(int port)
{
	struct stall s = { .port = port };
	pthread_t th;

	s3d_metrics_timeout_ms = 300;
	if (pthread_create(&th, NULL, stall_main, &s)) {
		ok(0, "stall thread");
		return;
	}
	run_loop_until(&s.done, 30);
	pthread_join(th, NULL);
	s3d_metrics_timeout_ms = S3D_METRICS_TIMEOUT_MS;
	ok(s.eof_ms >= 250 && s.eof_ms < 4000,
	   "a stalled request is closed after the connection timeout (%ld ms)",
	   s.eof_ms);
}

/* ---- counters that move with real transfers ---- */

struct tx {
	struct s3d_xfer x;
	char url[128];
	long status;
	bool finished;
	int *left;
};

static int tx_prepare(struct s3d_xfer *x)
{
	struct tx *t = s3d_container_of(x, struct tx, x);

	x->req.method = "GET";
	x->req.url = strdup(t->url);
	return x->req.url ? 0 : -ENOMEM;
}

static int tx_done(struct s3d_xfer *x)
{
	struct tx *t = s3d_container_of(x, struct tx, x);

	t->status = x->status;
	t->finished = true;
	--*t->left;
	return 0;
}

static const struct s3d_xfer_ops tx_ops = {
	.prepare = tx_prepare,
	.done = tx_done,
};

static bool none_left(void *arg)
{
	return *(int *)arg == 0 || s3d_now_ms() > deadline_ms;
}

/* A port nobody listens on (bound, then closed). */
static int dead_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static uint64_t lat_count(int op)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i <= S3D_LAT_NR; i++)
		n += s3d_stats.op[op].lat[i];
	return n;
}

static void test_transfers(int port)
{
	struct s3d_op_stats before = s3d_stats.op[S3D_OP_GET];
	struct s3d_op_stats *st = &s3d_stats.op[S3D_OP_GET];
	uint64_t lat_before = lat_count(S3D_OP_GET);
	struct tx t[3];
	char *text, line[160];
	int left = 3, i;
	const char *dump = getenv("S3D_METRICS_DUMP");

	for (i = 0; i < 3; i++) {
		s3d_xfer_init(&t[i].x, &tx_ops, "GET", "metrics");
		t[i].left = &left;
		t[i].finished = false;
	}
	snprintf(t[0].url, sizeof(t[0].url), "http://127.0.0.1:%d/metrics", port);
	snprintf(t[1].url, sizeof(t[1].url), "http://127.0.0.1:%d/nope", port);
	snprintf(t[2].url, sizeof(t[2].url), "http://127.0.0.1:%d/", dead_port());
	/* Three attempts, quickly (the default is ten, over up to 35 s). */
	s3d_engine_set_retry(&(struct s3d_retry_policy){ .attempts = ATTEMPTS,
						      .base_ms = 50 });
	for (i = 0; i < 3; i++)
		s3d_xfer_submit(&t[i].x);
	deadline_ms = s3d_now_ms() + 20000;
	tick.fn = tick_fn;
	s3d_timer_arm(&tick, 10);
	s3d_loop_run(none_left, &left);
	s3d_timer_cancel(&tick);

	ok(!left && t[0].status == 200 && t[1].status == 404 && t[2].status == 0,
	   "transfers ran: 200, 404, connection refused (%ld %ld %ld)",
	   t[0].status, t[1].status, t[2].status);
	is_int((long long)(st->status[200] - before.status[200]), 1,
	       "one more GET answered 200");
	is_int((long long)(st->status[404] - before.status[404]), 1,
	       "one more GET answered 404");
	is_int((long long)(st->status[0] - before.status[0]), ATTEMPTS,
	       "refused connection: every attempt counted as code=error");
	is_int((long long)(st->retries - before.retries), ATTEMPTS - 1,
	       "retries counted");
	is_int((long long)(st->failures - before.failures), 2,
	       "404 and refused counted as failures");
	is_int((long long)(lat_count(S3D_OP_GET) - lat_before), 2 + ATTEMPTS,
	       "latency histogram counts every attempt");
	ok(st->bytes_in > before.bytes_in + 1000, "body bytes counted (%llu)",
	   (unsigned long long)(st->bytes_in - before.bytes_in));

	/* The same through the exposition. */
	text = render();
	snprintf(line, sizeof(line),
		 "s3cachefsd_s3_requests_total{op=\"GET\",code=\"200\"} %llu",
		 (unsigned long long)st->status[200]);
	ok(text && has_line(text, line), "exposition: %s", line);
	snprintf(line, sizeof(line),
		 "s3cachefsd_s3_requests_total{op=\"GET\",code=\"error\"} %llu",
		 (unsigned long long)st->status[0]);
	ok(text && has_line(text, line), "exposition: %s", line);
	snprintf(line, sizeof(line),
		 "s3cachefsd_s3_request_duration_seconds_count{op=\"GET\"} %llu",
		 (unsigned long long)lat_count(S3D_OP_GET));
	ok(text && has_line(text, line), "exposition: %s", line);
	ok(text && has_line(text, "s3cachefsd_s3_inflight_requests 0") &&
	   has_line(text, "s3cachefsd_s3_queued_requests 0"),
	   "nothing in flight or queued afterwards");
	if (dump && text) {
		FILE *f = fopen(dump, "w");

		if (f) {
			fputs(text, f);
			fclose(f);
		}
	}
	free(text);
	for (i = 0; i < 3; i++)
		s3d_xfer_release(&t[i].x);
}

static void test_addresses(void)
{
	int err;

	ok(s3d_metrics_start("no-port") == -EINVAL, "address without a port refused");
	ok(s3d_metrics_start("::1:9464") == -EINVAL, "bare IPv6 needs brackets");
	err = s3d_metrics_start("[::1]:0");
	if (err == -EADDRNOTAVAIL || err == -EAFNOSUPPORT)
		diag("no IPv6 loopback here: [::1] not tried");
	else
		ok(!err && s3d_metrics_port() > 0, "[::1]:0 listens (port %d)",
		   s3d_metrics_port());
	s3d_metrics_stop();
	ok(s3d_metrics_port() == -1, "stopped");
}

int main(void)
{
	int port;

	s3d_log_level = S3D_LOG_ERR;
	if (s3d_engine_init(8, NULL)) {
		ok(0, "loop init");
		return tap_done();
	}
	test_format();
	test_kernel_and_cache();
	test_addresses();
	if (s3d_metrics_start("127.0.0.1:0") || (port = s3d_metrics_port()) <= 0) {
		ok(0, "metrics listener on 127.0.0.1:0");
		s3d_engine_fini();
		return tap_done();
	}
	test_http(port);
	test_stall(port);
	test_transfers(port);
	s3d_metrics_stop();
	s3d_engine_fini();
	return tap_done();
}
