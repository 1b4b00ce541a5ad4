/*
 * libFuzzer target: procinfo_container() on arbitrary /proc/<pid>/cgroup
 * text. Beyond "no crash, no overflow", it checks the contract of
 * procinfo.h: on false everything is cleared; on true the runtime is one
 * of the documented names, the id is 12 lowercase hex digits (or, for
 * LXC, 1 to 12 bytes of a path component) taken from the text, the pod
 * uid is hex and dashes, and both are NUL-terminated inside their
 * buffers. A second call with small buffers must give the same answer,
 * cut to fit.
 */
#include <stdbool.h>
#include <string.h>

#include "core/procinfo.h"
#include "fuzz.h"

#define ID_SIZE  13 /* what apply_cgroup() passes: 12 digits and a NUL */
#define POD_SIZE 64

static const char *const runtimes[] = { "docker", "containerd", "cri-o",
	                                "podman", "lxc",        "kubernetes" };

static bool
known_runtime(const char *rt)
{
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (rt == runtimes[i] || !strcmp(rt, runtimes[i]))
			return true;
	return false;
}

static bool
lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool
pod_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
	       c == '-';
}

/* A heap buffer of exactly size bytes (AddressSanitizer sees any write past it), filled with junk.
 */
static char *
junk_buf(size_t size)
{
	char *b = malloc(size ? size : 1);

	if (!b)
		abort();
	memset(b, 0xA5, size ? size : 1);
	return b;
}

static void
check_full(const char *text, bool found, const char *id, const char *rt, const char *pod)
{
	size_t id_len = strnlen(id, ID_SIZE), pod_len = strnlen(pod, POD_SIZE);

	FUZZ_CHECK(id_len < ID_SIZE, "id not NUL-terminated in its %d bytes", ID_SIZE);
	FUZZ_CHECK(pod_len < POD_SIZE, "pod not NUL-terminated in its %d bytes", POD_SIZE);
	if (!found) {
		FUZZ_CHECK(!id[0] && !pod[0] && !rt, "false, but id '%s', pod '%s', runtime %s", id,
		           pod, rt ? rt : "NULL");
		return;
	}
	FUZZ_CHECK(rt != NULL, "true with a NULL runtime (id '%s')", id);
	FUZZ_CHECK(known_runtime(rt), "unknown runtime '%s'", rt);
	FUZZ_CHECK(id_len >= 1, "true with an empty id (runtime %s)", rt);
	/* the id is cut from the text, so it must occur there */
	FUZZ_CHECK(strstr(text, id) != NULL, "id '%s' does not occur in the text", id);
	if (!strcmp(rt, "lxc")) {
		FUZZ_CHECK(!strchr(id, '/') && !strchr(id, '\n'),
		           "lxc name '%s' holds a path separator or newline", id);
	} else {
		FUZZ_CHECK(id_len == ID_SIZE - 1, "%s id '%s' is not 12 characters", rt, id);
		for (size_t i = 0; i < id_len; i++)
			FUZZ_CHECK(lower_hex(id[i]), "%s id '%s' is not lowercase hex", rt, id);
	}
	if (pod[0]) {
		FUZZ_CHECK(pod_len >= 8, "pod uid '%s' shorter than 8", pod);
		for (size_t i = 0; i < pod_len; i++)
			FUZZ_CHECK(pod_char(pod[i]), "pod uid '%s' is not hex and dashes", pod);
	}
}

/* The same text with buffers of id_size and pod_size: the same answer, cut to fit. */
static void
check_small(const char *text, bool found, const char *id, const char *rt, const char *pod,
            size_t id_size, size_t pod_size)
{
	char *sid = junk_buf(id_size), *spod = junk_buf(pod_size);
	const char *srt = (const char *)1;
	bool sfound = procinfo_container(text, sid, id_size, &srt, spod, pod_size);

	FUZZ_CHECK(sfound == found, "found %d with %zu/%zu-byte buffers, %d with full ones", sfound,
	           id_size, pod_size, found);
	FUZZ_CHECK(srt == rt, "runtime %s with small buffers, %s with full ones",
	           srt ? srt : "NULL", rt ? rt : "NULL");
	if (id_size) {
		size_t n = strnlen(sid, id_size);

		FUZZ_CHECK(n < id_size, "id not NUL-terminated in a %zu-byte buffer", id_size);
		FUZZ_CHECK(!strncmp(sid, id, n) &&
		                   n == (strlen(id) < id_size - 1 ? strlen(id) : id_size - 1),
		           "id '%s' in a %zu-byte buffer is not '%s' cut", sid, id_size, id);
	}
	if (pod_size) {
		size_t n = strnlen(spod, pod_size);

		FUZZ_CHECK(n < pod_size, "pod not NUL-terminated in a %zu-byte buffer", pod_size);
		FUZZ_CHECK(!strncmp(spod, pod, n) &&
		                   n == (strlen(pod) < pod_size - 1 ? strlen(pod) : pod_size - 1),
		           "pod '%s' in a %zu-byte buffer is not '%s' cut", spod, pod_size, pod);
	}
	free(sid);
	free(spod);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	char *id = junk_buf(ID_SIZE), *pod = junk_buf(POD_SIZE);
	const char *rt = (const char *)1; /* must be overwritten */
	bool found;

	found = procinfo_container(text, id, ID_SIZE, &rt, pod, POD_SIZE);
	check_full(text, found, id, rt, pod);
	check_small(text, found, id, rt, pod, size % (ID_SIZE + 1), size % (POD_SIZE + 1));
	free(text);
	free(id);
	free(pod);
	return 0;
}
