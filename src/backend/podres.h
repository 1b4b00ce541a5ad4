/*
 * Which GPU the kubelet allocated to which pod, even while nothing runs on
 * it: a client of the kubelet's PodResourcesLister gRPC service (v1, List)
 * on its unix socket, spoken over a minimal HTTP/2 (cleartext, prior
 * knowledge) of our own, bounded in size and time, and the decoding of its
 * protobuf answer. docs/design.md ("Pod resources") says what is matched.
 */
#ifndef GPUSCOPE_PODRES_H
#define GPUSCOPE_PODRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct gpu_snapshot;
struct strbuf;

/* Where the kubelet listens, below the root that stands for / */
#define PODRES_SOCKET    "var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_PATH      "/v1.PodResourcesLister/List"
#define PODRES_MAX_REPLY (16u << 20) /* bytes of gRPC message accepted */
#define PODRES_MAX_ALLOC 4096        /* GPU device ids kept from one answer */
#define PODRES_TIMEOUT   2.0         /* seconds for the whole call */

/* One GPU device id the kubelet gave a container (all strings owned). */
struct podres_alloc {
	char *namespace_;
	char *pod;
	char *container;
	char *resource;  /* "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "amd.com/gpu", ... */
	char *device_id; /* the device plugin's id: a UUID for NVIDIA */
};

struct podres_list {
	struct podres_alloc *v;
	size_t nr, alloc;
	bool truncated; /* more than PODRES_MAX_ALLOC GPU ids: the rest were dropped */
};

void podres_list_release(struct podres_list *l);

/* Whether resource names a GPU (NVIDIA, its MIG profiles, AMD, Intel). */
bool podres_is_gpu_resource(const char *resource);

/*
 * Decode a ListPodResourcesResponse (the gRPC message, without its 5-byte
 * prefix) and append its GPU device ids to out. Returns 0, or E_PARSE for
 * malformed protobuf (what was appended before stays).
 */
int podres_decode(const uint8_t *buf, size_t len, struct podres_list *out, struct err *err);

/*
 * The client side of one HTTP/2 connection carrying one gRPC call, as a
 * state machine without I/O: podres_h2_new() queues the connection preface,
 * SETTINGS, the request's HEADERS and DATA in its output; podres_h2_feed()
 * takes bytes from the server and queues what it must answer (SETTINGS and
 * PING acknowledgements, WINDOW_UPDATEs). Frames are at most 16 KiB, a
 * header block 64 KiB, the reply PODRES_MAX_REPLY.
 */
struct podres_h2;

struct podres_h2 *podres_h2_new(const char *path);
void podres_h2_free(struct podres_h2 *h);
/* The bytes to send; podres_h2_sent() drops the first n of them once sent. */
const uint8_t *podres_h2_out(const struct podres_h2 *h, size_t *len);
void podres_h2_sent(struct podres_h2 *h, size_t n);
/*
 * Returns 1 when the response stream ended (END_STREAM), 0 when more is
 * needed, E_PARSE for a protocol error or a reply past the caps, E_IO for
 * a stream the server reset or a connection it closed with GOAWAY before
 * the answer.
 */
int podres_h2_feed(struct podres_h2 *h, const uint8_t *buf, size_t len, struct err *err);
/*
 * After the stream ended: the gRPC message (its 5-byte prefix removed) in
 * *msg and *len. Returns 0, or E_IO naming the grpc-status and grpc-message of
 * a failed call or a non-200 :status, E_PARSE when no complete message came
 * (or a compressed one). A trailer that could not be decoded leaves the
 * status unknown: a complete message is then accepted.
 */
int podres_h2_result(const struct podres_h2 *h, const uint8_t **msg, size_t *len, struct err *err);

/*
 * Decode an HPACK Huffman string (RFC 7541 appendix B) into out (appended).
 * Returns 0, or E_PARSE for bad padding or the EOS symbol.
 */
int podres_huffman_decode(const uint8_t *buf, size_t len, struct strbuf *out);

/*
 * Call List on the socket at path, within timeout seconds in all, and
 * append the GPU allocations to out. Returns 0; E_NOTFOUND when there is no
 * socket; E_PERM, E_IO (refused, reset, a failed gRPC status), E_TIMEOUT,
 * E_PARSE with a one-line message naming the socket.
 */
int podres_call(const char *path, double timeout, struct podres_list *out, struct err *err);

/*
 * Set alloc_namespace/alloc_pod/alloc_container of the devices of snap that
 * the list names: an id equal to the device's UUID (NVIDIA, also "UUID::N"
 * of time-sliced replicas; MIG UUIDs for MIG devices), an NVML index for
 * nvidia.com/gpu ("0": the device plugin's index strategy), a PCI bus id
 * ("0000:c1:00.0") or a DRM card name ("card1", "card1-0"). The first
 * container the kubelet lists for a device wins.
 */
void podres_apply(const struct podres_list *l, struct gpu_snapshot *snap);

/*
 * A cached view for the collector: asks the kubelet at most every few
 * seconds (a failed call is retried later still), and each sample gets the
 * last answer applied and, while the last call failed, its one note.
 */
struct podres_cache;

/* root stands for / (cfg->root); timeout caps PODRES_TIMEOUT when smaller and positive. */
struct podres_cache *podres_cache_new(const char *root, double timeout);
void podres_cache_fill(struct podres_cache *c, struct gpu_snapshot *snap, double now_mono);
void podres_cache_free(struct podres_cache *c);

#endif
