/*
 * Tests of the kubelet pod-resources client: protobuf decoding of handmade
 * ListPodResourcesResponse messages (fields in any order, unknown fields,
 * non-GPU resources, the cap) and of hostile ones (truncated at every
 * byte, huge lengths, bad varints, groups); HPACK Huffman strings (RFC 7541
 * C.4 examples, bad padding, EOS); the HTTP/2 state machine fed server
 * byte streams (header blocks made by Python's hpack, with Huffman and the
 * dynamic table; CONTINUATION; SETTINGS and PING answered; endless header
 * blocks, oversized frames and replies, resets, GOAWAY); the matching of
 * device ids to GPUs; and whole calls on unix sockets served by a child
 * process: an answer, a server that never answers, no socket.
 */
#include "backend/podres.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "harness.h"

/* ---- protobuf writing, for the test's messages ---- */

static void
pb_varint(struct strbuf *sb, uint64_t v)
{
	while (v >= 0x80) {
		strbuf_addch(sb, (int)(0x80 | (v & 0x7f)));
		v >>= 7;
	}
	strbuf_addch(sb, (int)v);
}

static void
pb_bytes(struct strbuf *sb, unsigned field, const void *p, size_t n)
{
	pb_varint(sb, (uint64_t)field << 3 | 2);
	pb_varint(sb, n);
	strbuf_add(sb, p, n);
}

static void
pb_string(struct strbuf *sb, unsigned field, const char *s)
{
	pb_bytes(sb, field, s, strlen(s));
}

static void
pb_sub(struct strbuf *sb, unsigned field, struct strbuf *sub)
{
	pb_bytes(sb, field, sub->buf, sub->len);
	strbuf_release(sub);
}

/* ContainerDevices, its resource name after its ids when late */
static void
devices(struct strbuf *out, const char *resource, const char *id1, const char *id2, bool late)
{
	struct strbuf d = STRBUF_INIT;

	if (!late)
		pb_string(&d, 1, resource);
	pb_string(&d, 2, id1);
	if (id2)
		pb_string(&d, 2, id2);
	if (late)
		pb_string(&d, 1, resource);
	pb_varint(&d, 3 << 3 | 2); /* topology { nodes { ID: 0 } } */
	pb_varint(&d, 4);
	pb_varint(&d, 1 << 3 | 2);
	pb_varint(&d, 2);
	pb_varint(&d, 1 << 3 | 0);
	pb_varint(&d, 0);
	pb_sub(out, 2, &d);
}

/* The test's answer: two pods, one with a CPU-only container and a GPU one. */
static void
sample_message(struct strbuf *msg)
{
	struct strbuf pod = STRBUF_INIT, c = STRBUF_INIT;

	/* pod 1: containers before its names; unknown fields of every wire type */
	pb_string(&c, 1, "trainer");
	devices(&c, "nvidia.com/gpu", "GPU-aaaa", "GPU-bbbb::3", false);
	devices(&c, "example.com/nic", "nic0", NULL, false);
	pb_varint(&c, 3 << 3 | 0); /* cpu_ids, unpacked */
	pb_varint(&c, 7);
	pb_sub(&pod, 3, &c);
	pb_string(&c, 1, "sidecar");
	pb_varint(&c, 9 << 3 | 1); /* fixed64 */
	strbuf_add(&c, "12345678", 8);
	pb_varint(&c, 10 << 3 | 5); /* fixed32 */
	strbuf_add(&c, "1234", 4);
	pb_sub(&pod, 3, &c);
	pb_string(&pod, 1, "train-0");
	pb_string(&pod, 2, "ml");
	pb_sub(msg, 1, &pod);
	/* pod 2: a MIG device, its resource name last */
	pb_string(&pod, 2, "serving");
	pb_string(&pod, 1, "vllm-7f9c");
	pb_string(&c, 1, "server");
	devices(&c, "nvidia.com/mig-1g.10gb", "MIG-cccc", NULL, true);
	pb_sub(&pod, 3, &c);
	pb_sub(msg, 1, &pod);
	pb_string(msg, 15, "a field of a later kubelet");
}

static void
test_decode(void)
{
	struct strbuf msg = STRBUF_INIT;
	struct podres_list l = { 0 };
	struct err e = ERR_INIT;
	size_t bad = 0;

	sample_message(&msg);
	is_int(podres_decode((const uint8_t *)msg.buf, msg.len, &l, &e), 0, "decode: ok");
	is_int(l.nr, 3, "decode: three GPU ids (the NIC is not a GPU)");
	if (l.nr == 3) {
		is_str(l.v[0].namespace_, "ml", "decode: namespace after the containers");
		is_str(l.v[0].pod, "train-0", "decode: pod name after the containers");
		is_str(l.v[0].container, "trainer", "decode: container");
		is_str(l.v[0].device_id, "GPU-aaaa", "decode: first id");
		is_str(l.v[1].device_id, "GPU-bbbb::3", "decode: second id, as sent");
		is_str(l.v[2].resource, "nvidia.com/mig-1g.10gb", "decode: resource after the ids");
		is_str(l.v[2].pod, "vllm-7f9c", "decode: second pod");
		is_str(l.v[2].container, "server", "decode: its container");
	}
	podres_list_release(&l);

	/* every truncation fails or yields a prefix of the answer, never more */
	for (size_t n = 0; n < msg.len; n++) {
		struct podres_list t = { 0 };
		int rc = podres_decode((const uint8_t *)msg.buf, n, &t, NULL);

		if ((rc != 0 && rc != E_PARSE) || t.nr > 3)
			bad++;
		podres_list_release(&t);
	}
	is_int(bad, 0, "decode: each of %zu truncations fails cleanly or yields less", msg.len);
	strbuf_release(&msg);

	{
		static const uint8_t huge[] = { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00 };
		static const uint8_t varint[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
			                          0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
		static const uint8_t over64[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
			                          0xff, 0xff, 0xff, 0xff, 0x02 };
		static const uint8_t group[] = { 0x0b, 0x0c };
		static const uint8_t field0[] = { 0x02, 0x00 };
		static const uint8_t inner[] = { 0x0a, 0x04, 0x1a, 0x02, 0x12, 0x7f };

		err_clear(&e);
		is_int(podres_decode(huge, sizeof(huge), &l, &e), E_PARSE,
		       "decode: a 4 GiB length");
		ok(strstr(e.msg, "malformed protobuf") != NULL, "decode: the message says so: %s",
		   e.msg);
		is_int(podres_decode(varint, sizeof(varint), &l, NULL), E_PARSE,
		       "decode: an 11-byte varint");
		is_int(podres_decode(over64, sizeof(over64), &l, NULL), E_PARSE,
		       "decode: a varint past 64 bits");
		is_int(podres_decode(group, sizeof(group), &l, NULL), E_PARSE, "decode: a group");
		is_int(podres_decode(field0, sizeof(field0), &l, NULL), E_PARSE, "decode: field 0");
		is_int(podres_decode(inner, sizeof(inner), &l, NULL), E_PARSE,
		       "decode: a nested length past its parent");
		is_int(podres_decode(NULL, 0, &l, NULL), 0, "decode: an empty answer is no pods");
		is_int(l.nr, 0, "decode: nothing from the bad ones");
	}

	/* the cap */
	{
		struct strbuf pod = STRBUF_INIT, c = STRBUF_INIT, d = STRBUF_INIT;

		pb_string(&d, 1, "nvidia.com/gpu");
		for (unsigned i = 0; i < PODRES_MAX_ALLOC + 10; i++)
			pb_string(&d, 2, "GPU-x");
		pb_sub(&c, 2, &d);
		pb_sub(&pod, 3, &c);
		pb_sub(&msg, 1, &pod);
		is_int(podres_decode((const uint8_t *)msg.buf, msg.len, &l, NULL), 0,
		       "cap: decoded");
		is_int(l.nr, PODRES_MAX_ALLOC, "cap: %u ids kept", PODRES_MAX_ALLOC);
		ok(l.truncated, "cap: marked truncated");
		ok(l.nr && !strcmp(l.v[0].pod, "") && !strcmp(l.v[0].namespace_, "") &&
		           !strcmp(l.v[0].container, ""),
		   "a pod and container without names: empty names");
		podres_list_release(&l);
		strbuf_release(&msg);
	}
	ok(podres_is_gpu_resource("amd.com/gpu") && podres_is_gpu_resource("gpu.intel.com/xe") &&
	           !podres_is_gpu_resource("nvidia.com/gpu.shared") &&
	           !podres_is_gpu_resource("cpu"),
	   "GPU resources: AMD, Intel yes; others no");
}

static void
test_huffman(void)
{
	/* RFC 7541 C.4.1-C.4.3 */
	static const uint8_t www[] = { 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a,
		                       0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff };
	static const uint8_t nocache[] = { 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf };
	static const uint8_t value[] = { 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf };
	static const uint8_t zeros[] = { 0xf1, 0xe3, 0x00 };
	static const uint8_t eos[] = { 0xff, 0xff, 0xff, 0xfc };
	static const uint8_t longpad[] = { 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf, 0xff };
	struct strbuf sb = STRBUF_INIT;

	is_int(podres_huffman_decode(www, sizeof(www), &sb), 0, "huffman: www.example.com");
	is_str(sb.buf, "www.example.com", "huffman: decoded");
	strbuf_reset(&sb);
	podres_huffman_decode(nocache, sizeof(nocache), &sb);
	is_str(sb.buf, "no-cache", "huffman: no-cache");
	strbuf_reset(&sb);
	podres_huffman_decode(value, sizeof(value), &sb);
	is_str(sb.buf, "custom-value", "huffman: custom-value");
	strbuf_reset(&sb);
	is_int(podres_huffman_decode(zeros, sizeof(zeros), &sb), E_PARSE,
	       "huffman: padding of zeros refused");
	strbuf_reset(&sb);
	is_int(podres_huffman_decode(eos, sizeof(eos), &sb), E_PARSE, "huffman: EOS refused");
	strbuf_reset(&sb);
	is_int(podres_huffman_decode(longpad, sizeof(longpad), &sb), E_PARSE,
	       "huffman: padding of 8 bits or more refused");
	strbuf_release(&sb);
}

/* ---- HTTP/2: server byte streams ---- */

static void
frame(struct strbuf *sb, unsigned type, unsigned flags, uint32_t stream, const void *p, size_t n)
{
	uint8_t h[9] = { (uint8_t)(n >> 16),      (uint8_t)(n >> 8),      (uint8_t)n,
		         (uint8_t)type,           (uint8_t)flags,         (uint8_t)(stream >> 24),
		         (uint8_t)(stream >> 16), (uint8_t)(stream >> 8), (uint8_t)stream };

	strbuf_add(sb, h, 9);
	if (n)
		strbuf_add(sb, p, n);
}

/* made by Python's hpack Encoder (huffman=True) */
static const uint8_t H_OK[] = { 0x88, 0x5f, 0x8b, 0x1d, 0x75, 0xd0, 0x62,
	                        0x0d, 0x26, 0x3d, 0x4c, 0x4d, 0x65, 0x64 };
static const uint8_t T_OK[] = { 0x40, 0x88, 0x9a, 0xca, 0xc8, 0xb2, 0x12, 0x34,
	                        0xda, 0x8f, 0x81, 0x07, 0x40, 0x89, 0x9a, 0xca,
	                        0xc8, 0xb5, 0x25, 0x42, 0x07, 0x31, 0x7f, 0x80 };
static const uint8_t T_14[] = { 0x40, 0x88, 0x9a, 0xca, 0xc8, 0xb2, 0x12, 0x34, 0xda, 0x8f, 0x82,
	                        0x0b, 0x5f, 0x40, 0x89, 0x9a, 0xca, 0xc8, 0xb5, 0x25, 0x42, 0x07,
	                        0x31, 0x7f, 0x91, 0xeb, 0x6c, 0x65, 0xa0, 0xa9, 0x50, 0xc8, 0x51,
	                        0x13, 0xda, 0x94, 0x9a, 0xa9, 0x94, 0x90, 0xfe, 0x2a };
/* the same trailers again, from the dynamic table T_14 filled */
static const uint8_t T_14_INDEXED[] = { 0xbf, 0xbe };

/* The gRPC DATA payload of msg: its 5-byte prefix, then msg. */
static void
grpc_data(struct strbuf *out, const struct strbuf *msg, uint8_t flag, uint32_t announced)
{
	uint8_t pre[5] = { flag, (uint8_t)(announced >> 24), (uint8_t)(announced >> 16),
		           (uint8_t)(announced >> 8), (uint8_t)announced };

	strbuf_add(out, pre, 5);
	strbuf_addbuf(out, msg);
}

/* A whole answer: SETTINGS, PING, headers, DATA in two frames, trailers. */
static void
good_stream(struct strbuf *s, const struct strbuf *msg, const uint8_t *trail, size_t ntrail)
{
	struct strbuf d = STRBUF_INIT;
	static const uint8_t settings[] = { 0, 3, 0, 0, 0, 100 };

	frame(s, 4, 0, 0, settings, sizeof(settings));
	frame(s, 4, 1, 0, NULL, 0);
	frame(s, 6, 0, 0, "pingpong", 8);
	frame(s, 8, 0, 0, "\0\0\1\0", 4);
	frame(s, 1, 4, 1, H_OK, sizeof(H_OK));
	grpc_data(&d, msg, 0, (uint32_t)msg->len);
	frame(s, 0, 0, 1, d.buf, 7);
	frame(s, 2, 0, 1, "\0\0\0\0\0", 5); /* PRIORITY: ignored */
	frame(s, 0, 0, 1, d.buf + 7, d.len - 7);
	frame(s, 1, 5, 1, trail, ntrail);
	strbuf_release(&d);
}

/* Feed all of s (in pieces of step bytes); returns the last feed's result. */
static int
feed(struct podres_h2 *h, const struct strbuf *s, size_t step, struct err *e)
{
	int rc = 0;

	for (size_t off = 0; off < s->len && rc == 0; off += step) {
		size_t n = s->len - off < step ? s->len - off : step;

		rc = podres_h2_feed(h, (const uint8_t *)s->buf + off, n, e);
	}
	return rc;
}

static bool
has(const uint8_t *hay, size_t n, const void *needle, size_t m)
{
	return memmem(hay, n, needle, m) != NULL;
}

static void
test_request(void)
{
	struct podres_h2 *h = podres_h2_new(PODRES_PATH);
	size_t n;
	const uint8_t *out = podres_h2_out(h, &n);
	static const uint8_t settings_head[] = { 0, 0, 18, 4, 0, 0, 0, 0, 0 };
	static const uint8_t data[] = { 0, 0, 5, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0 };

	ok(n > 24 && !memcmp(out, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24), "request: the preface");
	ok(n > 33 && !memcmp(out + 24, settings_head, 9), "request: then SETTINGS");
	ok(has(out, n, "\x05:path\x1b/v1.PodResourcesLister/List", 34),
	   "request: :path as a literal without indexing");
	ok(has(out, n, "\x02te\x08trailers", 12) && has(out, n,
	                                                "\x0c"
	                                                "content-type\x10"
	                                                "application/grpc",
	                                                30),
	   "request: te and content-type");
	ok(n >= sizeof(data) && !memcmp(out + n - sizeof(data), data, sizeof(data)),
	   "request: ends with an empty message, END_STREAM");
	podres_h2_sent(h, n);
	podres_h2_out(h, &n);
	is_int(n, 0, "request: all sent");
	podres_h2_free(h);
}

static void
test_h2(void)
{
	struct strbuf msg = STRBUF_INIT, s = STRBUF_INIT;
	struct podres_list l = { 0 };
	struct err e = ERR_INIT;
	const uint8_t *m, *out;
	size_t len, n;
	struct podres_h2 *h;
	static const uint8_t ping_ack[] = { 0, 0, 8, 6, 1, 0, 0, 0, 0, 'p', 'i', 'n', 'g' };
	static const uint8_t settings_ack[] = { 0, 0, 0, 4, 1, 0, 0, 0, 0 };
	static const size_t steps[] = { 1, 7, 100000 };

	sample_message(&msg);
	good_stream(&s, &msg, T_OK, sizeof(T_OK));
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		h = podres_h2_new(PODRES_PATH);
		podres_h2_out(h, &n);
		podres_h2_sent(h, n);
		err_clear(&e);
		is_int(feed(h, &s, steps[i], &e), 1, "h2: the stream ends (pieces of %zu)",
		       steps[i]);
		is_int(podres_h2_result(h, &m, &len, &e), 0, "h2: result ok %s", e.msg);
		is_int(len, msg.len, "h2: the whole message");
		ok(len == msg.len && !memcmp(m, msg.buf, len), "h2: its bytes");
		out = podres_h2_out(h, &n);
		ok(has(out, n, settings_ack, 9), "h2: SETTINGS acknowledged");
		ok(has(out, n, ping_ack, sizeof(ping_ack)), "h2: PING answered with its payload");
		if (i == 0) {
			is_int(podres_decode(m, len, &l, NULL), 0, "h2: the message decodes");
			is_int(l.nr, 3, "h2: to three ids");
			podres_list_release(&l);
		}
		podres_h2_free(h);
	}
	strbuf_reset(&s);

	/* trailers across HEADERS + CONTINUATION, a failed status; then the dynamic table */
	frame(&s, 1, 4, 1, H_OK, sizeof(H_OK));
	frame(&s, 1, 1, 1, T_14, 10);
	frame(&s, 9, 0, 1, T_14 + 10, 10);
	frame(&s, 9, 4, 1, T_14 + 20, sizeof(T_14) - 20);
	h = podres_h2_new(PODRES_PATH);
	err_clear(&e);
	is_int(feed(h, &s, 3, &e), 1, "h2: trailers-only answer in CONTINUATIONs ends");
	is_int(podres_h2_result(h, &m, &len, &e), E_IO, "h2: gRPC status 14 is an error");
	ok(strstr(e.msg, "gRPC status 14: kubelet is shutting down") != NULL, "h2: it says: %s",
	   e.msg);
	podres_h2_free(h);

	strbuf_reset(&s);
	frame(&s, 1, 4, 1, H_OK, sizeof(H_OK));
	strbuf_reset(&msg);
	{
		struct strbuf d = STRBUF_INIT;

		grpc_data(&d, &msg, 0, 0);
		frame(&s, 0, 0, 1, d.buf, d.len);
		strbuf_release(&d);
	}
	frame(&s, 1, 4, 1, T_14, sizeof(T_14));
	h = podres_h2_new(PODRES_PATH);
	/* a second header block on the stream, after DATA, has no END_STREAM: not done yet */
	is_int(feed(h, &s, 1000, NULL), 0, "h2: a block without END_STREAM does not end it");
	strbuf_reset(&s);
	frame(&s, 1, 5, 1, T_14_INDEXED, sizeof(T_14_INDEXED));
	err_clear(&e);
	is_int(feed(h, &s, 1000, &e), 1, "h2: indexed trailers end it");
	is_int(podres_h2_result(h, &m, &len, &e), E_IO, "h2: status 14 from the dynamic table");
	ok(strstr(e.msg, "status 14") != NULL, "h2: %s", e.msg);
	podres_h2_free(h);

	/* an undecodable trailer: status unknown, the complete message still counts */
	strbuf_reset(&s);
	strbuf_reset(&msg);
	sample_message(&msg);
	{
		static const uint8_t bad_trailer[] = { 0x40, 0x82, 0x00, 0x00, 0x81, 0x07 };

		good_stream(&s, &msg, bad_trailer, sizeof(bad_trailer));
	}
	h = podres_h2_new(PODRES_PATH);
	is_int(feed(h, &s, 1000, NULL), 1, "h2: a bad trailer ends the stream");
	err_clear(&e);
	is_int(podres_h2_result(h, &m, &len, &e), 0, "h2: the message is accepted: %s", e.msg);
	podres_h2_free(h);

	/* :status 503 */
	strbuf_reset(&s);
	frame(&s, 1, 5, 1,
	      "\x48\x03"
	      "503",
	      5);
	h = podres_h2_new(PODRES_PATH);
	feed(h, &s, 1000, NULL);
	err_clear(&e);
	is_int(podres_h2_result(h, &m, &len, &e), E_IO, "h2: HTTP 503 is an error");
	ok(strstr(e.msg, "HTTP 503") != NULL, "h2: %s", e.msg);
	podres_h2_free(h);
	strbuf_release(&s);
	strbuf_release(&msg);
}

/* Feed s to a fresh client; returns the feed's result, the message in e. */
static int
feed_new(const struct strbuf *s, struct err *e)
{
	struct podres_h2 *h = podres_h2_new(PODRES_PATH);
	int rc;

	err_clear(e);
	rc = feed(h, s, 4096, e);
	podres_h2_free(h);
	return rc;
}

static void
test_h2_hostile(void)
{
	struct strbuf s = STRBUF_INIT, big = STRBUF_INIT;
	struct err e = ERR_INIT;
	struct podres_h2 *h;
	const uint8_t *m;
	size_t len, n;
	bool window = false;
	int rc = 0;

	/* endless CONTINUATION */
	strbuf_addchars(&big, 'a', 16384);
	frame(&s, 1, 0, 1, H_OK, sizeof(H_OK));
	for (int i = 0; i < 10; i++)
		frame(&s, 9, 0, 1, big.buf, big.len);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: endless CONTINUATION refused");
	ok(strstr(e.msg, "header block past 64 KiB") != NULL, "hostile: %s", e.msg);

	strbuf_reset(&s);
	frame(&s, 1, 0, 1, H_OK, sizeof(H_OK));
	frame(&s, 0, 0, 1, "x", 1);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: DATA inside a header block");

	strbuf_reset(&s);
	frame(&s, 9, 4, 1, H_OK, sizeof(H_OK));
	is_int(feed_new(&s, &e), E_PARSE, "hostile: CONTINUATION without HEADERS");

	strbuf_reset(&s);
	frame(&s, 0, 1, 1, "\0\0\0\0\0", 5);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: DATA before HEADERS");

	strbuf_reset(&s);
	strbuf_addchars(&big, 'a', 1);
	frame(&s, 0, 0, 1, big.buf, big.len);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: a frame of 16385 bytes");
	ok(strstr(e.msg, "16385") != NULL, "hostile: %s", e.msg);
	strbuf_setlen(&big, 16384);

	strbuf_reset(&s);
	frame(&s, 1, 4, 1, H_OK, sizeof(H_OK));
	frame(&s, 0, 8, 1,
	      "\x09"
	      "abc",
	      4);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: padding longer than the frame");

	strbuf_reset(&s);
	frame(&s, 3, 0, 1, "\0\0\0\x08", 4);
	is_int(feed_new(&s, &e), E_IO, "hostile: RST_STREAM");
	ok(strstr(e.msg, "reset") && strstr(e.msg, "error 8"), "hostile: %s", e.msg);

	strbuf_reset(&s);
	frame(&s, 7, 0, 0, "\0\0\0\0\0\0\0\x02", 8);
	is_int(feed_new(&s, &e), E_IO, "hostile: GOAWAY with an error");
	strbuf_reset(&s);
	frame(&s, 7, 0, 0, "\0\0\0\x01\0\0\0\0", 8);
	is_int(feed_new(&s, &e), 0, "hostile: a graceful GOAWAY lets the stream finish");

	strbuf_reset(&s);
	frame(&s, 5, 4, 1, "\0\0\0\2", 4);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: PUSH_PROMISE");

	strbuf_reset(&s);
	frame(&s, 4, 0, 0, "\0\0\0", 3);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: SETTINGS of 3 bytes");

	strbuf_reset(&s);
	frame(&s, 6, 0, 0, "abc", 3);
	is_int(feed_new(&s, &e), E_PARSE, "hostile: PING of 3 bytes");

	/* a reply past 16 MiB, window updates on the way */
	h = podres_h2_new(PODRES_PATH);
	podres_h2_out(h, &n);
	podres_h2_sent(h, n);
	strbuf_reset(&s);
	frame(&s, 1, 4, 1, H_OK, sizeof(H_OK));
	podres_h2_feed(h, (const uint8_t *)s.buf, s.len, NULL);
	strbuf_reset(&s);
	frame(&s, 0, 0, 1, big.buf, big.len);
	err_clear(&e);
	for (int i = 0; i < 2000 && rc == 0; i++) {
		static const uint8_t wu[] = { 0, 0, 4, 8, 0, 0, 0, 0, 1 };

		rc = podres_h2_feed(h, (const uint8_t *)s.buf, s.len, &e);
		m = podres_h2_out(h, &n);
		window |= has(m, n, wu, sizeof(wu));
		podres_h2_sent(h, n);
	}
	is_int(rc, E_PARSE, "hostile: a reply past 16 MiB refused");
	ok(strstr(e.msg, "larger than 16 MiB") != NULL, "hostile: %s", e.msg);
	ok(window, "flow control: WINDOW_UPDATE for the stream sent on the way");
	podres_h2_free(h);

	/* a message cut short, a compressed one */
	strbuf_reset(&s);
	frame(&s, 1, 4, 1, H_OK, sizeof(H_OK));
	frame(&s, 0, 1, 1,
	      "\0\0\0\0\x64"
	      "abc",
	      8);
	h = podres_h2_new(PODRES_PATH);
	feed(h, &s, 1000, NULL);
	err_clear(&e);
	is_int(podres_h2_result(h, &m, &len, &e), E_PARSE, "hostile: a cut message");
	ok(strstr(e.msg, "100 bytes announced, 3 came") != NULL, "hostile: %s", e.msg);
	podres_h2_free(h);
	strbuf_reset(&s);
	frame(&s, 1, 4, 1, H_OK, sizeof(H_OK));
	frame(&s, 0, 1, 1,
	      "\1\0\0\0\x03"
	      "abc",
	      8);
	h = podres_h2_new(PODRES_PATH);
	feed(h, &s, 1000, NULL);
	err_clear(&e);
	is_int(podres_h2_result(h, &m, &len, &e), E_PARSE, "hostile: a compressed message");
	podres_h2_free(h);

	/* the dynamic table: an index past it, a size update past ours */
	strbuf_reset(&s);
	frame(&s, 1, 5, 1, "\xc5", 1);
	h = podres_h2_new(PODRES_PATH);
	is_int(feed(h, &s, 1000, NULL), 1, "hostile: an index past the table still ends");
	ok(podres_h2_result(h, &m, &len, NULL) == E_PARSE, "hostile: with no message");
	podres_h2_free(h);
	strbuf_release(&s);
	strbuf_release(&big);
}

static void
test_apply(void)
{
	struct gpu_snapshot snap;
	struct podres_list l = { 0 };
	struct gpu_device *d;
	static const char *const ids[][4] = {
		{ "nvidia.com/gpu", "GPU-aaaa::2", "p0", "c0" },
		{ "nvidia.com/gpu", "1", "p1", "c1" },
		{ "nvidia.com/mig-1g.10gb", "MIG-mmmm", "p2", "c2" },
		{ "amd.com/gpu", "0000:c1:00.0", "p3", "c3" },
		{ "gpu.intel.com/i915", "card2-0", "p4", "c4" },
		{ "nvidia.com/gpu", "GPU-aaaa", "later", "c5" },
	};

	gpu_snapshot_init(&snap);
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_NVIDIA;
	str_copy(d->uuid, sizeof(d->uuid), "GPU-aaaa");
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_NVIDIA;
	d->index = 1;
	str_copy(d->uuid, sizeof(d->uuid), "GPU-bbbb");
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_NVIDIA;
	d->is_mig = true;
	str_copy(d->uuid, sizeof(d->uuid), "MIG-mmmm");
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_AMD;
	d->index = 3;
	d->pci_valid = true;
	d->pci_bus = 0xc1;
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_INTEL;
	d->index = 4;
	str_copy(d->card, sizeof(d->card), "card2");
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_INTEL;
	d->index = 5;
	str_copy(d->card, sizeof(d->card), "card20");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct podres_alloc *a;

		ALLOC_GROW(l.v, l.nr + 1, l.alloc);
		a = &l.v[l.nr++];
		a->resource = xstrdup(ids[i][0]);
		a->device_id = xstrdup(ids[i][1]);
		a->pod = xstrdup(ids[i][2]);
		a->container = xstrdup(ids[i][3]);
		a->namespace_ = xstrdup("ns");
	}
	podres_apply(&l, &snap);
	is_str(snap.dev[0].alloc_pod, "p0", "apply: a time-sliced replica of a UUID; first wins");
	is_str(snap.dev[0].alloc_container, "c0", "apply: its container");
	is_str(snap.dev[0].alloc_namespace, "ns", "apply: its namespace");
	is_str(snap.dev[1].alloc_pod, "p1", "apply: an NVML index");
	is_str(snap.dev[2].alloc_pod, "p2", "apply: a MIG UUID");
	is_str(snap.dev[3].alloc_pod, "p3", "apply: a PCI bus id");
	is_str(snap.dev[4].alloc_pod, "p4", "apply: a card name");
	is_str(snap.dev[5].alloc_pod, "", "apply: card20 is not card2");
	podres_list_release(&l);
	gpu_snapshot_release(&snap);
}

/* ---- whole calls on a socket ---- */

static int
listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	str_copy(sa.sun_path, sizeof(sa.sun_path), path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0) {
		perror("listen");
		exit(2);
	}
	return fd;
}

/* A child that accepts once, reads the request, and writes answer (NULL: nothing, ever). */
static pid_t
serve_once(int lfd, const struct strbuf *answer)
{
	pid_t pid = fork();

	if (pid == 0) {
		int c = accept(lfd, NULL, NULL);
		char buf[4096];

		if (c >= 0 && read(c, buf, sizeof(buf)) > 0 && answer &&
		    write(c, answer->buf, answer->len) == (ssize_t)answer->len)
			sleep(5); /* keep it open: the client ends the call */
		else
			sleep(30);
		_exit(0);
	}
	return pid;
}

static void
test_call(void)
{
	char dir[] = "/tmp/t_podres.XXXXXX";
	char path[256], root[256];
	struct strbuf msg = STRBUF_INIT, s = STRBUF_INIT;
	struct podres_list l = { 0 };
	struct err e = ERR_INIT;
	struct podres_cache *c;
	struct gpu_snapshot snap;
	double t0;
	int lfd, rc;
	pid_t pid;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/kubelet.sock", dir);
	is_int(podres_call(path, 1.0, &l, &e), E_NOTFOUND, "call: no socket");
	is_str(e.msg, "", "call: no socket is no message");

	sample_message(&msg);
	good_stream(&s, &msg, T_OK, sizeof(T_OK));
	lfd = listen_at(path);
	pid = serve_once(lfd, &s);
	rc = podres_call(path, 5.0, &l, &e);
	is_int(rc, 0, "call: answered %s", e.msg);
	is_int(l.nr, 3, "call: three GPU ids");
	podres_list_release(&l);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	pid = serve_once(lfd, NULL);
	t0 = clock_mono();
	err_clear(&e);
	rc = podres_call(path, 0.3, &l, &e);
	is_int(rc, E_TIMEOUT, "call: a server that never answers times out");
	ok(clock_mono() - t0 < 1.5, "call: within its deadline (%.2f s)", clock_mono() - t0);
	ok(strstr(e.msg, "did not answer within 0.3 s") != NULL, "call: %s", e.msg);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(lfd);

	/* the cache: a hung kubelet is not asked again at once; a missing one is no note */
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(path, sizeof(path), "%s/root/var", dir);
	mkdir(root, 0700);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/root/var/lib", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/root/var/lib/kubelet", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/root/var/lib/kubelet/pod-resources", dir);
	mkdir(path, 0700);
	c = podres_cache_new(root, 0.3);
	gpu_snapshot_init(&snap);
	podres_cache_fill(c, &snap, 100.0);
	is_int(snap.nr_note, 0, "cache: no socket, no note");
	gpu_snapshot_release(&snap);
	snprintf(path, sizeof(path), "%s/root/var/lib/kubelet/pod-resources/kubelet.sock", dir);
	lfd = listen_at(path);
	pid = serve_once(lfd, NULL);
	gpu_snapshot_init(&snap);
	podres_cache_fill(c, &snap, 106.0);
	is_int(snap.nr_note, 1, "cache: a hung kubelet is one note");
	if (snap.nr_note)
		ok(strstr(snap.note[0], "did not answer") != NULL, "cache: %s", snap.note[0]);
	gpu_snapshot_release(&snap);
	gpu_snapshot_init(&snap);
	t0 = clock_mono();
	podres_cache_fill(c, &snap, 107.0);
	ok(clock_mono() - t0 < 0.1, "cache: not asked again a second later");
	is_int(snap.nr_note, 1, "cache: the note stays while it stands");
	gpu_snapshot_release(&snap);
	podres_cache_free(c);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(lfd);
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
	strbuf_release(&msg);
	strbuf_release(&s);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_decode();
	test_huffman();
	test_request();
	test_h2();
	test_h2_hostile();
	test_apply();
	test_call();
	return done_testing();
}
