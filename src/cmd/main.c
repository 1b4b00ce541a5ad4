/*
 * gpuscope: parse the command line and the environment into a
 * configuration, dispatch to a subcommand, and map its result to an exit
 * code. Nothing else happens here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/nvml_probe.h"
#include "cmd/cmd.h"
#include "cmd/demo.h"
#include "cmd/jsonerr.h"
#include "core/config.h"
#include "core/xalloc.h"
#include "queue/exec.h"

static const char help_text[] =
        "gpuscope " GPUSCOPE_VERSION
        ": what your GPUs are, what they are doing, and who uses them\n"
        "\n"
        "usage: gpuscope [status] [--json] [-i ID[,ID...]] [--no-processes] [--color=WHEN]\n"
        "                [--format table|json|prom] [-l SEC | -lms MS] [-f FILE]\n"
        "       gpuscope -L [-i ID[,ID...]]   (nvidia-smi -L: one line per GPU with its UUID)\n"
        "       gpuscope query --query-gpu=FIELDS --format=csv[,noheader][,nounits] [-i ID]\n"
        "       gpuscope query --query-compute-apps=FIELDS --format=csv[,noheader][,nounits]\n"
        "       gpuscope top [-d SEC] [-i ID[,ID...]]\n"
        "       gpuscope watch [-d SEC] [-c COUNT] [--format table|csv|ndjson] [--fields FIELD,...]\n"
        "                      [--findings]\n"
        "       gpuscope record [-o FILE] [-d SEC] [--max-size SIZE] [--keep N]\n"
        "       gpuscope replay FILE [top|watch|status|record|info] [--speed N] [--from|--at TIME]\n"
        "       gpuscope doctor [--json] [--watch SEC] [--log FILE] [--recording FILE [--since TIME]]\n"
        "       gpuscope fit MODEL [--task infer|full|freeze|lora|qlora] [--precision P] [--ctx N]\n"
        "                [--batch N] [--gpus N] [--gpu NAME,...|--rent] [--zero 1|2|3|--fsdp]\n"
        "                [--checkpointing] [--optimizer O] [--lora-rank R] [--tokens T] [--json]\n"
        "       gpuscope specs [NAME] [--json]\n"
        "       gpuscope bench [TEST...] [--quick] [-i ID,...] [--json] [--plot FILE.svg]\n"
        "                [--force] [--no-save] [--opencl-cpu]\n"
        "       gpuscope bench matmul [--size N | --sweep] [--json] [--threads N]\n"
        "                [--opencl-cpu]\n"
        "       gpuscope burn [--duration SEC] [--precision P] [--memtest] [-i ID,...]\n"
        "                [--record FILE] [--json]\n"
        "       gpuscope serve [--listen ADDR] [--web-config FILE] [-d SEC] [--processes N]\n"
        "       gpuscope queue [ls|submit|show|why|logs|cancel|hold|release|history|events] ...\n"
        "       gpuscope queue submit [--gpus N|--gpu-mem SIZE|--gpu UUID,...] [--] COMMAND...\n"
        "       gpuscope queued [--config FILE] [--socket PATH] [--state-dir DIR]\n"
        "       gpuscope completion bash|zsh|fish   (the shell's completion script)\n"
        "       gpuscope --demo [command and options]\n"
        "       gpuscope --version | --help\n"
        "\n"
        "status (the default) shows every GPU (name, bus id, temperature and its\n"
        "slowdown point, fan, power and limit, memory used, reserved and total,\n"
        "utilisation, clocks, PCIe link now and at best, persistence and MIG mode,\n"
        "and throttling or ECC errors when there are any), then every process on a\n"
        "GPU with its user, GPU memory, GPU use, CPU, memory, age, container and\n"
        "command. NVIDIA GPUs come first (through NVML), then AMD, Intel and other\n"
        "DRM GPUs (through sysfs, hwmon and the processes' DRM fdinfo).\n"
        "A value that cannot be read is shown as '-' (null in JSON), never as 0.\n"
        "\n"
        "status options:\n"
        "  -j, --json          one JSON document (schema gpuscope.status/1, see docs/json-schema.md)\n"
        "      --compact       with --json: on one line\n"
        "      --format=FMT    table (default), json (= --json), or prom: Prometheus's text\n"
        "                      format, for node_exporter's textfile collector\n"
        "  -l, --loop[=SEC]    again every SEC seconds (default 5) until Ctrl-C or SIGTERM\n"
        "      --loop-ms=MS    the same every MS milliseconds (nvidia-smi's -lms MS works too)\n"
        "  -f, --filename=FILE write to FILE, emptied first, each round added (as nvidia-smi\n"
        "                      -f); with --format prom each round replaces FILE whole (a temp\n"
        "                      file renamed over it), so a reader never sees half of it\n"
        "  -L, --list-gpus     nvidia-smi -L's list: 'GPU 0: NAME (UUID: GPU-...)', MIG devices\n"
        "                      under their GPU, then AMD and Intel GPUs with their PCI ids\n"
        "  -i, --id=ID,...     only these GPUs: index, UUID (or a unique prefix), or PCI bus id\n"
        "      --no-processes  do not list processes\n"
        "      --color=WHEN    auto (default: on a terminal, unless NO_COLOR is set), always, never\n"
        "      --root=DIR      read the machine from DIR/sys and DIR/proc (a saved tree, a chroot)\n"
        "      --timeout=SEC   give up on a GPU that does not answer within SEC seconds (default 5;\n"
        "                      starting the driver may take 6 times as long)\n"
        "\n"
        "query: nvidia-smi's --query-gpu and --query-compute-apps, with its field names and\n"
        "CSV format, so scripts written for nvidia-smi keep working. 'gpuscope query\n"
        "--help-query-gpu' lists the fields. 'gpuscope --query-gpu=...' works too.\n"
        "-l SEC, -lms MS and -f FILE work as for status (the CSV header once).\n"
        "\n"
        "top: a full-screen monitor (ncurses): bars and history charts per GPU, the process\n"
        "table (sort, filter, tree, kill), a detail view of each GPU, doctor's health and\n"
        "workload findings (F: a finding's full text); '?' in it lists the keys.\n"
        "  -d, --interval=SEC  seconds between samples (default 1; also \"500ms\", \"2s\")\n"
        "\n"
        "watch: one line per GPU per sample, like nvidia-smi dmon, flushed as it is written.\n"
        "  -d, --interval=SEC  seconds between samples (default 1)\n"
        "  -c, --count=N       stop after N samples (default: until Ctrl-C)\n"
        "      --format=FMT    table (default), csv[,noheader][,nounits] (nvidia-smi's CSV),\n"
        "                      ndjson (one JSON document per line, schema gpuscope.watch/1)\n"
        "      --fields=F,...  nvidia-smi --query-gpu field names (see 'query --help-query-gpu')\n"
        "      --findings      ndjson: doctor's health and workload findings over the last 60\n"
        "                      samples, a record of their own (gpuscope.findings/1) when they change\n"
        "\n"
        "record: the flight recorder. Every sample (GPUs and processes) is appended to FILE, a\n"
        "compact file that survives a crash or power cut (a torn last record is dropped on\n"
        "reading, all before it kept), rotated to FILE.1 ... when it reaches its size limit.\n"
        "  -o, --output=FILE   the recording (default gpuscope.rec; appended to when it exists)\n"
        "  -d, --interval=SEC  seconds between samples (default 1)\n"
        "  -c, --count=N       stop after N samples (default: until Ctrl-C or SIGTERM)\n"
        "      --max-size=SIZE rotate when a file would pass SIZE (default 64M; 0: never)\n"
        "      --keep=N        files kept in all, FILE included (default 4)\n"
        "\n"
        "replay: feed a recording to top (as recorded), watch, status or record (as fast as it\n"
        "reads), or 'info' to see what it holds.\n"
        "      --speed=N       N times as fast as recorded; 0 or max: as fast as it reads\n"
        "      --from=TIME     start at TIME; --at=TIME is the same, and means status\n"
        "                      TIME: epoch seconds, 2026-11-30T03:00[:SS][Z], 03:00[:SS], -10m, +90s\n"
        "\n"
        "doctor: is this machine set up right for GPU work? Checks the kernel driver bound to\n"
        "each GPU, the NVIDIA module against its library, the CUDA toolkits and the PyTorch,\n"
        "TensorFlow, JAX and CuPy builds of the Python environments in use (read, never run)\n"
        "against the driver, persistence, compute and MIG modes, CUDA_VISIBLE_DEVICES, device\n"
        "node access, containers, rendering (VMs, software renderers, two-GPU laptops) and\n"
        "video engines; then the GPUs' health (throttling, temperatures, PCIe link, ECC,\n"
        "retired pages, row remapping), the kernel log (NVIDIA Xid, amdgpu, i915/xe, PCIe\n"
        "AER; storms counted once) and workload patterns (a GPU starved by its input, idle\n"
        "memory holders, leaks, possible miners); each finding with its evidence, what it\n"
        "means and what to do.\n"
        "      --json          the findings as one JSON document (schema gpuscope.doctor/1)\n"
        "      --watch=SEC     sample SEC seconds first (-d: every SEC), for trends and patterns\n"
        "      --log=FILE      the kernel log from FILE (dmesg, journalctl -k; '-': stdin)\n"
        "      --recording=FILE  judge a recording (--since TIME, default its last hour)\n"
        "      --only=CHECK,...  setup, health, klog, workload, or a set-up check's name\n"
        "      --explain=ID    the long explanation of a finding\n"
        "      --list          every finding id doctor knows\n"
        "  exit status: 0 all ok (notes allowed), 1 warnings, 2 errors, 3 doctor could not run\n"
        "\n"
        "fit: the GPU memory MODEL (a catalog name, a config.json, or a size: 7b, 8x7b) needs\n"
        "to run or train, line by line and per GPU (weights in any precision or format, what\n"
        "quantisation leaves in 16 bits, gradients, optimizer states, activations, logits, KV\n"
        "cache, adapters, CUDA context, framework; host memory under --offload); whether it\n"
        "fits this machine's GPUs, named ones or which to rent and at what price; its speed\n"
        "per serving engine and how many sequences vLLM's KV cache holds.\n"
        "      --task=TASK     infer (default), full, freeze, lora, qlora\n"
        "      --precision=P   fp32, bf16 (default), fp16, fp8, int8, int4, q4_k_m..., awq, nf4\n"
        "      --ctx=N         tokens per sequence (default 4096); --batch=N sequences\n"
        "      --gpus=N        tensor parallel (inference) or data parallel (training)\n"
        "      --gpu=NAME,...  judge against GPUs of the spec table; --rent: which fit, priced\n"
        "      --zero=STAGE    ZeRO 1, 2 or 3; --fsdp: FSDP; --offload=optimizer|params|all\n"
        "      --trainer=T     hf, llama-factory, unsloth, axolotl, torchtune (their defaults)\n"
        "      --engine=E      vllm, sglang, trt-llm, llama.cpp, ... (default: the range)\n"
        "      --optimizer=O   adamw, adamw-8bit, sgd; --lora-rank=R (default 8)\n"
        "      --tokens=T      time, energy and price of a run of T tokens\n"
        "      --list          the model catalog; 'gpuscope fit --help' for every option\n"
        "  exit status: 0 fits (or nothing to judge), 1 does not fit, 2 usage error\n"
        "\n"
        "specs: the spec table (memory, bandwidth, FP64/FP32/BF16/FP8/INT8 peaks, FP64:FP32\n"
        "ratio, TDP), all of it or the rows NAME matches; --json, --sources.\n"
        "\n"
        "bench: each GPU measured (CUDA through libcuda.so.1, others through OpenCL): FMA\n"
        "peaks per precision, tensor cores (mma), memory bandwidth (BabelStream), host <->\n"
        "device copies, launch latency; each against the spec sheet, the peak at the clocks\n"
        "seen and the PCIe link, with what held the GPU down; kept per GPU for fit and doctor\n"
        "(docs/bench.md). TEST: names or prefixes (stream, fma.fp32, gemm, h2d, p2p, ...).\n"
        "      --quick         about 15 s a GPU; -i ID,... the GPUs (bench -i list)\n"
        "      --plot=FILE     a roofline picture (SVG); --force: a GPU others use\n"
        "      --no-save       do not keep the results\n"
        "\n"
        "burn: a stress test of every GPU at once: GEMMs over 90% of free memory, each result\n"
        "compared with a reference; a memory pattern test; a live line a GPU; a verdict from\n"
        "doctor's health checks (docs/burn.md). --duration SEC (60), --precision fp32 (default),\n"
        "fp64, tf32, fp16, bf16 or tensor (cuBLASLt on CUDA: bf16 from sm_80, else fp16),\n"
        "--memtest (only) or --no-memtest, -i ID,..., --record FILE, --json.\n"
        "\n"
        "bench matmul: C = A x B in FP32 on the CPU (the naive loop, a blocked vectorised\n"
        "kernel on all CPUs, the system BLAS) and each GPU (CUDA and OpenCL: naive, tiled,\n"
        "and cuBLASLt on CUDA; kernel only and end to end), each result checked, GFLOP/s\n"
        "against each side's peak (docs/bench.md).\n"
        "      --size=N        N x N (default 1024); --sweep: 64 to 8192\n"
        "      --threads=N     threads of the blocked kernel and the BLAS\n"
        "      --opencl-cpu    take CPU OpenCL devices (PoCL) too: for tests\n"
        "\n"
        "serve: a Prometheus exporter and a live web page (docs/serve.md): /metrics (text\n"
        "format, or OpenMetrics when asked; docs/metrics.md), /api/v1/status (status --json),\n"
        "/api/v1/findings (doctor's report), /healthz, and / (charts and processes). GPUs are\n"
        "read on their own timer: a scrape never waits for a GPU.\n"
        "      --listen=ADDR   HOST:PORT, [IPv6]:PORT or :PORT for all (default 127.0.0.1:9947)\n"
        "                      (node_exporter's --web.listen-address=ADDR is the same)\n"
        "      --web-config=FILE  TLS and basic auth, in the web config format of Prometheus's\n"
        "                      exporters (tls_server_config, basic_auth_users with bcrypt hashes);\n"
        "                      node_exporter's --web.config.file=FILE is the same\n"
        "  -d, --interval=SEC  seconds between collections (default 1)\n"
        "      --processes=N   per-process series for the top N processes by GPU memory\n"
        "                      (default 50; 0: none)\n"
        "      --names=SET     gpuscope (default), or dcgm: dcgm-exporter's counters, names,\n"
        "                      units and labels (DCGM_FI_DEV_GPU_UTIL, ...), text format only\n"
        "      --doctor-interval=SEC  run doctor's GPU checks this often, for gpuscope_finding\n"
        "                      (default 30; 0: never)\n"
        "      --max-connections=N  connections served at once (default 64); more wait or are\n"
        "                      refused\n"
        "      --connection-timeout=SEC  a connection idle this long, or whose request has not\n"
        "                      arrived whole this long after it connected, is closed (default 10)\n"
        "      --user=NAME     started as root: become NAME once the port and the GPUs are open\n"
        "      --hash-password a bcrypt hash of the password read from standard input, for\n"
        "                      basic_auth_users\n"
        "\n"
        "queue: a job queue for the GPUs of this server, shared by several people: jobs wait\n"
        "for the GPU memory or whole GPUs they ask, by priority and fair share, run as their\n"
        "owner with CUDA_VISIBLE_DEVICES set to their GPUs, and survive a restart of the\n"
        "daemon (gpuscope queued). 'gpuscope queue --help' lists its commands (docs/queue.md).\n"
        "      --socket=PATH   the daemon's socket (default /run/gpuscope/queue.sock)\n"
        "      --gpus=N, --gpu-mem=SIZE, --gpu=UUID,...  what a job asks; --priority=P,\n"
        "                      --time=LIMIT, --preemptible, --after=JOB, --wait\n"
        "  exit status: 0 ok, 1 refused, 2 usage error, 3 the daemon cannot be reached\n"
        "\n"
        "  --demo              run on a simulated 8-GPU H100 server (a fake NVIDIA driver\n"
        "                      built into gpuscope); everything shown says it is simulated\n"
        "\n"
        "examples:\n"
        "  gpuscope                                   the table\n"
        "  gpuscope -i 0,GPU-5d2c --no-processes      two GPUs, no processes\n"
        "  gpuscope --json | jq '.gpus[].memory_used_bytes'\n"
        "  gpuscope query --query-gpu=index,name,memory.used,utilization.gpu --format=csv\n"
        "  gpuscope query --query-compute-apps=pid,process_name,used_memory --format=csv,noheader\n"
        "  gpuscope watch --format csv --fields timestamp,index,power.draw,temperature.gpu\n"
        "  gpuscope record -o /var/log/gpu.rec --max-size 256M &\n"
        "  gpuscope replay /var/log/gpu.rec status --at 03:12\n"
        "  gpuscope serve --listen :9947 --web-config /etc/gpuscope/web.yml\n"
        "  gpuscope replay /var/log/gpu.rec --from -10m --speed 10   (top, the last 10 minutes)\n"
        "  gpuscope doctor                            what is wrong with this set-up\n"
        "  gpuscope doctor --json | jq '.findings[] | select(.severity != \"ok\")'\n"
        "  gpuscope fit Llama-3.1-8B --ctx 32k --gpu 'rtx 4090,h100 sxm'\n"
        "  gpuscope fit 70b --task qlora --rent\n"
        "  gpuscope specs 4090\n"
        "  gpuscope --demo\n"
        "\n"
        "environment:\n"
        "  GPUSCOPE_NVML=PATH  load this libnvidia-ml.so.1 instead of the system's\n"
        "  GPUSCOPE_ROOT=DIR   read /sys and /proc under DIR (as --root)\n"
        "  NO_COLOR            no colour\n"
        "\n"
        "exit status: 0 ok; 1 shown, but a GPU is lost or not responding; 2 usage error;\n"
        "3 runtime failure; 4 no GPU, or no driver to read one (the reason is printed).\n"
        "nvidia-smi's codes side by side: gpuscope(1), docs/nvidia-smi.md.\n"
        "With --json, an error is a JSON document on stdout too (schema gpuscope.error/1).\n"
        "\n"
        "see gpuscope(1) for more.\n";

/* Fill cfg from the environment; the only place that reads it. */
static void
config_from_env(struct gs_config *cfg)
{
	const char *v;

	if ((v = getenv("GPUSCOPE_ROOT")) && *v)
		gs_config_set_root(cfg, v);
	if ((v = getenv("GPUSCOPE_NVML")) && *v)
		cfg->nvml_path = v;
	if ((v = getenv("GPUSCOPE_MHD")) && *v)
		cfg->mhd_path = v;
	if ((v = getenv("GPUSCOPE_SYSFS_ROOT")) && *v)
		cfg->sysfs_root = v;
	if ((v = getenv("GPUSCOPE_PROC_ROOT")) && *v)
		cfg->proc_root = v;
	if ((v = getenv("GPUSCOPE_PASSWD")) && *v)
		cfg->passwd_file = v;
	if ((v = getenv("GPUSCOPE_CLOCK")) && *v) {
		char *end;
		double t = strtod(v, &end);

		if (end != v && !*end && t > 0)
			cfg->fixed_time = t;
	}
}

int
main(int argc, char **argv)
{
	struct gs_config cfg;
	bool demo = false, list = false;
	int rc, n = 0;
	char **args;

	/* no setlocale() here: reading the locale costs every command, --version and
	 * status --json included; what draws characters for a terminal calls
	 * term_locale() (core/fmt.h) first */
	gs_config_init(&cfg);
	config_from_env(&cfg);
	jsonerr_setup(argc, argv, &cfg); /* with --json, errors as a document on stdout too */

	/* global options may come before or after the subcommand */
	args = xcalloc((size_t)argc + 2, sizeof(*args));
	args[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--demo")) {
			demo = true;
		} else if (!strcmp(argv[i], "-L") || !strcmp(argv[i], "--list-gpus")) {
			list = true; /* nvidia-smi -L */
		} else if (!strcmp(argv[i], "--root") || !strncmp(argv[i], "--root=", 7)) {
			const char *dir = argv[i][6] == '=' ? argv[i] + 7
			                  : i + 1 < argc    ? argv[++i]
			                                    : NULL;

			if (!dir || !*dir) {
				cmd_error("--root needs a directory");
				free(args);
				return jsonerr_finish(EXIT_USAGE);
			}
			gs_config_set_root(&cfg, dir);
		} else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			printf("gpuscope %s\n", GPUSCOPE_VERSION);
			free(args);
			return EXIT_OK;
		} else if (n == 1 && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ||
		                      !strcmp(argv[i], "help"))) {
			fputs(help_text, stdout);
			free(args);
			return EXIT_OK;
		} else {
			args[n++] = argv[i];
		}
	}
	args[n] = NULL;

	if (demo && demo_setup(&cfg) < 0) {
		free(args);
		return jsonerr_finish(EXIT_RUNTIME);
	}
	if (list)
		rc = cmd_list_gpus(n, args, &cfg);
	else if (n > 1 && !strcmp(args[1], "status"))
		rc = cmd_status(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "top"))
		rc = cmd_top(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "watch"))
		rc = cmd_watch(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "record"))
		rc = cmd_record(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "replay"))
		rc = cmd_replay(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "doctor"))
		rc = cmd_doctor(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "fit"))
		rc = cmd_fit(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "specs"))
		rc = cmd_specs(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "bench"))
		rc = cmd_bench(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "burn"))
		rc = cmd_burn(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "serve"))
		rc = cmd_serve(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "query"))
		rc = cmd_query(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "queue"))
		rc = cmd_queue(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "queued"))
		rc = cmd_queued(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "__cli-table"))
		rc = cmd_cli_dump(n - 1, args + 1); /* cli.h's table, for the tests */
	else if (n > 1 && !strcmp(args[1], "completion"))
		rc = cmd_completion(n - 1, args + 1, &cfg);
	else if (n > 1 && !strcmp(args[1], "__complete"))
		rc = cmd_complete(n - 1, args + 1, &cfg); /* the completions' dynamic values */
	else if (n > 1 && !strcmp(args[1], "__man"))
		rc = cmd_man(n - 1, args + 1); /* gpuscope-NAME(1), for mk/man.mk */
	else if (n > 1 && !strcmp(args[1], "__supervise"))
		rc = exec_supervise_main(n - 1, args + 1); /* the queue's per-job supervisor */
	else if (n > 1 && !strncmp(args[1], "--query-", 8))
		rc = cmd_query(n, args, &cfg); /* nvidia-smi's spelling: no subcommand */
	else if (n > 1 && args[1][0] != '-') {
		cmd_error(
		        "'%s' is not a gpuscope command (commands: status, query, top, watch, record, replay, doctor, fit, specs, bench, burn, serve, queue, queued, completion); see 'gpuscope --help'",
		        args[1]);
		rc = EXIT_USAGE;
	} else
		rc = cmd_status(n, args, &cfg);
	free(args);
	jsonerr_finish(rc);
	cmd_close_deferred();
	if (nvml_abandoned()) {
		/*
		 * A thread is still inside nvmlShutdown: the output is out, and
		 * exit() would run the driver library's destructors beside it.
		 */
		fflush(NULL);
		_exit(rc);
	}
	gs_config_release(&cfg);
	return rc;
}
