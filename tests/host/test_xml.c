// SPDX-License-Identifier: GPL-2.0
/*
 * ListObjectsV2 and Error bodies: pagination token, CommonPrefixes,
 * entity-escaped and non-ASCII keys, and refusal of what S3 never sends.
 */
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	test_etag_eq();
	test_page();
	test_last_page();
	test_url_encoded();
	test_refusals();
	test_skips();
	test_error();
	test_time();
	return tap_done();
}
