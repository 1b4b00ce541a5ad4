/*
 * The kubelet's pod-resources API (PodResourcesLister.List, v1) over its
 * unix socket: gRPC on a minimal HTTP/2 client of our own (one connection,
 * one stream, HPACK decoding enough to read the trailers), the protobuf of
 * the answer, and the matching of its device ids to our GPUs. Every length
 * that comes from the socket is checked against what is left and capped.
 */
#include "backend/podres.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* ---- protobuf ---- */

/* A protobuf reader over buf[0..len): every read checks what is left. */
struct pb {
	const uint8_t *p, *end;
};

static int
pb_varint(struct pb *r, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->p >= r->end)
			return E_PARSE;
		b = *r->p++;
		if (shift == 63 && b > 1)
			return E_PARSE; /* past 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return E_PARSE;
}

/*
 * The next field: its number in *field, and for a length-delimited one its
 * bytes in *sub (other wire types are skipped: *sub is then empty and
 * *wire tells). Returns 1 for a field, 0 at the end, E_PARSE when malformed.
 */
static int
pb_next(struct pb *r, uint64_t *field, unsigned *wire, struct pb *sub)
{
	uint64_t key, n;

	if (r->p >= r->end)
		return 0;
	if (pb_varint(r, &key) < 0)
		return E_PARSE;
	*field = key >> 3;
	*wire = (unsigned)(key & 7);
	sub->p = sub->end = r->p;
	if (*field == 0)
		return E_PARSE;
	switch (*wire) {
	case 0:
		return pb_varint(r, &n) < 0 ? E_PARSE : 1;
	case 1:
		n = 8;
		break;
	case 2:
		if (pb_varint(r, &n) < 0)
			return E_PARSE;
		break;
	case 5:
		n = 4;
		break;
	default: /* groups (3, 4) are not in this API; 6, 7 do not exist */
		return E_PARSE;
	}
	if (n > (uint64_t)(r->end - r->p))
		return E_PARSE;
	if (*wire == 2) {
		sub->p = r->p;
		sub->end = r->p + n;
	}
	r->p += n;
	return 1;
}

/* A copy of a string field; "" for one the message did not have. */
static char *
pb_str(const struct pb *s)
{
	if (!s->p)
		return xstrdup("");
	return xstrndup((const char *)s->p, (size_t)(s->end - s->p));
}

void
podres_list_release(struct podres_list *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		free(l->v[i].namespace_);
		free(l->v[i].pod);
		free(l->v[i].container);
		free(l->v[i].resource);
		free(l->v[i].device_id);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

bool
podres_is_gpu_resource(const char *r)
{
	return !strcmp(r, "nvidia.com/gpu") || !strncmp(r, "nvidia.com/mig-", 15) ||
	       !strcmp(r, "amd.com/gpu") || !strcmp(r, "gpu.intel.com/i915") ||
	       !strcmp(r, "gpu.intel.com/xe");
}

/* The names a device id is filed under. */
struct owner {
	struct pb ns, pod, container;
};

/* ContainerDevices { string resource_name = 1; repeated string device_ids = 2; ... } */
static int
decode_devices(struct pb r, const struct owner *o, struct podres_list *out)
{
	struct pb f, res = { NULL, NULL }, scan = r;
	uint64_t field;
	unsigned wire;
	int rc;
	char *resource;

	/* the resource name may come after the ids */
	while ((rc = pb_next(&scan, &field, &wire, &f)) > 0)
		if (field == 1 && wire == 2)
			res = f;
	if (rc < 0)
		return rc;
	if (!res.p)
		return 0;
	resource = pb_str(&res);
	if (memchr(res.p, '\0', (size_t)(res.end - res.p)) || !podres_is_gpu_resource(resource)) {
		free(resource);
		return 0;
	}
	while ((rc = pb_next(&r, &field, &wire, &f)) > 0) {
		struct podres_alloc *a;

		if (field != 2 || wire != 2)
			continue;
		if (out->nr >= PODRES_MAX_ALLOC) {
			out->truncated = true;
			break;
		}
		ALLOC_GROW(out->v, out->nr + 1, out->alloc);
		a = &out->v[out->nr++];
		a->namespace_ = pb_str(&o->ns);
		a->pod = pb_str(&o->pod);
		a->container = pb_str(&o->container);
		a->resource = xstrdup(resource);
		a->device_id = pb_str(&f);
	}
	free(resource);
	return rc < 0 ? rc : 0;
}

/* ContainerResources { string name = 1; repeated ContainerDevices devices = 2; ... } */
static int
decode_container(struct pb r, struct owner *o, struct podres_list *out)
{
	struct pb f, scan = r;
	uint64_t field;
	unsigned wire;
	int rc;

	o->container.p = o->container.end = NULL;
	while ((rc = pb_next(&scan, &field, &wire, &f)) > 0)
		if (field == 1 && wire == 2)
			o->container = f;
	if (rc < 0)
		return rc;
	while ((rc = pb_next(&r, &field, &wire, &f)) > 0)
		if (field == 2 && wire == 2 && decode_devices(f, o, out) < 0)
			return E_PARSE;
	return rc < 0 ? rc : 0;
}

/* PodResources { string name = 1; string namespace = 2; repeated ContainerResources containers = 3;
 * } */
static int
decode_pod(struct pb r, struct podres_list *out)
{
	struct owner o;
	struct pb f, scan = r;
	uint64_t field;
	unsigned wire;
	int rc;

	memset(&o, 0, sizeof(o));
	while ((rc = pb_next(&scan, &field, &wire, &f)) > 0) {
		if (field == 1 && wire == 2)
			o.pod = f;
		else if (field == 2 && wire == 2)
			o.ns = f;
	}
	if (rc < 0)
		return rc;
	while ((rc = pb_next(&r, &field, &wire, &f)) > 0)
		if (field == 3 && wire == 2 && decode_container(f, &o, out) < 0)
			return E_PARSE;
	return rc < 0 ? rc : 0;
}

int
podres_decode(const uint8_t *buf, size_t len, struct podres_list *out, struct err *err)
{
	struct pb r = { buf, buf + len }, f;
	uint64_t field;
	unsigned wire;
	int rc;

	while ((rc = pb_next(&r, &field, &wire, &f)) > 0)
		if (field == 1 && wire == 2 && (rc = decode_pod(f, out)) < 0)
			break;
	if (rc < 0)
		return err_set(
		        err, E_PARSE,
		        "the kubelet's pod-resources answer is malformed protobuf (at byte %zu of %zu)",
		        (size_t)(r.p - buf), len);
	return 0;
}

/* ---- HPACK (RFC 7541): enough to read the response's header blocks ---- */

/* The Huffman code of each symbol 0..256 (256 is EOS): code, length in bits (appendix B). */
static const struct {
	uint32_t code;
	uint8_t len;
} huff[257] = {
	{ 0x1ff8, 13 },     { 0x7fffd8, 23 },   { 0xfffffe2, 28 },  { 0xfffffe3, 28 },
	{ 0xfffffe4, 28 },  { 0xfffffe5, 28 },  { 0xfffffe6, 28 },  { 0xfffffe7, 28 },
	{ 0xfffffe8, 28 },  { 0xffffea, 24 },   { 0x3ffffffc, 30 }, { 0xfffffe9, 28 },
	{ 0xfffffea, 28 },  { 0x3ffffffd, 30 }, { 0xfffffeb, 28 },  { 0xfffffec, 28 },
	{ 0xfffffed, 28 },  { 0xfffffee, 28 },  { 0xfffffef, 28 },  { 0xffffff0, 28 },
	{ 0xffffff1, 28 },  { 0xffffff2, 28 },  { 0x3ffffffe, 30 }, { 0xffffff3, 28 },
	{ 0xffffff4, 28 },  { 0xffffff5, 28 },  { 0xffffff6, 28 },  { 0xffffff7, 28 },
	{ 0xffffff8, 28 },  { 0xffffff9, 28 },  { 0xffffffa, 28 },  { 0xffffffb, 28 },
	{ 0x14, 6 },        { 0x3f8, 10 },      { 0x3f9, 10 },      { 0xffa, 12 },
	{ 0x1ff9, 13 },     { 0x15, 6 },        { 0xf8, 8 },        { 0x7fa, 11 },
	{ 0x3fa, 10 },      { 0x3fb, 10 },      { 0xf9, 8 },        { 0x7fb, 11 },
	{ 0xfa, 8 },        { 0x16, 6 },        { 0x17, 6 },        { 0x18, 6 },
	{ 0x0, 5 },         { 0x1, 5 },         { 0x2, 5 },         { 0x19, 6 },
	{ 0x1a, 6 },        { 0x1b, 6 },        { 0x1c, 6 },        { 0x1d, 6 },
	{ 0x1e, 6 },        { 0x1f, 6 },        { 0x5c, 7 },        { 0xfb, 8 },
	{ 0x7ffc, 15 },     { 0x20, 6 },        { 0xffb, 12 },      { 0x3fc, 10 },
	{ 0x1ffa, 13 },     { 0x21, 6 },        { 0x5d, 7 },        { 0x5e, 7 },
	{ 0x5f, 7 },        { 0x60, 7 },        { 0x61, 7 },        { 0x62, 7 },
	{ 0x63, 7 },        { 0x64, 7 },        { 0x65, 7 },        { 0x66, 7 },
	{ 0x67, 7 },        { 0x68, 7 },        { 0x69, 7 },        { 0x6a, 7 },
	{ 0x6b, 7 },        { 0x6c, 7 },        { 0x6d, 7 },        { 0x6e, 7 },
	{ 0x6f, 7 },        { 0x70, 7 },        { 0x71, 7 },        { 0x72, 7 },
	{ 0xfc, 8 },        { 0x73, 7 },        { 0xfd, 8 },        { 0x1ffb, 13 },
	{ 0x7fff0, 19 },    { 0x1ffc, 13 },     { 0x3ffc, 14 },     { 0x22, 6 },
	{ 0x7ffd, 15 },     { 0x3, 5 },         { 0x23, 6 },        { 0x4, 5 },
	{ 0x24, 6 },        { 0x5, 5 },         { 0x25, 6 },        { 0x26, 6 },
	{ 0x27, 6 },        { 0x6, 5 },         { 0x74, 7 },        { 0x75, 7 },
	{ 0x28, 6 },        { 0x29, 6 },        { 0x2a, 6 },        { 0x7, 5 },
	{ 0x2b, 6 },        { 0x76, 7 },        { 0x2c, 6 },        { 0x8, 5 },
	{ 0x9, 5 },         { 0x2d, 6 },        { 0x77, 7 },        { 0x78, 7 },
	{ 0x79, 7 },        { 0x7a, 7 },        { 0x7b, 7 },        { 0x7ffe, 15 },
	{ 0x7fc, 11 },      { 0x3ffd, 14 },     { 0x1ffd, 13 },     { 0xffffffc, 28 },
	{ 0xfffe6, 20 },    { 0x3fffd2, 22 },   { 0xfffe7, 20 },    { 0xfffe8, 20 },
	{ 0x3fffd3, 22 },   { 0x3fffd4, 22 },   { 0x3fffd5, 22 },   { 0x7fffd9, 23 },
	{ 0x3fffd6, 22 },   { 0x7fffda, 23 },   { 0x7fffdb, 23 },   { 0x7fffdc, 23 },
	{ 0x7fffdd, 23 },   { 0x7fffde, 23 },   { 0xffffeb, 24 },   { 0x7fffdf, 23 },
	{ 0xffffec, 24 },   { 0xffffed, 24 },   { 0x3fffd7, 22 },   { 0x7fffe0, 23 },
	{ 0xffffee, 24 },   { 0x7fffe1, 23 },   { 0x7fffe2, 23 },   { 0x7fffe3, 23 },
	{ 0x7fffe4, 23 },   { 0x1fffdc, 21 },   { 0x3fffd8, 22 },   { 0x7fffe5, 23 },
	{ 0x3fffd9, 22 },   { 0x7fffe6, 23 },   { 0x7fffe7, 23 },   { 0xffffef, 24 },
	{ 0x3fffda, 22 },   { 0x1fffdd, 21 },   { 0xfffe9, 20 },    { 0x3fffdb, 22 },
	{ 0x3fffdc, 22 },   { 0x7fffe8, 23 },   { 0x7fffe9, 23 },   { 0x1fffde, 21 },
	{ 0x7fffea, 23 },   { 0x3fffdd, 22 },   { 0x3fffde, 22 },   { 0xfffff0, 24 },
	{ 0x1fffdf, 21 },   { 0x3fffdf, 22 },   { 0x7fffeb, 23 },   { 0x7fffec, 23 },
	{ 0x1fffe0, 21 },   { 0x1fffe1, 21 },   { 0x3fffe0, 22 },   { 0x1fffe2, 21 },
	{ 0x7fffed, 23 },   { 0x3fffe1, 22 },   { 0x7fffee, 23 },   { 0x7fffef, 23 },
	{ 0xfffea, 20 },    { 0x3fffe2, 22 },   { 0x3fffe3, 22 },   { 0x3fffe4, 22 },
	{ 0x7ffff0, 23 },   { 0x3fffe5, 22 },   { 0x3fffe6, 22 },   { 0x7ffff1, 23 },
	{ 0x3ffffe0, 26 },  { 0x3ffffe1, 26 },  { 0xfffeb, 20 },    { 0x7fff1, 19 },
	{ 0x3fffe7, 22 },   { 0x7ffff2, 23 },   { 0x3fffe8, 22 },   { 0x1ffffec, 25 },
	{ 0x3ffffe2, 26 },  { 0x3ffffe3, 26 },  { 0x3ffffe4, 26 },  { 0x7ffffde, 27 },
	{ 0x7ffffdf, 27 },  { 0x3ffffe5, 26 },  { 0xfffff1, 24 },   { 0x1ffffed, 25 },
	{ 0x7fff2, 19 },    { 0x1fffe3, 21 },   { 0x3ffffe6, 26 },  { 0x7ffffe0, 27 },
	{ 0x7ffffe1, 27 },  { 0x3ffffe7, 26 },  { 0x7ffffe2, 27 },  { 0xfffff2, 24 },
	{ 0x1fffe4, 21 },   { 0x1fffe5, 21 },   { 0x3ffffe8, 26 },  { 0x3ffffe9, 26 },
	{ 0xffffffd, 28 },  { 0x7ffffe3, 27 },  { 0x7ffffe4, 27 },  { 0x7ffffe5, 27 },
	{ 0xfffec, 20 },    { 0xfffff3, 24 },   { 0xfffed, 20 },    { 0x1fffe6, 21 },
	{ 0x3fffe9, 22 },   { 0x1fffe7, 21 },   { 0x1fffe8, 21 },   { 0x7ffff3, 23 },
	{ 0x3fffea, 22 },   { 0x3fffeb, 22 },   { 0x1ffffee, 25 },  { 0x1ffffef, 25 },
	{ 0xfffff4, 24 },   { 0xfffff5, 24 },   { 0x3ffffea, 26 },  { 0x7ffff4, 23 },
	{ 0x3ffffeb, 26 },  { 0x7ffffe6, 27 },  { 0x3ffffec, 26 },  { 0x3ffffed, 26 },
	{ 0x7ffffe7, 27 },  { 0x7ffffe8, 27 },  { 0x7ffffe9, 27 },  { 0x7ffffea, 27 },
	{ 0x7ffffeb, 27 },  { 0xffffffe, 28 },  { 0x7ffffec, 27 },  { 0x7ffffed, 27 },
	{ 0x7ffffee, 27 },  { 0x7ffffef, 27 },  { 0x7fffff0, 27 },  { 0x3ffffee, 26 },
	{ 0x3fffffff, 30 },
};

/* The symbols sorted by (length, code), and per length the first code and its place. */
static struct {
	bool ready;
	uint16_t sym[257];
	uint32_t first[31]; /* first code of each length */
	uint16_t start[31]; /* its index in sym[] */
	uint16_t count[31];
} hdec;

static void
huff_init(void)
{
	unsigned n = 0;

	if (hdec.ready)
		return;
	for (unsigned len = 5; len <= 30; len++) {
		hdec.start[len] = (uint16_t)n;
		for (unsigned s = 0; s < 257; s++) {
			if (huff[s].len != len)
				continue;
			/* insertion by code: codes of one length are consecutive (canonical) */
			unsigned k = n++;

			while (k > hdec.start[len] && huff[hdec.sym[k - 1]].code > huff[s].code) {
				hdec.sym[k] = hdec.sym[k - 1];
				k--;
			}
			hdec.sym[k] = (uint16_t)s;
		}
		hdec.count[len] = (uint16_t)(n - hdec.start[len]);
		hdec.first[len] = hdec.count[len] ? huff[hdec.sym[hdec.start[len]]].code : 0;
	}
	hdec.ready = true;
}

int
podres_huffman_decode(const uint8_t *buf, size_t len, struct strbuf *out)
{
	uint32_t acc = 0;
	unsigned nbits = 0;

	huff_init();
	for (size_t i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--) {
			acc = (acc << 1) | ((buf[i] >> b) & 1);
			nbits++;
			if (nbits < 5)
				continue;
			if (nbits > 30)
				return E_PARSE;
			if (hdec.count[nbits] && acc >= hdec.first[nbits] &&
			    acc - hdec.first[nbits] < hdec.count[nbits]) {
				unsigned s =
				        hdec.sym[hdec.start[nbits] + (acc - hdec.first[nbits])];

				if (s == 256)
					return E_PARSE; /* EOS inside a string */
				strbuf_addch(out, (int)s);
				acc = 0;
				nbits = 0;
			}
		}
	}
	/* padding: fewer than 8 bits, all ones (a prefix of EOS) */
	if (nbits > 7 || acc != (1u << nbits) - 1)
		return E_PARSE;
	return 0;
}

static const char *const static_names[62] = {
	NULL,
	":authority",
	":method",
	":method",
	":path",
	":path",
	":scheme",
	":scheme",
	":status",
	":status",
	":status",
	":status",
	":status",
	":status",
	":status",
	"accept-charset",
	"accept-encoding",
	"accept-language",
	"accept-ranges",
	"accept",
	"access-control-allow-origin",
	"age",
	"allow",
	"authorization",
	"cache-control",
	"content-disposition",
	"content-encoding",
	"content-language",
	"content-length",
	"content-location",
	"content-range",
	"content-type",
	"cookie",
	"date",
	"etag",
	"expect",
	"expires",
	"from",
	"host",
	"if-match",
	"if-modified-since",
	"if-none-match",
	"if-range",
	"if-unmodified-since",
	"last-modified",
	"link",
	"location",
	"max-forwards",
	"proxy-authenticate",
	"proxy-authorization",
	"range",
	"referer",
	"refresh",
	"retry-after",
	"server",
	"set-cookie",
	"strict-transport-security",
	"transfer-encoding",
	"user-agent",
	"vary",
	"via",
	"www-authenticate",
};
static const char *const static_values[15] = {
	NULL,  "",    "GET", "POST", "/",   "/index.html", "http", "https",
	"200", "204", "206", "304",  "400", "404",         "500",
};

#define HPACK_TABLE_SIZE 4096 /* SETTINGS_HEADER_TABLE_SIZE: the default, which we keep */
#define H2_MAX_FRAME     16384
#define H2_MAX_HEADERS   (64u << 10)
#define H2_WINDOW        (1u << 20) /* our receive window, stream and connection */

struct hentry {
	char *name, *value;
};

struct hpack {
	struct hentry *v; /* newest first */
	size_t nr, alloc;
	size_t size, max;
};

static void
hpack_evict(struct hpack *t, size_t room)
{
	while (t->nr && t->size + room > t->max) {
		struct hentry *e = &t->v[--t->nr];

		t->size -= strlen(e->name) + strlen(e->value) + 32;
		free(e->name);
		free(e->value);
	}
}

static void
hpack_add(struct hpack *t, const char *name, const char *value)
{
	size_t sz = strlen(name) + strlen(value) + 32;

	hpack_evict(t, sz);
	if (sz > t->max)
		return; /* larger than the table: it empties it, and is not kept */
	ALLOC_GROW(t->v, t->nr + 1, t->alloc);
	memmove(t->v + 1, t->v, t->nr * sizeof(*t->v));
	t->v[0].name = xstrdup(name);
	t->v[0].value = xstrdup(value);
	t->nr++;
	t->size += sz;
}

static void
hpack_release(struct hpack *t)
{
	t->max = 0;
	hpack_evict(t, 0);
	free(t->v);
}

/* An integer of an n-bit prefix; at most 2^28, which no field here comes near. */
static int
hp_int(struct pb *r, unsigned nbits, uint32_t *out)
{
	uint32_t mask = (1u << nbits) - 1, v;

	if (r->p >= r->end)
		return E_PARSE;
	v = *r->p++ & mask;
	if (v == mask) {
		for (unsigned shift = 0;; shift += 7) {
			uint8_t b;

			if (r->p >= r->end || shift > 21)
				return E_PARSE;
			b = *r->p++;
			v += (uint32_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
	}
	*out = v;
	return 0;
}

/* A string literal (Huffman or not) into sb (reset first). */
static int
hp_str(struct pb *r, struct strbuf *sb)
{
	bool huffman;
	uint32_t n;

	strbuf_reset(sb);
	if (r->p >= r->end)
		return E_PARSE;
	huffman = (*r->p & 0x80) != 0;
	if (hp_int(r, 7, &n) < 0 || n > (size_t)(r->end - r->p))
		return E_PARSE;
	if (huffman) {
		if (podres_huffman_decode(r->p, n, sb) < 0)
			return E_PARSE;
	} else {
		strbuf_add(sb, r->p, n);
	}
	r->p += n;
	return memchr(sb->buf, '\0', sb->len) ? E_PARSE : 0;
}

/* Entry idx (1-based) of the static then the dynamic table. */
static int
hp_lookup(const struct hpack *t, uint32_t idx, const char **name, const char **value)
{
	if (idx == 0)
		return E_PARSE;
	if (idx <= 61) {
		*name = static_names[idx];
		*value = idx < 15 ? static_values[idx] : "";
		return 0;
	}
	if (idx - 62 >= t->nr)
		return E_PARSE;
	*name = t->v[idx - 62].name;
	*value = t->v[idx - 62].value;
	return 0;
}

/* ---- HTTP/2 (RFC 9113): one stream, client side ---- */

enum {
	FT_DATA = 0,
	FT_HEADERS = 1,
	FT_RST_STREAM = 3,
	FT_SETTINGS = 4,
	FT_PUSH_PROMISE = 5,
	FT_PING = 6,
	FT_GOAWAY = 7,
	FT_WINDOW_UPDATE = 8,
	FT_CONTINUATION = 9,
};
#define FL_END_STREAM  0x1
#define FL_ACK         0x1
#define FL_END_HEADERS 0x4
#define FL_PADDED      0x8
#define FL_PRIORITY    0x20

struct podres_h2 {
	struct strbuf out; /* to send */
	size_t out_sent;   /* of out, already sent */
	struct strbuf in;  /* received, not yet a whole frame */
	struct strbuf hdr; /* the header block being gathered */
	bool hdr_open;     /* HEADERS seen without END_HEADERS: CONTINUATION must follow */
	bool hdr_end_stream;
	unsigned nr_blocks; /* header blocks of stream 1 decoded */
	struct hpack table;
	bool hpack_broken;  /* a block could not be decoded: the later ones cannot be read */
	struct strbuf data; /* the gRPC bytes of stream 1 */
	size_t unacked;     /* bytes received since our last WINDOW_UPDATE */
	bool done;
	int http_status; /* :status; 0 = unknown */
	int grpc_status; /* -1 = unknown */
	char grpc_message[128];
};

static void
frame_head(struct strbuf *sb, size_t len, unsigned type, unsigned flags, uint32_t stream)
{
	uint8_t h[9] = { (uint8_t)(len >> 16),    (uint8_t)(len >> 8),    (uint8_t)len,
		         (uint8_t)type,           (uint8_t)flags,         (uint8_t)(stream >> 24),
		         (uint8_t)(stream >> 16), (uint8_t)(stream >> 8), (uint8_t)stream };

	strbuf_add(sb, h, sizeof(h));
}

static void
put32(struct strbuf *sb, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	strbuf_add(sb, b, sizeof(b));
}

static void
window_update(struct strbuf *sb, uint32_t stream, uint32_t inc)
{
	frame_head(sb, 4, FT_WINDOW_UPDATE, 0, stream);
	put32(sb, inc);
}

/* A literal header field without indexing, with a new name (no Huffman). */
static void
hp_field(struct strbuf *sb, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	/* the names and values here are short: one-byte lengths */
	if (nl > 126 || vl > 126)
		BUG("header field too long");
	strbuf_addch(sb, 0x00);
	strbuf_addch(sb, (int)nl);
	strbuf_add(sb, name, nl);
	strbuf_addch(sb, (int)vl);
	strbuf_add(sb, value, vl);
}

struct podres_h2 *
podres_h2_new(const char *path)
{
	struct podres_h2 *h = xcalloc(1, sizeof(*h));
	struct strbuf block = STRBUF_INIT;
	static const uint8_t settings[] = {
		0x00,
		0x02,
		0,
		0,
		0,
		0, /* ENABLE_PUSH 0 */
		0x00,
		0x04,
		(uint8_t)(H2_WINDOW >> 24),
		(uint8_t)(H2_WINDOW >> 16),
		(uint8_t)(H2_WINDOW >> 8),
		(uint8_t)H2_WINDOW, /* INITIAL_WINDOW_SIZE */
		0x00,
		0x06,
		0,
		1,
		0,
		0, /* MAX_HEADER_LIST_SIZE 64 KiB */
	};
	static const uint8_t grpc_empty[5] = { 0, 0, 0, 0, 0 };

	strbuf_init(&h->out, 256);
	h->grpc_status = -1;
	h->table.max = HPACK_TABLE_SIZE;
	strbuf_addstr(&h->out, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	frame_head(&h->out, sizeof(settings), FT_SETTINGS, 0, 0);
	strbuf_add(&h->out, settings, sizeof(settings));
	window_update(&h->out, 0, H2_WINDOW - 65535);
	hp_field(&block, ":method", "POST");
	hp_field(&block, ":scheme", "http");
	hp_field(&block, ":path", path);
	hp_field(&block, ":authority", "localhost");
	hp_field(&block, "content-type", "application/grpc");
	hp_field(&block, "te", "trailers");
	hp_field(&block, "user-agent", "gpuscope/" GPUSCOPE_VERSION);
	frame_head(&h->out, block.len, FT_HEADERS, FL_END_HEADERS, 1);
	strbuf_addbuf(&h->out, &block);
	strbuf_release(&block);
	/* an empty ListPodResourcesRequest: no compression, length 0 */
	frame_head(&h->out, sizeof(grpc_empty), FT_DATA, FL_END_STREAM, 1);
	strbuf_add(&h->out, grpc_empty, sizeof(grpc_empty));
	return h;
}

void
podres_h2_free(struct podres_h2 *h)
{
	if (!h)
		return;
	strbuf_release(&h->out);
	strbuf_release(&h->in);
	strbuf_release(&h->hdr);
	strbuf_release(&h->data);
	hpack_release(&h->table);
	free(h);
}

const uint8_t *
podres_h2_out(const struct podres_h2 *h, size_t *len)
{
	*len = h->out.len - h->out_sent;
	return (const uint8_t *)h->out.buf + h->out_sent;
}

void
podres_h2_sent(struct podres_h2 *h, size_t n)
{
	h->out_sent += n;
	if (h->out_sent >= h->out.len) {
		strbuf_reset(&h->out);
		h->out_sent = 0;
	}
}

static void
header_seen(struct podres_h2 *h, const char *name, const char *value)
{
	if (!strcmp(name, ":status") && h->nr_blocks == 0) {
		h->http_status = (int)strtol(value, NULL, 10);
	} else if (!strcmp(name, "grpc-status")) {
		char *end;
		long v = strtol(value, &end, 10);

		h->grpc_status = *value && !*end && v >= 0 && v < 100 ? (int)v : -1;
	} else if (!strcmp(name, "grpc-message")) {
		str_copy(h->grpc_message, sizeof(h->grpc_message), value);
	}
}

/* Decode a whole header block; returns E_PARSE when it cannot be read. */
static int
decode_block(struct podres_h2 *h, const uint8_t *buf, size_t len)
{
	struct pb r = { buf, buf + len };
	struct strbuf name = STRBUF_INIT, value = STRBUF_INIT;
	int rc = 0;

	while (r.p < r.end && rc == 0) {
		uint8_t b = *r.p;
		uint32_t idx;
		const char *n, *v;

		if (b & 0x80) { /* indexed */
			rc = hp_int(&r, 7, &idx);
			if (rc == 0)
				rc = hp_lookup(&h->table, idx, &n, &v);
			if (rc == 0)
				header_seen(h, n, v);
			continue;
		}
		if ((b & 0xe0) == 0x20) { /* dynamic table size update */
			rc = hp_int(&r, 5, &idx);
			if (rc == 0 && idx > HPACK_TABLE_SIZE)
				rc = E_PARSE;
			if (rc == 0) {
				h->table.max = idx;
				hpack_evict(&h->table, 0);
			}
			continue;
		}
		/* a literal: with incremental indexing (01), without (0000) or never indexed (0001)
		 */
		rc = hp_int(&r, (b & 0xc0) == 0x40 ? 6 : 4, &idx);
		if (rc == 0 && idx) {
			rc = hp_lookup(&h->table, idx, &n, &v);
			if (rc == 0) {
				strbuf_reset(&name);
				strbuf_addstr(&name, n);
			}
		} else if (rc == 0) {
			rc = hp_str(&r, &name);
		}
		if (rc == 0)
			rc = hp_str(&r, &value);
		if (rc == 0) {
			header_seen(h, name.buf, value.buf);
			if ((b & 0xc0) == 0x40)
				hpack_add(&h->table, name.buf, value.buf);
		}
	}
	strbuf_release(&name);
	strbuf_release(&value);
	return rc;
}

static void
block_done(struct podres_h2 *h)
{
	/* an undecodable block leaves the status unknown; a complete message still counts */
	if (!h->hpack_broken && decode_block(h, (const uint8_t *)h->hdr.buf, h->hdr.len) < 0)
		h->hpack_broken = true;
	h->nr_blocks++;
	h->hdr_open = false;
	strbuf_reset(&h->hdr);
	if (h->hdr_end_stream)
		h->done = true;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Strip the padding (and a HEADERS frame's priority) off p[0..*len). */
static int
unpad(const uint8_t **p, size_t *len, unsigned flags, bool priority)
{
	size_t pad = 0;

	if (flags & FL_PADDED) {
		if (*len < 1)
			return E_PARSE;
		pad = **p;
		(*p)++;
		(*len)--;
	}
	if (priority && (flags & FL_PRIORITY)) {
		if (*len < 5)
			return E_PARSE;
		*p += 5;
		*len -= 5;
	}
	if (pad > *len)
		return E_PARSE;
	*len -= pad;
	return 0;
}

static int
h2_frame(struct podres_h2 *h, unsigned type, unsigned flags, uint32_t stream, const uint8_t *p,
         size_t len, struct err *err)
{
	size_t flen = len;

	if (h->hdr_open && (type != FT_CONTINUATION || stream != 1))
		return err_set(err, E_PARSE,
		               "the kubelet broke HTTP/2: frame type %u inside a header block",
		               type);
	switch (type) {
	case FT_DATA:
		if (stream != 1 || h->nr_blocks == 0 || unpad(&p, &len, flags, false) < 0)
			return err_set(err, E_PARSE, "the kubelet broke HTTP/2: bad DATA frame");
		if (h->data.len + len > PODRES_MAX_REPLY + 5)
			return err_set(
			        err, E_PARSE,
			        "the kubelet's pod-resources answer is larger than %u MiB: not read",
			        PODRES_MAX_REPLY >> 20);
		strbuf_add(&h->data, p, len);
		/* give back what was read once half the window is used */
		h->unacked += flen;
		if (h->unacked >= H2_WINDOW / 2 && !(flags & FL_END_STREAM)) {
			window_update(&h->out, 0, (uint32_t)h->unacked);
			window_update(&h->out, 1, (uint32_t)h->unacked);
			h->unacked = 0;
		}
		if (flags & FL_END_STREAM)
			h->done = true;
		return 0;
	case FT_HEADERS:
		if (stream != 1 || unpad(&p, &len, flags, true) < 0)
			return err_set(err, E_PARSE, "the kubelet broke HTTP/2: bad HEADERS frame");
		h->hdr_end_stream = (flags & FL_END_STREAM) != 0;
		h->hdr_open = true;
		/* fall through */
	case FT_CONTINUATION:
		if (!h->hdr_open || stream != 1)
			return err_set(err, E_PARSE,
			               "the kubelet broke HTTP/2: stray CONTINUATION");
		if (h->hdr.len + len > H2_MAX_HEADERS)
			return err_set(err, E_PARSE,
			               "the kubelet sent a header block past %u KiB: not read",
			               H2_MAX_HEADERS >> 10);
		strbuf_add(&h->hdr, p, len);
		if (flags & FL_END_HEADERS)
			block_done(h);
		return 0;
	case FT_RST_STREAM:
		if (len != 4)
			return err_set(err, E_PARSE, "the kubelet broke HTTP/2: bad RST_STREAM");
		if (stream != 1)
			return 0;
		return err_set(err, E_IO,
		               "the kubelet reset the pod-resources call (HTTP/2 error %u)",
		               get32(p));
	case FT_SETTINGS:
		if (stream != 0 || (flags & FL_ACK ? len != 0 : len % 6 != 0))
			return err_set(err, E_PARSE,
			               "the kubelet broke HTTP/2: bad SETTINGS frame");
		if (!(flags & FL_ACK))
			frame_head(&h->out, 0, FT_SETTINGS, FL_ACK, 0);
		return 0;
	case FT_PING:
		if (stream != 0 || len != 8)
			return err_set(err, E_PARSE, "the kubelet broke HTTP/2: bad PING frame");
		if (!(flags & FL_ACK)) {
			frame_head(&h->out, 8, FT_PING, FL_ACK, 0);
			strbuf_add(&h->out, p, 8);
		}
		return 0;
	case FT_GOAWAY:
		if (len < 8)
			return err_set(err, E_PARSE, "the kubelet broke HTTP/2: bad GOAWAY frame");
		/* a graceful one that still covers our stream lets it finish */
		if ((get32(p) & 0x7fffffff) >= 1 && get32(p + 4) == 0)
			return 0;
		return err_set(
		        err, E_IO,
		        "the kubelet closed the pod-resources connection (GOAWAY, HTTP/2 error %u)",
		        get32(p + 4));
	case FT_PUSH_PROMISE:
		return err_set(err, E_PARSE,
		               "the kubelet broke HTTP/2: PUSH_PROMISE though push is off");
	case FT_WINDOW_UPDATE:
		if (len != 4)
			return err_set(err, E_PARSE, "the kubelet broke HTTP/2: bad WINDOW_UPDATE");
		return 0;
	default: /* PRIORITY, and types we do not know, are ignored */
		return 0;
	}
}

int
podres_h2_feed(struct podres_h2 *h, const uint8_t *buf, size_t len, struct err *err)
{
	size_t off = 0;

	if (h->done)
		return 1;
	strbuf_add(&h->in, buf, len);
	while (!h->done && h->in.len - off >= 9) {
		const uint8_t *f = (const uint8_t *)h->in.buf + off;
		size_t flen = (size_t)f[0] << 16 | (size_t)f[1] << 8 | f[2];
		int rc;

		if (flen > H2_MAX_FRAME)
			return err_set(err, E_PARSE,
			               "the kubelet sent an HTTP/2 frame of %zu bytes, past %u",
			               flen, H2_MAX_FRAME);
		if (h->in.len - off < 9 + flen)
			break;
		rc = h2_frame(h, f[3], f[4], get32(f + 5) & 0x7fffffff, f + 9, flen, err);
		if (rc < 0)
			return rc;
		off += 9 + flen;
	}
	memmove(h->in.buf, h->in.buf + off, h->in.len - off);
	strbuf_setlen(&h->in, h->in.len - off);
	return h->done ? 1 : 0;
}

int
podres_h2_result(const struct podres_h2 *h, const uint8_t **msg, size_t *len, struct err *err)
{
	const uint8_t *d = (const uint8_t *)h->data.buf;
	uint32_t n;

	if (h->http_status && h->http_status != 200)
		return err_set(err, E_IO, "the kubelet's pod-resources socket answered HTTP %d",
		               h->http_status);
	if (h->grpc_status > 0)
		return err_set(err, E_IO,
		               "the kubelet's pod-resources List failed: gRPC status %d%s%s",
		               h->grpc_status, h->grpc_message[0] ? ": " : "", h->grpc_message);
	if (!h->done || h->data.len < 5)
		return err_set(err, E_PARSE, "the kubelet's pod-resources answer holds no message");
	n = get32(d + 1);
	if (d[0] != 0)
		return err_set(err, E_PARSE,
		               "the kubelet's pod-resources answer is compressed: not read");
	if (n != h->data.len - 5)
		return err_set(
		        err, E_PARSE,
		        "the kubelet's pod-resources answer is cut: %u bytes announced, %zu came",
		        n, h->data.len - 5);
	*msg = d + 5;
	*len = n;
	return 0;
}

/* ---- the call ---- */

static int
connect_error(const char *path, int e, struct err *err)
{
	if (e == ENOENT || e == ENOTDIR)
		return E_NOTFOUND;
	if (e == EACCES || e == EPERM)
		return err_set(
		        err, E_PERM,
		        "cannot connect to the kubelet's pod-resources socket '%s': permission denied (run as root, or mount it readable)",
		        path);
	if (e == ECONNREFUSED)
		return err_set(
		        err, E_IO,
		        "cannot connect to the kubelet's pod-resources socket '%s': connection refused (is the kubelet running?)",
		        path);
	return err_set(err, errno_status(e),
	               "cannot connect to the kubelet's pod-resources socket '%s': %s", path,
	               strerror(e));
}

/* Run h against fd until its stream ends or the deadline (clock_mono) passes. */
static int
exchange(int fd, struct podres_h2 *h, const char *path, double timeout, double deadline,
         struct err *err)
{
	uint8_t buf[16384];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - clock_mono();
		size_t pending;
		const uint8_t *out = podres_h2_out(h, &pending);
		int rc;

		if (pending)
			pfd.events |= POLLOUT;
		if (left <= 0)
			return err_set(
			        err, E_TIMEOUT,
			        "the kubelet's pod-resources socket '%s' did not answer within %.1f s",
			        path, timeout);
		rc = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return err_set(
			        err, E_IO,
			        "cannot wait for the kubelet's pod-resources socket '%s': %s", path,
			        strerror(errno));
		if (rc == 0)
			continue;
		if (pfd.revents & POLLOUT) {
			ssize_t n = send(fd, out, pending, MSG_NOSIGNAL);

			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return err_set(
				        err, E_IO,
				        "cannot write to the kubelet's pod-resources socket '%s': %s",
				        path, strerror(errno));
			if (n > 0)
				podres_h2_sent(h, (size_t)n);
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n < 0)
				return err_set(
				        err, E_IO,
				        "cannot read the kubelet's pod-resources socket '%s': %s",
				        path, strerror(errno));
			if (n == 0)
				return err_set(
				        err, E_IO,
				        "the kubelet's pod-resources socket '%s' closed before its answer",
				        path);
			rc = podres_h2_feed(h, buf, (size_t)n, err);
			if (rc != 0)
				return rc < 0 ? rc : 0;
		}
	}
}

int
podres_call(const char *path, double timeout, struct podres_list *out, struct err *err)
{
	struct sockaddr_un sa;
	struct podres_h2 *h = NULL;
	double deadline = clock_mono() + timeout;
	const uint8_t *msg;
	size_t len;
	int fd, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(err, E_USAGE,
		               "the kubelet's pod-resources socket path '%s' is too long", path);
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, E_IO,
		               "cannot make a socket for the kubelet's pod-resources API: %s",
		               strerror(errno));
	/* a unix socket connects at once or fails (EAGAIN: its backlog is full) */
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		rc = connect_error(path, errno, err);
		goto out;
	}
	h = podres_h2_new(PODRES_PATH);
	rc = exchange(fd, h, path, timeout, deadline, err);
	if (rc == 0)
		rc = podres_h2_result(h, &msg, &len, err);
	if (rc == 0)
		rc = podres_decode(msg, len, out, err);
out:
	podres_h2_free(h);
	close(fd);
	return rc;
}

/* ---- matching ---- */

/* "0000:c1:00.0" or "c1:00.0" against the device's PCI address. */
static bool
match_pci(const struct gpu_device *d, const char *id)
{
	unsigned dom = 0, bus, dev, fn;
	char tail;

	if (!d->pci_valid)
		return false;
	if (sscanf(id, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4) {
		dom = 0;
		if (sscanf(id, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3)
			return false;
	}
	return dom == d->pci_domain && bus == d->pci_bus && dev == d->pci_dev && fn == d->pci_func;
}

static bool
all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool
alloc_matches(const struct podres_alloc *a, const struct gpu_device *d)
{
	const char *id = a->device_id;
	const char *sep = strstr(id, "::"); /* the NVIDIA plugin's time-sliced replicas */
	size_t n = sep ? (size_t)(sep - id) : strlen(id);

	if (d->uuid[0] && strlen(d->uuid) == n && !strncmp(d->uuid, id, n))
		return true;
	if (d->vendor == VENDOR_NVIDIA && !d->is_mig && !strcmp(a->resource, "nvidia.com/gpu") &&
	    all_digits(id))
		return strtoul(id, NULL, 10) == d->index;
	if (strchr(id, ':') && strchr(id, '.'))
		return match_pci(d, id);
	if (!strncmp(id, "card", 4) && d->card[0]) {
		n = strcspn(id, "-");
		return strlen(d->card) == n && !strncmp(d->card, id, n);
	}
	return false;
}

void
podres_apply(const struct podres_list *l, struct gpu_snapshot *snap)
{
	for (size_t i = 0; i < snap->nr_dev; i++) {
		struct gpu_device *d = &snap->dev[i];

		for (size_t k = 0; k < l->nr; k++) {
			const struct podres_alloc *a = &l->v[k];

			if (!alloc_matches(a, d))
				continue;
			str_copy(d->alloc_namespace, sizeof(d->alloc_namespace), a->namespace_);
			str_copy(d->alloc_pod, sizeof(d->alloc_pod), a->pod);
			str_copy(d->alloc_container, sizeof(d->alloc_container), a->container);
			break;
		}
	}
}

/* ---- the collector's cache ---- */

#define PODRES_REFRESH 5.0  /* seconds between calls that worked (or found no socket) */
#define PODRES_RETRY   30.0 /* after one that failed: a hung kubelet costs its timeout each time */

struct podres_cache {
	char *path;
	double timeout;
	double next; /* clock_mono() of the next call; 0: at once */
	struct podres_list list;
	char note[256]; /* the last call's failure, "" when it worked */
};

struct podres_cache *
podres_cache_new(const char *root, double timeout)
{
	struct podres_cache *c = xcalloc(1, sizeof(*c));
	size_t len = strlen(root);

	while (len > 1 && root[len - 1] == '/')
		len--;
	c->path =
	        xstrfmt("%.*s/%s", len == 1 && root[0] == '/' ? 0 : (int)len, root, PODRES_SOCKET);
	c->timeout = timeout > 0 && timeout < PODRES_TIMEOUT ? timeout : PODRES_TIMEOUT;
	return c;
}

void
podres_cache_fill(struct podres_cache *c, struct gpu_snapshot *snap, double now)
{
	if (now >= c->next) {
		struct podres_list fresh = { 0 };
		struct err e = ERR_INIT;
		int rc = podres_call(c->path, c->timeout, &fresh, &e);

		/* stale allocations would name the wrong pod: a failure forgets them */
		podres_list_release(&c->list);
		c->note[0] = '\0';
		if (rc == 0) {
			c->list = fresh;
			if (fresh.truncated)
				snprintf(
				        c->note, sizeof(c->note),
				        "the kubelet's pod-resources answer lists more than %u GPU ids: the rest were not matched",
				        PODRES_MAX_ALLOC);
		} else {
			podres_list_release(&fresh);
			if (rc != E_NOTFOUND)
				str_copy(c->note, sizeof(c->note), e.msg);
		}
		c->next = now + (rc == 0 || rc == E_NOTFOUND ? PODRES_REFRESH : PODRES_RETRY);
	}
	podres_apply(&c->list, snap);
	if (c->note[0])
		gpu_snapshot_note(snap, "%s", c->note);
}

void
podres_cache_free(struct podres_cache *c)
{
	if (!c)
		return;
	podres_list_release(&c->list);
	free(c->path);
	free(c);
}
