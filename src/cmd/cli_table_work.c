/*
 * The table of commands (cli.h), second half: fit, specs, bench, bench
 * matmul, burn, queue and each of its subcommands, queued, completion. Each
 * option list is the command's getopt_long() table (src/cmd/fit.c, specs.c,
 * bench_suite.c, bench.c, burn.c, queue.c, queued.c, completion.c) with what
 * its value is; tests/cli/cli-table.sh holds the two against each other.
 */
#include <stddef.h>

#include "cmd/cli.h"

/* fit's --precision (and --quant): the plain precisions, then the formats of src/fit/quant.c */
#define FIT_PRECISIONS                                                                         \
	"fp32,bf16,fp16,fp8,int8,int4,q2_k,q3_k_m,q4_0,q4_k_s,q4_k_m,q5_0,q5_k_s,q5_k_m,q6_k," \
	"q8_0,awq,gptq,nf4,nvfp4,mxfp4"

static const struct cli_option fit_options[] = {
	{ .name = "task",
	  .value = CLI_CHOICE,
	  .metavar = "TASK",
	  .choices = "infer,full,freeze,lora,qlora",
	  .help = "The job: infer (the default), full, freeze, lora or qlora. full trains "
	          "every weight, freeze the last two layers, lora and qlora LoRA adapters "
	          "over 16-bit, or 4- or 8-bit, weights." },
	{ .name = "precision",
	  .value = CLI_CHOICE,
	  .metavar = "P",
	  .choices = FIT_PRECISIONS,
	  .help = "The weights' precision or quantisation format. fp32, bf16 (the default; "
	          "nf4 for qlora), fp16, fp8, int8, int4, the GGUF types, awq, gptq, nf4, "
	          "nvfp4 or mxfp4. --quant is another name for it." },
	{ .name = "quant",
	  .value = CLI_CHOICE,
	  .metavar = "P",
	  .choices = FIT_PRECISIONS,
	  .help = "The same as --precision." },
	{ .name = "group-size",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "With --precision awq or gptq: weights per scale (default 128)." },
	{ .name = "ctx",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Tokens per sequence (default 4096; 32k is 32768)." },
	{ .name = "batch",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Sequences: in all for inference, per GPU for training (default 1)." },
	{ .name = "gpus",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "The job's GPUs: tensor parallel for inference, data parallel for training." },
	{ .name = "gpu",
	  .list = true,
	  .value = CLI_SPEC_GPU,
	  .metavar = "NAME",
	  .help = "Judge against these GPUs of the spec table (gpuscope specs), not this "
	          "machine's. A name that matches none is an error naming the close ones." },
	{ .name = "zero",
	  .value = CLI_CHOICE,
	  .metavar = "STAGE",
	  .choices = "1,2,3",
	  .help = "Shard training over --gpus with DeepSpeed ZeRO. Stage 1 shards the "
	          "optimizer states, 2 the gradients too, 3 the weights too." },
	{ .name = "fsdp",
	  .value = CLI_NONE,
	  .help = "Shard training over --gpus with PyTorch FSDP. Full sharding; not with "
	          "--zero." },
	{ .name = "checkpointing",
	  .value = CLI_NONE,
	  .help = "Activation checkpointing on, for training. Each layer's input is kept "
	          "and the rest recomputed (default: the trainer's)." },
	{ .name = "no-checkpointing",
	  .value = CLI_NONE,
	  .help = "Activation checkpointing off, for training." },
	{ .name = "trainer",
	  .value = CLI_CHOICE,
	  .metavar = "T",
	  .choices = "hf,llama-factory,unsloth,axolotl,torchtune",
	  .help = "Training: whose defaults and memory habits to follow. hf (the default: "
	          "Transformers' Trainer with PEFT and TRL), llama-factory, unsloth, "
	          "axolotl or torchtune." },
	{ .name = "pure-bf16",
	  .value = CLI_NONE,
	  .help = "Training: everything in 16 bits. Weights, gradients and optimizer "
	          "states, with no fp32 master copy." },
	{ .name = "compile",
	  .value = CLI_NONE,
	  .help = "Training: torch.compile over the model and its loss. The loss then keeps "
	          "16-bit logits rather than fp32." },
	{ .name = "offload",
	  .value = CLI_CHOICE,
	  .metavar = "WHAT",
	  .choices = "optimizer,params,all",
	  .help = "Training: offload to host memory (DeepSpeed ZeRO-Offload, FSDP CPU "
	          "offload). The optimizer states, the parameters or all (params and all "
	          "need --zero 3 or --fsdp); host memory is checked." },
	{ .name = "kv-cache",
	  .value = CLI_CHOICE,
	  .metavar = "T",
	  .choices = "fp16,bf16,fp8,q8_0,q4_0",
	  .help = "Inference: the KV cache's type (default: 16 bits)." },
	{ .name = "engine",
	  .value = CLI_CHOICE,
	  .metavar = "E",
	  .choices = "vllm,sglang,trt-llm,llama.cpp,ollama,transformers,gpt-fast,exllamav2",
	  .help = "Inference: the serving engine whose speed to estimate. Default: the "
	          "range over the common ones; vllm, sglang and trt-llm judge the fit by "
	          "their KV pool." },
	{ .name = "gpu-memory-utilization",
	  .value = CLI_NUMBER,
	  .metavar = "F",
	  .help = "Serving: vLLM's share of GPU memory, above 0 and at most 1 (default 0.9)." },
	{ .name = "block-size",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Serving: vLLM's KV block in tokens (default 16)." },
	{ .name = "max-num-batched-tokens",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Serving: the tokens of vLLM's profile run (default: vLLM's for the GPU)." },
	{ .name = "max-num-seqs",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Serving: the most sequences vLLM serves at once (default: vLLM's for the GPU)." },
	{ .name = "prices",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "With --rent: the prices of FILE instead of the built-in table. FILE is "
	          "in the format of data/prices/README.md." },
	{ .name = "optimizer",
	  .value = CLI_CHOICE,
	  .metavar = "O",
	  .choices = "adamw,adamw-8bit,sgd",
	  .help = "Training: adamw (the default), adamw-8bit or sgd with momentum." },
	{ .name = "lora-rank",
	  .value = CLI_NUMBER,
	  .metavar = "R",
	  .help = "With --task lora or qlora: the adapters' rank (default 8)." },
	{ .name = "tokens",
	  .value = CLI_NUMBER,
	  .metavar = "T",
	  .help = "The time, energy and (with --rent) price of a run of T tokens. For example "
	          "2e9, 500M, 10B or 1.5T." },
	{ .name = "rent",
	  .value = CLI_NONE,
	  .help = "Which GPUs of the spec table to rent, and at what price. Those that fit, "
	          "alone and 2 to 8 together, cheapest per hour first, with the price per "
	          "million tokens." },
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "One JSON document (schema gpuscope.fit/1, docs/json-schema.md). "
	          "An error is a JSON document too (schema gpuscope.error/1)." },
	{ .name = "list", .value = CLI_NONE, .help = "Print the model catalog and exit." },
	{ .name = NULL },
};

static const struct cli_option specs_options[] = {
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "One JSON document (schema gpuscope.specs/1, docs/json-schema.md). "
	          "An error is a JSON document too (schema gpuscope.error/1)." },
	{ .name = "sources", .value = CLI_NONE, .help = "Each row's source and notes as well." },
	{ .name = NULL },
};

static const struct cli_option bench_options[] = {
	{ .name = "quick",
	  .value = CLI_NONE,
	  .help = "About 15 s a GPU (the default is about a minute)." },
	{ .name = "id",
	  .short_name = 'i',
	  .list = true,
	  .value = CLI_GPU,
	  .metavar = "ID",
	  .help = "The GPUs to measure (default: all). Index of bench's list (-i list "
	          "prints it), cuda:N, opencl:N, UUID or PCI bus id." },
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "One JSON document (schema gpuscope.bench/1, docs/bench.md). "
	          "An error is a JSON document too (schema gpuscope.error/1)." },
	{ .name = "plot",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Write a roofline picture as SVG. The measured points under the measured "
	          "and the spec sheet's roofs." },
	{ .name = "force",
	  .value = CLI_NONE,
	  .help = "Measure a GPU that other processes are using. Refused otherwise: the "
	          "figures would be wrong and their work slowed." },
	{ .name = "no-save",
	  .value = CLI_NONE,
	  .help = "Do not keep the results (kept per GPU UUID for fit and doctor otherwise)." },
	{ .name = "opencl-cpu",
	  .value = CLI_NONE,
	  .help = "Take CPU OpenCL devices (PoCL) too: for tests." },
	{ .name = NULL },
};

static const struct cli_option bench_matmul_options[] = {
	{ .name = "size",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "N x N matrices, 1 to 16384 (default 1024); not with --sweep." },
	{ .name = "sweep",
	  .value = CLI_NONE,
	  .help = "N = 64, 128, ..., 8192. A run that would take too long (naive over 3 s, "
	          "the others over 20 s) is skipped, and its row says so." },
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "One JSON document (schema gpuscope.bench/1, docs/bench.md). "
	          "An error is a JSON document too (schema gpuscope.error/1)." },
	{ .name = "threads",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Threads of the blocked kernel and of the BLAS. Default: every CPU this "
	          "process may run on." },
	{ .name = "opencl-cpu",
	  .value = CLI_NONE,
	  .help = "Take CPU OpenCL devices (PoCL) too: for tests, and for a machine without a GPU." },
	{ .name = NULL },
};

static const struct cli_option burn_options[] = {
	{ .name = "duration",
	  .short_name = 'd',
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "The whole run, setup included (default 60; 90s, 10m)." },
	{ .name = "precision",
	  .value = CLI_CHOICE,
	  .metavar = "P",
	  .choices = "fp32,fp64,tf32,fp16,bf16,tensor",
	  .help = "The GEMM's precision (default fp32). fp32 or fp64 on every device; tf32, "
	          "fp16, bf16 or tensor (the best the device has) through cuBLASLt on CUDA "
	          "devices." },
	{ .name = "memtest",
	  .value = CLI_NONE,
	  .help = "The whole run is the memory test, no GEMM." },
	{ .name = "no-memtest", .value = CLI_NONE, .help = "The GEMM load alone, no memory test." },
	{ .name = "id",
	  .short_name = 'i',
	  .list = true,
	  .value = CLI_GPU,
	  .metavar = "ID",
	  .help = "Only these devices. Index in burn's list, cuda:0 or opencl:1, UUID (or a "
	          "prefix of one), or PCI bus id." },
	{ .name = "record",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Run the flight recorder alongside, into FILE (gpuscope record's format)." },
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "One JSON document at the end (schema gpuscope.burn/1). "
	          "An error is a JSON document too (schema gpuscope.error/1)." },
	{ .name = "opencl-cpu",
	  .value = CLI_NONE,
	  .help = "Take CPU OpenCL devices (PoCL) too: for tests." },
	{ .name = "size",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "The GEMM's size N x N (default: the rule of docs/burn.md)." },
	{ .name = "memory",
	  .value = CLI_SIZE,
	  .metavar = "SIZE",
	  .help = "Take at most SIZE of each device's memory (512M, 8G)." },
	{ .name = "timeout",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "How long a GPU may take to answer a reading (default 5). Past it, it is "
	          "shown as not responding." },
	{ .name = NULL },
};

/* What every queue command takes, before or after its name (queue.c: takes()); -h is global. */
/* clang-format off */
#define QUEUE_COMMON_OPTIONS                                                          \
	{ .name = "socket", .value = CLI_FILE, .metavar = "PATH",                     \
	  .help = "The daemon's socket. Default $GPUSCOPE_QUEUE_SOCKET, else "         \
	          "/run/gpuscope/queue.sock." },                                       \
	{ .name = "json", .short_name = 'j', .value = CLI_NONE,                       \
	  .help = "Print the daemon's answer as JSON. An error is a JSON document on " \
	          "standard output too." },                                            \
	{ .name = "compact", .value = CLI_NONE, .help = "With --json: on one line." }
/* clang-format on */

#define QUEUE_STATES "queued,held,starting,running,stopping,suspended,exiting,active"
#define QUEUE_SUBCOMMANDS                                                                      \
	"ls,submit,show,why,logs,cancel,hold,release,history,events,drain,resume,clean,pause," \
	"unpause,reload,ping"

/* queue's own, and those of the subcommands that take no other */
static const struct cli_option queue_options[] = {
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_ls_options[] = {
	{ .name = "all",
	  .short_name = 'a',
	  .value = CLI_NONE,
	  .help = "Everyone's jobs (the default)." },
	{ .name = "me", .value = CLI_NONE, .help = "Only your jobs." },
	{ .name = "user",
	  .short_name = 'u',
	  .value = CLI_USER,
	  .metavar = "USER",
	  .help = "Only USER's jobs." },
	{ .name = "state",
	  .list = true,
	  .value = CLI_CHOICE,
	  .metavar = "STATE",
	  .choices = QUEUE_STATES,
	  .help = "Only jobs in these states (active: all of them). Jobs that ended are "
	          "history's." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_submit_options[] = {
	{ .name = "gpus",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Whole GPUs (0: none, the job sees no GPU). Without --gpus, --gpu-mem or "
	          "--gpu a job asks one GPU." },
	{ .name = "gpu-mem",
	  .value = CLI_SIZE,
	  .metavar = "SIZE",
	  .help = "GPU memory per GPU (20G, 512M: powers of 1024). Alone it means one GPU, "
	          "shared by memory with other jobs." },
	{ .name = "gpu",
	  .list = true,
	  .value = CLI_GPU,
	  .metavar = "UUID",
	  .help = "Exactly these GPUs: UUIDs, unique prefixes of UUIDs, or indices." },
	{ .name = "exclusive", .value = CLI_NONE, .help = "No other job on its GPUs." },
	{ .name = "shared",
	  .value = CLI_NONE,
	  .help = "Its GPUs shared by memory with other jobs." },
	{ .name = "priority",
	  .short_name = 'p',
	  .value = CLI_NUMBER,
	  .metavar = "P",
	  .help = "Higher first (default 0). Above the caller's max_priority is refused "
	          "unless an admin asks." },
	{ .name = "after",
	  .list = true,
	  .value = CLI_JOB,
	  .metavar = "JOB",
	  .help = "Start only once these jobs have ended (may be given more than once)." },
	{ .name = "preemptible",
	  .value = CLI_NONE,
	  .help = "May be stopped and queued again, with the same id, for a job of higher "
	          "priority." },
	{ .name = "requeue",
	  .value = CLI_NONE,
	  .help = "When one of its GPUs is lost mid-job, queue it again instead of failing it." },
	{ .name = "time",
	  .short_name = 't',
	  .value = CLI_SECONDS,
	  .metavar = "LIMIT",
	  .help = "Its run time limit (90, 10m, 2h, 1:30:00). At the limit it gets SIGTERM, "
	          "then SIGKILL after the grace." },
	{ .name = "grace",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Seconds between the stop signal and SIGKILL (default: the daemon's grace)." },
	{ .name = "name",
	  .value = CLI_STRING,
	  .metavar = "NAME",
	  .help = "Its name (default: the command's)." },
	{ .name = "output",
	  .short_name = 'o',
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Where its standard output goes (by default the daemon keeps it for queue "
	          "logs)." },
	{ .name = "error",
	  .short_name = 'e',
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Where its standard error goes (by default with its output)." },
	{ .name = "hold",
	  .value = CLI_NONE,
	  .help = "Queue it held: it waits until queue release." },
	{ .name = "wait",
	  .value = CLI_NONE,
	  .help = "Wait until the job ends and exit with its exit status." },
	{ .name = "parsable", .value = CLI_NONE, .help = "Print the job's id alone." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_logs_options[] = {
	{ .name = "follow",
	  .short_name = 'f',
	  .value = CLI_NONE,
	  .help = "Go on writing it as it grows until the job ends." },
	{ .name = "err", .value = CLI_NONE, .help = "Its standard error rather than its output." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_cancel_options[] = {
	{ .name = "signal",
	  .short_name = 's',
	  .value = CLI_CHOICE,
	  .metavar = "SIG",
	  .choices = "TERM,INT,KILL,HUP,QUIT,USR1,USR2,STOP,CONT,ALRM",
	  .help = "The signal a running job gets first (default TERM). A name or a number; "
	          "SIGKILL follows after the grace." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_history_options[] = {
	{ .name = "all",
	  .short_name = 'a',
	  .value = CLI_NONE,
	  .help = "Everyone's jobs (default: yours)." },
	{ .name = "user",
	  .short_name = 'u',
	  .value = CLI_USER,
	  .metavar = "USER",
	  .help = "Only USER's jobs." },
	{ .name = "since",
	  .value = CLI_TIME,
	  .metavar = "TIME",
	  .help = "Jobs that ended since TIME (epoch seconds, 2026-11-30T03:00, 03:00, -2h)." },
	{ .name = "limit",
	  .short_name = 'n',
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "At most N jobs." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_events_options[] = {
	{ .name = "follow",
	  .short_name = 'f',
	  .value = CLI_NONE,
	  .help = "Go on printing events as they come." },
	{ .name = "after",
	  .value = CLI_NUMBER,
	  .metavar = "ID",
	  .help = "Start after the event ID." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queue_drain_options[] = {
	{ .name = "reason",
	  .value = CLI_STRING,
	  .metavar = "TEXT",
	  .help = "Why, kept in the GPU's note: drained by USER: TEXT." },
	QUEUE_COMMON_OPTIONS,
	{ .name = NULL },
};

static const struct cli_option queued_options[] = {
	{ .name = "config",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "The configuration file. Default $GPUSCOPE_QUEUE_CONF, else "
	          "/etc/gpuscope/queue.conf; a missing default file means the defaults." },
	{ .name = "socket",
	  .value = CLI_FILE,
	  .metavar = "PATH",
	  .help = "Listen here, an absolute path (overrides the file's socket)." },
	{ .name = "state-dir",
	  .value = CLI_DIR,
	  .metavar = "DIR",
	  .help = "Keep the state here, an absolute path (overrides the file's state_dir)." },
	{ .name = "foreground",
	  .value = CLI_NONE,
	  .help = "The default: it never forks into the background." },
	{ .name = "check-config",
	  .value = CLI_NONE,
	  .help = "Read the configuration, print what is wrong with it and exit. 0 when it "
	          "is good, 1 when not." },
	{ .name = "timeout",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "How long to wait for one GPU's readings (the file's nvml_timeout)." },
	{ .name = NULL },
};

static const struct cli_option completion_options[] = {
	{ .name = NULL },
};

#define QUEUE_EXIT_STATUS                                                                   \
	"0: done.\n\n"                                                                      \
	"1: the daemon refused (a job that does not exist or is another user's, a request " \
	"that can never be met, a priority above the cap, a quota), or another error; the " \
	"reason is printed.\n\n"                                                            \
	"2: usage error.\n\n"                                                               \
	"3: the daemon cannot be reached (none is running, the socket is not there, or it " \
	"stopped answering)."

#define QUEUE_SEE_ALSO "gpuscope-queued(1), gpuscope(1)"

const struct cli_command cli_commands_work[] = {
	{
	        .name = "fit",
	        .summary =
	                "how much GPU memory a model needs, whether it fits, and how fast it goes",
	        .synopsis = "MODEL [--task infer|full|freeze|lora|qlora] [--precision P] [--ctx N] "
	                    "[--batch N] [--gpus N] [--gpu NAME,... | --rent [--prices FILE]] "
	                    "[--zero 1|2|3 | --fsdp] [--checkpointing | --no-checkpointing] "
	                    "[--trainer T] [--pure-bf16] [--compile] [--offload WHAT] "
	                    "[--optimizer O] [--lora-rank R] [--kv-cache T] [--engine E] "
	                    "[--gpu-memory-utilization F] [--block-size N] "
	                    "[--max-num-batched-tokens N] [--max-num-seqs N] [--group-size N] "
	                    "[--tokens T] [--json] | --list",
	        .description =
	                "How much GPU memory a transformer needs to run or train, whether it fits, "
	                "and how fast it would go. MODEL is a name of the built-in catalog (gpuscope "
	                "fit --list), a Hugging Face config.json, or a size such as 7b, 70b or 8x7b.\n"
	                "\n"
	                "The memory per GPU is broken down into weights (plain precisions or the "
	                "quantisation formats people run: GGUF types, AWQ and GPTQ, NF4, FP8, NVFP4, "
	                "MXFP4), what a format leaves unquantised, gradients, optimizer states, LoRA "
	                "adapters, activations, the logits training keeps for the loss, the KV "
	                "cache, the CUDA context and the framework's share. Under ZeRO or FSDP each "
	                "line is sharded as those do; with --offload what goes to host memory is "
	                "checked against this machine's RAM.\n"
	                "\n"
	                "The verdict is against this machine's GPUs (their free memory now), the GPUs "
	                "of the spec table named by --gpu, or, with --rent, the GPUs of the table "
	                "that fit, alone and 2 to 8 together, cheapest per hour first with the price "
	                "per million tokens; with the margin and the largest batch and context that "
	                "fit.\n"
	                "\n"
	                "Speeds are estimates with their assumptions printed: for inference, decode "
	                "and prefill under one serving engine (--engine) or the range over the common "
	                "ones, and how many sequences vLLM's KV cache holds; for training, time and "
	                "energy of a run of --tokens. Figures measured by gpuscope bench on a GPU of "
	                "this machine replace the spec sheet's. Formulas, sources and tolerances are "
	                "in docs/fit.md.",
	        .options = fit_options,
	        .operand = CLI_MODEL,
	        .exit_status =
	                "0: it fits, or there was nothing to judge.\n\n"
	                "1: it does not fit on the GPUs asked about, or --offload needs more host "
	                "memory than this machine has.\n\n"
	                "2: usage error: an unknown option, model or GPU name, or options that do "
	                "not go together.\n\n"
	                "3: the output could not be written.",
	        .examples =
	                "gpuscope fit Llama-3.1-8B --ctx 32k --gpu 'rtx 4090,h100 sxm'  "
	                "an 8B model with 32k tokens on two GPUs of the spec table\n"
	                "gpuscope fit 70b --task qlora --rent  which GPUs to rent for a QLoRA "
	                "of a 70B model, and at what price\n"
	                "gpuscope fit 8b --task full --gpus 8 --zero 3 --tokens 1T --gpu 'h100 "
	                "sxm'  full training over 8 GPUs, with its time and energy\n"
	                "gpuscope fit llama-3.1-70b --gpus 2 --ctx 8k --engine vllm --gpu 'h100 "
	                "sxm'  serving under vLLM, tensor parallel over 2 GPUs\n"
	                "gpuscope fit qwen2.5-7b --precision q4_k_m --engine llama.cpp --gpu "
	                "'rtx 4090'  a GGUF quantisation under llama.cpp\n"
	                "gpuscope fit --list  the model catalog",
	        .see_also = "gpuscope-specs(1), gpuscope-bench(1), gpuscope(1)",
	},
	{
	        .name = "specs",
	        .summary = "the GPU spec table that fit uses",
	        .synopsis = "[NAME] [--json] [--sources]",
	        .description =
	                "The spec table built into gpuscope: memory size as sold and what a program "
	                "can allocate of it, memory type and bandwidth, dense peak FP64, FP32, BF16, "
	                "FP8 and INT8 rates, the FP64:FP32 ratio (1:2 on data centre cards, 1:64 on "
	                "most consumer ones), and TDP.\n"
	                "\n"
	                "Without NAME, every row; with it, the rows whose name has NAME in it (case "
	                "and punctuation ignored), or whose vendor, architecture or kind "
	                "(datacenter, workstation, consumer) it is. A NAME that matches nothing is an "
	                "error that names the close ones.",
	        .options = specs_options,
	        .operand = CLI_SPEC_GPU,
	        .exit_status = "0: rows shown.\n\n"
	                       "2: usage error, or NAME matches no GPU of the table.\n\n"
	                       "3: the output could not be written.",
	        .examples = "gpuscope specs  every GPU of the table\n"
	                    "gpuscope specs 4090  the rows whose name has 4090 in it\n"
	                    "gpuscope specs datacenter --sources  the data centre GPUs, with each "
	                    "row's source\n"
	                    "gpuscope specs --json | jq '.gpus[].name'  the names, from the JSON "
	                    "document",
	        .see_also = "gpuscope-fit(1), gpuscope-bench(1), gpuscope(1)",
	},
	{
	        .name = "bench",
	        .summary =
	                "measure each GPU: compute peaks, tensor cores, memory bandwidth, copies",
	        .synopsis = "[TEST...] [--quick] [-i ID,...] [--json] [--plot FILE.svg] [--force] "
	                    "[--no-save] [--opencl-cpu]",
	        .description =
	                "Measure each GPU: CUDA devices through the driver API (libcuda.so.1 loaded at "
	                "run time, the kernels built into gpuscope or the file GPUSCOPE_CUDA names), "
	                "every other GPU through OpenCL.\n"
	                "\n"
	                "The tests, each TEST a name or a prefix (stream, fma, h2d, p2p): vector FMA "
	                "chains (fma.fp64, fma.fp32, fma.fp16, fma.bf16, fma.int32, dp4a.int8), tensor "
	                "cores (mma.fp16, mma.bf16, mma.tf32, mma.int8, mma.fp8), cuBLASLt's GEMM "
	                "(gemm.fp32 ... gemm.fp64), GPU to GPU copies (p2p), memory bandwidth with "
	                "BabelStream's kernels (stream.copy, stream.mul, stream.add, stream.triad, "
	                "stream.dot), host to device copies (h2d.pinned, d2h.pinned, bidir.pinned, "
	                "h2d.pageable, d2h.pageable, h2d.sm, d2h.sm) and launch.latency.\n"
	                "\n"
	                "Each figure is held against the spec sheet's, the peak at the clock seen "
	                "during its test and the PCIe link as trained; what held the GPU down (power "
	                "cap, heat, a link below its best) is named beside it. The figures are kept "
	                "per GPU UUID for fit and doctor. A GPU that other processes use is refused "
	                "unless --force. The method is in docs/bench.md.\n"
	                "\n"
	                "bench matmul, C = A x B on the CPU and each GPU, has its own options (see "
	                "below).",
	        .options = bench_options,
	        .operand = CLI_BENCH_TEST,
	        .exit_status = "0: measured.\n\n"
	                       "1: a result was wrong or a GPU was lost.\n\n"
	                       "2: usage error.\n\n"
	                       "3: a test could not run.\n\n"
	                       "4: no GPU to measure.\n\n"
	                       "128 + the signal: stopped by it.",
	        .examples =
	                "gpuscope bench  every test on every GPU, about a minute each\n"
	                "gpuscope bench --quick --plot roofline.svg  about 15 s a GPU, with a "
	                "roofline picture\n"
	                "gpuscope bench stream.triad h2d -i 0  memory bandwidth and host copies "
	                "of GPU 0\n"
	                "gpuscope bench -i list  the devices bench sees\n"
	                "gpuscope bench --json gemm  cuBLASLt's GEMMs as a JSON document",
	        .see_also = "gpuscope-burn(1), gpuscope-fit(1), gpuscope-doctor(1), gpuscope(1)",
	},
	{
	        .name = "bench matmul",
	        .summary = "C = A x B in FP32 on the CPU and each GPU, every result checked",
	        .synopsis = "[--size N | --sweep] [--json] [--threads N] [--opencl-cpu]",
	        .description =
	                "C = A x B for square N x N FP32 matrices on the CPU with three kernels: the "
	                "textbook loop on one thread, a cache-blocked vectorised kernel on every CPU "
	                "the process may run on, and the system BLAS's cblas_sgemm (libopenblas.so.0, "
	                "libblis.so.4, libcblas.so.3 or libblas.so.3, loaded at run time).\n"
	                "\n"
	                "Each runs once to warm up, then at least 3 times; the table shows the best "
	                "and the median GFLOP/s (2 N^3 / time) and the best against this CPU's peak "
	                "(CPUs x clock x FP32 FMA lanes x 2). Every result is checked against the "
	                "others; a wrong one is an error line and exit status 1.\n"
	                "\n"
	                "On each GPU (CUDA through libcuda.so.1 or GPUSCOPE_CUDA, OpenCL through "
	                "libOpenCL.so.1 or GPUSCOPE_OPENCL) a naive and a tiled kernel, and cuBLASLt "
	                "on CUDA, are timed kernel only and end to end and checked against the CPU's "
	                "result. docs/bench.md tells how it is measured.",
	        .options = bench_matmul_options,
	        .exit_status =
	                "0: every result checked.\n\n"
	                "1: a result was wrong.\n\n"
	                "2: usage error.\n\n"
	                "3: bench could not run (a CUDA or OpenCL call failed); the CPU rows "
	                "are still printed.\n\n"
	                "128 + the signal: stopped by it (the rows measured so far are "
	                "printed).",
	        .examples = "gpuscope bench matmul  1024 x 1024 on the CPU and each GPU\n"
	                    "gpuscope bench matmul --sweep  N from 64 to 8192\n"
	                    "gpuscope bench matmul --size 4096 --threads 8  one size on 8 threads\n"
	                    "gpuscope bench matmul --opencl-cpu --json  with PoCL's CPU device, as "
	                    "JSON",
	        .see_also = "gpuscope-bench(1), gpuscope(1)",
	},
	{
	        .name = "burn",
	        .summary = "a stress test of every GPU at once, each result checked",
	        .synopsis = "[--duration SEC] [--precision P] [--memtest | --no-memtest] "
	                    "[-i ID,...] [--record FILE] [--json] [--opencl-cpu] [--size N] "
	                    "[--memory SIZE]",
	        .description =
	                "A stress test of every GPU at once (CUDA through libcuda.so.1, OpenCL for the "
	                "others): GEMMs over about 90 % of the free memory, every result compared on "
	                "the GPU with a reference computed once and checked on the host, wrong "
	                "elements counted.\n"
	                "\n"
	                "A memory pattern test of the same memory (walking ones and zeros, moving "
	                "inversions, random patterns) runs at the start and the end; --memtest makes "
	                "it the whole run, --no-memtest leaves it out.\n"
	                "\n"
	                "A live line per GPU shows TFLOP/s, errors, temperature, power, clock and "
	                "throttle reasons, and doctor's health checks run over the run for the "
	                "verdict. --record runs the flight recorder alongside. See docs/burn.md.",
	        .options = burn_options,
	        .exit_status = "0: pass.\n\n"
	                       "1: a wrong result, a memory test error, a lost GPU, an Xid or a "
	                       "fatal health finding.\n\n"
	                       "2: usage error.\n\n"
	                       "3: burn could not run.\n\n"
	                       "128 + the signal: stopped by it.",
	        .examples =
	                "gpuscope burn  a minute on every GPU\n"
	                "gpuscope burn --duration 10m --record burn.rec  ten minutes, recorded\n"
	                "gpuscope burn --precision tensor -i 0,1  tensor cores of GPUs 0 and 1\n"
	                "gpuscope burn --memtest --duration 5m  only the memory test\n"
	                "gpuscope burn --json | jq .verdict  the verdict alone",
	        .see_also =
	                "gpuscope-bench(1), gpuscope-doctor(1), gpuscope-record(1), gpuscope(1)",
	},
	{
	        .name = "queue",
	        .summary = "a job queue for the GPUs of a server shared by several people",
	        .synopsis = "[--socket PATH] [--json [--compact]] [COMMAND] [options]",
	        .description =
	                "The client of a job queue for the GPUs of one server shared by several "
	                "people; gpuscope queued is its daemon. A job asks for whole GPUs (--gpus), "
	                "memory on a GPU it may share (--gpu-mem), or named GPUs (--gpu); it waits "
	                "until that is free, by priority and then by fair share, and runs as its "
	                "owner, in the directory and environment it was submitted from, with "
	                "CUDA_VISIBLE_DEVICES set to the UUIDs of its GPUs.\n"
	                "\n"
	                "Each job runs in a cgroup of its own, watched by a small supervisor, so that "
	                "a restart of the daemon loses no job. A GPU whose memory does not come back "
	                "after a job is marked dirty and given to nobody until an admin cleans it.\n"
	                "\n"
	                "Every command talks to the daemon's Unix socket, which takes the caller's "
	                "identity from the kernel: a user acts on their own jobs, root and the "
	                "members of the admin_group on everyone's. Without a COMMAND, queue is queue "
	                "ls. docs/queue.md is the full guide.",
	        .options = queue_options,
	        .operand = CLI_SUBCOMMAND,
	        .operand_choices = QUEUE_SUBCOMMANDS,
	        .exit_status =
	                QUEUE_EXIT_STATUS "\n\nsubmit --wait exits with the job's own status "
	                                  "instead.",
	        .examples = "gpuscope queue  the jobs and the GPUs\n"
	                    "gpuscope queue submit --gpu-mem 20G -- python train.py  a job that "
	                    "needs 20 GiB of one GPU\n"
	                    "gpuscope queue why 12  why job 12 waits\n"
	                    "gpuscope queue logs -f 12  its output as it grows\n"
	                    "gpuscope queue cancel 12 13  two jobs ended\n"
	                    "gpuscope queue --json ls | jq '.jobs[].id'  the ids, from JSON",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue ls",
	        .summary = "the queue: one line per job, then per GPU",
	        .synopsis = "[--all | --me | -u USER] [--state STATE,...]",
	        .description =
	                "One line per job (id, user, name, state, the GPUs it was given or the count "
	                "it asks, its memory per GPU, priority, how long it has run or waited, and "
	                "why it waits with its estimated start), then one line per GPU (index, name, "
	                "memory, its jobs and flags: drained, dirty, lost, reserved), then the "
	                "number of jobs running and queued and what is wrong with the daemon.",
	        .options = queue_ls_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue ls  everyone's jobs\n"
	                    "gpuscope queue ls --me --state running  my running jobs",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue submit",
	        .summary = "queue a command to run on the GPUs it asks for",
	        .synopsis = "[--gpus N | --gpu-mem SIZE | --gpu UUID,...] [--exclusive | --shared] "
	                    "[--priority P] [--after JOB,...] [--preemptible] [--requeue] "
	                    "[--time LIMIT] [--grace SEC] [--name NAME] [--output FILE] "
	                    "[--error FILE] [--hold] [--wait] [--parsable] [--] COMMAND...",
	        .description =
	                "Queue COMMAND and print \"submitted job N\". Options stop at COMMAND: what "
	                "follows it is its own.\n"
	                "\n"
	                "The job runs as its owner, in the directory and environment it was "
	                "submitted from, with CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES set to "
	                "the UUIDs of its GPUs.",
	        .options = queue_submit_options,
	        .operand = CLI_COMMAND,
	        .exit_status =
	                QUEUE_EXIT_STATUS "\n\nWith --wait: the job's own exit status (128 + "
	                                  "the signal that killed it; 1 when it was "
	                                  "cancelled or failed to start).",
	        .examples =
	                "gpuscope queue submit -- python train.py  one GPU\n"
	                "gpuscope queue submit --gpu-mem 20G -- python infer.py  20 GiB of a GPU "
	                "shared with other jobs\n"
	                "gpuscope queue submit --gpus 4 -t 2h --name big -- ./run.sh  four whole "
	                "GPUs for at most two hours\n"
	                "gpuscope queue submit --wait --parsable -- make test  wait for it and "
	                "exit with its status",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue show",
	        .summary = "everything about one job",
	        .synopsis = "JOB",
	        .description =
	                "Everything about one job: what it asks, where it runs, its times, exit "
	                "status, restarts, GPU-seconds, peak GPU memory, command and events.",
	        .options = queue_options,
	        .operand = CLI_JOB,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue show 12  job 12",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue why",
	        .summary = "why a job waits",
	        .synopsis = "JOB",
	        .description = "Why the job waits, in one sentence, with its estimated start.",
	        .options = queue_options,
	        .operand = CLI_JOB,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue why 12  why job 12 has not started",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue logs",
	        .summary = "a job's output",
	        .synopsis = "[-f] [--err] JOB",
	        .description =
	                "The job's standard output (--err: its standard error, the same file "
	                "unless it was submitted with --error) as it is so far; --follow goes "
	                "on writing it as it grows until the job ends.",
	        .options = queue_logs_options,
	        .operand = CLI_JOB,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue logs 12  its output so far\n"
	                    "gpuscope queue logs -f --err 12  its standard error as it grows",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue cancel",
	        .summary = "end jobs",
	        .synopsis = "JOB... [--signal SIG]",
	        .description =
	                "A waiting job ends at once; a running one gets SIGTERM (or --signal), "
	                "then SIGKILL after the grace. Every process of the job goes: its "
	                "whole cgroup.",
	        .options = queue_cancel_options,
	        .operand = CLI_JOB,
	        .exit_status = QUEUE_EXIT_STATUS "\n\ncancel exits 1 when any of its jobs failed.",
	        .examples = "gpuscope queue cancel 12  end job 12\n"
	                    "gpuscope queue cancel --signal INT 12 13  Ctrl-C for two jobs",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue hold",
	        .summary = "keep waiting jobs from starting",
	        .synopsis = "JOB...",
	        .description = "Keep waiting jobs from starting until queue release.",
	        .options = queue_options,
	        .operand = CLI_JOB,
	        .exit_status = QUEUE_EXIT_STATUS "\n\nhold exits 1 when any of its jobs failed.",
	        .examples = "gpuscope queue hold 12  job 12 waits until released",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue release",
	        .summary = "let held jobs start again",
	        .synopsis = "JOB...",
	        .description = "Let jobs held by queue hold or submit --hold start again.",
	        .options = queue_options,
	        .operand = CLI_JOB,
	        .exit_status = QUEUE_EXIT_STATUS "\n\nrelease exits 1 when any of its jobs failed.",
	        .examples = "gpuscope queue release 12  job 12 may start",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue history",
	        .summary = "ended jobs, newest first",
	        .synopsis = "[--all] [-u USER] [--since TIME] [-n N]",
	        .description =
	                "Ended jobs, newest first: yours, everyone's (--all), or one user's.",
	        .options = queue_history_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue history  my ended jobs\n"
	                    "gpuscope queue history --all --since -2h -n 20  the last 20 of "
	                    "everyone's, of the last two hours",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue events",
	        .summary = "the queue's event log",
	        .synopsis = "[-f] [--after ID]",
	        .description =
	                "The event log, one line per event (time, id, job, user, kind, text): "
	                "submits, starts, ends, preemptions, dirty and lost GPUs, restarts of "
	                "the daemon. A user sees the events of their own jobs and of the GPUs "
	                "and the daemon.",
	        .options = queue_events_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue events  the log so far\n"
	                    "gpuscope queue events -f --after 100  from event 101 on, as they come",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue drain",
	        .summary = "admins: start nothing new on a GPU",
	        .synopsis = "GPU [--reason TEXT]",
	        .description =
	                "Admins: nothing new starts on the GPU; its jobs go on. queue resume "
	                "undoes it.",
	        .options = queue_drain_options,
	        .operand = CLI_GPU,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue drain 3 --reason 'fan noise'  GPU 3 out of service",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue resume",
	        .summary = "admins: give a drained GPU out again",
	        .synopsis = "GPU",
	        .description = "Admins: jobs start on a drained GPU again.",
	        .options = queue_options,
	        .operand = CLI_GPU,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue resume 3  GPU 3 back in service",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue clean",
	        .summary = "admins: give a dirty GPU out again",
	        .synopsis = "GPU",
	        .description = "Admins: a GPU whose memory did not come back after a job is marked "
	                       "dirty; this gives it out again.",
	        .options = queue_options,
	        .operand = CLI_GPU,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue clean 3  GPU 3 given out again",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue pause",
	        .summary = "admins: stop starting jobs",
	        .synopsis = "",
	        .description = "Admins: no job starts (running ones go on) until queue unpause.",
	        .options = queue_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue pause  hold every start",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue unpause",
	        .summary = "admins: start jobs again",
	        .synopsis = "",
	        .description = "Admins: jobs start again after queue pause.",
	        .options = queue_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue unpause  starts go on",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue reload",
	        .summary = "admins: read the daemon's configuration again",
	        .synopsis = "",
	        .description = "Admins: the daemon reads its configuration again (as on SIGHUP).",
	        .options = queue_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue reload  after an edit of /etc/gpuscope/queue.conf",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queue ping",
	        .summary = "whether the daemon answers",
	        .synopsis = "",
	        .description = "Whether the daemon answers, its version, and who it takes you for.",
	        .options = queue_options,
	        .exit_status = QUEUE_EXIT_STATUS,
	        .examples = "gpuscope queue ping  the daemon's version and your identity",
	        .see_also = QUEUE_SEE_ALSO,
	},
	{
	        .name = "queued",
	        .summary = "the daemon of gpuscope queue",
	        .synopsis = "[--config FILE] [--socket PATH] [--state-dir DIR] [--foreground] "
	                    "[--check-config] [--timeout SEC]",
	        .description =
	                "The daemon of gpuscope queue: it keeps the queue's state, starts each job on "
	                "the GPUs the scheduler gives it, in a cgroup of its own under a supervisor, "
	                "and answers gpuscope queue on a Unix socket.\n"
	                "\n"
	                "It runs in the foreground, as systemd runs it "
	                "(contrib/systemd/gpuscope-queued.service). Run as root it serves every user "
	                "and runs each job as its owner; run as an ordinary user it is a personal "
	                "queue that only that user (and root) may use.\n"
	                "\n"
	                "SIGTERM stops the daemon and leaves the jobs running, for the next start to "
	                "take back; SIGHUP reads the configuration again. Every key of the "
	                "configuration is in contrib/queue.conf and docs/queue.md.",
	        .options = queued_options,
	        .exit_status = "0: stopped by SIGTERM, or --check-config found the configuration "
	                       "good.\n\n"
	                       "1: --check-config found something wrong; it is printed.\n\n"
	                       "2: usage error, or a socket path it cannot use.\n\n"
	                       "3: the daemon failed while running; the reason is printed.",
	        .examples = "gpuscope queued  run the daemon with /etc/gpuscope/queue.conf\n"
	                    "gpuscope queued --check-config --config ./queue.conf  check a "
	                    "configuration\n"
	                    "gpuscope queued --socket /tmp/q.sock --state-dir /tmp/q  a personal "
	                    "queue",
	        .see_also = "gpuscope-queue(1), gpuscope(1), systemd.service(5)",
	},
	{
	        .name = "completion",
	        .summary = "print the shell completion script of bash, zsh or fish",
	        .synopsis = "bash|zsh|fish",
	        .description =
	                "Print gpuscope's completion script for bash, zsh or fish on standard "
	                "output: its commands, options and their values (GPU indices and UUIDs of "
	                "this machine, query field names, doctor ids, fit's model and GPU names, "
	                "bench tests, queue job ids), generated from gpuscope's own table of "
	                "commands and options.\n"
	                "\n"
	                "The package installs the three scripts where each shell looks for them; "
	                "from a build tree, source <(gpuscope completion bash) in bash, or write the "
	                "zsh script as _gpuscope into a directory of $fpath and the fish script into "
	                "~/.config/fish/completions/gpuscope.fish.",
	        .options = completion_options,
	        .operand = CLI_CHOICE,
	        .operand_choices = "bash,zsh,fish",
	        .exit_status = "0: the script was printed.\n\n"
	                       "2: usage error: no shell named, or one gpuscope does not complete.",
	        .examples = "source <(gpuscope completion bash)  completions in this bash\n"
	                    "gpuscope completion zsh >\"${fpath[1]}/_gpuscope\"  for zsh, into the "
	                    "first directory of $fpath\n"
	                    "gpuscope completion fish >~/.config/fish/completions/gpuscope.fish  "
	                    "for fish",
	        .see_also = "bash(1), zsh(1), fish(1), gpuscope(1)",
	},
	{ .name = NULL },
};
