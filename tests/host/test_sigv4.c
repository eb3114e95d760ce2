// SPDX-License-Identifier: GPL-2.0
/*
 * SigV4 against published vectors:
 *  - AWS's Signature Version 4 test suite (service "service", region
 *    us-east-1, 20150830T123600Z, AKIDEXAMPLE), including the canonical
 *    request and string to sign where the suite states them;
 *  - the S3 API reference examples (examplebucket, 20130524T000000Z,
 *    AKIAIOSFODNN7EXAMPLE): GET Object with a Range, GET Bucket lifecycle,
 *    GET Bucket (List Objects), PUT Object;
 *  - the signing key derivation example (IAM, 20120215).
 * Then: a request built by s3d_s3_build() (GET, HEAD, LIST and the write
 * requests: PUT with conditions and metadata, the multipart subresources,
 * copy sources, DELETE) re-signs to the same value from exactly what it
 * sends, and changing any input changes the signature; and the errno each
 * S3 error becomes.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/log.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "tap.h"

#define SUITE_AK	"AKIDEXAMPLE"
#define SUITE_SK	"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE	"20150830T123600Z"
#define EMPTY_SHA256	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define HOST		{ "Host", "example.amazonaws.com" }
#define XDATE		{ "X-Amz-Date", SUITE_DATE }

struct vector {
	const char *name;
	const char *method;
	const char *path;		/* raw; encoded by the test */
	struct s3d_kv query[4];
	struct s3d_kv headers[6];
	const char *payload_hash;
	const char *creq;		/* NULL: not checked */
	const char *sts_hash;		/* last line of the string to sign */
	const char *signed_headers;
	const char *signature;
};

static const struct vector suite[] = {
	{ "get-vanilla", "GET", "/", {}, { HOST, XDATE }, EMPTY_SHA256,
	  "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	  "host;x-amz-date\n" EMPTY_SHA256,
	  "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
	  "host;x-amz-date",
	  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
	{ "get-vanilla-query-order-key-case", "GET", "/",
	  { { "Param2", "value2" }, { "Param1", "value1" } }, { HOST, XDATE },
	  EMPTY_SHA256,
	  "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\n"
	  "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA256,
	  "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
	  "host;x-amz-date",
	  "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500" },
	{ "get-utf8", "GET", "/\xe1\x88\xb4", {}, { HOST, XDATE }, EMPTY_SHA256,
	  "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\n"
	  "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA256,
	  "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102",
	  "host;x-amz-date",
	  "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85" },
	{ "get-unreserved", "GET",
	  "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	  {}, { HOST, XDATE }, EMPTY_SHA256, NULL,
	  "6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9",
	  "host;x-amz-date",
	  "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f" },
	{ "get-space-unnormalized", "GET", "/example space/", {},
	  { HOST, XDATE }, EMPTY_SHA256, NULL,
	  "63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86",
	  "host;x-amz-date",
	  "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741" },
	{ "get-slashes-unnormalized", "GET", "//example//", {},
	  { HOST, XDATE }, EMPTY_SHA256, NULL,
	  "528ec3105ee1f34ab014bb0a1a45da0ed2742a4fea3555149e5b4d5d201eb240",
	  "host;x-amz-date",
	  "87cca117541a147f6df867677d98a7d80dff226d2bfca9e4ffa899665623c7e5" },
	{ "get-vanilla-query-order-encoded", "GET", "/",
	  { { "Param-3", "Value3" }, { "Param", "Value2" },
	    { "\xe1\x88\xb4", "Value1" } },
	  { HOST, XDATE }, EMPTY_SHA256,
	  "GET\n/\n%E1%88%B4=Value1&Param=Value2&Param-3=Value3\n"
	  "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
	  "host;x-amz-date\n" EMPTY_SHA256,
	  "868294f5c38bd141c4972a373a76654f1418a8e4fc18b2e7903ae45e8ae0ec71",
	  "host;x-amz-date",
	  "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac" },
	{ "get-vanilla-query-unreserved", "GET", "/",
	  { { "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" } },
	  { HOST, XDATE }, EMPTY_SHA256, NULL,
	  "c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
	  "host;x-amz-date",
	  "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197" },
	{ "get-vanilla-utf8-query", "GET", "/",
	  { { "\xe1\x88\xb4", "bar" } }, { HOST, XDATE }, EMPTY_SHA256, NULL,
	  "eb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073",
	  "host;x-amz-date",
	  "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04" },
	{ "get-vanilla-with-session-token", "GET", "/", {},
	  { HOST, XDATE,
	    { "X-Amz-Security-Token",
	      "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267" } },
	  EMPTY_SHA256, NULL,
	  "067b36aa60031588cea4a4cde1f21215227a047690c72247f1d70b32fbbfad2b",
	  "host;x-amz-date;x-amz-security-token",
	  "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8" },
	{ "get-header-key-duplicate", "GET", "/", {},
	  { HOST, { "My-Header1", "value2" }, { "My-Header1", "value2" },
	    { "My-Header1", "value1" }, XDATE },
	  EMPTY_SHA256,
	  "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\n"
	  "x-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n" EMPTY_SHA256,
	  "dc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
	  "host;my-header1;x-amz-date",
	  "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea" },
	{ "get-header-value-order", "GET", "/", {},
	  { HOST, { "My-Header1", "value4" }, { "My-Header1", "value1" },
	    { "My-Header1", "value3" }, { "My-Header1", "value2" }, XDATE },
	  EMPTY_SHA256, NULL,
	  "31ce73cd3f3d9f66977ad3dd957dc47af14df92fcd8509f59b349e9137c58b86",
	  "host;my-header1;x-amz-date",
	  "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01" },
	{ "get-header-value-trim", "GET", "/", {},
	  { HOST, { "My-Header1", " value1" }, { "My-Header2", " \"a   b   c\"" },
	    XDATE },
	  EMPTY_SHA256,
	  "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\n"
	  "my-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\n"
	  "host;my-header1;my-header2;x-amz-date\n" EMPTY_SHA256,
	  "a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
	  "host;my-header1;my-header2;x-amz-date",
	  "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736" },
	{ "post-vanilla", "POST", "/", {}, { HOST, XDATE }, EMPTY_SHA256, NULL,
	  NULL, "host;x-amz-date",
	  "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b" },
	{ "post-vanilla-query", "POST", "/", { { "Param1", "value1" } },
	  { HOST, XDATE }, EMPTY_SHA256, NULL,
	  "9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
	  "host;x-amz-date",
	  "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11" },
	{ "post-header-value-case", "POST", "/", {},
	  { HOST, { "My-Header1", "VALUE1" }, XDATE }, EMPTY_SHA256, NULL,
	  "d51ced243e649e3de6ef63afbbdcbca03131a21a7103a1583706a64618606a93",
	  "host;my-header1;x-amz-date",
	  "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d" },
	/* The 2015 suite: body "Param1=value1". */
	{ "post-x-www-form-urlencoded", "POST", "/", {},
	  { { "Content-Type", "application/x-www-form-urlencoded" }, HOST,
	    XDATE },
	  "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
	  NULL, NULL, "content-type;host;x-amz-date",
	  "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a" },
	/* The same request as aws-c-auth's suite carries it (more headers). */
	{ "post-x-www-form-urlencoded (aws-c-auth)", "POST", "/", {},
	  { { "Content-Type", "application/x-www-form-urlencoded" },
	    { "Content-Length", "13" },
	    { "x-amz-content-sha256",
	      "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e" },
	    HOST, XDATE },
	  "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
	  "POST\n/\n\ncontent-length:13\n"
	  "content-type:application/x-www-form-urlencoded\n"
	  "host:example.amazonaws.com\n"
	  "x-amz-content-sha256:9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e\n"
	  "x-amz-date:20150830T123600Z\n\n"
	  "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n"
	  "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
	  "b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb",
	  "content-length;content-type;host;x-amz-content-sha256;x-amz-date",
	  "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b" },
};

static size_t count_kv(const struct s3d_kv *kv, size_t max)
{
	size_t n = 0;

	while (n < max && kv[n].name)
		n++;
	return n;
}

static void run_vector(const struct vector *v, const char *ak, const char *sk,
		       const char *date, const char *region,
		       const char *service)
{
	struct s3d_sigv4_in in = { 0 };
	struct s3d_sigv4_out out;
	struct s3d_buf uri;
	char auth[512], sts_tail[65] = "";
	const char *nl;
	int err;

	s3d_buf_init(&uri, 0);
	s3d_uri_encode(&uri, v->path, strlen(v->path), false);
	in.method = v->method;
	in.uri = uri.p;
	in.query = v->query;
	in.nquery = count_kv(v->query, S3D_ARRAY_SIZE(v->query));
	in.headers = v->headers;
	in.nheaders = count_kv(v->headers, S3D_ARRAY_SIZE(v->headers));
	in.payload_hash = v->payload_hash;
	in.amz_date = date;
	in.region = region;
	in.service = service;
	in.access_key = ak;
	in.secret_key = sk;

	err = s3d_sigv4(&in, &out);
	is_int(err, 0, "%s: signs", v->name);
	if (v->creq)
		is_str(s3d_buf_str(&out.creq), v->creq,
		       "%s: canonical request", v->name);
	nl = strrchr(s3d_buf_str(&out.sts), '\n');
	if (nl)
		snprintf(sts_tail, sizeof(sts_tail), "%s", nl + 1);
	if (v->sts_hash)
		is_str(sts_tail, v->sts_hash,
		       "%s: string to sign (canonical request hash)", v->name);
	is_str(out.signature, v->signature, "%s: signature", v->name);
	snprintf(auth, sizeof(auth),
		 "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
		 ak, date, region, service, v->signed_headers, v->signature);
	is_str(s3d_buf_str(&out.auth), auth, "%s: Authorization header",
	       v->name);
	s3d_sigv4_out_free(&out);
	s3d_buf_free(&uri);
}

#define S3_AK		"AKIAIOSFODNN7EXAMPLE"
#define S3_SK		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_DATE		"20130524T000000Z"
#define S3_HOST		{ "Host", "examplebucket.s3.amazonaws.com" }
/* SHA-256 of "Welcome to Amazon S3.", the PUT Object example's body. */
#define PUT_SHA256	"44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"

static const struct vector s3_examples[] = {
	{ "S3 GET Object (Range bytes=0-9)", "GET", "/test.txt", {},
	  { S3_HOST, { "Range", "bytes=0-9" },
	    { "x-amz-content-sha256", EMPTY_SHA256 },
	    { "x-amz-date", S3_DATE } },
	  EMPTY_SHA256,
	  "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\n"
	  "range:bytes=0-9\nx-amz-content-sha256:" EMPTY_SHA256 "\n"
	  "x-amz-date:20130524T000000Z\n\n"
	  "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA256,
	  "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
	  "host;range;x-amz-content-sha256;x-amz-date",
	  "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41" },
	{ "S3 GET Bucket lifecycle (valueless parameter)", "GET", "/",
	  { { "lifecycle", "" } },
	  { S3_HOST, { "x-amz-content-sha256", EMPTY_SHA256 },
	    { "x-amz-date", S3_DATE } },
	  EMPTY_SHA256, NULL, NULL, "host;x-amz-content-sha256;x-amz-date",
	  "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543" },
	{ "S3 GET Bucket (List Objects, parameters sorted)", "GET", "/",
	  { { "prefix", "J" }, { "max-keys", "2" } },
	  { S3_HOST, { "x-amz-content-sha256", EMPTY_SHA256 },
	    { "x-amz-date", S3_DATE } },
	  EMPTY_SHA256, NULL, NULL, "host;x-amz-content-sha256;x-amz-date",
	  "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7" },
	{ "S3 PUT Object (a '$' in the key, a body)", "PUT", "/test$file.text", {},
	  { S3_HOST, { "Date", "Fri, 24 May 2013 00:00:00 GMT" },
	    { "x-amz-date", S3_DATE },
	    { "x-amz-storage-class", "REDUCED_REDUNDANCY" },
	    { "x-amz-content-sha256", PUT_SHA256 } },
	  PUT_SHA256,
	  "PUT\n/test%24file.text\n\ndate:Fri, 24 May 2013 00:00:00 GMT\n"
	  "host:examplebucket.s3.amazonaws.com\n"
	  "x-amz-content-sha256:" PUT_SHA256 "\n"
	  "x-amz-date:20130524T000000Z\n"
	  "x-amz-storage-class:REDUCED_REDUNDANCY\n\n"
	  "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
	  PUT_SHA256,
	  "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
	  "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
	  "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd" },
};

static void test_signing_key(void)
{
	unsigned char key[32];
	char hex[65];

	is_int(s3d_signing_key(SUITE_SK, "20120215", "us-east-1", "iam", key),
	       0, "signing key: derives");
	s3d_hex(key, 32, hex);
	is_str(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d",
	       "signing key: AWS example (iam, 20120215)");
}

static void test_hashes(void)
{
	char hex[65];

	s3d_sha256_hex("", 0, hex);
	is_str(hex, EMPTY_SHA256, "sha256 of the empty string");
	s3d_sha256_hex("Param1=value1", 13, hex);
	is_str(hex, "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
	       "sha256 of the suite's form body");
}

static void test_amz_date(void)
{
	char d[17];

	s3d_amz_date(1440938160, d);	/* 2015-08-30T12:36:00Z */
	is_str(d, SUITE_DATE, "x-amz-date formatting");
}

/* ---- what s3d_s3_build() sends is exactly what it signed ---- */

/* A header's value as sent ("Name;" is libcurl's empty header: ""). */
static char *hdr_value(const struct s3d_http_req *r, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < r->nheaders; i++) {
		if (strncasecmp(r->headers[i], name, n))
			continue;
		if (r->headers[i][n] == ':')
			return r->headers[i] + n + 2;
		if (r->headers[i][n] == ';' && !r->headers[i][n + 1])
			return r->headers[i] + n + 1;
	}
	return NULL;
}

static int unhex(char c)
{
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - '0';
}

static char *pct_decode(const char *s, size_t n)
{
	char *d = malloc(n + 1), *p = d;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n + 1) {
			*p++ = (char)(unhex(s[i + 1]) * 16 + unhex(s[i + 2]));
			i += 2;
		} else {
			*p++ = s[i];
		}
	}
	*p = '\0';
	return d;
}

/* Re-sign from the URL and header lines alone; compare Authorization. */
static void resign_check(const struct s3d_http_req *r, const char *what,
			 const char *sk, const char *date, const char *region)
{
	struct s3d_kv hdrs[S3D_HDR_MAX], q[8];
	struct s3d_sigv4_in in = { 0 };
	struct s3d_sigv4_out out;
	char *url = strdup(r->url), *path, *query, *auth, *ak, *slash;
	char *names[S3D_HDR_MAX], *qdec[16];
	size_t nh = 0, nq = 0, i, nd = 0;

	path = strstr(url, "://") + 3;
	path = strchr(path, '/');
	query = strchr(path, '?');
	if (query)
		*query++ = '\0';
	while (query && *query && nq < S3D_ARRAY_SIZE(q)) {
		size_t len = strcspn(query, "&");
		char *eq = memchr(query, '=', len);

		qdec[nd] = pct_decode(query, eq - query);
		qdec[nd + 1] = pct_decode(eq + 1, len - (eq + 1 - query));
		q[nq++] = (struct s3d_kv){ qdec[nd], qdec[nd + 1] };
		nd += 2;
		query += len + (query[len] == '&');
	}
	for (i = 0; i < r->nheaders; i++) {
		size_t nl = strcspn(r->headers[i], ":;");

		if (!strncmp(r->headers[i], "Authorization:", 14))
			continue;
		names[nh] = strndup(r->headers[i], nl);
		hdrs[nh] = (struct s3d_kv){ names[nh],
					    hdr_value(r, names[nh]) };
		nh++;
	}
	auth = hdr_value(r, "Authorization");
	ak = auth ? strstr(auth, "Credential=") : NULL;
	ak = ak ? strndup(ak + 11, strcspn(ak + 11, "/")) : strdup("");
	in = (struct s3d_sigv4_in){
		.method = r->method, .uri = path, .query = q, .nquery = nq,
		.headers = hdrs, .nheaders = nh,
		.payload_hash = "UNSIGNED-PAYLOAD", .amz_date = date,
		.region = region, .service = "s3", .access_key = ak,
		.secret_key = sk,
	};
	s3d_sigv4(&in, &out);
	is_str(auth, s3d_buf_str(&out.auth),
	       "build: %s: Authorization matches a re-signing of what is sent",
	       what);
	slash = strstr(s3d_buf_str(&out.auth), "SignedHeaders=");
	ok(slash && auth && strstr(auth, ";x-amz-content-sha256;") &&
	   strstr(auth, ";x-amz-date"),
	   "build: %s: x-amz-content-sha256 and x-amz-date are signed", what);
	s3d_sigv4_out_free(&out);
	for (i = 0; i < nh; i++)
		free(names[i]);
	for (i = 0; i < nd; i++)
		free(qdec[i]);
	free(ak);
	free(url);
}

static const char *signed_headers(const struct s3d_http_req *r)
{
	const char *a = hdr_value(r, "Authorization");

	a = a ? strstr(a, "SignedHeaders=") : NULL;
	return a ? a + 14 : "";
}

/* The signed header list of @r is @want. */
static void is_signed(const struct s3d_http_req *r, const char *want,
		      const char *what)
{
	const char *sh = signed_headers(r);
	size_t n = strcspn(sh, ",");
	char got[512];

	snprintf(got, sizeof(got), "%.*s", (int)n, sh);
	is_str(got, want, "build: %s: signed headers", what);
}

/* The write requests: methods, subresources, conditions, metadata. */
static void test_build_writes(void)
{
	struct s3d_s3 s3 = { 0 };
	struct s3d_http_req r;
	struct s3d_kv put[] = {
		{ "Content-Length", "5242881" },
		{ "Content-Type", "application/octet-stream" },
		{ "If-None-Match", "*" },
		{ "x-amz-meta-mode", "33188" },
		{ "X-Amz-Meta-Note", "  two  spaces " },
		{ "x-amz-meta-empty", "" },
	};
	struct s3d_kv part_q[] = {
		{ "uploadId", "VXBsb2FkIElE+/=.x~y" }, { "partNumber", "10" },
	};
	struct s3d_kv copy[] = {
		{ "x-amz-copy-source", "/bkt/src%20key" },
		{ "x-amz-copy-source-range", "bytes=0-5242879" },
		{ "x-amz-copy-source-if-match", "\"abc\"" },
	};
	struct s3d_kv up_q[] = { { "uploads", NULL } };
	struct s3d_kv many[S3D_HDR_MAX];
	time_t t = 1369353600;
	size_t i;

	s3d_s3_init(&s3, "http://127.0.0.1:4568", "us-east-1", 1, false);
	s3.creds.access_key = strdup(S3_AK);
	s3.creds.secret_key = strdup(S3_SK);

	is_int(s3d_s3_build(&s3, "PUT", "bkt", "d/new file", NULL, 0, put,
			    S3D_ARRAY_SIZE(put), t, &r), 0,
	       "build: PUT with a condition and metadata");
	is_str(r.method, "PUT", "build: PUT: method");
	is_str(r.url, "http://127.0.0.1:4568/bkt/d/new%20file", "build: PUT: URL");
	is_signed(&r, "content-length;content-type;host;if-none-match;"
		  "x-amz-content-sha256;x-amz-date;x-amz-meta-empty;"
		  "x-amz-meta-mode;x-amz-meta-note",
		  "PUT (length, type, condition, every x-amz-meta-*)");
	is_str(hdr_value(&r, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD",
	       "build: PUT: the payload stays unsigned");
	is_str(hdr_value(&r, "X-Amz-Meta-Note"), "  two  spaces ",
	       "build: PUT: a value is sent as given (trimmed only to sign)");
	for (i = 0; i < r.nheaders; i++)
		if (!strncmp(r.headers[i], "x-amz-meta-empty", 16))
			break;
	is_str(i < r.nheaders ? r.headers[i] : NULL, "x-amz-meta-empty;",
	       "build: PUT: an empty value goes as \"Name;\" (libcurl drops \"Name:\")");
	resign_check(&r, "PUT", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	is_int(s3d_s3_build(&s3, "POST", "bkt", "big", up_q, 1, NULL, 0, t,
			    &r), 0, "build: POST ?uploads (CreateMultipartUpload)");
	is_str(r.url, "http://127.0.0.1:4568/bkt/big?uploads=",
	       "build: POST ?uploads: the subresource as signed");
	resign_check(&r, "POST ?uploads", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	is_int(s3d_s3_build(&s3, "PUT", "bkt", "big", part_q, 2, put, 1, t,
			    &r), 0, "build: PUT ?partNumber&uploadId (UploadPart)");
	is_str(r.url,
	       "http://127.0.0.1:4568/bkt/big?partNumber=10&uploadId=VXBsb2FkIElE%2B%2F%3D.x~y",
	       "build: UploadPart: parameters sorted, the upload id encoded");
	resign_check(&r, "UploadPart", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	is_int(s3d_s3_build(&s3, "PUT", "bkt", "dst", part_q, 2, copy,
			    S3D_ARRAY_SIZE(copy), t, &r), 0,
	       "build: UploadPartCopy");
	is_signed(&r, "host;x-amz-content-sha256;x-amz-copy-source;"
		  "x-amz-copy-source-if-match;x-amz-copy-source-range;x-amz-date",
		  "UploadPartCopy (copy source, its range and condition)");
	resign_check(&r, "UploadPartCopy", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	is_int(s3d_s3_build(&s3, "DELETE", "bkt", "big", part_q, 1, NULL, 0,
			    t, &r), 0, "build: DELETE ?uploadId (AbortMultipartUpload)");
	is_str(r.method, "DELETE", "build: DELETE: method");
	resign_check(&r, "DELETE", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	is_int(s3d_s3_build(&s3, "PATCH", "bkt", "k", NULL, 0, NULL, 0, t, &r),
	       -EINVAL, "build: a method the engine cannot send is refused");
	for (i = 0; i < S3D_ARRAY_SIZE(many); i++)
		many[i] = (struct s3d_kv){ "x-amz-meta-n", "v" };
	s3.creds.token = strdup("tok");
	is_int(s3d_s3_build(&s3, "PUT", "bkt", "k", NULL, 0, many,
			    S3D_HDR_MAX - 5, t, &r), 0,
	       "build: S3D_HDR_MAX - 5 headers of the caller fit, token and all");
	is_int((long long)r.nheaders, S3D_HDR_MAX, "build: ... S3D_HDR_MAX in all");
	s3d_http_req_free(&r);
	is_int(s3d_s3_build(&s3, "PUT", "bkt", "k", NULL, 0, many,
			    S3D_HDR_MAX - 4, t, &r), -E2BIG,
	       "build: one more is -E2BIG");
	s3d_s3_fini(&s3);
}

/* What a failed S3 answer becomes. */
static void test_errno(void)
{
	static const struct {
		long status;
		const char *code;
		int err;
	} t[] = {
		{ 404, "NoSuchKey", -ENOENT },
		{ 404, "", -ENOENT },
		{ 403, "AccessDenied", -EACCES },
		{ 412, "PreconditionFailed", -ESTALE },
		{ 412, NULL, -ESTALE },
		{ 404, "NoSuchUpload", -ENOENT },
		{ 400, "EntityTooSmall", -EINVAL },
		{ 400, "InvalidPart", -EINVAL },
		{ 400, "InvalidPartOrder", -EINVAL },
		{ 400, "EntityTooLarge", -EFBIG },
		{ 413, "", -EFBIG },
		{ 501, "NotImplemented", -EOPNOTSUPP },
		{ 501, NULL, -EOPNOTSUPP },
		{ 200, "NotImplemented", -EOPNOTSUPP },
		{ 409, "ConditionalRequestConflict", -EIO },
		{ 400, "InvalidRequest", -EIO },
		{ 500, "InternalError", -EIO },
		{ 0, NULL, -EIO },
	};
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(t); i++)
		is_int(s3d_s3_errno(t[i].status, t[i].code), t[i].err,
		       "errno: %ld %s", t[i].status, t[i].code ?: "(no code)");
}

static void test_build(void)
{
	struct s3d_s3 s3 = { 0 };
	struct s3d_http_req r;
	struct s3d_kv q[] = {
		{ "list-type", "2" }, { "prefix", "dir/sub dir/" },
		{ "delimiter", "/" }, { "continuation-token", "a+b/c=" },
	};
	struct s3d_kv h[] = { { "Range", "bytes=0-1048575" },
			      { "If-Match", "\"abc\"" } };
	time_t t = 1369353600;	/* 2013-05-24T00:00:00Z */

	s3d_s3_init(&s3, "http://127.0.0.1:4568", "us-east-1", -1, false);
	s3.creds.access_key = strdup(S3_AK);
	s3.creds.secret_key = strdup(S3_SK);
	s3.creds.token = strdup("FwoGZXIvYXdzE+token/with=chars");

	is_int(s3d_s3_build(&s3, "GET", "bkt", "dir/a b+c.bin", NULL, 0, h, 2,
			    t, &r), 0, "build: ranged GET");
	is_str(r.url, "http://127.0.0.1:4568/bkt/dir/a%20b%2Bc.bin",
	       "build: path-style URL, key encoded, '/' kept");
	is_str(hdr_value(&r, "Host"), "127.0.0.1:4568",
	       "build: Host carries the port");
	is_str(hdr_value(&r, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD",
	       "build: UNSIGNED-PAYLOAD");
	is_str(hdr_value(&r, "x-amz-security-token"),
	       "FwoGZXIvYXdzE+token/with=chars", "build: session token sent");
	ok(hdr_value(&r, "Authorization") &&
	   strstr(hdr_value(&r, "Authorization"),
		  "SignedHeaders=host;if-match;range;x-amz-content-sha256;x-amz-date;x-amz-security-token,"),
	   "build: Range, If-Match and the token are signed");
	resign_check(&r, "ranged GET", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	is_int(s3d_s3_build(&s3, "GET", "bkt", "", q, 4, NULL, 0, t, &r), 0,
	       "build: ListObjectsV2");
	is_str(r.url,
	       "http://127.0.0.1:4568/bkt?continuation-token=a%2Bb%2Fc%3D&delimiter=%2F&list-type=2&prefix=dir%2Fsub%20dir%2F",
	       "build: listing URL has the sorted, encoded canonical query");
	resign_check(&r, "listing", S3_SK, S3_DATE, "us-east-1");
	s3d_http_req_free(&r);

	s3.anonymous = true;
	is_int(s3d_s3_build(&s3, "HEAD", "bkt", "k", NULL, 0, NULL, 0, t, &r),
	       0, "build: anonymous HEAD");
	ok(!hdr_value(&r, "Authorization") && !hdr_value(&r, "x-amz-date") &&
	   !hdr_value(&r, "x-amz-security-token"),
	   "build: anonymous requests carry no signature or token");
	s3d_http_req_free(&r);
	s3d_s3_fini(&s3);
}

/* A signature that did not depend on an input would pass the vectors above
 * only by luck; make sure each input moves it. */
static void test_sensitivity(void)
{
	const struct vector *v = &s3_examples[0];
	static const char *const fields[] = { "secret", "date", "region",
					      "service", "header", "uri",
					      "payload" };
	struct s3d_kv hdrs[4];
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(fields); i++) {
		struct s3d_sigv4_in in = {
			.method = "GET", .uri = "/test.txt",
			.headers = hdrs, .nheaders = 4,
			.payload_hash = EMPTY_SHA256, .amz_date = S3_DATE,
			.region = "us-east-1", .service = "s3",
			.access_key = S3_AK, .secret_key = S3_SK,
		};
		struct s3d_sigv4_out out;

		memcpy(hdrs, v->headers, sizeof(hdrs));
		switch (i) {
		case 0: in.secret_key = S3_SK "x"; break;
		case 1: in.amz_date = "20130525T000000Z"; break;
		case 2: in.region = "us-west-2"; break;
		case 3: in.service = "s4"; break;
		case 4: hdrs[1].value = "bytes=0-10"; break;
		case 5: in.uri = "/test.txT"; break;
		case 6: in.payload_hash = "UNSIGNED-PAYLOAD"; break;
		}
		s3d_sigv4(&in, &out);
		ok(strcmp(out.signature, v->signature) != 0,
		   "changing the %s changes the signature", fields[i]);
		s3d_sigv4_out_free(&out);
	}
}

int main(void)
{
	size_t i;

	s3d_log_level = S3D_LOG_ERR;
	test_hashes();
	test_amz_date();
	test_signing_key();
	for (i = 0; i < S3D_ARRAY_SIZE(suite); i++)
		run_vector(&suite[i], SUITE_AK, SUITE_SK, SUITE_DATE,
			   "us-east-1", "service");
	for (i = 0; i < S3D_ARRAY_SIZE(s3_examples); i++)
		run_vector(&s3_examples[i], S3_AK, S3_SK, S3_DATE, "us-east-1",
			   "s3");
	test_sensitivity();
	test_build();
	test_build_writes();
	test_errno();
	return tap_done();
}
