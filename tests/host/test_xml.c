// SPDX-License-Identifier: GPL-2.0
/*
 * ListObjectsV2 and Error bodies: pagination token, CommonPrefixes,
 * entity-escaped and non-ASCII keys, and refusal of what S3 never sends.
 * The write results (InitiateMultipartUpload, CompleteMultipartUpload with
 * an Error inside its 200, CopyObject/CopyPart) against hostile bodies, and
 * the CompleteMultipartUpload body we build.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/listguard.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xml.h"
#include "tap.h"

static const char page1[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	"<Name>bkt</Name><Prefix>data/</Prefix><KeyCount>5</KeyCount>"
	"<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter>"
	"<IsTruncated>true</IsTruncated>"
	"<ContinuationToken>prev</ContinuationToken>"
	"<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=&amp;x</NextContinuationToken>"
	"<Contents><Key>data/</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
	"<ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>0</Size>"
	"<StorageClass>STANDARD</StorageClass></Contents>"
	"<Contents><Key>data/a&amp;b &lt;c&gt; &apos;q&apos;.txt</Key>"
	"<LastModified>2009-10-12T17:50:30Z</LastModified>"
	"<ETag>\"9b2cf535f27731c974343645a3985328-12\"</ETag>"
	"<Size>5497558138880</Size><Owner><ID>x</ID></Owner></Contents>"
	"<Contents><Key>data/\xc3\xa9t\xc3\xa9 \xe1\x88\xb4.bin</Key>"
	"<LastModified>2026-01-02T03:04:05.123Z</LastModified>"
	"<ETag>&quot;e&quot;</ETag><Size>7</Size></Contents>"
	"<Contents><Key>data/smile&#x1F600;&#233;</Key>"
	"<ETag>&quot;s&quot;</ETag><Size>1</Size></Contents>"
	"<CommonPrefixes><Prefix>data/sub/</Prefix></CommonPrefixes>"
	"<CommonPrefixes><Prefix>data/z &amp; z/</Prefix></CommonPrefixes>"
	"</ListBucketResult>";

static void test_page(void)
{
	struct s3d_list_page pg;
	char why[128] = "";
	int err;

	err = s3d_xml_parse_list(page1, sizeof(page1) - 1, &pg, why, sizeof(why));
	if (!is_int(err, 0, "list: parses a full page"))
		printf("# %s\n", why);
	ok(pg.truncated, "list: IsTruncated");
	is_str(pg.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=&x",
	       "list: NextContinuationToken (entities decoded)");
	is_int((long long)pg.nobjs, 4, "list: four Contents");
	is_int((long long)pg.nprefixes, 2, "list: two CommonPrefixes");
	if (pg.nobjs == 4 && pg.nprefixes == 2) {
		is_str(pg.objs[0].key, "data/", "list: directory marker key");
		is_str(pg.objs[0].etag, "\"d41d8cd98f00b204e9800998ecf8427e\"",
		       "list: ETag keeps its quotes");
		is_int(pg.objs[0].mtime, 1255369830, "list: LastModified with millis");
		is_str(pg.objs[1].key, "data/a&b <c> 'q'.txt",
		       "list: entity-escaped key");
		is_int((long long)pg.objs[1].size, 5497558138880LL,
		       "list: 5 TiB size");
		is_int(pg.objs[1].mtime, 1255369830, "list: LastModified without millis");
		is_str(pg.objs[1].etag, "\"9b2cf535f27731c974343645a3985328-12\"",
		       "list: multipart ETag");
		is_str(pg.objs[2].key, "data/\xc3\xa9t\xc3\xa9 \xe1\x88\xb4.bin",
		       "list: UTF-8 key");
		is_int(pg.objs[2].mtime, 1767323045, "list: LastModified 2026");
		is_str(pg.objs[3].key, "data/smile\xf0\x9f\x98\x80\xc3\xa9",
		       "list: character references become UTF-8");
		is_int(pg.objs[3].mtime, 0, "list: missing LastModified reads 0");
		is_str(pg.prefixes[0], "data/sub/", "list: CommonPrefixes 1");
		is_str(pg.prefixes[1], "data/z & z/", "list: CommonPrefixes 2 escaped");
	}
	s3d_list_page_free(&pg);
}

static void test_last_page(void)
{
	static const char xml[] =
		"<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<KeyCount>0</KeyCount></ListBucketResult>";
	struct s3d_list_page pg;

	is_int(s3d_xml_parse_list(xml, sizeof(xml) - 1, &pg, NULL, 0), 0,
	       "list: empty last page");
	ok(!pg.truncated && !pg.next_token && !pg.nobjs && !pg.nprefixes,
	   "list: empty last page has nothing");
	s3d_list_page_free(&pg);
}

static void test_url_encoded(void)
{
	static const char enc[] =
		"<ListBucketResult><EncodingType>url</EncodingType>"
		"<IsTruncated>false</IsTruncated>"
		"<Contents><Key>d/a+b%2Bc%01d%E1%88%B4</Key><ETag>e</ETag><Size>1</Size></Contents>"
		"<CommonPrefixes><Prefix>d/sub+dir%2F/</Prefix></CommonPrefixes>"
		"</ListBucketResult>";
	static const char plain[] =
		"<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents><Key>d/a+b%2Bc</Key><ETag>e</ETag><Size>1</Size></Contents>"
		"</ListBucketResult>";
	struct s3d_list_page pg;

	is_int(s3d_xml_parse_list(enc, sizeof(enc) - 1, &pg, NULL, 0), 0,
	       "list: url-encoded page");
	is_str(pg.nobjs ? pg.objs[0].key : NULL, "d/a b+c\x01" "d\xe1\x88\xb4",
	       "list: EncodingType url: '+' is a space, %%XX a byte (control bytes too)");
	is_str(pg.nprefixes ? pg.prefixes[0] : NULL, "d/sub dir//",
	       "list: EncodingType url: common prefixes decoded too");
	s3d_list_page_free(&pg);
	is_int(s3d_xml_parse_list(plain, sizeof(plain) - 1, &pg, NULL, 0), 0,
	       "list: page without EncodingType");
	is_str(pg.nobjs ? pg.objs[0].key : NULL, "d/a+b%2Bc",
	       "list: without EncodingType keys are taken literally (s3rver)");
	s3d_list_page_free(&pg);
}

static void refuse(const char *xml, const char *what, const char *why_has)
{
	struct s3d_list_page pg;
	char why[160] = "";
	int err;

	err = s3d_xml_parse_list(xml, strlen(xml), &pg, why, sizeof(why));
	ok(err == -EINVAL && (!why_has || strstr(why, why_has)),
	   "list: refuses %s", what);
	if (err != -EINVAL || (why_has && !strstr(why, why_has)))
		printf("#   err %d, why '%s'\n", err, why);
	s3d_list_page_free(&pg);
}

/*
 * Elements nested without end: refused at the 17th level, before expat
 * holds millions of open elements (a 32 MiB page of them took 1.7 GiB).
 */
static void test_nesting(void)
{
	struct s3d_buf b;
	int i;

	s3d_buf_init(&b, 0);
	s3d_buf_adds(&b, "<ListBucketResult><Contents>");
	for (i = 0; i < 14; i++)
		s3d_buf_adds(&b, "<x>");
	for (i = 0; i < 14; i++)
		s3d_buf_adds(&b, "</x>");
	s3d_buf_adds(&b, "<Key>a</Key><ETag>e</ETag><Size>1</Size></Contents>"
		     "<IsTruncated>false</IsTruncated></ListBucketResult>");
	{
		struct s3d_list_page pg;

		ok(!s3d_xml_parse_list(b.p, b.len, &pg, NULL, 0) && pg.nobjs == 1,
		   "list: 16 levels of elements are taken");
		s3d_list_page_free(&pg);
	}
	s3d_buf_reset(&b);
	s3d_buf_adds(&b, "<ListBucketResult>");
	for (i = 0; i < 100000; i++)
		s3d_buf_adds(&b, "<a>");
	refuse(s3d_buf_str(&b), "elements nested 100 000 deep", "nested too deep");
	s3d_buf_reset(&b);
	s3d_buf_adds(&b, "<Error>");
	for (i = 0; i < 20; i++)
		s3d_buf_adds(&b, "<a>");
	for (i = 0; i < 20; i++)
		s3d_buf_adds(&b, "</a>");
	s3d_buf_adds(&b, "<Code>X</Code></Error>");
	{
		struct s3d_s3error e;

		is_int(s3d_xml_parse_error(b.p, b.len, &e), -EINVAL,
		       "error: an Error nested 21 deep is refused too");
	}
	s3d_buf_free(&b);
}

static void test_refusals(void)
{
	refuse("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
	       "a truncated page without a token", "NextContinuationToken");
	refuse("<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
	       "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>"
	       "<ListBucketResult><Contents><Key>&lol2;</Key></Contents>"
	       "</ListBucketResult>", "a DOCTYPE (entity expansion)",
	       "document type");
	refuse("<Error><Code>AccessDenied</Code></Error>",
	       "another document element", "unexpected document element");
	refuse("<ListBucketResult><Contents><Key>a</Key>",
	       "a truncated document", NULL);
	refuse("", "an empty body", NULL);
	refuse("<ListBucketResult><Contents><Key>a\x01</Key></Contents>"
	       "</ListBucketResult>", "characters XML 1.0 forbids", NULL);
	test_nesting();
}

/* One unusable entry is left out; the rest of the page stands. */
static void skips(const char *entry, const char *what, bool url, size_t n)
{
	struct s3d_buf b;
	struct s3d_list_page pg;
	char why[160] = "";
	int err;

	s3d_buf_init(&b, 0);
	s3d_buf_addf(&b, "<ListBucketResult>%s<IsTruncated>false</IsTruncated>"
		     "<Contents><Key>d/good1</Key><ETag>\"g1\"</ETag><Size>1</Size></Contents>"
		     "%s"
		     "<Contents><Key>d/good2</Key><ETag>\"g2\"</ETag><Size>2</Size></Contents>"
		     "<CommonPrefixes><Prefix>d/sub/</Prefix></CommonPrefixes>"
		     "</ListBucketResult>",
		     url ? "<EncodingType>url</EncodingType>" : "", entry);
	err = s3d_xml_parse_list(b.p, b.len, &pg, why, sizeof(why));
	ok(!err && pg.nobjs == 2 && pg.nprefixes == 1 && pg.nskipped == n &&
	   !strcmp(pg.objs[0].key, "d/good1") && !strcmp(pg.objs[1].key, "d/good2") &&
	   pg.objs[1].size == 2 && !strcmp(pg.objs[1].etag, "\"g2\""),
	   "list: skips %s, keeps the rest of the page", what);
	if (err || pg.nobjs != 2 || pg.nskipped != n)
		printf("#   err %d (%s), %zu objects, %zu skipped\n", err, why,
		       pg.nobjs, pg.nskipped);
	s3d_list_page_free(&pg);
	s3d_buf_free(&b);
}

static void test_skips(void)
{
	char esc[32];

	skips("<Contents><Key>d/a</Key><ETag>x</ETag><Size>12ab</Size></Contents>",
	      "a bad Size", false, 1);
	skips("<Contents><Key>d/a</Key><Size>1</Size></Contents>",
	      "Contents without ETag", false, 1);
	skips("<Contents><ETag>x</ETag><Size>1</Size></Contents>",
	      "Contents without Key", false, 1);
	skips("<Contents><Key>d/a</Key><ETag>\"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	      "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	      "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	      "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	      "\"</ETag><Size>1</Size></Contents>", "an ETag too long", false, 1);
	skips("<Contents><Key>d/a</Key><ETag>\"e&#13;&#10;X-Evil: 1\"</ETag><Size>1</Size></Contents>",
	      "an ETag with CR LF (a header injection)", false, 1);
	skips("<Contents><Key>d/a</Key><ETag>\"e&#9;\"</ETag><Size>1</Size></Contents>",
	      "an ETag with a tab", false, 1);
	skips("<Contents><Key>d/a</Key><ETag>\"e\x7f\"</ETag><Size>1</Size></Contents>",
	      "an ETag with DEL", false, 1);
	skips("<Contents><Key>d/a</Key><ETag></ETag><Size>1</Size></Contents>",
	      "an empty ETag", false, 1);
	skips("<Contents><Key>d/a%zz</Key><ETag>e</ETag><Size>1</Size></Contents>",
	      "a malformed url escape", true, 1);
	skips("<Contents><Key>d/a%00b</Key><ETag>e</ETag><Size>1</Size></Contents>",
	      "an encoded NUL", true, 1);
	skips("<CommonPrefixes><Prefix>d/x%G0/</Prefix></CommonPrefixes>"
	      "<Contents><Key>d/c%1b%5B31m</Key><ETag>e</ETag><Size>-1</Size></Contents>",
	      "a bad prefix and a bad key (one each)", true, 2);
	s3d_escape("a\x1b[31m\\\n\x7f\xc3\xa9", esc, sizeof(esc));
	is_str(esc, "a\\x1b[31m\\x5c\\x0a\\x7f\xc3\xa9",
	       "escape: control bytes and backslash as \\xNN, UTF-8 kept");
	s3d_escape("0123456789abcdefghij", esc, 12);
	is_str(esc, "01234567...", "escape: cut to fit, marked");
}

static void test_error(void)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<Error><Code>NoSuchKey</Code>"
		"<Message>The resource you requested does not exist</Message>"
		"<Resource>/mybucket/myfoto.jpg</Resource>"
		"<RequestId>4442587FB7D0A2F9</RequestId>"
		"<HostId>abc</HostId></Error>";
	static const char odd[] =
		"<Error><Code>A &amp; B</Code><Details><Code>inner</Code>"
		"</Details></Error>";
	struct s3d_s3error e;

	is_int(s3d_xml_parse_error(xml, sizeof(xml) - 1, &e), 0, "error: parses");
	is_str(e.code, "NoSuchKey", "error: Code");
	is_str(e.message, "The resource you requested does not exist",
	       "error: Message");
	is_str(e.request_id, "4442587FB7D0A2F9", "error: RequestId");
	is_int(s3d_xml_parse_error(odd, sizeof(odd) - 1, &e), 0,
	       "error: nested elements");
	is_str(e.code, "A & B", "error: only the top-level Code counts");
	ok(s3d_xml_parse_error("<html>502</html>", 16, &e) == -EINVAL &&
	   !e.code[0], "error: a proxy's HTML page is not an S3 error");
	ok(s3d_xml_parse_error("", 0, &e) == -EINVAL && !e.request_id[0],
	   "error: empty body (HEAD)");
}

static void test_time(void)
{
	time_t t = 1;

	is_int(s3d_parse_iso8601("1970-01-01T00:00:00.000Z", &t), 0,
	       "iso8601: epoch");
	is_int(t, 0, "iso8601: epoch value");
	ok(s3d_parse_iso8601("2024-13-01T00:00:00Z", &t) == -EINVAL,
	   "iso8601: month 13 refused");
	ok(s3d_parse_iso8601("2024-01-01 00:00:00Z", &t) == -EINVAL,
	   "iso8601: missing T refused");
	ok(s3d_parse_iso8601("2024-01-01T00:00:00+02:00", &t) == -EINVAL,
	   "iso8601: non-UTC offset refused");
	ok(s3d_parse_iso8601("2024-01-01T00:00:00.Z", &t) == -EINVAL,
	   "iso8601: empty fraction refused");
}

/* ETags name versions; quotes and a weak marker are not part of the name. */
static void test_etag_ok(void)
{
	ok(s3d_etag_ok("\"9b2cf535f27731c974343645a3985328-12\"", 36),
	   "etag_ok: S3's form");
	ok(s3d_etag_ok("W/\"a b\xc3\xa9\"", 9), "etag_ok: weak, a space, UTF-8");
	ok(!s3d_etag_ok("\"a\r\nX: y\"", 10), "etag_ok: CR LF refused");
	ok(!s3d_etag_ok("\"a\nb\"", 5), "etag_ok: LF refused");
	ok(!s3d_etag_ok("\"a\x1b[2J\"", 8), "etag_ok: ESC refused");
	ok(!s3d_etag_ok("\"a\x7f\"", 4), "etag_ok: DEL refused");
	ok(!s3d_etag_ok("\"a\0b\"", 5), "etag_ok: a NUL inside refused");
	ok(!s3d_etag_ok("", 0), "etag_ok: empty refused");
}

static void test_etag_eq(void)
{
	ok(s3d_etag_eq("\"abc\"", "\"abc\""), "etag: same quoted");
	ok(s3d_etag_eq("\"abc\"", "abc"), "etag: quoted GET vs unquoted listing");
	ok(s3d_etag_eq("abc", "\"abc\""), "etag: unquoted vs quoted");
	ok(s3d_etag_eq("W/\"abc\"", "\"abc\""), "etag: weak vs strong");
	ok(s3d_etag_eq("W/\"abc-3\"", "abc-3"), "etag: weak quoted vs bare");
	ok(!s3d_etag_eq("\"abc\"", "\"abd\""), "etag: different values differ");
	ok(!s3d_etag_eq("\"abc\"", "\"abc"), "etag: an unbalanced quote is kept");
	ok(!s3d_etag_eq("\"\"", "\"x\""), "etag: empty vs non-empty");
	ok(!s3d_etag_eq(NULL, "\"abc\""), "etag: NULL equals nothing");
}

static void test_initiate(void)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
		"<Bucket>example-bucket</Bucket><Key>example-object</Key>"
		"<UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA&amp;+/=</UploadId>"
		"</InitiateMultipartUploadResult>";
	static const char long_id[] =
		"<InitiateMultipartUploadResult><UploadId>abcdef</UploadId>"
		"</InitiateMultipartUploadResult>";
	char id[S3D_UPLOAD_ID_MAX + 1], why[160] = "";
	struct s3d_buf b;
	int err;

	err = s3d_xml_parse_initiate(xml, sizeof(xml) - 1, id, sizeof(id), why,
				     sizeof(why));
	if (!is_int(err, 0, "initiate: parses"))
		printf("#   %s\n", why);
	is_str(id, "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA&+/=",
	       "initiate: UploadId, entities decoded");
#define REFUSE_INIT(doc, what) do {					\
		id[0] = 'x';						\
		ok(s3d_xml_parse_initiate(doc, strlen(doc), id, sizeof(id),	\
					  why, sizeof(why)) == -EINVAL && !id[0], \
		   "initiate: refuses %s", what);			\
	} while (0)
	REFUSE_INIT("<InitiateMultipartUploadResult><Bucket>b</Bucket>"
		    "</InitiateMultipartUploadResult>", "a result without UploadId");
	REFUSE_INIT("<InitiateMultipartUploadResult><UploadId></UploadId>"
		    "</InitiateMultipartUploadResult>", "an empty UploadId");
	REFUSE_INIT("<InitiateMultipartUploadResult><UploadId>a</UploadId>"
		    "<UploadId>b</UploadId></InitiateMultipartUploadResult>",
		    "two UploadIds");
	REFUSE_INIT("<InitiateMultipartUploadResult><UploadId>abc",
		    "a truncated document");
	REFUSE_INIT("<Error><Code>AccessDenied</Code></Error>",
		    "an Error (it only comes with an error status)");
	REFUSE_INIT("<InitiateMultipartUploadResult><X><UploadId>a</UploadId></X>"
		    "</InitiateMultipartUploadResult>", "an UploadId deeper down only");
	REFUSE_INIT("<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\">]>"
		    "<InitiateMultipartUploadResult><UploadId>&a;&a;</UploadId>"
		    "</InitiateMultipartUploadResult>", "a DOCTYPE (entities)");
	REFUSE_INIT("<InitiateMultipartUploadResult><UploadId>&undefined;</UploadId>"
		    "</InitiateMultipartUploadResult>", "an undefined entity");
	ok(strstr(why, "undefined entity") != NULL, "initiate: ... says why (%s)", why);
	s3d_buf_init(&b, 0);
	s3d_buf_adds(&b, "<InitiateMultipartUploadResult><UploadId>");
	for (int i = 0; i < S3D_UPLOAD_ID_MAX + 1; i++)
		s3d_buf_addc(&b, 'u');
	s3d_buf_adds(&b, "</UploadId></InitiateMultipartUploadResult>");
	REFUSE_INIT(b.p, "an UploadId longer than S3D_UPLOAD_ID_MAX");
	s3d_buf_reset(&b);
	s3d_buf_adds(&b, "<InitiateMultipartUploadResult><UploadId>");
	for (int i = 0; i < (128 << 10); i++)
		s3d_buf_addc(&b, 'u');
	s3d_buf_adds(&b, "</UploadId></InitiateMultipartUploadResult>");
	REFUSE_INIT(b.p, "a 128 KiB UploadId (over the text limit)");
	s3d_buf_free(&b);
	id[0] = 'x';
	err = s3d_xml_parse_initiate(long_id, strlen(long_id), id, 4, NULL, 0);
	ok(err == -EINVAL && !id[0], "initiate: an id longer than the caller's buffer");
#undef REFUSE_INIT
}

static void test_complete(void)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
		"<Location>http://Example-Bucket.s3.region.amazonaws.com/Example-Object</Location>"
		"<Bucket>Example-Bucket</Bucket><Key>Example-Object</Key>"
		"<ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag>"
		"</CompleteMultipartUploadResult>";
	/* The failure S3 sends after the 200 went out, after keep-alive spaces. */
	static const char in200[] =
		"  \n \n  <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<Error><Code>InternalError</Code>"
		"<Message>We encountered an internal error. Please try again.</Message>"
		"<RequestId>656c76696e6727732072657175657374</RequestId>"
		"<HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId>"
		"</Error>";
	static const char bare[] =
		"\n\n<CompleteMultipartUploadResult><ETag>\"x-2\"</ETag>"
		"</CompleteMultipartUploadResult>";
	char etag[S3D_ETAG_MAX + 1], why[160] = "";
	struct s3d_s3error e;
	struct s3d_buf b;
	int err;

	err = s3d_xml_parse_complete(xml, sizeof(xml) - 1, etag, sizeof(etag),
				     &e, why, sizeof(why));
	if (!is_int(err, 0, "complete: parses"))
		printf("#   %s\n", why);
	is_str(etag, "\"3858f62230ac3c915f300c664312c11f-9\"",
	       "complete: ETag, quotes kept");
	is_str(e.code, "", "complete: no error");
	err = s3d_xml_parse_complete(in200, sizeof(in200) - 1, etag,
				     sizeof(etag), &e, why, sizeof(why));
	is_int(err, -EREMOTEIO, "complete: an Error inside a 200 is an error");
	is_str(e.code, "InternalError", "complete: ... with its Code");
	is_str(e.request_id, "656c76696e6727732072657175657374",
	       "complete: ... and its RequestId");
	is_str(etag, "", "complete: ... and no ETag");
	err = s3d_xml_parse_complete(bare, strlen(bare), etag, sizeof(etag),
				     &e, NULL, 0);
	ok(!err && !strcmp(etag, "\"x-2\""),
	   "complete: spaces before the document (no declaration) are skipped");
#define REFUSE_COMPLETE(doc, what) do {					\
		e.code[0] = 'x';					\
		ok(s3d_xml_parse_complete(doc, strlen(doc), etag,	\
					  sizeof(etag), &e, why,	\
					  sizeof(why)) == -EINVAL &&	\
		   !etag[0] && !e.code[0], "complete: refuses %s", what); \
	} while (0)
	REFUSE_COMPLETE("<CompleteMultipartUploadResult><Key>k</Key>"
			"</CompleteMultipartUploadResult>", "a result without ETag");
	REFUSE_COMPLETE("<CompleteMultipartUploadResult><ETag>\"a\"</ETag>",
			"a truncated result");
	REFUSE_COMPLETE("  <Error><Code>InternalError</Code>", "a truncated Error");
	REFUSE_COMPLETE("", "an empty body");
	REFUSE_COMPLETE("    ", "only spaces");
	REFUSE_COMPLETE("<html><body>502 Bad Gateway</body></html>",
			"a proxy's page");
	REFUSE_COMPLETE("<CopyObjectResult><ETag>\"a\"</ETag></CopyObjectResult>",
			"another result");
	REFUSE_COMPLETE("<CompleteMultipartUploadResult><ETag>\"a\"</ETag>"
			"<ETag>\"b\"</ETag></CompleteMultipartUploadResult>",
			"two ETags");
	s3d_buf_init(&b, 0);
	s3d_buf_adds(&b, "<CompleteMultipartUploadResult><ETag>\"");
	for (int i = 0; i < S3D_ETAG_MAX; i++)
		s3d_buf_addc(&b, 'e');
	s3d_buf_adds(&b, "\"</ETag></CompleteMultipartUploadResult>");
	REFUSE_COMPLETE(b.p, "an ETag over S3D_ETAG_MAX");
	s3d_buf_free(&b);
	REFUSE_COMPLETE("<CompleteMultipartUploadResult><ETag>\"a&#13;&#10;b\"</ETag>"
			"</CompleteMultipartUploadResult>",
			"an ETag with CR LF");
#undef REFUSE_COMPLETE
}

static void test_copy(void)
{
	static const char obj[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<CopyObjectResult><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
		"<ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>";
	static const char part[] =
		"<CopyPartResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
		"<LastModified>2011-04-11T20:34:56.000Z</LastModified>"
		"<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag></CopyPartResult>";
	static const char err200[] =
		"<Error><Code>SlowDown</Code><Message>Reduce</Message></Error>";
	static const char noetag[] =
		"<CopyPartResult><LastModified>x</LastModified></CopyPartResult>";
	static const char other[] =
		"<CompleteMultipartUploadResult><ETag>\"a\"</ETag>"
		"</CompleteMultipartUploadResult>";
	char etag[S3D_ETAG_MAX + 1];
	struct s3d_s3error e;

	ok(!s3d_xml_parse_copy(obj, sizeof(obj) - 1, etag, sizeof(etag), &e,
			       NULL, 0) &&
	   !strcmp(etag, "\"9b2cf535f27731c974343645a3985328\""),
	   "copy: CopyObjectResult ETag");
	ok(!s3d_xml_parse_copy(part, sizeof(part) - 1, etag, sizeof(etag), &e,
			       NULL, 0) &&
	   !strcmp(etag, "\"9b2cf535f27731c974343645a3985328\""),
	   "copy: CopyPartResult ETag (entities decoded)");
	ok(s3d_xml_parse_copy(err200, sizeof(err200) - 1, etag, sizeof(etag),
			      &e, NULL, 0) == -EREMOTEIO &&
	   !strcmp(e.code, "SlowDown") && !strcmp(e.message, "Reduce"),
	   "copy: an Error inside a 200, with its Code and Message");
	ok(s3d_xml_parse_copy(noetag, strlen(noetag), etag, sizeof(etag), &e,
			      NULL, 0) == -EINVAL, "copy: refuses a result without ETag");
	ok(s3d_xml_parse_copy(other, strlen(other), etag, sizeof(etag), &e,
			      NULL, 0) == -EINVAL, "copy: refuses another result");
}

static void test_build_complete(void)
{
	struct s3d_part parts[] = {
		{ 1, "\"a54357aff0632cce46d942af68356b38\"" },
		{ 2, "\"0c78aef83f66abc1fa1e8477f296d394\"" },
		{ 10000, "\"odd<&>'\"" },
	};
	struct s3d_part bad[2];
	struct s3d_buf b;
	char *big;

	s3d_buf_init(&b, 0);
	is_int(s3d_xml_build_complete(&b, parts, 3), 0, "build complete: three parts");
	is_str(b.p,
	       "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	       "<Part><PartNumber>1</PartNumber><ETag>&quot;a54357aff0632cce46d942af68356b38&quot;</ETag></Part>"
	       "<Part><PartNumber>2</PartNumber><ETag>&quot;0c78aef83f66abc1fa1e8477f296d394&quot;</ETag></Part>"
	       "<Part><PartNumber>10000</PartNumber><ETag>&quot;odd&lt;&amp;&gt;&apos;&quot;</ETag></Part>"
	       "</CompleteMultipartUpload>",
	       "build complete: the document, ETags escaped");
	s3d_buf_free(&b);

#define REFUSE_BUILD(p, n, what) do {					\
		s3d_buf_init(&b, 0);					\
		ok(s3d_xml_build_complete(&b, p, n) == -EINVAL && !b.len, \
		   "build complete: refuses %s", what);			\
		s3d_buf_free(&b);					\
	} while (0)
	REFUSE_BUILD(parts, 0, "no part");
	bad[0] = (struct s3d_part){ 2, "\"a\"" };
	bad[1] = (struct s3d_part){ 1, "\"b\"" };
	REFUSE_BUILD(bad, 2, "parts out of order");
	bad[1] = (struct s3d_part){ 2, "\"b\"" };
	REFUSE_BUILD(bad, 2, "a part number twice");
	bad[0] = (struct s3d_part){ 0, "\"a\"" };
	REFUSE_BUILD(bad, 1, "part number 0");
	bad[0] = (struct s3d_part){ 10001, "\"a\"" };
	REFUSE_BUILD(bad, 1, "part number 10001");
	bad[0] = (struct s3d_part){ 1, "" };
	REFUSE_BUILD(bad, 1, "an empty ETag");
	bad[0] = (struct s3d_part){ 1, NULL };
	REFUSE_BUILD(bad, 1, "no ETag");
	bad[0] = (struct s3d_part){ 1, "\"a\x01\"" };
	REFUSE_BUILD(bad, 1, "a control character XML cannot carry");
	big = malloc(S3D_ETAG_MAX + 2);
	memset(big, 'e', S3D_ETAG_MAX + 1);
	big[S3D_ETAG_MAX + 1] = '\0';
	bad[0] = (struct s3d_part){ 1, big };
	REFUSE_BUILD(bad, 1, "an ETag over S3D_ETAG_MAX");
	free(big);
#undef REFUSE_BUILD
}

/* A page of @n keys "k<first>".."k<first+n-1>" (zero-padded), truncated if @tok. */
static void guard_page(struct s3d_list_page *pg, int first, int n,
		       const char *tok)
{
	int i;

	memset(pg, 0, sizeof(*pg));
	pg->objs = calloc(n ? n : 1, sizeof(*pg->objs));
	for (i = 0; i < n; i++) {
		char k[32];

		snprintf(k, sizeof(k), "d/k%08d", first + i);
		pg->objs[i].key = strdup(k);
		pg->objs[i].etag = strdup("e");
	}
	pg->nobjs = n;
	pg->truncated = tok != NULL;
	pg->next_token = tok ? strdup(tok) : NULL;
}

static int guard_run(struct s3d_list_guard *g, int first, int n,
		     const char *tok, char *why, size_t whylen)
{
	struct s3d_list_page pg;
	int err;

	guard_page(&pg, first, n, tok);
	err = s3d_list_guard_page(g, &pg, why, whylen);
	s3d_list_page_free(&pg);
	return err;
}

static void test_list_guard(void)
{
	struct s3d_list_guard g;
	char why[320] = "", tok[32];
	int i, err = 0;

	s3d_list_guard_init(&g, 0);
	for (i = 0; i < 50 && !err; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		err = guard_run(&g, i * 10, 10, tok, why, sizeof(why));
	}
	ok(!err && !guard_run(&g, 500, 3, NULL, why, sizeof(why)),
	   "guard: 51 pages that move on, the last not truncated");
	s3d_list_guard_free(&g);

	s3d_list_guard_init(&g, 0);
	guard_run(&g, 0, 10, "A", why, sizeof(why));
	guard_run(&g, 10, 10, "B", why, sizeof(why));
	err = guard_run(&g, 20, 10, "A", why, sizeof(why));
	ok(err == -EINVAL && strstr(why, "repeats a continuation token"),
	   "guard: a token seen two pages before is refused (A, B, A)");
	if (err != -EINVAL)
		printf("#   err %d why '%s'\n", err, why);
	s3d_list_guard_free(&g);

	s3d_list_guard_init(&g, 0);
	guard_run(&g, 0, 10, "A", why, sizeof(why));
	err = guard_run(&g, 0, 10, "B", why, sizeof(why));
	ok(err == -EINVAL && strstr(why, "goes back"),
	   "guard: the same page again under a new token is refused");
	printf("#   %s\n", why);
	s3d_list_guard_free(&g);

	s3d_list_guard_init(&g, 0);
	err = 0;
	for (i = 0; i < 1000 && !err; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		err = guard_run(&g, 0, 0, tok, why, sizeof(why));
	}
	ok(err == -EINVAL && i == S3D_LIST_EMPTY_MAX && strstr(why, "without an entry"),
	   "guard: empty truncated pages end after %d in a row", S3D_LIST_EMPTY_MAX);
	s3d_list_guard_free(&g);

	s3d_list_guard_init(&g, 0);
	err = 0;
	for (i = 0; i < S3D_LIST_EMPTY_MAX * 3 && !err; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		err = guard_run(&g, i, i % 2, tok, why, sizeof(why));
	}
	ok(!err, "guard: empty pages between full ones are fine");
	s3d_list_guard_free(&g);

	s3d_list_guard_init(&g, 20);
	err = 0;
	for (i = 0; i < 100 && !err; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		err = guard_run(&g, i * 10, 10, tok, why, sizeof(why));
	}
	ok(err == -EFBIG && i == 20 && strstr(why, "more than 20 pages"),
	   "guard: a listing that never ends stops at max_pages (%d)", i);
	s3d_list_guard_free(&g);

	s3d_list_guard_init(&g, 20);
	for (i = 0, err = 0; i < 19 && !err; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		err = guard_run(&g, i * 10, 10, tok, why, sizeof(why));
	}
	ok(!err && !guard_run(&g, 1000, 10, NULL, why, sizeof(why)),
	   "guard: max_pages pages, the last not truncated, are fine");
	s3d_list_guard_free(&g);
}

int main(void)
{
	test_etag_ok();
	test_list_guard();
	test_etag_eq();
	test_page();
	test_last_page();
	test_url_encoded();
	test_refusals();
	test_skips();
	test_error();
	test_time();
	test_initiate();
	test_complete();
	test_copy();
	test_build_complete();
	return tap_done();
}
