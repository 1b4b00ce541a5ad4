/*
 * libFuzzer target: the kubelet pod-resources client's readers. The input
 * is what a server sends on the socket, fed to the HTTP/2 state machine in
 * pieces whose sizes come from the input's first byte; when its stream
 * ends, the result and the protobuf decoder. The whole input is also
 * decoded as a ListPodResourcesResponse on its own. Beyond "no crash, no
 * overflow, no leak": a feed that ended stays ended, a message is inside
 * what was fed, every kept id is of a GPU resource with all its strings,
 * at most PODRES_MAX_ALLOC of them, and the matching fills only
 * NUL-terminated names.
 */
#include <string.h>

#include "backend/podres.h"
#include "core/gpu.h"
#include "fuzz.h"

static void
check_list(const struct podres_list *l)
{
	FUZZ_CHECK(l->nr <= PODRES_MAX_ALLOC, "%zu ids kept", l->nr);
	for (size_t i = 0; i < l->nr; i++) {
		const struct podres_alloc *a = &l->v[i];

		FUZZ_CHECK(a->namespace_ && a->pod && a->container && a->resource && a->device_id,
		           "id %zu lacks a string", i);
		FUZZ_CHECK(podres_is_gpu_resource(a->resource), "kept '%s'", a->resource);
	}
}

static void
apply(const struct podres_list *l)
{
	struct gpu_snapshot snap;
	struct gpu_device *d;

	gpu_snapshot_init(&snap);
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_NVIDIA;
	str_copy(d->uuid, sizeof(d->uuid), "GPU-a");
	d = gpu_snapshot_add_dev(&snap);
	d->vendor = VENDOR_AMD;
	d->pci_valid = true;
	str_copy(d->card, sizeof(d->card), "card1");
	podres_apply(l, &snap);
	for (size_t i = 0; i < snap.nr_dev; i++) {
		d = &snap.dev[i];
		FUZZ_CHECK(memchr(d->alloc_pod, 0, sizeof(d->alloc_pod)) &&
		                   memchr(d->alloc_namespace, 0, sizeof(d->alloc_namespace)) &&
		                   memchr(d->alloc_container, 0, sizeof(d->alloc_container)),
		           "an unterminated name");
	}
	gpu_snapshot_release(&snap);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct podres_list l = { 0 };
	struct podres_h2 *h;
	size_t step, off = 1;
	int rc = 0;

	podres_decode(data, size, &l, NULL);
	check_list(&l);
	apply(&l);
	podres_list_release(&l);
	if (size < 1)
		return 0;
	step = (size_t)data[0] * 7 + 1;
	h = podres_h2_new(PODRES_PATH);
	while (off < size && rc == 0) {
		size_t n = size - off < step ? size - off : step;

		rc = podres_h2_feed(h, data + off, n, NULL);
		off += n;
	}
	if (rc == 1) {
		const uint8_t *msg;
		size_t len, out;

		FUZZ_CHECK(podres_h2_feed(h, data, size, NULL) == 1, "an ended stream went on");
		podres_h2_out(h, &out);
		if (podres_h2_result(h, &msg, &len, NULL) == 0) {
			FUZZ_CHECK(len <= size && len <= PODRES_MAX_REPLY,
			           "a message of %zu bytes from %zu", len, size);
			podres_decode(msg, len, &l, NULL);
			check_list(&l);
			podres_list_release(&l);
		}
	}
	podres_h2_free(h);
	return 0;
}
