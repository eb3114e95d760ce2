// SPDX-License-Identifier: GPL-2.0
/*
 * The providers that ask a server: web identity (STS), container
 * credentials, EC2 instance metadata (IMDSv2). Each is a little state
 * machine over struct creds_job: ->start() and ->step() build the next
 * request in job->h or turn the last reply into credentials, and never do
 * network I/O themselves. s3d_creds_resolve() sends the requests with
 * curl_easy_perform(); a refresh sends them on the event loop
 * (creds_watch.c). libcurl does the HTTP, expat the STS XML, json-c the
 * JSON of the other two.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <expat.h>
#include <json-c/json.h>

#include "base.h"
#include "creds.h"
#include "creds_int.h"
#include "util.h"

#define IMDS_DEFAULT		"http://169.254.169.254"
#define IMDS_TOKEN_TTL		"21600"
#define IMDS_CONNECT_MS		1000	/* off EC2, fall through fast */
#define IMDS_TIMEOUT_MS		3000
#define CONTAINER_HOST		"http://169.254.170.2"
#define CONTAINER_CONNECT_MS	2000
#define CONTAINER_TIMEOUT_MS	5000
#define STS_CONNECT_MS		5000
#define STS_TIMEOUT_MS		20000
#define TOKEN_FILE_MAX		(64U << 10)

/* ---- HTTP ---- */

void creds_http_reset(struct creds_http *h)
{
	if (h->easy)
		curl_easy_cleanup(h->easy);
	h->easy = NULL;
	free(h->url);
	h->url = NULL;
	curl_slist_free_all(h->headers);
	h->headers = NULL;
	creds_free_secret(h->body);
	h->body = NULL;
	h->method = NULL;
	h->cres = CURLE_OK;
	h->errbuf[0] = '\0';
	h->status = 0;
	s3d_buf_reset(&h->resp);
}

static size_t http_write(char *p, size_t size, size_t n, void *ud)
{
	struct creds_http *h = ud;

	s3d_buf_add(&h->resp, p, size * n);
	return h->resp.err ? 0 : size * n;
}

/**
 * creds_http_easy() - a libcurl handle for the request in @h
 * @h: built by a provider
 *
 * Return: the handle (also in @h->easy), or NULL if out of memory.
 */
CURL *creds_http_easy(struct creds_http *h)
{
	const char *ca = getenv("AWS_CA_BUNDLE");
	CURL *e;
	int rc = 0;

	e = curl_easy_init();
	if (!e)
		return NULL;
	h->easy = e;
	h->cres = CURLE_OK;
	h->errbuf[0] = '\0';
	h->status = 0;
	s3d_buf_reset(&h->resp);
	rc |= curl_easy_setopt(e, CURLOPT_URL, h->url);
	rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, h->headers);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_write);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, h);
	rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	rc |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
	rc |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ca && *ca)
		rc |= curl_easy_setopt(e, CURLOPT_CAINFO, ca);
	/* Link-local and loopback endpoints never go through a proxy. */
	if (h->direct)
		rc |= curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	if (!strcmp(h->method, "POST"))
		rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, h->body);
	else if (!strcmp(h->method, "PUT"))
		/* No body: what AWS documents (curl -X PUT) for the token. */
		rc |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
	if (rc) {
		curl_easy_cleanup(e);
		h->easy = NULL;
		return NULL;
	}
	return e;
}

/* The attempt is over: record the outcome, drop the handle. */
void creds_http_finish(struct creds_http *h, CURLcode res)
{
	h->cres = res;
	if (h->easy) {
		curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &h->status);
		curl_easy_cleanup(h->easy);
		h->easy = NULL;
	}
}

static int http_req(struct creds_job *j, const char *method, long connect_ms,
		    long timeout_ms, bool direct, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Start building the next request (any previous one is dropped). */
static int http_req(struct creds_job *j, const char *method, long connect_ms,
		    long timeout_ms, bool direct, const char *fmt, ...)
{
	struct creds_http *h = &j->h;
	va_list ap;
	int n;

	creds_http_reset(h);
	h->method = method;
	h->connect_ms = connect_ms;
	h->timeout_ms = timeout_ms;
	va_start(ap, fmt);
	n = vasprintf(&h->url, fmt, ap);
	va_end(ap);
	if (n < 0) {
		h->url = NULL;
		return -ENOMEM;
	}
	h->direct = direct;
	return CREDS_MORE;
}

static int http_header(struct creds_job *j, const char *name,
		       const char *value)
{
	struct curl_slist *l;
	char *line;

	if (asprintf(&line, "%s: %s", name, value) < 0)
		return -ENOMEM;
	l = curl_slist_append(j->h.headers, line);
	creds_free_secret(line);
	if (!l)
		return -ENOMEM;
	j->h.headers = l;
	return 0;
}

/* A transport failure: say so. Return: -errno, or 0 if there was a reply. */
static int http_failed(struct creds_job *j, const char *what)
{
	struct creds_http *h = &j->h;

	if (h->cres == CURLE_OK)
		return 0;
	creds_why(j, "%s %s: %s%s%s", what, h->url, curl_easy_strerror(h->cres),
		  h->errbuf[0] ? ": " : "", h->errbuf);
	return h->cres == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
}

/* The start of an error body, printable, for a log line. */
static void excerpt(const struct s3d_buf *b, char *out, size_t len)
{
	size_t i, n = S3D_MIN(b->len, len - 1);

	for (i = 0; i < n; i++) {
		unsigned char c = b->p[i];

		out[i] = c >= 0x20 && c < 0x7f ? c : ' ';
	}
	out[n] = '\0';
}

static int http_status_errno(long status)
{
	return status == 401 || status == 403 ? -EACCES : -EIO;
}

static int http_error(struct creds_job *j, const char *what)
{
	char body[121];

	excerpt(&j->h.resp, body, sizeof(body));
	creds_why(j, "%s %s: HTTP %ld%s%s", what, j->h.url, j->h.status,
		  body[0] ? ": " : "", body);
	return http_status_errno(j->h.status);
}

/* A token file or token: whole, trailing whitespace trimmed. */
static char *read_token_file(const char *path, int *err)
{
	struct s3d_buf b;
	char chunk[4096];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	s3d_buf_init(&b, TOKEN_FILE_MAX);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		s3d_buf_add(&b, chunk, n);
	*err = n < 0 ? -errno : b.err;
	close(fd);
	explicit_bzero(chunk, sizeof(chunk));
	if (*err) {
		if (b.p)
			explicit_bzero(b.p, b.len);
		s3d_buf_free(&b);
		return NULL;
	}
	while (b.len && strchr(" \t\r\n", b.p[b.len - 1]))
		b.p[--b.len] = '\0';
	return s3d_buf_steal(&b);
}

static bool header_safe(const char *v)
{
	return *v && !strpbrk(v, "\r\n");
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

/* ---- replies ---- */

static int parsed_creds(struct s3d_creds *c, const char *ak, const char *sk,
			const char *token, const char *exp, char *why,
			size_t whylen)
{
	time_t expires = 0;

	if (!ak || !*ak || !sk || !*sk) {
		snprintf(why, whylen, "reply lacks %s",
			 !ak || !*ak ? "AccessKeyId" : "SecretAccessKey");
		return -EBADMSG;
	}
	if (exp && s3d_parse_iso8601(exp, &expires)) {
		snprintf(why, whylen, "reply has a bad Expiration '%.40s'", exp);
		return -EBADMSG;
	}
	return creds_set(c, ak, sk, token, expires, NULL);
}

#define STS_DEPTH	6

struct sts_state {
	XML_Parser parser;
	char stack[STS_DEPTH][48];	/* local names, copied: expat reuses */
	int depth;
	struct s3d_buf text;
	char *ak, *sk, *token, *exp;
	char *code, *message, *request_id;
	bool error_doc;
	bool bad;
};

static const char *sts_local(const char *name)
{
	const char *c = strrchr(name, '|');

	return c ? c + 1 : name;
}

static void sts_start(void *ud, const XML_Char *name, const XML_Char **attr)
{
	struct sts_state *st = ud;

	(void)attr;
	if (st->depth < STS_DEPTH)
		snprintf(st->stack[st->depth], sizeof(st->stack[0]), "%s",
			 sts_local(name));
	if (!st->depth)
		st->error_doc = !strcmp(sts_local(name), "ErrorResponse");
	st->depth++;
	s3d_buf_reset(&st->text);
}

static bool sts_at(const struct sts_state *st, int depth, const char *a,
		   const char *b, const char *c)
{
	return st->depth == depth && depth <= STS_DEPTH &&
	       !strcmp(st->stack[0], a) && !strcmp(st->stack[1], b) &&
	       (!c || !strcmp(st->stack[2], c));
}

static void sts_take(struct sts_state *st, char **slot)
{
	char *v = strdup(s3d_buf_str(&st->text));

	if (!v) {
		st->bad = true;
		XML_StopParser(st->parser, XML_FALSE);
		return;
	}
	creds_free_secret(*slot);
	*slot = v;
}

static void sts_end(void *ud, const XML_Char *name)
{
	struct sts_state *st = ud;
	const char *leaf = sts_local(name);

	if (sts_at(st, 4, "AssumeRoleWithWebIdentityResponse",
		   "AssumeRoleWithWebIdentityResult", "Credentials")) {
		if (!strcmp(leaf, "AccessKeyId"))
			sts_take(st, &st->ak);
		else if (!strcmp(leaf, "SecretAccessKey"))
			sts_take(st, &st->sk);
		else if (!strcmp(leaf, "SessionToken"))
			sts_take(st, &st->token);
		else if (!strcmp(leaf, "Expiration"))
			sts_take(st, &st->exp);
	} else if (sts_at(st, 3, "ErrorResponse", "Error", NULL)) {
		if (!strcmp(leaf, "Code"))
			sts_take(st, &st->code);
		else if (!strcmp(leaf, "Message"))
			sts_take(st, &st->message);
	} else if (st->depth == 2 && !strcmp(leaf, "RequestId")) {
		sts_take(st, &st->request_id);
	}
	st->depth--;
	s3d_buf_reset(&st->text);
}

static void sts_text(void *ud, const XML_Char *s, int len)
{
	struct sts_state *st = ud;

	s3d_buf_add(&st->text, s, len);
}

/* STS never sends a DOCTYPE; without one no entity can be declared. */
static void sts_doctype(void *ud, const XML_Char *name, const XML_Char *sys,
			const XML_Char *pub, int has_internal)
{
	struct sts_state *st = ud;

	(void)name;
	(void)sys;
	(void)pub;
	(void)has_internal;
	st->bad = true;
	XML_StopParser(st->parser, XML_FALSE);
}

/**
 * s3d_creds_parse_sts() - read an AssumeRoleWithWebIdentity reply
 * @xml: the body
 * @len: its length
 * @c: filled on success (source not set)
 * @why: what is wrong, on failure
 * @whylen: its size
 *
 * Return: 0; -EACCES for an STS ErrorResponse (@why has its code and
 * message); -EBADMSG for anything else that is not a complete reply.
 */
int s3d_creds_parse_sts(const char *xml, size_t len, struct s3d_creds *c,
			char *why, size_t whylen)
{
	struct sts_state st = { 0 };
	int err;

	st.parser = XML_ParserCreateNS(NULL, '|');
	if (!st.parser)
		return -ENOMEM;
	s3d_buf_init(&st.text, CREDS_RESP_MAX);
	XML_SetUserData(st.parser, &st);
	XML_SetElementHandler(st.parser, sts_start, sts_end);
	XML_SetCharacterDataHandler(st.parser, sts_text);
	XML_SetStartDoctypeDeclHandler(st.parser, sts_doctype);
	if (XML_Parse(st.parser, xml, (int)len, XML_TRUE) != XML_STATUS_OK ||
	    st.bad || st.text.err) {
		snprintf(why, whylen, "STS reply is not valid XML: %s",
			 st.bad ? "DOCTYPE or out of memory" :
			 XML_ErrorString(XML_GetErrorCode(st.parser)));
		err = -EBADMSG;
	} else if (st.error_doc) {
		snprintf(why, whylen, "%s: %s (request id %s)",
			 st.code ?: "no error code", st.message ?: "",
			 st.request_id ?: "-");
		err = -EACCES;
	} else if (!st.exp) {
		snprintf(why, whylen, "STS reply lacks Credentials/Expiration");
		err = -EBADMSG;
	} else {
		err = parsed_creds(c, st.ak, st.sk, st.token, st.exp, why,
				   whylen);
	}
	XML_ParserFree(st.parser);
	s3d_buf_free(&st.text);
	free(st.ak);
	creds_free_secret(st.sk);
	creds_free_secret(st.token);
	free(st.exp);
	free(st.code);
	free(st.message);
	free(st.request_id);
	return err;
}

/* A string member, NULL if absent; @bad set if present but not a string. */
static const char *json_str(struct json_object *o, const char *key, bool *bad)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	if (!json_object_is_type(v, json_type_string)) {
		*bad = true;
		return NULL;
	}
	return json_object_get_string(v);
}

/**
 * s3d_creds_parse_json() - read a container or instance metadata reply
 * @json: the body: {"AccessKeyId", "SecretAccessKey", "Token",
 *	"Expiration", and from IMDS "Code": "Success"}
 * @len: its length
 * @c: filled on success (source not set)
 * @why: what is wrong, on failure
 * @whylen: its size
 *
 * Return: 0, -EBADMSG (not such a JSON object), -EACCES (a Code other than
 * Success), -ENOMEM.
 */
int s3d_creds_parse_json(const char *json, size_t len, struct s3d_creds *c,
			 char *why, size_t whylen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	const char *ak, *sk, *token, *exp, *code;
	bool bad = false;
	size_t end;
	int err;

	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (o && end < len && strchr(" \t\r\n", json[end]))
		end++;
	if (!o || jerr != json_tokener_success || end != len) {
		snprintf(why, whylen, "reply is not JSON: %s",
			 jerr == json_tokener_continue ? "truncated" :
			 jerr != json_tokener_success ?
			 json_tokener_error_desc(jerr) : "trailing data");
		json_object_put(o);
		return -EBADMSG;
	}
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(why, whylen, "reply is not a JSON object");
		json_object_put(o);
		return -EBADMSG;
	}
	code = json_str(o, "Code", &bad);
	ak = json_str(o, "AccessKeyId", &bad);
	sk = json_str(o, "SecretAccessKey", &bad);
	token = json_str(o, "Token", &bad);
	exp = json_str(o, "Expiration", &bad);
	if (bad) {
		snprintf(why, whylen, "reply has a member that is not a string");
		err = -EBADMSG;
	} else if (code && strcmp(code, "Success")) {
		snprintf(why, whylen, "reply has Code '%.64s'", code);
		err = -EACCES;
	} else {
		err = parsed_creds(c, ak, sk, token, exp, why, whylen);
	}
	json_object_put(o);
	return err;
}

/*
 * Credential endpoints over plain http. The keys they answer with cross
 * the wire in clear, so plain http is taken only to the addresses that
 * serve credentials by design (link-local: IMDS, the ECS/EKS agents; no
 * router forwards them) and to loopback (a local agent or proxy); https
 * anywhere. An S3 endpoint's allow_http does not widen this: a setting
 * cannot make keys sent in clear safe.
 */
static bool loopback_host(const char *host)
{
	struct in_addr a4;

	if (!strcmp(host, "localhost") || !strcmp(host, "[::1]"))
		return true;
	return inet_pton(AF_INET, host, &a4) == 1 &&
	       (ntohl(a4.s_addr) >> 24) == 127;
}

/* @url (named by @what) is https, or http to a host @host_ok takes. */
static int plain_http_check(struct creds_job *j, const char *what,
			    const char *url, bool (*host_ok)(const char *host),
			    const char *hosts)
{
	char *scheme = NULL, *host = NULL;
	CURLU *u = curl_url();
	int err = 0;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0)) {
		creds_why(j, "%s is not a URL: %s", what, url);
		err = -EINVAL;
	} else if (strcmp(scheme, "https") &&
		   (strcmp(scheme, "http") || !host_ok(host))) {
		creds_why(j, "%s %s: plain http only to %s", what, url, hosts);
		err = -EINVAL;
	}
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return err;
}

/* ---- web identity ---- */

static int wi_start(struct creds_job *j)
{
	const struct creds_profile *p = j->prof;
	const char *tf = env_or("AWS_WEB_IDENTITY_TOKEN_FILE",
				p->web_identity_token_file);
	const char *role = env_or("AWS_ROLE_ARN", p->role_arn);
	const char *sess = env_or("AWS_ROLE_SESSION_NAME", p->role_session_name);
	const char *ep = getenv("AWS_ENDPOINT_URL_STS");
	const char *region = env_or("AWS_REGION", env_or("AWS_DEFAULT_REGION",
							 p->region));
	char sbuf[64], *token;
	struct s3d_buf form;
	int err;

	if (!tf && !role) {
		creds_why(j, "AWS_WEB_IDENTITY_TOKEN_FILE/AWS_ROLE_ARN not set");
		return -ENOENT;
	}
	if (!tf || !role) {
		creds_why(j, "%s is set but not %s", tf ? "a token file" :
			  "a role ARN", tf ? "a role ARN (AWS_ROLE_ARN, role_arn)" :
			  "a token file (AWS_WEB_IDENTITY_TOKEN_FILE, web_identity_token_file)");
		return -EINVAL;
	}
	token = read_token_file(tf, &err);
	if (!token) {
		creds_why(j, "cannot read the token file %s: %s", tf,
			  strerror(-err));
		j->fatal = true;	/* configured: not a fall-through */
		return err;
	}
	if (!*token) {
		creds_why(j, "the token file %s is empty", tf);
		free(token);
		return -EINVAL;
	}
	if (!sess) {
		snprintf(sbuf, sizeof(sbuf), "s3cachefsd-%lld",
			 (long long)time(NULL));
		sess = sbuf;
	}
	if (ep && *ep) {
		err = plain_http_check(j, "AWS_ENDPOINT_URL_STS", ep,
				       loopback_host, "loopback");
		if (err) {
			creds_free_secret(token);
			return err;
		}
	}
	if (ep && *ep)
		err = http_req(j, "POST", STS_CONNECT_MS, STS_TIMEOUT_MS, false,
			       "%.*s/", (int)(strlen(ep) - (ep[strlen(ep) - 1] == '/')), ep);
	else if (region)
		err = http_req(j, "POST", STS_CONNECT_MS, STS_TIMEOUT_MS, false,
			       "https://sts.%s.amazonaws.com/", region);
	else
		err = http_req(j, "POST", STS_CONNECT_MS, STS_TIMEOUT_MS, false,
			       "https://sts.amazonaws.com/");
	s3d_buf_init(&form, 0);
	s3d_buf_adds(&form, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=");
	s3d_uri_encode(&form, role, strlen(role), true);
	s3d_buf_adds(&form, "&RoleSessionName=");
	s3d_uri_encode(&form, sess, strlen(sess), true);
	s3d_buf_adds(&form, "&WebIdentityToken=");
	s3d_uri_encode(&form, token, strlen(token), true);
	creds_free_secret(token);
	if (err != CREDS_MORE || form.err ||
	    http_header(j, "Content-Type", "application/x-www-form-urlencoded")) {
		if (form.p)
			explicit_bzero(form.p, form.len);
		s3d_buf_free(&form);
		return -ENOMEM;
	}
	j->h.body = s3d_buf_steal(&form);
	return CREDS_MORE;
}

static int wi_step(struct creds_job *j)
{
	char why[CREDS_WHY_MAX - 64];
	int err;

	err = http_failed(j, "STS");
	if (err)
		return err;
	err = s3d_creds_parse_sts(j->h.resp.p ?: "", j->h.resp.len, &j->out,
				  why, sizeof(why));
	if (j->h.status != 200) {
		if (err == -EACCES) {
			creds_why(j, "STS %s: HTTP %ld %s", j->h.url,
				  j->h.status, why);
			return j->h.status >= 500 ? -EIO : -EACCES;
		}
		return http_error(j, "STS");
	}
	if (err) {
		creds_why(j, "STS %s: %s", j->h.url, why);
		return err == -EACCES ? -EBADMSG : err;
	}
	j->out.source = "web identity token (STS)";
	return 0;
}

const struct s3d_creds_provider creds_web_identity = {
	.name = "web identity",
	.start = wi_start,
	.step = wi_step,
};

/* ---- container credentials ---- */

/* ECS and EKS Pod Identity addresses, and loopback: fine over plain http. */
static bool container_host_ok(const char *host)
{
	return !strcmp(host, "169.254.170.2") ||
	       !strcmp(host, "169.254.170.23") ||
	       !strcasecmp(host, "[fd00:ec2::23]") || loopback_host(host);
}

static int container_url_check(struct creds_job *j, const char *url)
{
	return plain_http_check(j, "AWS_CONTAINER_CREDENTIALS_FULL_URI", url,
				container_host_ok,
				"loopback or the ECS/EKS addresses");
}

static int container_start(struct creds_job *j)
{
	const char *rel = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *tf = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char *ftok = NULL;
	int err;

	if (rel && *rel) {
		if (*rel != '/') {
			creds_why(j, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI does not start with /");
			return -EINVAL;
		}
		err = http_req(j, "GET", CONTAINER_CONNECT_MS,
			       CONTAINER_TIMEOUT_MS, true, "%s%s",
			       CONTAINER_HOST, rel);
	} else if (full && *full) {
		err = container_url_check(j, full);
		if (err)
			return err;
		err = http_req(j, "GET", CONTAINER_CONNECT_MS,
			       CONTAINER_TIMEOUT_MS, true, "%s", full);
	} else {
		creds_why(j, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/_FULL_URI not set");
		return -ENOENT;
	}
	if (err != CREDS_MORE)
		return err;
	if (tf && *tf) {
		ftok = read_token_file(tf, &err);
		if (!ftok) {
			creds_why(j, "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s: %s",
				  tf, strerror(-err));
			j->fatal = true;
			return err;
		}
		tok = ftok;
	}
	if (tok && *tok) {
		if (!header_safe(tok)) {
			creds_why(j, "the container authorization token has a line break");
			creds_free_secret(ftok);
			return -EINVAL;
		}
		err = http_header(j, "Authorization", tok);
		creds_free_secret(ftok);
		if (err)
			return err;
	}
	if (http_header(j, "Accept", "application/json"))
		return -ENOMEM;
	return CREDS_MORE;
}

static int container_step(struct creds_job *j)
{
	char why[CREDS_WHY_MAX - 64];
	int err;

	err = http_failed(j, "GET");
	if (err)
		return err;
	if (j->h.status != 200)
		return http_error(j, "GET");
	err = s3d_creds_parse_json(j->h.resp.p ?: "", j->h.resp.len, &j->out,
				   why, sizeof(why));
	if (err) {
		creds_why(j, "%s: %s", j->h.url, why);
		return err;
	}
	j->out.source = "container credentials endpoint";
	return 0;
}

const struct s3d_creds_provider creds_container = {
	.name = "container",
	.start = container_start,
	.step = container_step,
};

/* ---- EC2 instance metadata, IMDSv2 ---- */

enum { IMDS_TOKEN = 1, IMDS_ROLE_LIST, IMDS_ROLE };

/* The instance metadata addresses (IPv4, IPv6), and loopback. */
static bool imds_host_ok(const char *host)
{
	return !strcmp(host, "169.254.169.254") ||
	       !strcasecmp(host, "[fd00:ec2::254]") || loopback_host(host);
}

static const char *imds_base(int *len)
{
	const char *ep = env_or("AWS_EC2_METADATA_SERVICE_ENDPOINT",
				IMDS_DEFAULT);

	*len = (int)strlen(ep);
	while (*len && ep[*len - 1] == '/')
		(*len)--;
	return ep;
}

static int imds_start(struct creds_job *j)
{
	const char *off = getenv("AWS_EC2_METADATA_DISABLED");
	const char *ep;
	int n, err;

	if (off && !strcasecmp(off, "true")) {
		creds_why(j, "disabled (AWS_EC2_METADATA_DISABLED)");
		return -ENOENT;
	}
	ep = imds_base(&n);
	err = plain_http_check(j, "AWS_EC2_METADATA_SERVICE_ENDPOINT", ep,
			       imds_host_ok, "loopback or the IMDS addresses");
	if (err)
		return err;
	err = http_req(j, "PUT", IMDS_CONNECT_MS, IMDS_TIMEOUT_MS, true,
		       "%.*s/latest/api/token", n, ep);
	if (err != CREDS_MORE)
		return err;
	if (http_header(j, "X-aws-ec2-metadata-token-ttl-seconds",
			IMDS_TOKEN_TTL))
		return -ENOMEM;
	j->step = IMDS_TOKEN;
	return CREDS_MORE;
}

static bool role_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+=,.@_-");

	return n && n <= 64 && !s[n];
}

static int imds_get(struct creds_job *j, const char *path)
{
	const char *ep;
	int n, err;

	ep = imds_base(&n);
	err = http_req(j, "GET", IMDS_CONNECT_MS, IMDS_TIMEOUT_MS, true,
		       "%.*s/latest/meta-data/iam/security-credentials/%s", n,
		       ep, path);
	if (err != CREDS_MORE)
		return err;
	if (http_header(j, "X-aws-ec2-metadata-token", j->imds_token))
		return -ENOMEM;
	return CREDS_MORE;
}

static int imds_step(struct creds_job *j)
{
	char why[CREDS_WHY_MAX - 64], *role, *nl;
	int err;

	switch (j->step) {
	case IMDS_TOKEN:
		if (j->h.cres != CURLE_OK) {
			/* Not on EC2 (or no route to IMDS): nothing here. */
			http_failed(j, "no instance metadata service:");
			return -ENOENT;
		}
		/*
		 * 403: IMDS is turned off for this instance; 404/405: what
		 * answered is not IMDSv2 (a filtering proxy, a host that is
		 * not on EC2). The SDKs take these as "no IMDS" too.
		 */
		if (j->h.status == 403 || j->h.status == 404 ||
		    j->h.status == 405) {
			http_error(j, "no instance metadata service: PUT");
			return -ENOENT;
		}
		if (j->h.status != 200)
			return http_error(j, "IMDSv2 token: PUT");
		if (!j->h.resp.len || !header_safe(j->h.resp.p)) {
			creds_why(j, "IMDSv2 token: PUT %s: bad token", j->h.url);
			return -EBADMSG;
		}
		j->imds_token = strdup(j->h.resp.p);
		if (!j->imds_token)
			return -ENOMEM;
		j->step = IMDS_ROLE_LIST;
		return imds_get(j, "");
	case IMDS_ROLE_LIST:
		err = http_failed(j, "GET");
		if (err)
			return err;
		if (j->h.status == 404) {
			creds_why(j, "no IAM role attached to the instance (%s: 404)",
				  j->h.url);
			return -ENOENT;
		}
		if (j->h.status != 200)
			return http_error(j, "GET");
		role = j->h.resp.p ?: "";
		nl = strchr(role, '\n');
		if (nl)
			*nl = '\0';
		role = strdupa(role);
		while (*role && strchr(" \t\r", role[strlen(role) - 1]))
			role[strlen(role) - 1] = '\0';
		if (!role_name_ok(role)) {
			creds_why(j, "GET %s: bad role name '%.64s'", j->h.url,
				  role);
			return -EBADMSG;
		}
		j->step = IMDS_ROLE;
		return imds_get(j, role);
	case IMDS_ROLE:
		err = http_failed(j, "GET");
		if (err)
			return err;
		if (j->h.status != 200)
			return http_error(j, "GET");
		err = s3d_creds_parse_json(j->h.resp.p ?: "", j->h.resp.len,
					   &j->out, why, sizeof(why));
		if (err) {
			creds_why(j, "%s: %s", j->h.url, why);
			return err;
		}
		j->out.source = "EC2 instance metadata (IMDSv2)";
		return 0;
	}
	return -EINVAL;
}

const struct s3d_creds_provider creds_imds = {
	.name = "IMDS",
	.start = imds_start,
	.step = imds_step,
};
