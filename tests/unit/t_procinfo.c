/*
 * Tests of procinfo: /proc parsing against the fixture trees
 * tests/fixtures/proc (root pid namespace) and tests/fixtures/proc-nested,
 * container detection on cgroup lines of real runtimes, CPU % over
 * samples, and what happens with vanished, hidden, unreadable and
 * malformed files. Nothing here reads the real /proc or the real users.
 *
 * Run it from the repository root, or set GPUSCOPE_FIXTURES to the
 * fixtures directory.
 */
#include "core/procinfo.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "harness.h"
#include "tree.h"

#define FIXED_TIME 1800000000.0 /* cfg->fixed_time: 2027-01-15T08:00:00Z */

#define DOCKER_ID  "635a3e8a6cfa6f67135cd323191d0bf6dc02b50387e022b71271684cb3c77861"
#define K8S_ID     "5075dfe85ac5f7189c6a2213f7c76df37b6656e460b2b4ff072d74fc2b90e5ef"
#define PODMAN_ID  "aea66f069d4f22eb3ac0bd57d60c3f3990efa968afe09e0b4bb570815a3b144b"
#define CRIO_ID    "c64064614423cb790e88b3e5492ff5ccf673b25ae823089f7a60c65cda24d809"
#define ROOTPOD_ID "2ec0e05312fed02434ea42394a7b1f5a127927c6c04edd50fa4ef05ac645ceac"
#define V1_ID      "2a759f8fac4d817ff2bc28c224d51c5030f915c0c14997110517984ca9aa8d0f"
#define KIND_NODE  "7232fa5b7fe3f027d56d3feba41858ad7e5841fa3432d4b5b9f98c0186b6abbb"
#define KIND_POD   "16881906d96f4c7f61f8ab46c932468a6146a73c13e1bb26cc0f9adb470e7361"
#define POD_LLM    "6fa3721d-437e-fd25-5304-7aeca39e0ae7"
#define POD_LLM_   "6fa3721d_437e_fd25_5304_7aeca39e0ae7"
#define POD_CRIO_  "8dae6b58_4e6d_3579_7dca_c8459f024631"
#define POD_BURST  "be3fd6e7-7c98-00b7-6f67-72c733e5669f"
#define POD_GUAR_  "b4e1f1c1_d892_713e_39ae_97127cdfa0e8"
#define POD_KIND   "c6e60485-baf7-2a54-60cc-9c427f587e02"

static char proc_root[2100];   /* tests/fixtures/proc */
static char nested_root[2100]; /* tests/fixtures/proc-nested */
static char passwd_path[2100]; /* tests/fixtures/passwd */
static long hz;

/* --- helpers --------------------------------------------------------------- */

static void
cfg_for(struct gs_config *cfg, const char *root, const char *passwd)
{
	gs_config_init(cfg);
	cfg->proc_root = root;
	cfg->passwd_file = passwd;
	cfg->fixed_time = FIXED_TIME;
}

/* A field's value, or NAN when it is not valid (so that is_dbl fails). */
static double
field(const struct gpu_proc *p, enum proc_field f)
{
	return proc_has(p, f) ? p->v[f] : NAN;
}

static int
fill(struct procinfo_ctx *ctx, uint32_t pid, struct gpu_proc *p)
{
	struct err err = ERR_INIT;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return procinfo_fill(ctx, p, &err);
}

static const char self_status[] = "Name:\tgpuscope\nUid:\t0\t0\t0\t0\nNSpid:\t4321\n";
static const char plain_mountinfo[] =
        "23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n";

/* A minimal /proc root: uptime and self. */
static void
make_root(const char *root, const char *uptime, const char *mountinfo)
{
	char self[4096];

	make_dir(root);
	snprintf(self, sizeof(self), "%s/self", root);
	make_dir(self);
	if (uptime)
		write_at(root, "uptime", uptime);
	write_at(self, "status", self_status);
	write_at(self, "mountinfo", mountinfo ? mountinfo : plain_mountinfo);
}

/* A minimal process directory root/pid; a NULL file is left out. */
static void
make_pid(const char *root, uint32_t pid, const char *status, const char *stat, const char *cmdline,
         size_t cmdline_len, const char *cgroup)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/%u", root, pid);
	make_dir(dir);
	if (status)
		write_at(dir, "status", status);
	if (stat)
		write_at(dir, "stat", stat);
	if (cmdline)
		write_bytes_at(dir, "cmdline", cmdline, cmdline_len);
	if (cgroup)
		write_at(dir, "cgroup", cgroup);
}

/*
 * What a fill produced, in a form that crosses a pipe: the permission tests
 * run in a child that drops root, because root reads through any file mode.
 */
struct fill_res {
	int rc;
	int host;
	uint32_t valid;
	double v[PF__COUNT];
	int has_name, has_user, has_cmdline, has_cgroup;
	char name[64], user[64], cmdline[256], cgroup[256];
};

static void
res_from(struct fill_res *r, int rc, const struct gpu_proc *p)
{
	memset(r, 0, sizeof(*r));
	r->rc = rc;
	r->host = (int)p->host;
	r->valid = p->valid;
	memcpy(r->v, p->v, sizeof(r->v));
	r->has_name = p->name != NULL;
	r->has_user = p->user != NULL;
	r->has_cmdline = p->cmdline != NULL;
	r->has_cgroup = p->cgroup != NULL;
	snprintf(r->name, sizeof(r->name), "%s", p->name ? p->name : "");
	snprintf(r->user, sizeof(r->user), "%s", p->user ? p->user : "");
	snprintf(r->cmdline, sizeof(r->cmdline), "%s", p->cmdline ? p->cmdline : "");
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", p->cgroup ? p->cgroup : "");
}

static void
fill_res_direct(const char *root, const char *passwd, uint32_t pid, struct fill_res *r)
{
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	int rc;

	cfg_for(&cfg, root, passwd);
	ctx = procinfo_new(&cfg);
	rc = fill(ctx, pid, &p);
	res_from(r, rc, &p);
	gpu_proc_release(&p);
	procinfo_free(ctx);
}

struct fill_arg {
	const char *root, *passwd;
	uint32_t pid;
};

static void
fill_child(const void *arg, void *res)
{
	const struct fill_arg *a = arg;

	fill_res_direct(a->root, a->passwd, a->pid, res);
}

/* Fill pid as an unprivileged user. Returns -1 when that cannot be arranged. */
static int
fill_unprivileged(const char *root, const char *passwd, uint32_t pid, struct fill_res *r)
{
	const struct fill_arg a = { root, passwd, pid };

	return as_nobody(fill_child, &a, r, sizeof(*r));
}

/* --- container detection --------------------------------------------------- */

struct cg_case {
	const char *what;
	const char *text;
	bool found;
	const char *id;
	const char *runtime;
	const char *pod;
};

static const struct cg_case cg_cases[] = {
	{ "docker, cgroup v1, cgroupfs driver",
	  "12:memory:/docker/" V1_ID "\n11:cpu,cpuacct:/docker/" V1_ID
	  "\n1:name=systemd:/docker/" V1_ID "\n",
	  true, "2a759f8fac4d", "docker", "" },
	{ "docker, cgroup v1, systemd driver",
	  "4:devices:/system.slice/docker-" V1_ID
	  ".scope\n1:name=systemd:/system.slice/docker-" V1_ID ".scope\n",
	  true, "2a759f8fac4d", "docker", "" },
	{ "docker, cgroup v2", "0::/system.slice/docker-" DOCKER_ID ".scope\n", true,
	  "635a3e8a6cfa", "docker", "" },
	{ "containerd without Kubernetes", "5:devices:/containerd/" V1_ID "\n", true,
	  "2a759f8fac4d", "containerd", "" },
	{ "nerdctl, systemd driver", "0::/system.slice/nerdctl-" V1_ID ".scope\n", true,
	  "2a759f8fac4d", "containerd", "" },
	{ "cri-containerd, burstable pod, v2 systemd slices",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_LLM_
	  ".slice/cri-containerd-" K8S_ID ".scope\n",
	  true, "5075dfe85ac5", "containerd", POD_LLM },
	{ "cri-o, besteffort pod, v2 systemd slices",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_CRIO_
	  ".slice/crio-" CRIO_ID ".scope\n",
	  true, "c64064614423", "cri-o", "8dae6b58-4e6d-3579-7dca-c8459f024631" },
	{ "cri-o conmon is not the container",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_CRIO_
	  ".slice/crio-conmon-" CRIO_ID ".scope\n",
	  false, "", NULL, "" },
	{ "cri-o, cgroupfs driver", "0::/kubepods/besteffort/pod" POD_BURST "/crio-" CRIO_ID "\n",
	  true, "c64064614423", "cri-o", POD_BURST },
	{ "podman, rootful", "0::/machine.slice/libpod-" ROOTPOD_ID ".scope\n", true,
	  "2ec0e05312fe", "podman", "" },
	{ "podman, rootless",
	  "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" PODMAN_ID
	  ".scope/container\n",
	  true, "aea66f069d4f", "podman", "" },
	{ "podman conmon is not the container",
	  "0::/machine.slice/libpod-conmon-" ROOTPOD_ID ".scope\n", false, "", NULL, "" },
	{ "kubepods burstable, v1 cgroupfs path",
	  "11:memory:/kubepods/burstable/pod" POD_BURST "/" K8S_ID
	  "\n10:cpuset:/kubepods/burstable/pod" POD_BURST "/" K8S_ID "\n",
	  true, "5075dfe85ac5", "kubernetes", POD_BURST },
	{ "kubepods besteffort, v1 cgroupfs path",
	  "9:pids:/kubepods/besteffort/pod" POD_BURST "/" K8S_ID "\n", true, "5075dfe85ac5",
	  "kubernetes", POD_BURST },
	{ "kubepods guaranteed, v1 cgroupfs path (no QoS level)",
	  "9:pids:/kubepods/podb4e1f1c1-d892-713e-39ae-97127cdfa0e8/" K8S_ID "\n", true,
	  "5075dfe85ac5", "kubernetes", "b4e1f1c1-d892-713e-39ae-97127cdfa0e8" },
	{ "kubepods guaranteed, systemd slice",
	  "0::/kubepods.slice/kubepods-pod" POD_GUAR_ ".slice/cri-containerd-" K8S_ID ".scope\n",
	  true, "5075dfe85ac5", "containerd", "b4e1f1c1-d892-713e-39ae-97127cdfa0e8" },
	{ "kubepods burstable, v1 systemd slices",
	  "3:memory:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_LLM_
	  ".slice/docker-" V1_ID ".scope\n",
	  true, "2a759f8fac4d", "docker", POD_LLM },
	{ "runc's slice:prefix:name fallback (kind, k3s)",
	  "0::/system.slice/containerd.service/kubepods-besteffort-pod" POD_CRIO_
	  ".slice:cri-containerd:" K8S_ID "\n",
	  true, "5075dfe85ac5", "containerd", "8dae6b58-4e6d-3579-7dca-c8459f024631" },
	{ "kind: a pod inside a docker node, the innermost wins",
	  "12:memory:/docker/" KIND_NODE "/kubepods/besteffort/pod" POD_KIND "/" KIND_POD "\n",
	  true, "16881906d96f", "kubernetes", POD_KIND },
	{ "lxc, cgroup v1", "4:memory:/lxc/build01\n1:name=systemd:/lxc/build01\n", true, "build01",
	  "lxc", "" },
	{ "lxc, cgroup v2 payload, name cut to 12", "0::/lxc.payload.gpu-build-server-01\n", true,
	  "gpu-build-se", "lxc", "" },
	{ "lxc monitor is not the container", "0::/lxc.monitor.gpu-build-server-01\n", false, "",
	  NULL, "" },
	{ "plain user session", "0::/user.slice/user-1000.slice/session-3.scope\n", false, "", NULL,
	  "" },
	{ "systemd service", "0::/system.slice/nvidia-persistenced.service\n", false, "", NULL,
	  "" },
	{ "the containerd daemon itself", "0::/system.slice/containerd.service\n", false, "", NULL,
	  "" },
	{ "the docker daemon itself", "0::/system.slice/docker.service\n", false, "", NULL, "" },
	{ "init", "0::/init.scope\n", false, "", NULL, "" },
	{ "inside a private cgroup namespace", "0::/\n", false, "", NULL, "" },
	{ "hybrid: v2 at the root, docker in v1",
	  "12:memory:/docker/" V1_ID "\n1:name=systemd:/docker/" V1_ID "\n0::/\n", true,
	  "2a759f8fac4d", "docker", "" },
	{ "hybrid: the unified line wins over v1",
	  "12:memory:/docker/" V1_ID "\n0::/system.slice/docker-" DOCKER_ID ".scope\n", true,
	  "635a3e8a6cfa", "docker", "" },
	{ "docker id too short", "0::/system.slice/docker-abc123.scope\n", false, "", NULL, "" },
	{ "docker id not hex", "0::/docker/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n", false, "", NULL, "" },
	{ "no newline at the end", "0::/system.slice/docker-" DOCKER_ID ".scope", true,
	  "635a3e8a6cfa", "docker", "" },
	{ "garbage", "this is not a cgroup file", false, "", NULL, "" },
	{ "empty", "", false, "", NULL, "" },
	{ "pod without a container", "0::/kubepods.slice/kubepods-pod" POD_GUAR_ ".slice\n", false,
	  "", NULL, "" },
};

static void
test_container_shapes(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cg_cases); i++) {
		const struct cg_case *c = &cg_cases[i];
		char id[64] = "junk", pod[64] = "junk";
		const char *rt = "junk";
		bool found;

		found = procinfo_container(c->text, id, sizeof(id), &rt, pod, sizeof(pod));
		is_int(found, c->found, "container: %s: found", c->what);
		is_str(id, c->id, "container: %s: id", c->what);
		is_str(rt, c->runtime, "container: %s: runtime", c->what);
		is_str(pod, c->pod, "container: %s: pod", c->what);
	}
}

static void
test_container_buffers(void)
{
	char id[5], pod[9], big_id[64], big_pod[64];
	const char *rt;
	struct strbuf sb = STRBUF_INIT;
	bool found;

	found = procinfo_container(cg_cases[5].text, id, sizeof(id), &rt, pod, sizeof(pod));
	ok(found, "container: small buffers still find it");
	is_str(id, "5075", "container: id cut to its buffer");
	is_str(pod, "6fa3721d", "container: pod cut to its buffer");
	found = procinfo_container(cg_cases[2].text, NULL, 0, &rt, NULL, 0);
	ok(found && !strcmp(rt, "docker"), "container: zero-sized buffers are not written");
	found = procinfo_container(NULL, big_id, sizeof(big_id), &rt, big_pod, sizeof(big_pod));
	ok(!found && !big_id[0] && !big_pod[0] && !rt, "container: NULL text is no container");

	/* a path far longer than any buffer, with the container at its very end */
	strbuf_addstr(&sb, "0::");
	for (int i = 0; i < 5000; i++)
		strbuf_addstr(&sb, "/deep");
	strbuf_addstr(&sb, "/docker-" DOCKER_ID ".scope\n");
	found = procinfo_container(sb.buf, big_id, sizeof(big_id), &rt, big_pod, sizeof(big_pod));
	ok(found && !strcmp(big_id, "635a3e8a6cfa"), "container: 25 kB path");
	/* a pod uid too long for any pod buffer is no pod */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "0::/kubepods/pod");
	for (int i = 0; i < 100; i++)
		strbuf_addstr(&sb, "ab");
	strbuf_addstr(&sb, "/" K8S_ID "\n");
	found = procinfo_container(sb.buf, big_id, sizeof(big_id), &rt, big_pod, sizeof(big_pod));
	ok(!found && !big_pod[0], "container: 200-digit pod uid is rejected");
	strbuf_release(&sb);
}

/* --- the root namespace fixture ---------------------------------------------- */

static void
test_normal_process(struct procinfo_ctx *ctx)
{
	struct gpu_proc p;

	is_int(fill(ctx, 1001, &p), 0, "1001: filled");
	is_int(p.host, PHOST_OK, "1001: all read");
	is_str(p.name, "python3", "1001: name from status");
	is_str(p.user, "alice", "1001: user from the passwd file (first line of uid 1000)");
	is_dbl(field(&p, PF_UID), 1000, 0, "1001: real uid");
	is_dbl(field(&p, PF_NSPID), 1001, 0, "1001: nspid = pid in the root namespace");
	is_dbl(field(&p, PF_RSS), 2401974272.0, 0, "1001: rss = 2345678 kB in bytes");
	/* (360000 + 40000) ticks / 100 Hz */
	is_dbl(field(&p, PF_CPU_TIME), 4000, 1e-9, "1001: cpu time");
	is_int(p.start_ticks, 34000000, "1001: start ticks");
	/* started 340000.00 s after boot, uptime 350000.50: 10000.5 s ago */
	is_dbl(field(&p, PF_START_TIME), 1799989999.5, 1e-6, "1001: start time");
	/* first sight: lifetime average 4000 / 10000.5 */
	is_dbl(field(&p, PF_CPU_PERCENT), 39.998000099995, 1e-9, "1001: lifetime cpu %%");
	is_str(p.cmdline,
	       "/home/alice/.venv/bin/python3 -m torch.distributed.run --nproc_per_node=8 "
	       "--master_port=29500 train.py --config configs/llama-70b.yaml --batch-size 64 --lr 3e-4 "
	       "--run-name llama 70b sft (ablation 3) --output-dir /scratch/alice/runs/2026-11-30T05:02:23 "
	       "--resume --gradient-checkpointing --dataloader-workers=16 --seed=1234",
	       "1001: cmdline joined with single spaces, no trailing space");
	is_str(p.container, NULL, "1001: user session: no container");
	is_str(p.container_runtime, NULL, "1001: no runtime");
	is_str(p.pod, NULL, "1001: no pod");
	is_str(p.cgroup, "/user.slice/user-1000.slice/session-3.scope", "1001: cgroup path");
	gpu_proc_release(&p);
}

static void
test_docker_process(struct procinfo_ctx *ctx)
{
	struct gpu_proc p;

	is_int(fill(ctx, 2002, &p), 0, "2002: filled");
	is_int(p.host, PHOST_OK, "2002: all read");
	is_str(p.name, "tritonserver", "2002: name");
	is_str(p.user, "root", "2002: uid 0 is root");
	is_dbl(field(&p, PF_NSPID), 1, 0, "2002: nspid is the last NSpid entry");
	is_dbl(field(&p, PF_RSS), 1073741824.0, 0, "2002: rss 1 GiB");
	is_dbl(field(&p, PF_CPU_TIME), 20, 1e-9, "2002: cpu time (1500 + 500) / 100");
	/* started 349900.50 s after boot: 100 s ago */
	is_dbl(field(&p, PF_START_TIME), 1799999900.0, 1e-6, "2002: start time");
	is_dbl(field(&p, PF_CPU_PERCENT), 20, 1e-9, "2002: lifetime cpu %% 20 / 100");
	is_str(p.cmdline, "tritonserver --model-repository=/models --log-verbose=0",
	       "2002: cmdline");
	is_str(p.container, "635a3e8a6cfa", "2002: docker container id");
	is_str(p.container_runtime, "docker", "2002: runtime");
	is_str(p.pod, NULL, "2002: no pod");
	is_str(p.cgroup, "/system.slice/docker-" DOCKER_ID ".scope", "2002: cgroup path");
	gpu_proc_release(&p);
}

static void
test_pod_process(struct procinfo_ctx *ctx)
{
	struct gpu_proc p;

	is_int(fill(ctx, 3003, &p), 0, "3003: filled");
	is_int(p.host, PHOST_OK, "3003: all read");
	is_str(p.user, "1001", "3003: uid without a passwd line shows as a number");
	is_dbl(field(&p, PF_UID), 1001, 0, "3003: uid");
	is_dbl(field(&p, PF_NSPID), 7, 0, "3003: pid 7 in the pod");
	is_dbl(field(&p, PF_RSS), 536870912.0, 0, "3003: rss 512 MiB");
	is_dbl(field(&p, PF_CPU_TIME), 8000, 1e-9, "3003: cpu time");
	/* started 300000.50 s after boot: 50000 s ago; 8000 / 50000 */
	is_dbl(field(&p, PF_START_TIME), 1799950000.0, 1e-6, "3003: start time");
	is_dbl(field(&p, PF_CPU_PERCENT), 16, 1e-9, "3003: lifetime cpu %%");
	is_str(p.container, "5075dfe85ac5", "3003: container id from a v1 hierarchy");
	is_str(p.container_runtime, "containerd", "3003: cri-containerd");
	is_str(p.pod, POD_LLM, "3003: pod uid with dashes");
	is_str(p.cgroup,
	       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_LLM_
	       ".slice/cri-containerd-" K8S_ID ".scope",
	       "3003: cgroup path of the first line (no v2 line)");
	is_str(p.cmdline, "python -m vllm.entrypoints.openai.api_server --model /models/llama-3-8b",
	       "3003: cmdline");
	gpu_proc_release(&p);
}

static void
test_odd_processes(struct procinfo_ctx *ctx)
{
	struct gpu_proc p;

	is_int(fill(ctx, 4004, &p), 0, "4004: filled");
	is_int(p.host, PHOST_OK, "4004: all read");
	is_str(p.name, "a) (b c", "4004: name with ') (' and spaces");
	is_str(p.user, "bob", "4004: user");
	/* stat fields counted from the last ')': (250 + 50) / 100 */
	is_dbl(field(&p, PF_CPU_TIME), 3, 1e-9, "4004: cpu time past a comm holding ') ('");
	is_int(p.start_ticks, 34999000, "4004: start ticks past a comm holding ') ('");
	is_dbl(field(&p, PF_START_TIME), 1799999989.5, 1e-6, "4004: start time 10.5 s ago");
	is_dbl(field(&p, PF_CPU_PERCENT), 300.0 / 10.5, 1e-9, "4004: lifetime cpu %% 3 / 10.5");
	is_str(p.cmdline, "./a) (b c --flag", "4004: cmdline");
	is_str(p.container, "aea66f069d4f", "4004: rootless podman");
	is_str(p.container_runtime, "podman", "4004: runtime");
	gpu_proc_release(&p);

	is_int(fill(ctx, 5005, &p), 0, "5005: filled");
	is_int(p.host, PHOST_OK, "5005: all read");
	is_str(p.cmdline, "/usr/local/bin/ollama serve", "5005: cmdline");
	is_str(p.container, NULL, "5005: systemd service: no container");
	is_str(p.cgroup, "/system.slice/ollama.service", "5005: cgroup");
	is_dbl(field(&p, PF_CPU_PERCENT), 7000.0 / 340000.5, 1e-12,
	       "5005: lifetime cpu %% 70 / 340000.5");
	gpu_proc_release(&p);

	is_int(fill(ctx, 6006, &p), 0, "6006: zombie filled");
	is_int(p.host, PHOST_OK, "6006: a zombie is read in full");
	is_str(p.name, "cuda-worker", "6006: name");
	is_str(p.cmdline, "[cuda-worker]", "6006: empty cmdline shows [name]");
	ok(!proc_has(&p, PF_RSS), "6006: no VmRSS, no rss");
	is_dbl(field(&p, PF_CPU_TIME), 0.15, 1e-12, "6006: cpu time");
	gpu_proc_release(&p);
}

static void
test_malformed_fixture(struct procinfo_ctx *ctx)
{
	struct gpu_proc p;

	is_int(fill(ctx, 7007, &p), 0, "7007: malformed files are not an error");
	is_int(p.host, PHOST_PARTIAL, "7007: partial");
	is_str(p.name, "trunc", "7007: the name could be read");
	ok(!proc_has(&p, PF_UID) && !p.user, "7007: garbage uid is unread");
	ok(!proc_has(&p, PF_NSPID), "7007: garbage NSpid is unread");
	ok(!proc_has(&p, PF_RSS), "7007: VmRSS in MB is unread");
	ok(!proc_has(&p, PF_CPU_TIME) && !proc_has(&p, PF_START_TIME) &&
	           !proc_has(&p, PF_CPU_PERCENT),
	   "7007: truncated stat is unread");
	is_str(p.cmdline, "trunc", "7007: cmdline");
	is_str(p.cgroup, NULL, "7007: garbage cgroup has no path");
	is_str(p.container, NULL, "7007: and no container");
	gpu_proc_release(&p);
}

static void
test_gone(struct procinfo_ctx *ctx)
{
	struct gpu_proc p;
	struct err err = ERR_INIT;

	memset(&p, 0, sizeof(p));
	p.pid = 9009;
	is_int(procinfo_fill(ctx, &p, &err), E_NOTFOUND,
	       "9009: no such process in the root namespace");
	ok(strstr(err.msg, "9009") != NULL, "9009: the message names the pid ('%s')", err.msg);
	gpu_proc_release(&p);
	is_int(fill(ctx, 8008, &p), E_NOTFOUND, "8008: stat vanished after status: exited");
	gpu_proc_release(&p);
}

static void
test_root_fixture(void)
{
	struct gs_config cfg;
	struct procinfo_ctx *ctx;

	cfg_for(&cfg, proc_root, passwd_path);
	ctx = procinfo_new(&cfg);
	test_normal_process(ctx);
	test_docker_process(ctx);
	test_pod_process(ctx);
	test_odd_processes(ctx);
	test_malformed_fixture(ctx);
	test_gone(ctx);
	procinfo_free(ctx);
}

static void
add_proc(struct gpu_snapshot *s, unsigned dev, uint32_t pid)
{
	struct gpu_proc *p = gpu_snapshot_add_proc(s);

	p->dev = dev;
	p->pid = pid;
	p->type = PROC_COMPUTE;
	proc_set(p, PF_GPU_MEM, 1024.0 * pid);
}

static void
test_enrich_drops(void)
{
	static const uint32_t want_pid[] = { 1001, 2002, 6006, 1001 };
	static const unsigned want_dev[] = { 0, 1, 2, 2 };
	struct gpu_snapshot snap;
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	size_t i;

	cfg_for(&cfg, proc_root, passwd_path);
	ctx = procinfo_new(&cfg);
	gpu_snapshot_init(&snap);
	add_proc(&snap, 0, 1001);
	add_proc(&snap, 0, 9009); /* gone before we looked */
	add_proc(&snap, 1, 2002);
	add_proc(&snap, 1, 8008); /* gone while we looked: its strings must be freed */
	add_proc(&snap, 2, 6006);
	add_proc(&snap, 2, 1001); /* the same process on a second GPU */
	procinfo_enrich(ctx, &snap);
	is_int(snap.nr_proc, 4, "enrich: the two gone processes are dropped");
	for (i = 0; i < snap.nr_proc && i < 4; i++) {
		const struct gpu_proc *p = &snap.proc[i];

		ok(p->pid == want_pid[i] && p->dev == want_dev[i] && p->host == PHOST_OK,
		   "enrich: row %zu is pid %u on gpu %u, read", i, want_pid[i], want_dev[i]);
		is_dbl(field(p, PF_GPU_MEM), 1024.0 * want_pid[i], 0,
		       "enrich: row %zu keeps what the driver said", i);
	}
	is_str(snap.proc[3].name, "python3", "enrich: the compacted rows own their strings");
	is_dbl(field(&snap.proc[3], PF_CPU_PERCENT), field(&snap.proc[0], PF_CPU_PERCENT), 0,
	       "enrich: a process on two GPUs gets one cpu %%");
	gpu_snapshot_release(&snap);
	procinfo_free(ctx);
}

/* --- nested pid namespace and hidepid ------------------------------------------ */

static void
test_nested(void)
{
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_snapshot snap;
	struct gpu_proc p;

	cfg_for(&cfg, nested_root, passwd_path);
	ctx = procinfo_new(&cfg);

	is_int(fill(ctx, 57, &p), 0, "nested 57: filled");
	is_int(p.host, PHOST_OK, "nested 57: holds /dev/nvidia0, so it is the driver's process");
	is_str(p.name, "python", "nested 57: name");
	is_str(p.user, "alice", "nested 57: user");
	is_str(p.cmdline, "python infer.py", "nested 57: cmdline");
	is_str(p.cgroup, "/", "nested 57: cgroup");
	/* 350 s of CPU since 1000 s after boot, uptime 5000 */
	is_dbl(field(&p, PF_CPU_PERCENT), 8.75, 1e-9, "nested 57: cpu %% 350 / 4000");
	is_dbl(field(&p, PF_START_TIME), FIXED_TIME - 4000, 1e-6, "nested 57: start time");
	gpu_proc_release(&p);

	memset(&p, 0, sizeof(p));
	p.pid = 58;
	p.name = xstrdup("from-driver");
	is_int(procinfo_fill(ctx, &p, NULL), 0, "nested 58: not an error");
	is_int(p.host, PHOST_NOT_VISIBLE, "nested 58: our pid 58 holds no GPU: another process");
	is_int(p.valid, 0, "nested 58: nothing from /proc filled in");
	ok(!p.user && !p.cmdline && !p.cgroup && !p.container, "nested 58: no strings filled in");
	is_str(p.name, "from-driver", "nested 58: what the driver said stays");
	gpu_proc_release(&p);

	is_int(fill(ctx, 59, &p), 0, "nested 59: a missing pid is kept");
	is_int(p.host, PHOST_NOT_VISIBLE, "nested 59: not visible from this namespace");
	gpu_proc_release(&p);
	is_int(fill(ctx, 61, &p), 0, "nested 61: no fd directory");
	is_int(p.host, PHOST_NOT_VISIBLE, "nested 61: not visible");
	gpu_proc_release(&p);

	gpu_snapshot_init(&snap);
	add_proc(&snap, 0, 57);
	add_proc(&snap, 0, 58);
	add_proc(&snap, 0, 59);
	procinfo_enrich(ctx, &snap);
	is_int(snap.nr_proc, 3, "nested: enrich drops nothing");
	gpu_snapshot_release(&snap);
	procinfo_free(ctx);
}

struct mount_case {
	const char *what;
	const char *mountinfo;
	bool hidden;
};

static void
test_hidepid(void)
{
	static const struct mount_case cases[] = {
		{ "hidepid=2", "23 28 0:22 / /proc rw,nosuid - proc proc rw,hidepid=2,gid=27\n",
		  true },
		{ "hidepid=invisible (5.8+)",
		  "22 28 0:21 / /sys rw shared:7 - sysfs sysfs rw\n"
		  "23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 master:3 - proc proc rw,hidepid=invisible\n",
		  true },
		{ "hidepid=noaccess", "23 28 0:22 / /proc rw - proc proc rw,hidepid=noaccess\n",
		  true },
		{ "hidepid=1", "23 28 0:22 / /proc rw - proc proc rw,hidepid=1\n", true },
		{ "hidepid=0", "23 28 0:22 / /proc rw - proc proc rw,hidepid=0\n", false },
		{ "hidepid=off", "23 28 0:22 / /proc rw - proc proc rw,hidepid=off\n", false },
		{ "no hidepid", "23 28 0:22 / /proc rw - proc proc rw,subset=pid\n", false },
		{ "hidepid on another proc mount",
		  "40 28 0:60 / /mnt/proc rw - proc proc rw,hidepid=2\n", false },
		{ "hidepid on a mount that is not proc",
		  "23 28 0:22 / /proc rw - tmpfs tmpfs rw,hidepid=2\n", false },
		{ "hidepid in the per-mount options only",
		  "23 28 0:22 / /proc rw,hidepid=2 - proc proc rw\n", false },
		{ "truncated line", "23 28 0:22 / /proc rw - proc", false },
		{ "garbage", "\n\n- - - - - - - - hidepid=2\n", false },
	};
	char root[4096], mi[4200];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	size_t i;
	int rc;

	tmp_path(root, sizeof(root), "hidepid");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		make_root(root, "100.00 100.00\n", cases[i].mountinfo);
		cfg_for(&cfg, root, passwd_path);
		ctx = procinfo_new(&cfg);
		rc = fill(ctx, 4242, &p);
		if (cases[i].hidden)
			ok(rc == 0 && p.host == PHOST_NOT_VISIBLE,
			   "hidepid: %s: missing pid kept, not visible", cases[i].what);
		else
			is_int(rc, E_NOTFOUND, "hidepid: %s: missing pid is gone", cases[i].what);
		gpu_proc_release(&p);
		procinfo_free(ctx);
	}

	/* proc mounted where cfg->proc_root points */
	snprintf(mi, sizeof(mi), "50 28 0:70 / %s rw - proc proc rw,hidepid=2\n", root);
	make_root(root, "100.00 100.00\n", mi);
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);
	rc = fill(ctx, 4242, &p);
	ok(rc == 0 && p.host == PHOST_NOT_VISIBLE, "hidepid: on the proc mount at proc_root");
	gpu_proc_release(&p);
	procinfo_free(ctx);

	/* the context looks once: a later remount is not seen */
	make_root(root, "100.00 100.00\n", plain_mountinfo);
	ctx = procinfo_new(&cfg);
	is_int(fill(ctx, 4242, &p), E_NOTFOUND, "hidepid: not hidden at first");
	gpu_proc_release(&p);
	write_at(root, "self/mountinfo", cases[0].mountinfo);
	is_int(fill(ctx, 4242, &p), E_NOTFOUND, "hidepid: learnt once per context");
	gpu_proc_release(&p);
	procinfo_free(ctx);
	rm_tree(root);
}

/* --- unreadable files ------------------------------------------------------------ */

static void
test_unreadable(void)
{
	char root[4096], nested[4096], path[4200], passwd[4096];
	struct fill_res r;

	copy_fixture("proc", root, sizeof(root));
	copy_fixture("proc-nested", nested, sizeof(nested));
	/* the unprivileged child must reach the files: mkdtemp made tmp_dir 0700 */
	chmod(tmp_dir, 0755);
	copy_fixture("passwd", passwd, sizeof(passwd));

	snprintf(path, sizeof(path), "%s/5005/cmdline", root);
	chmod(path, 0);
	if (fill_unprivileged(root, passwd, 5005, &r)) {
		skip("cannot drop root to test unreadable files");
		goto out;
	}
	ok(r.rc == 0 && r.host == PHOST_PARTIAL, "unreadable cmdline: partial");
	ok(r.has_name && !strcmp(r.name, "ollama") && !strcmp(r.user, "root"),
	   "unreadable cmdline: status read");
	ok(!r.has_cmdline, "unreadable cmdline: no cmdline");
	ok(r.has_cgroup && !strcmp(r.cgroup, "/system.slice/ollama.service"),
	   "unreadable cmdline: cgroup read");
	ok((r.valid >> PF_CPU_PERCENT) & 1, "unreadable cmdline: stat read");
	chmod(path, 0644);

	snprintf(path, sizeof(path), "%s/5005/cgroup", root);
	chmod(path, 0);
	ok(!fill_unprivileged(root, passwd, 5005, &r) && r.rc == 0 && r.host == PHOST_PARTIAL &&
	           !r.has_cgroup && !strcmp(r.cmdline, "/usr/local/bin/ollama serve"),
	   "unreadable cgroup: partial, cmdline read");
	chmod(path, 0644);

	snprintf(path, sizeof(path), "%s/5005/stat", root);
	chmod(path, 0);
	ok(!fill_unprivileged(root, passwd, 5005, &r) && r.rc == 0 && r.host == PHOST_PARTIAL &&
	           !((r.valid >> PF_CPU_TIME) & 1) && r.has_cmdline,
	   "unreadable stat: partial, no cpu time");
	chmod(path, 0644);

	snprintf(path, sizeof(path), "%s/5005/status", root);
	chmod(path, 0);
	ok(!fill_unprivileged(root, passwd, 5005, &r) && r.rc == 0 && r.host == PHOST_NOT_VISIBLE &&
	           r.valid == 0 && !r.has_name,
	   "unreadable status (hidepid=1 style): not visible, nothing filled");
	chmod(path, 0644);

	snprintf(path, sizeof(path), "%s/60/fd", nested);
	chmod(path, 0);
	ok(!fill_unprivileged(nested, passwd, 60, &r) && r.rc == 0 && r.host == PHOST_PARTIAL &&
	           !strcmp(r.name, "server") && !strcmp(r.cmdline, "server --port 8000"),
	   "nested, unreadable fd directory: accepted but partial");
out:
	chmod(path, 0755);
	rm_tree(root);
	rm_tree(nested);
}

/* --- CPU % over samples ------------------------------------------------------------- */

static void
set_stat(const char *root, uint32_t pid, const char *comm, unsigned long utime, unsigned long stime,
         unsigned long start)
{
	char dir[4096], buf[512];

	snprintf(dir, sizeof(dir), "%s/%u", root, pid);
	snprintf(buf, sizeof(buf),
	         "%u (%s) S 1 %u 1 0 -1 4194560 100 0 0 0 %lu %lu 0 0 20 0 8 0 %lu 1000 100\n", pid,
	         comm, pid, utime, stime, start);
	write_at(dir, "stat", buf);
}

static void
enrich_pids(struct procinfo_ctx *ctx, struct gpu_snapshot *snap, const uint32_t *pids, size_t n)
{
	gpu_snapshot_release(snap);
	for (size_t i = 0; i < n; i++)
		add_proc(snap, (unsigned)i, pids[i]);
	procinfo_enrich(ctx, snap);
}

static void
test_cpu_delta(void)
{
	static const uint32_t both[] = { 1001, 1001, 2002 }, only_2002[] = { 2002 };
	char root[4096];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_snapshot snap;

	copy_fixture("proc", root, sizeof(root));
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);
	gpu_snapshot_init(&snap);

	enrich_pids(ctx, &snap, both, 3);
	is_dbl(field(&snap.proc[0], PF_CPU_PERCENT), 39.998000099995, 1e-9,
	       "delta: first sample is the lifetime");
	is_dbl(field(&snap.proc[2], PF_CPU_PERCENT), 20, 1e-9, "delta: first sample of 2002");

	/* 2 s later: 1001 used 1.5 s of CPU, 2002 used 3 s on several threads */
	write_at(root, "uptime", "350002.50 5312349.00\n");
	set_stat(root, 1001, "python3", 360100, 40050, 34000000);
	set_stat(root, 2002, "tritonserver", 1800, 500, 34990050);
	enrich_pids(ctx, &snap, both, 3);
	is_dbl(field(&snap.proc[0], PF_CPU_PERCENT), 75, 1e-9, "delta: 1.5 s of CPU in 2 s");
	is_dbl(field(&snap.proc[1], PF_CPU_PERCENT), 75, 1e-9, "delta: the same on its second GPU");
	is_dbl(field(&snap.proc[2], PF_CPU_PERCENT), 150, 1e-9,
	       "delta: more than 100 %% when multi-threaded");
	is_dbl(field(&snap.proc[0], PF_CPU_TIME), 4001.5, 1e-9, "delta: cpu time");

	/* 1001 not sampled: its entry is dropped; 2002 idle for 1 s */
	write_at(root, "uptime", "350003.50 5312350.00\n");
	enrich_pids(ctx, &snap, only_2002, 1);
	is_dbl(field(&snap.proc[0], PF_CPU_PERCENT), 0, 1e-9, "delta: idle for a second");

	/* 1001 back: the cache forgot it, so the lifetime again: 4001.5 / 10003.5 */
	enrich_pids(ctx, &snap, both, 3);
	is_dbl(field(&snap.proc[0], PF_CPU_PERCENT), 400150.0 / 10003.5, 1e-9,
	       "delta: a process dropped from the cache starts over");

	/*
	 * pid 2002 reused by a process started 54.5 s ago that used 25 s:
	 * its lifetime 45.87 %, where a delta against the old 23 s would say 200 %
	 */
	write_at(root, "uptime", "350004.50 5312351.00\n");
	set_stat(root, 2002, "new", 2400, 100, 34995000);
	enrich_pids(ctx, &snap, only_2002, 1);
	is_dbl(field(&snap.proc[0], PF_CPU_PERCENT), 2500.0 / 54.5, 1e-9,
	       "delta: a reused pid is a new process");
	gpu_snapshot_release(&snap);
	procinfo_free(ctx);

	/* procinfo_fill alone also measures between calls */
	ctx = procinfo_new(&cfg);
	{
		struct gpu_proc p;

		fill(ctx, 2002, &p);
		gpu_proc_release(&p);
		write_at(root, "uptime", "350008.50 5312351.00\n");
		set_stat(root, 2002, "new", 2600, 100, 34995000);
		fill(ctx, 2002, &p);
		is_dbl(field(&p, PF_CPU_PERCENT), 50, 1e-9,
		       "delta: procinfo_fill twice: 2 s of CPU in 4 s");
		gpu_proc_release(&p);
	}
	procinfo_free(ctx);
	rm_tree(root);
}

/*
 * A process seen before in our pid namespace is read again from its stat
 * file alone: owner, command line and container come from the first read
 * (a title set later shows after STATIC_REFRESH), a reused pid is read in
 * full, and one that is gone is dropped.
 */
static void
test_static_cache(void)
{
	static const uint32_t pids[] = { 1001, 2002 };
	char root[4096], dir[4096];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_snapshot snap;
	char *cmd0, *user0, *cont0, *cg0;

	copy_fixture("proc", root, sizeof(root));
	fmt(dir, sizeof(dir), "%s/self/ns", root);
	make_dirs(dir);
	link_at(dir, "pid", "pid:[4026531836]");
	for (size_t i = 0; i < 2; i++) {
		fmt(dir, sizeof(dir), "%s/%u/ns", root, pids[i]);
		make_dirs(dir);
		link_at(dir, "pid", "pid:[4026531836]");
	}
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);
	gpu_snapshot_init(&snap);

	enrich_pids(ctx, &snap, pids, 2);
	ok(snap.nr_proc == 2 && snap.proc[0].host == PHOST_OK && snap.proc[1].host == PHOST_OK,
	   "cache: both read in full in our namespace");
	cmd0 = xstrdup(snap.proc[1].cmdline ? snap.proc[1].cmdline : "");
	user0 = xstrdup(snap.proc[1].user ? snap.proc[1].user : "");
	cont0 = xstrdup(snap.proc[1].container ? snap.proc[1].container : "");
	cg0 = xstrdup(snap.proc[1].cgroup ? snap.proc[1].cgroup : "");

	/* a second later: 2002 used more CPU and set a new title */
	write_at(root, "uptime", "350002.50 5312349.00\n");
	set_stat(root, 2002, "tritonserver", 1800, 500, 34990050);
	fmt(dir, sizeof(dir), "%s/2002", root);
	write_at(dir, "cmdline", "renamed");
	enrich_pids(ctx, &snap, pids, 2);
	ok(snap.nr_proc == 2 && snap.proc[1].host == PHOST_OK, "cache: read again");
	is_str(snap.proc[1].cmdline, cmd0, "cache: the command line of the first read");
	is_str(snap.proc[1].user, user0, "cache: the owner of the first read");
	is_str(snap.proc[1].container ? snap.proc[1].container : "", cont0,
	       "cache: the container of the first read");
	is_str(snap.proc[1].cgroup, cg0, "cache: the cgroup of the first read");
	is_dbl(field(&snap.proc[1], PF_CPU_TIME), 23, 1e-9, "cache: CPU time read anew");
	ok(proc_has(&snap.proc[1], PF_NSPID) && field(&snap.proc[1], PF_NSPID) == 2002,
	   "cache: its pid in its namespace");

	/* the pid reused by another process: read in full */
	set_stat(root, 2002, "other", 10, 10, 34999000);
	enrich_pids(ctx, &snap, pids, 2);
	is_str(snap.proc[1].cmdline, "renamed", "cache: a reused pid is read in full");
	is_str(snap.proc[1].name, "other", "cache: with its own name");

	/* gone */
	fmt(dir, sizeof(dir), "%s/2002", root);
	rm_tree(dir);
	enrich_pids(ctx, &snap, pids, 2);
	ok(snap.nr_proc == 1 && snap.proc[0].pid == 1001,
	   "cache: a process that is gone is dropped");

	free(cmd0);
	free(user0);
	free(cont0);
	free(cg0);
	gpu_snapshot_release(&snap);
	procinfo_free(ctx);
	rm_tree(root);
}

/*
 * The same on the real /proc, where the stat file of a process read before
 * stays open: a child read three times, then dropped once it has exited.
 */
static void
test_static_cache_real(void)
{
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_snapshot snap;
	uint32_t pid;
	pid_t child;
	char cmd0[64];
	double cpu0;

	if (access("/proc/self/ns/pid", F_OK)) {
		skip("no /proc/self/ns/pid");
		return;
	}
	child = fork();
	if (child < 0)
		bail("fork failed");
	if (child == 0) {
		/* busy, so that its CPU time moves between samples */
		for (volatile unsigned long spin = 0;; spin++)
			;
	}
	pid = (uint32_t)child;
	gs_config_init(&cfg);
	ctx = procinfo_new(&cfg);
	gpu_snapshot_init(&snap);
	enrich_pids(ctx, &snap, &pid, 1);
	snprintf(cmd0, sizeof(cmd0), "%s",
	         snap.nr_proc && snap.proc[0].cmdline ? snap.proc[0].cmdline : "");
	ok(snap.nr_proc == 1 && snap.proc[0].host == PHOST_OK && cmd0[0],
	   "real /proc: a child read in full (%s)", cmd0);
	cpu0 = snap.nr_proc ? field(&snap.proc[0], PF_CPU_TIME) : NAN;
	usleep(300000);
	enrich_pids(ctx, &snap, &pid, 1);
	usleep(300000);
	enrich_pids(ctx, &snap, &pid, 1);
	ok(snap.nr_proc == 1 && snap.proc[0].host == PHOST_OK && snap.proc[0].cmdline &&
	           !strcmp(snap.proc[0].cmdline, cmd0) && proc_has(&snap.proc[0], PF_RSS),
	   "real /proc: read again (CPU clock, statm), the rest from the cache");
	ok(snap.nr_proc == 1 && field(&snap.proc[0], PF_CPU_TIME) > cpu0 + 0.05,
	   "real /proc: its CPU time moves (%.3f s -> %.3f s)", cpu0,
	   snap.nr_proc ? field(&snap.proc[0], PF_CPU_TIME) : NAN);
	/* a busy process on a shared machine: somewhere above 10 % of a core, at most one core */
	ok(snap.nr_proc == 1 && field(&snap.proc[0], PF_CPU_PERCENT) > 10 &&
	           field(&snap.proc[0], PF_CPU_PERCENT) < 115,
	   "real /proc: CPU %% over the interval from the clock (%.1f)",
	   snap.nr_proc ? field(&snap.proc[0], PF_CPU_PERCENT) : NAN);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	enrich_pids(ctx, &snap, &pid, 1);
	ok(snap.nr_proc == 0, "real /proc: dropped once it has exited");
	gpu_snapshot_release(&snap);
	procinfo_free(ctx);
}

/* procinfo_read_stat(): parent and start time, for top's tree and kill */
static void
test_read_stat(void)
{
	char root[4096];
	struct strbuf sb = STRBUF_INIT;
	uint32_t ppid = 0;
	uint64_t start = 0;

	copy_fixture("proc", root, sizeof(root));
	{
		char dir[4200];

		fmt(dir, sizeof(dir), "%s/4242", root);
		make_dirs(dir);
	}
	set_stat(root, 4242, "a) (b", 10, 20, 123456);
	ok(procinfo_read_stat(root, 4242, &sb, &ppid, &start) && ppid == 1 && start == 123456,
	   "read_stat: parent 1, start 123456, past a comm holding ') ('");
	ok(procinfo_read_stat(root, 4242, &sb, NULL, NULL), "read_stat: both outputs optional");
	ok(!procinfo_read_stat(root, 99999, &sb, &ppid, &start), "read_stat: no such process");
	write_at(root, "4242/stat", "4242 (x) S\n");
	ok(!procinfo_read_stat(root, 4242, &sb, &ppid, &start),
	   "read_stat: a cut line does not parse");
	strbuf_release(&sb);
	rm_tree(root);
}

/* --- users ------------------------------------------------------------------------ */

static const char *
user_of(struct procinfo_ctx *ctx, const char *root, uint32_t uid, char *buf, size_t size)
{
	char status[256];
	struct gpu_proc p;

	snprintf(status, sizeof(status), "Name:\tx\nUid:\t%u\t%u\t%u\t%u\n", uid, uid, uid, uid);
	make_pid(root, 100, status, "100 (x) S 1 100 1 0 -1 0 1 0 0 0 1 1 0 0 20 0 1 0 5 1 1\n",
	         "x", 2, "0::/\n");
	if (fill(ctx, 100, &p) || p.host != PHOST_OK)
		diag("uid %u: not read in full", uid);
	snprintf(buf, size, "%s", p.user ? p.user : "(null)");
	gpu_proc_release(&p);
	return buf;
}

static void
test_users(void)
{
	char root[4096], abs_passwd[4096], buf[128];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;

	tmp_path(root, sizeof(root), "users");
	make_root(root, "100.00 100.00\n", NULL);
	copy_fixture("passwd", abs_passwd, sizeof(abs_passwd));

	cfg_for(&cfg, root, abs_passwd);
	ctx = procinfo_new(&cfg);
	is_str(user_of(ctx, root, 0, buf, sizeof(buf)), "root",
	       "users: uid 0 (absolute passwd path)");
	is_str(user_of(ctx, root, 1000, buf, sizeof(buf)), "alice",
	       "users: the first line of a uid wins");
	is_str(user_of(ctx, root, 1002, buf, sizeof(buf)), "bob", "users: after a blank line");
	is_str(user_of(ctx, root, 128, buf, sizeof(buf)), "nvidia-persistenced",
	       "users: a system user");
	is_str(user_of(ctx, root, 65534, buf, sizeof(buf)), "nobody", "users: nobody");
	is_str(user_of(ctx, root, 4000, buf, sizeof(buf)), "last-line-without-newline",
	       "users: last line without a newline");
	is_str(user_of(ctx, root, 1001, buf, sizeof(buf)), "1001",
	       "users: unknown uid as a number");
	is_str(user_of(ctx, root, 1001, buf, sizeof(buf)), "1001", "users: unknown uid, cached");
	is_str(user_of(ctx, root, 4294967294u, buf, sizeof(buf)), "4294967294",
	       "users: uid (uid_t)-2");
	procinfo_free(ctx);

	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);
	is_str(user_of(ctx, root, 1000, buf, sizeof(buf)), "alice", "users: relative passwd path");
	procinfo_free(ctx);

	cfg_for(&cfg, root, "/nonexistent/passwd");
	ctx = procinfo_new(&cfg);
	is_str(user_of(ctx, root, 0, buf, sizeof(buf)), "0", "users: missing passwd file: numbers");
	procinfo_free(ctx);

	/* the system database: which names it holds is not ours to know */
	cfg_for(&cfg, root, NULL);
	ctx = procinfo_new(&cfg);
	user_of(ctx, root, 0, buf, sizeof(buf));
	ok(strcmp(buf, "(null)") && buf[0], "users: getpwuid_r gives uid 0 some name ('%s')", buf);
	user_of(ctx, root, 0, buf, sizeof(buf));
	ok(strcmp(buf, "(null)") && buf[0], "users: and again from the cache");
	procinfo_free(ctx);
	rm_tree(root);
	rm_tree(abs_passwd);
}

/* --- odd files ---------------------------------------------------------------------- */

static const char good_status[] =
        "Name:\tworker\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t200\nVmRSS:\t     100 kB\n";
static const char good_stat[] =
        "200 (worker) S 1 200 1 0 -1 4194560 1 0 0 0 100 100 0 0 20 0 1 0 100 1 1\n";
static const char good_cgroup[] = "0::/system.slice/docker-" DOCKER_ID ".scope\n";

static void
test_odd_files(void)
{
	char root[4096], dir[4200], big[10000];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	size_t i;

	tmp_path(root, sizeof(root), "odd");
	make_root(root, NULL, NULL);
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);

	/* a kernel without uptime gives no start time and no cpu % */
	make_pid(root, 200, good_status, good_stat, "worker", 7, good_cgroup);
	is_int(fill(ctx, 200, &p), 0, "no uptime: filled");
	ok(p.host == PHOST_OK && proc_has(&p, PF_CPU_TIME) && !proc_has(&p, PF_START_TIME) &&
	           !proc_has(&p, PF_CPU_PERCENT),
	   "no uptime: cpu time, but no start time or cpu %%");
	gpu_proc_release(&p);

	/* 100 arguments of 99 bytes: 10000 bytes, cut at 4096 */
	for (i = 0; i < sizeof(big); i++)
		big[i] = i % 100 == 99 ? '\0' : 'a';
	make_pid(root, 201, good_status, good_stat, big, sizeof(big), good_cgroup);
	write_at(root, "uptime", "100.00 100.00\n");
	is_int(fill(ctx, 201, &p), 0, "huge cmdline: filled");
	ok(p.cmdline && strlen(p.cmdline) == 4096 && p.cmdline[99] == ' ',
	   "huge cmdline: cut at 4096 bytes");
	is_dbl(field(&p, PF_START_TIME), FIXED_TIME - 99, 1e-6, "huge cmdline: the rest is read");
	gpu_proc_release(&p);

	/* setproctitle() pads with NULs; an empty argument in the middle stays */
	make_pid(root, 202, good_status, good_stat, "postgres: writer\0\0\0\0\0\0", 22,
	         good_cgroup);
	fill(ctx, 202, &p);
	is_str(p.cmdline, "postgres: writer", "cmdline: trailing NULs are no arguments");
	gpu_proc_release(&p);
	make_pid(root, 203, good_status, good_stat, "a\0\0b\0", 5, good_cgroup);
	fill(ctx, 203, &p);
	is_str(p.cmdline, "a  b", "cmdline: an empty argument between two");
	gpu_proc_release(&p);

	/* no cgroup file (a kernel without cgroups) while the process lives */
	make_pid(root, 204, good_status, good_stat, "w", 2, NULL);
	is_int(fill(ctx, 204, &p), 0, "no cgroup file: filled");
	ok(p.host == PHOST_OK && !p.cgroup && !p.container,
	   "no cgroup file: no cgroup, still complete");
	gpu_proc_release(&p);

	/* started after we read the uptime */
	make_pid(root, 205, good_status,
	         "205 (w) S 1 205 1 0 -1 0 1 0 0 0 0 0 0 0 20 0 1 0 10050 1 1\n", "w", 2,
	         good_cgroup);
	fill(ctx, 205, &p);
	is_dbl(field(&p, PF_START_TIME), FIXED_TIME, 1e-6,
	       "born after the uptime read: starts now");
	is_dbl(field(&p, PF_CPU_PERCENT), 0, 0, "born after the uptime read: 0 %%");
	gpu_proc_release(&p);

	/* a status without Name or Uid is partial; without VmRSS it is not */
	make_pid(root, 206, "State:\tS\n", good_stat, "w", 2, good_cgroup);
	fill(ctx, 206, &p);
	ok(p.host == PHOST_PARTIAL && !p.name && !p.user && p.cmdline && !strcmp(p.cmdline, "w"),
	   "status without Name or Uid: partial");
	gpu_proc_release(&p);
	snprintf(dir, sizeof(dir), "%s/206", root);
	write_at(dir, "status", "Name:\tw\nUid:\t5\t5\t5\t5\n");
	fill(ctx, 206, &p);
	ok(p.host == PHOST_OK && !proc_has(&p, PF_NSPID) && !proc_has(&p, PF_RSS),
	   "status of a kernel before 4.1 without NSpid, and no VmRSS: complete");
	gpu_proc_release(&p);
	procinfo_free(ctx);
	rm_tree(root);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Every prefix of real files, then random bytes: nothing may crash or leak. */
static void
test_fuzz(void)
{
	static const char *const files[] = { "status", "stat", "cgroup", "cmdline", "uptime" };
	static const char alphabet[] = "0123456789abcdef:/()\n\t -.kBNamesUidNSpidVmRSS";
	char root[4096], dir[4200], src[4300], buf[8192], orig[8192];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	unsigned bad = 0, runs = 0;
	size_t f, len, i;

	copy_fixture("proc", root, sizeof(root));
	snprintf(dir, sizeof(dir), "%s/1001", root);
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);
	for (f = 0; f < ARRAY_SIZE(files); f++) {
		const char *d = f == 4 ? root : dir;
		int fd;
		ssize_t n;

		snprintf(src, sizeof(src), "%s/%s", d, files[f]);
		fd = open(src, O_RDONLY);
		n = fd >= 0 ? read(fd, orig, sizeof(orig)) : -1;
		if (fd >= 0)
			close(fd);
		len = n > 0 ? (size_t)n : 0;
		for (i = 0; i <= len; i++) {
			write_bytes_at(d, files[f], orig, i);
			runs++;
			if (fill(ctx, 1001, &p) || (p.host != PHOST_OK && p.host != PHOST_PARTIAL))
				bad++;
			gpu_proc_release(&p);
		}
		for (i = 0; i < 200; i++) {
			size_t n2 = rng() % sizeof(buf), j;

			for (j = 0; j < n2; j++)
				buf[j] = rng() % 4 ? alphabet[rng() % (sizeof(alphabet) - 1)]
				                   : (char)rng();
			write_bytes_at(d, files[f], buf, n2);
			runs++;
			if (fill(ctx, 1001, &p) || (p.host != PHOST_OK && p.host != PHOST_PARTIAL))
				bad++;
			gpu_proc_release(&p);
		}
		write_bytes_at(d, files[f], orig, len);
	}
	is_int(bad, 0, "fuzz: %u truncated and random files, all read as ok or partial", runs);
	procinfo_free(ctx);

	/* random self/status and mountinfo too: the process itself is still read */
	bad = 0;
	for (i = 0; i < 100; i++) {
		size_t n2 = rng() % 2000, j;

		for (j = 0; j < n2; j++)
			buf[j] = alphabet[rng() % (sizeof(alphabet) - 1)];
		snprintf(src, sizeof(src), "%s/self", root);
		write_bytes_at(src, i % 2 ? "status" : "mountinfo", buf, n2);
		ctx = procinfo_new(&cfg);
		if (fill(ctx, 1001, &p) || (p.host != PHOST_OK && p.host != PHOST_PARTIAL))
			bad++;
		gpu_proc_release(&p);
		procinfo_free(ctx);
	}
	is_int(bad, 0,
	       "fuzz: 100 random self/status and self/mountinfo: pid 1001 still read as ok or partial");
	rm_tree(root);
}

/*
 * The real /proc, on ourselves: the quick path (no status file) for a process
 * in our own pid namespace gives the same facts status would.
 */
/* --- Slurm and Kubernetes attribution ----------------------------------------- */

struct slurm_case {
	const char *what;
	const char *cgroup;
	const char *job; /* NULL: none found */
	const char *step;
	long uid;
};

/*
 * The layouts of Slurm's cgroup plugins. The v1 task path is the one quoted
 * in rstudio/rstudio#13690 ("/slurm/uid_2687/job_13759490/step_batch/task_0");
 * the multiple-slurmd prefix "/slurm_${nodename}/uid_.../job_.../step_.../
 * task_..." from plazonic/cgroup_exporter#5; the v2 node-named scope
 * "system.slice/slurm-worker-1_slurmstepd.scope/job_4749/step_0/user/task_0"
 * from NVIDIA/enroot#169; the plain "system.slice/slurmstepd.scope/job_<id>"
 * from clemsonciti/jobperf#3 and Slurm's cgroup_v2.html.
 */
static const struct slurm_case slurm_cases[] = {
	{ "v1, batch step (rstudio#13690)",
	  "12:freezer:/slurm/uid_2687/job_13759490/step_batch/task_0\n"
	  "11:memory:/slurm/uid_2687/job_13759490/step_batch/task_0\n"
	  "4:cpuset:/slurm/uid_2687/job_13759490/step_batch\n"
	  "1:name=systemd:/system.slice/slurmd.service\n",
	  "13759490", "batch", 2687 },
	{ "v1, multiple-slurmd prefix (cgroup_exporter#5)",
	  "9:devices:/slurm_gpu-node07/uid_1000/job_42/step_0/task_1\n", "42", "0", 1000 },
	{ "v1, extern step", "7:memory:/slurm/uid_1002/job_9/step_extern\n", "9", "extern", 1002 },
	{ "v1, interactive step", "7:memory:/slurm/uid_1002/job_9/step_interactive/task_0\n", "9",
	  "interactive", 1002 },
	{ "v2, node-named scope (enroot#169)",
	  "0::/system.slice/slurm-worker-1_slurmstepd.scope/job_4749/step_0/user/task_0\n", "4749",
	  "0", -1 },
	{ "v2, slurmstepd.scope, batch step",
	  "0::/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0\n", "77", "batch", -1 },
	{ "v2, the step's slurmstepd", "0::/system.slice/slurmstepd.scope/job_77/step_3/slurm\n",
	  "77", "3", -1 },
	{ "v2, the job without a step", "0::/system.slice/slurmstepd.scope/job_5\n", "5", "", -1 },
	{ "v2, a step name Slurm does not write",
	  "0::/system.slice/slurmstepd.scope/job_5/step_x\n", "5", "", -1 },
	{ "v2, the scope's own system cgroup", "0::/system.slice/slurmstepd.scope/system\n", NULL,
	  NULL, -1 },
	{ "slurmd itself", "0::/system.slice/slurmd.service\n", NULL, NULL, -1 },
	{ "a user's own job_1 cgroup is no Slurm job",
	  "0::/user.slice/user-1000.slice/user@1000.service/job_1/step_0\n", NULL, NULL, -1 },
	{ "job id not a number", "0::/system.slice/slurmstepd.scope/job_abc/step_0\n", NULL, NULL,
	  -1 },
	{ "job id too large", "0::/system.slice/slurmstepd.scope/job_99999999999/step_0\n", NULL,
	  NULL, -1 },
	{ "hybrid: v2 at the root, the job in v1",
	  "11:memory:/slurm/uid_1000/job_8/step_1/task_0\n0::/\n", "8", "1", 1000 },
	{ "the unified line wins over v1",
	  "11:memory:/slurm/uid_1000/job_8/step_1\n"
	  "0::/system.slice/slurmstepd.scope/job_9/step_2/user/task_0\n",
	  "9", "2", -1 },
	{ "a docker container", "0::/system.slice/docker-" DOCKER_ID ".scope\n", NULL, NULL, -1 },
	{ "no newline at the end", "0::/system.slice/slurmstepd.scope/job_6/step_0/user/task_0",
	  "6", "0", -1 },
	{ "empty", "", NULL, NULL, -1 },
};

static void
test_slurm_cgroup(void)
{
	struct procinfo_slurm s;

	for (size_t i = 0; i < sizeof(slurm_cases) / sizeof(slurm_cases[0]); i++) {
		const struct slurm_case *c = &slurm_cases[i];
		bool found = procinfo_slurm_cgroup(c->cgroup, &s);

		if (!c->job) {
			ok(!found && !s.job[0], "slurm cgroup: %s: no job", c->what);
			continue;
		}
		ok(found && !strcmp(s.job, c->job) && !strcmp(s.step, c->step) && s.uid == c->uid,
		   "slurm cgroup: %s: job %s step '%s' uid %ld (got %s '%s' %ld)", c->what, c->job,
		   c->step, c->uid, s.job, s.step, (long)s.uid);
	}
	ok(!procinfo_slurm_cgroup(NULL, &s), "slurm cgroup: no text");
}

#define ENV(lit) lit, sizeof(lit) - 1

static void
test_slurm_environ(void)
{
	struct procinfo_slurm s;

	ok(procinfo_slurm_environ(ENV("PATH=/bin\0SLURM_JOB_ID=1234\0SLURM_STEP_ID=0\0"
	                              "SLURM_JOB_USER=alice\0HOME=/home/alice\0"),
	                          &s) &&
	           !strcmp(s.job, "1234") && !strcmp(s.step, "0") && !strcmp(s.user, "alice"),
	   "slurm environ: job, step and user");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=1241\0SLURM_ARRAY_JOB_ID=1234\0"
	                              "SLURM_ARRAY_TASK_ID=7\0"),
	                          &s) &&
	           !strcmp(s.job, "1234_7") && !s.step[0] && !s.user[0],
	   "slurm environ: an array task is <array job>_<task>");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=1241\0SLURM_ARRAY_JOB_ID=1234\0"), &s) &&
	           !strcmp(s.job, "1241"),
	   "slurm environ: an array job id without a task id: the job id");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=5\0SLURM_STEP_ID=4294967291\0"), &s) &&
	           !strcmp(s.step, "batch"),
	   "slurm environ: step 0xfffffffb is the batch step (Slurm 20.11 and later)");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=5\0SLURM_STEP_ID=4294967294\0"), &s) &&
	           !strcmp(s.step, "batch"),
	   "slurm environ: step 0xfffffffe is the batch step (before 20.11)");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=5\0SLURM_STEP_ID=4294967292\0"), &s) &&
	           !strcmp(s.step, "extern"),
	   "slurm environ: step 0xfffffffc is the extern step");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=5\0SLURM_STEP_ID=4294967290\0"), &s) &&
	           !strcmp(s.step, "interactive"),
	   "slurm environ: step 0xfffffffa is the interactive step");
	ok(procinfo_slurm_environ(ENV("SLURM_JOBID=88\0SLURM_STEPID=2\0"), &s) &&
	           !strcmp(s.job, "88") && !strcmp(s.step, "2"),
	   "slurm environ: the old SLURM_JOBID and SLURM_STEPID");
	ok(procinfo_slurm_environ(ENV("A=1\0SLURM_JOB_ID=99"), &s) && !strcmp(s.job, "99"),
	   "slurm environ: the last entry without its NUL (cut at the cap)");
	ok(!procinfo_slurm_environ(ENV("PATH=/bin\0HOME=/root\0"), &s) && !s.job[0],
	   "slurm environ: no job");
	ok(!procinfo_slurm_environ(ENV("SLURM_JOB_ID=abc\0"), &s),
	   "slurm environ: job not a number");
	ok(!procinfo_slurm_environ(ENV("XSLURM_JOB_ID=5\0SLURM_JOB_IDX=6\0"), &s),
	   "slurm environ: names that only contain SLURM_JOB_ID");
	ok(!procinfo_slurm_environ(ENV("SLURM_JOB_ID=\0"), &s), "slurm environ: empty job id");
	ok(procinfo_slurm_environ(ENV("SLURM_JOB_ID=5\0SLURM_JOB_USER=bad name\0"), &s) &&
	           !s.user[0],
	   "slurm environ: a user name with a blank is not taken");
	ok(!procinfo_slurm_environ(NULL, 0, &s), "slurm environ: none");
}

static const char bob_status[] =
        "Name:\ttrain\nUid:\t1002\t1002\t1002\t1002\nNSpid:\t300\nVmRSS:\t     100 kB\n";

static void
write_environ(const char *root, uint32_t pid, const char *env, size_t len)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/%u", root, pid);
	write_bytes_at(dir, "environ", env, len);
}

static void
test_slurm_fill(void)
{
	char root[4096];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;

	tmp_path(root, sizeof(root), "slurm");
	make_root(root, "100.00 100.00\n", NULL);
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);

	/* v1: the job's user is uid_<uid>, alice, whoever owns the process */
	make_pid(root, 300, bob_status, good_stat, "train", 6,
	         "11:memory:/slurm/uid_1000/job_13/step_0/task_0\n");
	is_int(fill(ctx, 300, &p), 0, "slurm v1: filled");
	ok(p.host == PHOST_OK, "slurm v1: complete");
	is_str(p.slurm_job, "13", "slurm v1: job");
	is_str(p.slurm_step, "0", "slurm v1: step");
	is_str(p.slurm_user, "alice", "slurm v1: the job's user from uid_1000");
	gpu_proc_release(&p);

	/* v2: the path names no uid: the process's owner */
	make_pid(root, 301, bob_status, good_stat, "train", 6,
	         "0::/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0\n");
	fill(ctx, 301, &p);
	ok(p.host == PHOST_OK && p.slurm_job && !strcmp(p.slurm_job, "77") && p.slurm_step &&
	           !strcmp(p.slurm_step, "batch") && p.slurm_user && !strcmp(p.slurm_user, "bob"),
	   "slurm v2: job 77, batch step, user bob (the owner)");
	gpu_proc_release(&p);

	/* no job cgroup (proctrack/linuxproc: slurmd's own cgroup): the environment */
	make_pid(root, 302, bob_status, good_stat, "train", 6, "0::/system.slice/slurmd.service\n");
	write_environ(root, 302,
	              ENV("PATH=/usr/bin\0SLURM_JOB_ID=555\0SLURM_STEP_ID=1\0"
	                  "SLURM_JOB_USER=carol\0"));
	fill(ctx, 302, &p);
	ok(p.host == PHOST_OK && p.slurm_job && !strcmp(p.slurm_job, "555") && p.slurm_step &&
	           !strcmp(p.slurm_step, "1") && p.slurm_user && !strcmp(p.slurm_user, "carol"),
	   "slurm environ fallback: job 555 step 1 of carol");
	gpu_proc_release(&p);

	/* the environment without SLURM_JOB_USER: the owner */
	write_environ(root, 302, ENV("SLURM_JOB_ID=556\0"));
	fill(ctx, 302, &p);
	ok(p.slurm_job && !strcmp(p.slurm_job, "556") && !p.slurm_step && p.slurm_user &&
	           !strcmp(p.slurm_user, "bob"),
	   "slurm environ fallback: no step, the owner as the user");
	gpu_proc_release(&p);

	/* a job cgroup wins over what the environment claims (a user may set it) */
	make_pid(root, 303, bob_status, good_stat, "train", 6,
	         "0::/system.slice/slurmstepd.scope/job_78/step_0/user/task_0\n");
	write_environ(root, 303, ENV("SLURM_JOB_ID=1\0SLURM_STEP_ID=9\0"));
	fill(ctx, 303, &p);
	ok(p.slurm_job && !strcmp(p.slurm_job, "78") && p.slurm_step && !strcmp(p.slurm_step, "0"),
	   "slurm: the cgroup wins over the environment");
	gpu_proc_release(&p);

	/* slurmd started from a login session: its jobs are there too */
	make_pid(root, 306, bob_status, good_stat, "train", 6,
	         "0::/user.slice/user-1002.slice/session-4.scope\n");
	write_environ(root, 306, ENV("SLURM_JOB_ID=5\0"));
	fill(ctx, 306, &p);
	ok(p.slurm_job && !strcmp(p.slurm_job, "5"),
	   "slurm: a login session's environment is read");
	gpu_proc_release(&p);

	/* nor from a container's (a job's container is in the job's cgroup) */
	make_pid(root, 307, bob_status, good_stat, "train", 6, good_cgroup);
	write_environ(root, 307, ENV("SLURM_JOB_ID=5\0"));
	fill(ctx, 307, &p);
	ok(p.host == PHOST_OK && p.container && !p.slurm_job,
	   "slurm: not from a container's environment");
	gpu_proc_release(&p);

	/* a host without systemd: everything in "/", the environment is read */
	make_pid(root, 308, bob_status, good_stat, "train", 6, "0::/\n");
	write_environ(root, 308, ENV("SLURM_JOB_ID=6\0"));
	fill(ctx, 308, &p);
	ok(p.slurm_job && !strcmp(p.slurm_job, "6"), "slurm: a process in \"/\": its environment");
	gpu_proc_release(&p);

	/* neither: unknown, and the process is still complete */
	make_pid(root, 304, bob_status, good_stat, "train", 6,
	         "0::/user.slice/user-1002.slice/session-4.scope\n");
	write_environ(root, 304, ENV("PATH=/usr/bin\0"));
	fill(ctx, 304, &p);
	ok(p.host == PHOST_OK && !p.slurm_job && !p.slurm_step && !p.slurm_user,
	   "slurm: no job anywhere: all unknown");
	gpu_proc_release(&p);

	/* an environment we may not read (another user's process): no job, not partial */
	make_pid(root, 305, bob_status, good_stat, "train", 6,
	         "0::/user.slice/user-1002.slice/session-4.scope\n");
	fill(ctx, 305, &p);
	ok(p.host == PHOST_OK && !p.slurm_job, "slurm: no environ file: unknown, complete");
	gpu_proc_release(&p);
	procinfo_free(ctx);
	rm_tree(root);
}

/* A cached process keeps its job between full reads. */
static void
test_slurm_cache(void)
{
	static const uint32_t pid = 310;
	char root[4096], dir[4096];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_snapshot snap;
	char *user0;

	tmp_path(root, sizeof(root), "slurmcache");
	make_root(root, "100.00 100.00\n", NULL);
	fmt(dir, sizeof(dir), "%s/self/ns", root);
	make_dirs(dir);
	link_at(dir, "pid", "pid:[4026531836]");
	make_pid(root, pid, bob_status, good_stat, "train", 6,
	         "0::/system.slice/slurmstepd.scope/job_91/step_2/user/task_0\n");
	fmt(dir, sizeof(dir), "%s/%u/ns", root, pid);
	make_dirs(dir);
	link_at(dir, "pid", "pid:[4026531836]");
	cfg_for(&cfg, root, passwd_path);
	ctx = procinfo_new(&cfg);
	gpu_snapshot_init(&snap);

	enrich_pids(ctx, &snap, &pid, 1);
	ok(snap.nr_proc == 1 && snap.proc[0].slurm_job && !strcmp(snap.proc[0].slurm_job, "91") &&
	           snap.proc[0].slurm_user,
	   "slurm cache: first read");
	user0 = xstrdup(snap.nr_proc && snap.proc[0].slurm_user ? snap.proc[0].slurm_user : "");
	/* the cgroup file changes: a cached sample does not read it again */
	fmt(dir, sizeof(dir), "%s/%u", root, pid);
	write_at(dir, "cgroup", "0::/user.slice\n");
	enrich_pids(ctx, &snap, &pid, 1);
	ok(snap.nr_proc == 1 && snap.proc[0].slurm_job && !strcmp(snap.proc[0].slurm_job, "91") &&
	           snap.proc[0].slurm_step && !strcmp(snap.proc[0].slurm_step, "2") &&
	           snap.proc[0].slurm_user && !strcmp(snap.proc[0].slurm_user, user0),
	   "slurm cache: job, step and user from the cache");
	free(user0);
	gpu_snapshot_release(&snap);
	procinfo_free(ctx);
	rm_tree(root);
}

static void
test_kubelet_names(void)
{
	char root[4096], kube[2100];
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;

	tmp_path(root, sizeof(root), "kube");
	make_root(root, "100.00 100.00\n", NULL);
	join(kube, sizeof(kube), fixtures, "kubelet");
	cfg_for(&cfg, root, passwd_path);
	cfg.root = kube;
	ctx = procinfo_new(&cfg);

	/* containerd, systemd driver: the pod's directory and the container's link */
	make_pid(root, 400, bob_status, good_stat, "python", 7,
	         "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_LLM_
	         ".slice/cri-containerd-" K8S_ID ".scope\n");
	fill(ctx, 400, &p);
	is_str(p.pod, POD_LLM, "kubelet: pod uid from the cgroup");
	is_str(p.pod_namespace, "ml", "kubelet: namespace from var/log/pods");
	is_str(p.pod_name, "llama-train-0", "kubelet: pod name from var/log/pods");
	is_str(p.container_name, "trainer",
	       "kubelet: container name from the var/log/containers link of its id");
	gpu_proc_release(&p);

	/* cri-o, cgroupfs driver: no link for its id, the pod's only container directory */
	make_pid(root, 401, bob_status, good_stat, "dcgm", 5,
	         "0::/kubepods/besteffort/pod" POD_BURST "/crio-" CRIO_ID "\n");
	fill(ctx, 401, &p);
	ok(p.pod_namespace && !strcmp(p.pod_namespace, "monitoring") && p.pod_name &&
	           !strcmp(p.pod_name, "dcgm-exporter-x7k2p"),
	   "kubelet: cri-o pod named");
	is_str(p.container_name, "exporter", "kubelet: the pod's one container directory");
	gpu_proc_release(&p);

	/* two container directories and no link: the container's name is unknown */
	make_pid(root, 402, bob_status, good_stat, "w", 2,
	         "0::/kubepods.slice/kubepods-pod" POD_GUAR_ ".slice/cri-containerd-" V1_ID
	         ".scope\n");
	fill(ctx, 402, &p);
	ok(p.pod_name && !strcmp(p.pod_name, "two-ctr") && !p.container_name,
	   "kubelet: two containers, no link: pod named, container not");
	gpu_proc_release(&p);

	/* a pod the kubelet left nothing for */
	make_pid(root, 403, bob_status, good_stat, "w", 2,
	         "0::/kubepods/besteffort/pod" POD_KIND "/" KIND_POD "\n");
	fill(ctx, 403, &p);
	ok(p.pod && !p.pod_name && !p.pod_namespace && !p.container_name,
	   "kubelet: an unknown pod: uid only");
	gpu_proc_release(&p);

	/* docker without Kubernetes: no names */
	make_pid(root, 404, bob_status, good_stat, "w", 2, good_cgroup);
	fill(ctx, 404, &p);
	ok(p.container && !p.container_name && !p.pod_name, "kubelet: docker alone: no names");
	gpu_proc_release(&p);
	procinfo_free(ctx);

	/* a root without the kubelet's directories */
	cfg.root = root;
	ctx = procinfo_new(&cfg);
	fill(ctx, 400, &p);
	ok(p.pod && !p.pod_name && !p.container_name, "kubelet: no var/log/pods: uid only");
	gpu_proc_release(&p);
	procinfo_free(ctx);
	rm_tree(root);
}

static void
test_real_self(void)
{
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);

	if (n <= 0) {
		skip("/proc/self/ns/pid cannot be read here");
		return;
	}
	gs_config_init(&cfg);
	ctx = procinfo_new(&cfg);
	memset(&p, 0, sizeof(p));
	p.pid = (uint32_t)getpid();
	is_int(procinfo_fill(ctx, &p, NULL), 0, "self on the real /proc: found");
	is_int(p.host, PHOST_OK, "self: everything read");
	ok(proc_has(&p, PF_UID) && p.v[PF_UID] == (double)geteuid(),
	   "self: uid is our effective uid");
	ok(proc_has(&p, PF_NSPID) && p.v[PF_NSPID] == (double)getpid(),
	   "self: same namespace, same pid");
	is_str(p.name, "t_procinfo", "self: name from stat");
	ok(proc_has(&p, PF_RSS) && p.v[PF_RSS] > 100 * 1024, "self: resident memory from stat");
	ok(p.cmdline && strstr(p.cmdline, "t_procinfo"), "self: command line");
	ok(proc_has(&p, PF_START_TIME) && proc_has(&p, PF_CPU_PERCENT), "self: start time and CPU");
	gpu_proc_release(&p);
	procinfo_free(ctx);
}

int
main(void)
{
	hz = sysconf(_SC_CLK_TCK);
	find_fixtures();
	join(proc_root, sizeof(proc_root), fixtures, "proc");
	join(nested_root, sizeof(nested_root), fixtures, "proc-nested");
	join(passwd_path, sizeof(passwd_path), fixtures, "passwd");
	make_tmp_dir("t_procinfo");

	test_container_shapes();
	test_container_buffers();
	test_slurm_cgroup();
	test_slurm_environ();
	test_real_self();
	if (hz != 100) {
		/* the hand-computed values below assume USER_HZ = 100, as on every Linux port we
		 * build for */
		diag("clock ticks are %ld per second, not 100: skipping the /proc tests", hz);
		skip("USER_HZ is not 100");
	} else {
		test_root_fixture();
		test_enrich_drops();
		test_nested();
		test_hidepid();
		test_unreadable();
		test_cpu_delta();
		test_static_cache();
		test_static_cache_real();
		test_read_stat();
		test_users();
		test_odd_files();
		test_slurm_fill();
		test_slurm_cache();
		test_kubelet_names();
		test_fuzz();
	}
	rm_tree(tmp_dir);
	return done_testing();
}
