/*
 * The table of commands (cli.h), first half: the commands that show and
 * keep what the GPUs do (status, query, top, watch, record, replay, doctor,
 * serve). Each entry says what the command's getopt_long() table takes;
 * tests/cli/cli-table.sh checks the two against each other.
 */
#include <stddef.h>

#include "cmd/cli.h"

/* Options several commands share, spelled once. */
#define OPT_ID                                                                                          \
	{                                                                                               \
		.name = "id", .short_name = 'i', .list = true, .value = CLI_GPU, .metavar = "ID",       \
		.help = "Only these GPUs: an index, a UUID (or a unique prefix of one), a PCI bus id, " \
		        "or a MIG device (its MIG- UUID, or GPU:MIG as in 0:1)."                        \
	}
#define OPT_TIMEOUT                                                                              \
	{                                                                                        \
		.name = "timeout", .value = CLI_SECONDS, .metavar = "SEC",                       \
		.help = "Show a GPU that has not answered after SEC seconds (default 5) as not " \
		        "responding, and the others as usual."                                   \
	}
#define OPT_COLOR                                                                                     \
	{                                                                                             \
		.name = "color", .value = CLI_CHOICE, .metavar = "WHEN",                              \
		.choices = "auto,always,never",                                                       \
		.help = "auto (the default: colour on a terminal unless NO_COLOR is set), always or " \
		        "never."                                                                      \
	}
#define OPT_COLOUR                                                                        \
	{                                                                                 \
		.name = "colour", .hidden = true, .value = CLI_CHOICE, .metavar = "WHEN", \
		.choices = "auto,always,never", .help = "The same as --color."            \
	}
#define OPT_NOPROC(what)                                                \
	{                                                               \
		.name = "no-processes", .value = CLI_NONE, .help = what \
	}
#define OPT_END              \
	{                    \
		.name = NULL \
	}

static const struct cli_option status_options[] = {
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "Print one JSON document (schema gpuscope.status/1, docs/json-schema.md): "
	          "numbers as numbers with the unit in the key name, null for what could not "
	          "be read." },
	{ .name = "compact", .value = CLI_NONE, .help = "With --json: the document on one line." },
	OPT_ID,
	OPT_NOPROC("Do not list processes."),
	OPT_COLOR,
	OPT_COLOUR,
	OPT_TIMEOUT,
	{ .name = "format",
	  .value = CLI_CHOICE,
	  .metavar = "FORMAT",
	  .choices = "table,json,prom",
	  .help = "table (the default), json (as --json) or prom: the Prometheus text format of "
	          "node_exporter's textfile collector, written atomically with -f." },
	{ .name = "loop",
	  .short_name = 'l',
	  .optional = true,
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Print again every SEC seconds (default 5) until interrupted, as nvidia-smi -l "
	          "does." },
	{ .name = "loop-ms",
	  .value = CLI_NUMBER,
	  .metavar = "MS",
	  .help = "Print again every MS milliseconds (nvidia-smi's -lms MS is taken as this)." },
	{ .name = "filename",
	  .short_name = 'f',
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Write to FILE instead of standard output: with --format=prom replaced whole "
	          "each round (for node_exporter's textfile collector), else emptied first and "
	          "each round added, as nvidia-smi -f does." },
	OPT_END,
};

static const struct cli_option query_options[] = {
	{ .name = "query-gpu",
	  .list = true,
	  .value = CLI_FIELD_GPU,
	  .metavar = "FIELD",
	  .help = "The fields of each GPU, named as nvidia-smi names them (see "
	          "--help-query-gpu)." },
	{ .name = "query-compute-apps",
	  .list = true,
	  .value = CLI_FIELD_APP,
	  .metavar = "FIELD",
	  .help = "The fields of each compute process (see --help-query-compute-apps)." },
	{ .name = "format",
	  .list = true,
	  .value = CLI_CHOICE,
	  .metavar = "FORMAT",
	  .choices = "csv,noheader,nounits",
	  .help = "csv, with noheader to leave out the header line and nounits to leave out the "
	          "units after values (default: csv)." },
	OPT_ID,
	{ .name = "help-query-gpu", .value = CLI_NONE, .help = "List the fields of --query-gpu." },
	{ .name = "help-query-compute-apps",
	  .value = CLI_NONE,
	  .help = "List the fields of --query-compute-apps." },
	{ .name = "loop",
	  .short_name = 'l',
	  .optional = true,
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Query again every SEC seconds (default 5) until interrupted, the header line "
	          "once, as nvidia-smi -l does." },
	{ .name = "loop-ms",
	  .value = CLI_NUMBER,
	  .metavar = "MS",
	  .help = "Query again every MS milliseconds (nvidia-smi's -lms MS is taken as this)." },
	{ .name = "filename",
	  .short_name = 'f',
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Write the CSV to FILE instead of standard output (emptied first, each round "
	          "added, as nvidia-smi -f)." },
	OPT_END,
};

static const struct cli_option top_options[] = {
	{ .name = "interval",
	  .short_name = 'd',
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Seconds between samples (default 1; also 500ms, 2s; at least 0.1)." },
	{ .name = "delay",
	  .hidden = true,
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "The same as --interval (top's spelling)." },
	OPT_ID,
	OPT_NOPROC("GPUs only: no process table."),
	{ .name = "compact",
	  .value = CLI_NONE,
	  .help = "One line per GPU from the start (the m key switches)." },
	OPT_COLOR,
	OPT_COLOUR,
	{ .name = "read-only",
	  .value = CLI_NONE,
	  .help = "Never send a signal to a process (the kill key is refused)." },
	{ .name = "readonly",
	  .hidden = true,
	  .value = CLI_NONE,
	  .help = "The same as --read-only." },
	OPT_TIMEOUT,
	OPT_END,
};

static const struct cli_option watch_options[] = {
	OPT_ID,
	{ .name = "interval",
	  .short_name = 'd',
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Seconds between samples (default 1; also 500ms, 2s)." },
	{ .name = "loop",
	  .short_name = 'l',
	  .hidden = true,
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "The same as --interval (nvidia-smi's spelling)." },
	{ .name = "count",
	  .short_name = 'c',
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Stop after N samples (default: until interrupted)." },
	{ .name = "format",
	  .value = CLI_CHOICE,
	  .metavar = "FORMAT",
	  .choices = "table,csv,ndjson",
	  .help = "table (the default: aligned columns), csv[,noheader][,nounits] (nvidia-smi's "
	          "query CSV) or ndjson (one JSON document per line, schema gpuscope.watch/1)." },
	{ .name = "fields",
	  .list = true,
	  .value = CLI_FIELD_GPU,
	  .metavar = "FIELD",
	  .help = "The fields, named as query --query-gpu names them (see 'gpuscope query "
	          "--help-query-gpu')." },
	{ .name = "query-gpu",
	  .hidden = true,
	  .list = true,
	  .value = CLI_FIELD_GPU,
	  .metavar = "FIELD",
	  .help = "The same as --fields (query's spelling)." },
	{ .name = "findings",
	  .value = CLI_NONE,
	  .help = "With --format ndjson: doctor's health and workload findings over the last 60 "
	          "samples, a record of their own (gpuscope.findings/1) whenever they change." },
	OPT_TIMEOUT,
	OPT_END,
};

static const struct cli_option record_options[] = {
	{ .name = "output",
	  .short_name = 'o',
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "The recording (default gpuscope.rec), appended to when it exists." },
	{ .name = "interval",
	  .short_name = 'd',
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Seconds between samples (default 1)." },
	{ .name = "count",
	  .short_name = 'c',
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Stop after N samples (default: until SIGINT, SIGTERM or SIGHUP)." },
	OPT_ID,
	{ .name = "max-size",
	  .value = CLI_SIZE,
	  .metavar = "SIZE",
	  .help = "Rotate to FILE.1 ... when a file would pass SIZE (64k, 64M, 1G; default 64M; "
	          "0: never)." },
	{ .name = "keep",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Files kept in all, FILE included (default 4)." },
	{ .name = "keyframe-every",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "A whole sample every N records (default 60); the others hold what changed." },
	{ .name = "sync-every",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Sync the data to the disk at most every SEC seconds (default 10; 0: after "
	          "every sample)." },
	OPT_NOPROC("Record the GPUs only, not their processes."),
	OPT_TIMEOUT,
	{ .name = "quiet",
	  .short_name = 'q',
	  .value = CLI_NONE,
	  .help = "No lines on standard error about what is recorded." },
	OPT_END,
};

static const struct cli_option replay_options[] = {
	{ .name = "speed",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "N times as fast as recorded (10 or 10x); 0 or max: as fast as it reads." },
	{ .name = "from",
	  .value = CLI_TIME,
	  .metavar = "TIME",
	  .help = "Start at the last sample at or before TIME: seconds since the epoch, "
	          "2026-11-30T03:00[:SS][Z], 03:00[:SS], -10m (before the end) or +90s (after "
	          "the start)." },
	{ .name = "at",
	  .value = CLI_TIME,
	  .metavar = "TIME",
	  .help = "As --from, and shows status at TIME unless another command is named." },
	OPT_END,
};

static const struct cli_option doctor_options[] = {
	{ .name = "json",
	  .short_name = 'j',
	  .value = CLI_NONE,
	  .help = "The findings as one JSON document (schema gpuscope.doctor/1)." },
	{ .name = "log",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Judge the kernel log in FILE alone ('-': standard input): dmesg, journalctl, "
	          "syslog, container logs, nvidia-bug-report.log.gz, a devcoredump." },
	{ .name = "watch",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Sample the GPUs and their processes for SEC seconds first, to judge trends "
	          "and workload patterns." },
	{ .name = "interval",
	  .short_name = 'd',
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Seconds between the samples of --watch (default 1)." },
	{ .name = "recording",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "Judge a recording of 'gpuscope record' instead of the live GPUs (set-up "
	          "checks are skipped)." },
	{ .name = "since",
	  .value = CLI_TIME,
	  .metavar = "TIME",
	  .help = "With --recording: from TIME on (default -1h, its last hour; TIME as for "
	          "replay --from)." },
	{ .name = "only",
	  .list = true,
	  .value = CLI_DOCTOR_ID,
	  .metavar = "CHECK",
	  .help = "Run only these checks: setup, health, klog, workload, or a set-up check by "
	          "name (pci, nvidia, devices, cuda-env, toolkit, python, render, video)." },
	{ .name = "skip",
	  .list = true,
	  .value = CLI_DOCTOR_ID,
	  .metavar = "ID",
	  .help = "Leave these findings out of the report and the exit status: ids as --list "
	          "prints them, or a prefix such as health.fan.* (repeatable)." },
	{ .name = "fail-on",
	  .value = CLI_CHOICE,
	  .metavar = "SEVERITY",
	  .choices = "warning,error",
	  .help = "The least severity that makes the exit status non-zero: warning (the "
	          "default) or error." },
	{ .name = "explain",
	  .value = CLI_DOCTOR_ID,
	  .metavar = "ID",
	  .help = "Print the long explanation of a finding: its causes, how to tell them apart, "
	          "what to do." },
	{ .name = "list", .value = CLI_NONE, .help = "List every finding id with its title." },
	OPT_END,
};

static const struct cli_option serve_options[] = {
	{ .name = "listen",
	  .value = CLI_ADDR,
	  .metavar = "ADDR",
	  .help = "Where to listen: HOST:PORT (default 127.0.0.1:9947), [IPv6]:PORT, or :PORT "
	          "for every address; port 0 takes a free one." },
	{ .name = "web.listen-address",
	  .value = CLI_ADDR,
	  .metavar = "ADDR",
	  .help = "The same as --listen, as Prometheus's exporters spell it." },
	{ .name = "web-config",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "TLS and basic auth, in the web configuration format of Prometheus's "
	          "exporters (tls_server_config, basic_auth_users with bcrypt hashes)." },
	{ .name = "web.config.file",
	  .value = CLI_FILE,
	  .metavar = "FILE",
	  .help = "The same as --web-config, as Prometheus's exporters spell it." },
	{ .name = "interval",
	  .short_name = 'd',
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Seconds between collections (default 1)." },
	{ .name = "processes",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Per-process series for the top N processes by GPU memory (default 50; 0: "
	          "none)." },
	{ .name = "doctor-interval",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Run doctor's checks of the GPUs and their driver this often, for "
	          "gpuscope_finding and /api/v1/findings (default 30; 0: never)." },
	{ .name = "max-connections",
	  .value = CLI_NUMBER,
	  .metavar = "N",
	  .help = "Connections served at once (default 64); more wait in the listen queue." },
	{ .name = "connection-timeout",
	  .value = CLI_SECONDS,
	  .metavar = "SEC",
	  .help = "Close a connection idle this long, or whose request has not arrived whole "
	          "this long (default 10)." },
	{ .name = "hash-password",
	  .value = CLI_NONE,
	  .help = "Print a bcrypt hash of the password read from standard input, for "
	          "basic_auth_users, and exit." },
	{ .name = "names",
	  .value = CLI_CHOICE,
	  .metavar = "SET",
	  .choices = "gpuscope,dcgm",
	  .help = "gpuscope (the default), or dcgm: dcgm-exporter's counters, names, units and "
	          "labels (DCGM_FI_DEV_GPU_UTIL, ...), in the text format only." },
	{ .name = "user",
	  .value = CLI_USER,
	  .metavar = "NAME",
	  .help = "Started as root: become NAME (its groups too) once the port is bound and the "
	          "GPUs are open." },
	OPT_ID,
	OPT_TIMEOUT,
	OPT_END,
};

const struct cli_command cli_commands_mon[] = {
	{
	        .name = "status",
	        .summary = "what every GPU is and does, and who uses it, now",
	        .synopsis = "[--json [--compact]] [-i ID,...] [--no-processes] [--color=WHEN] "
	                    "[--timeout=SEC] [--format=table|json|prom] [-l SEC] [-f FILE]",
	        .description =
	                "The default command. For each GPU: index, name, PCI bus id, performance "
	                "state, power draw and limit, fan, temperature and its slowdown point, "
	                "memory used, reserved and total, utilisation, clocks, the PCIe link now "
	                "and at its best, persistence and MIG mode, and throttling or ECC errors "
	                "when there are any.\n"
	                "\n"
	                "Then one line per process and GPU: its PID, type, user, GPU memory, GPU "
	                "use, CPU, memory, age, container, job and command line.\n"
	                "\n"
	                "NVIDIA GPUs come first (through NVML), then AMD, Intel and other DRM "
	                "GPUs (through sysfs, hwmon and the processes' DRM fdinfo), in the same "
	                "layout. A value that cannot be read is shown as '-' (null in JSON), "
	                "never as 0.\n"
	                "\n"
	                "The table fits 80 columns and uses more when the terminal has them; it "
	                "is in colour on a terminal unless NO_COLOR is set.",
	        .options = status_options,
	        .examples = "gpuscope  the table of GPUs and processes\n"
	                    "gpuscope -i 0,GPU-5d2c --no-processes  two GPUs, no processes\n"
	                    "gpuscope --json | jq '.gpus[].memory_used_bytes'  memory used, from "
	                    "the JSON document\n"
	                    "gpuscope status --format=prom -f /var/lib/node_exporter/gpu.prom  "
	                    "for node_exporter's textfile collector\n"
	                    "gpuscope status -l 5  the table again every 5 seconds",
	        .see_also = "gpuscope(1), gpuscope-top(1), gpuscope-query(1), nvidia-smi(1)",
	},
	{
	        .name = "query",
	        .summary = "nvidia-smi's --query-gpu and --query-compute-apps, in its CSV",
	        .synopsis = "--query-gpu=FIELD,... | --query-compute-apps=FIELD,... "
	                    "[--format=csv[,noheader][,nounits]] [-i ID,...] [-l SEC] [-f FILE]",
	        .description =
	                "nvidia-smi's query interface: the same field names (and their aliases), "
	                "the same CSV layout and the same spelling of values, so that scripts "
	                "written for nvidia-smi --query-gpu keep working.\n"
	                "\n"
	                "'gpuscope query --help-query-gpu' and '--help-query-compute-apps' list "
	                "the fields gpuscope supports. An unknown field is an error that names it "
	                "and suggests close matches; a field that nvidia-smi has and gpuscope "
	                "does not is an error that says so.\n"
	                "\n"
	                "'gpuscope --query-gpu=...' (without the word query) works too.",
	        .options = query_options,
	        .examples = "gpuscope query --query-gpu=index,name,memory.used,utilization.gpu "
	                    "--format=csv  one CSV line per GPU\n"
	                    "gpuscope query --query-compute-apps=pid,process_name,used_memory "
	                    "--format=csv,noheader  the compute processes\n"
	                    "gpuscope --query-gpu=uuid --format=csv,noheader  nvidia-smi's "
	                    "spelling, without the word query\n"
	                    "gpuscope query --help-query-gpu  every field",
	        .see_also = "gpuscope(1), gpuscope-watch(1), nvidia-smi(1)",
	},
	{
	        .name = "top",
	        .summary = "a full-screen monitor of the GPUs and their processes",
	        .synopsis = "[-d SEC] [-i ID,...] [--no-processes] [--compact] [--color=WHEN] "
	                    "[--read-only] [--timeout=SEC]",
	        .description =
	                "A full-screen monitor (ncurses): a header per GPU with bars for "
	                "utilisation, memory, power and temperature, history charts of the last "
	                "minutes, the process table (sorted by any column, filtered, shown as a "
	                "tree, a process killed after a confirmation), a detail view of one GPU "
	                "and a pane of doctor's health and workload findings.\n"
	                "\n"
	                "F1 or ? lists the keys; f shows or hides the findings, F opens a "
	                "finding's full text; F2 is the setup screen (settings are kept in "
	                "$XDG_CONFIG_HOME/gpuscope/top.conf); q or F10 quits.\n"
	                "\n"
	                "Readings come from a thread of their own: a GPU that does not answer "
	                "within the timeout is marked stale and the others keep updating. Under "
	                "'gpuscope replay FILE top' the samples come from a recording.",
	        .options = top_options,
	        .examples = "gpuscope top  every GPU, every second\n"
	                    "gpuscope top -d 2 -i 0,1  two GPUs, every 2 seconds\n"
	                    "gpuscope top --read-only --no-processes  GPUs only, no kill key\n"
	                    "gpuscope --demo top  a simulated 8-GPU server",
	        .see_also = "gpuscope(1), gpuscope-status(1), gpuscope-replay(1), nvtop(1)",
	},
	{
	        .name = "watch",
	        .summary = "one line per GPU per sample, like nvidia-smi dmon",
	        .synopsis = "[-i ID,...] [-d SEC] [-c COUNT] [--format=table|csv[,noheader]"
	                    "[,nounits]|ndjson] [--fields=FIELD,...] [--findings]",
	        .description =
	                "One line per GPU per sample, as nvidia-smi dmon and nvidia-smi -l print "
	                "them, until interrupted or for --count samples. Each line is flushed as "
	                "it is written, so a pipe sees it at once.\n"
	                "\n"
	                "The default columns are utilization.gpu, utilization.memory, "
	                "memory.used, memory.total, power.draw, temperature.gpu, clocks.sm, "
	                "clocks.mem and pstate; --fields chooses others, named as query "
	                "--query-gpu names them.\n"
	                "\n"
	                "--format=table aligns columns under two header lines (names and units); "
	                "csv is nvidia-smi's query CSV (the header once); ndjson prints one JSON "
	                "document per line (schema gpuscope.watch/1). With --findings (ndjson "
	                "only) a record of schema gpuscope.findings/1 follows the GPU lines "
	                "whenever doctor's findings change.\n"
	                "\n"
	                "A lost GPU is marked and the others go on; the exit status is then 1. "
	                "SIGINT, SIGTERM and SIGHUP end it after a whole line, with status 0.",
	        .options = watch_options,
	        .examples = "gpuscope watch  the default columns, every second\n"
	                    "gpuscope watch --format csv --fields "
	                    "timestamp,index,power.draw,temperature.gpu  nvidia-smi's CSV\n"
	                    "gpuscope watch -c 10 -d 500ms  ten samples, twice a second\n"
	                    "gpuscope watch --format ndjson --findings  JSON lines with doctor's "
	                    "findings",
	        .see_also = "gpuscope(1), gpuscope-query(1), gpuscope-record(1), nvidia-smi(1)",
	},
	{
	        .name = "record",
	        .summary = "the flight recorder: every sample kept in a file that survives a crash",
	        .synopsis = "[-o FILE] [-d SEC] [-c COUNT] [--max-size SIZE] [--keep N] "
	                    "[-i ID,...] [--no-processes] [--quiet]",
	        .description =
	                "Every sample (GPUs and processes, every field) is appended to a compact "
	                "file (gpuscope.rec unless -o names one) until SIGINT, SIGTERM or "
	                "SIGHUP, or for --count samples.\n"
	                "\n"
	                "Each record is written whole with one write and checked by a CRC on "
	                "reading, so a crash or a power cut loses at most the record being "
	                "written: a torn last record is dropped on reading and cut off before "
	                "the next append, and everything before it is kept.\n"
	                "\n"
	                "The file is rotated to FILE.1, FILE.2 ... when it would pass --max-size "
	                "(64 MiB), keeping --keep files in all (4). About 1 to 2 KiB per sample "
	                "of 8 GPUs and 50 processes. An existing file that is not a recording is "
	                "refused, never overwritten. The format is described in "
	                "docs/record-format.md.",
	        .options = record_options,
	        .examples = "gpuscope record -o /var/log/gpu.rec --max-size 256M &  record in "
	                    "the background\n"
	                    "gpuscope record -c 60 -d 1 -o minute.rec  one minute\n"
	                    "gpuscope record --no-processes -i 0  GPU 0 alone, without processes",
	        .see_also = "gpuscope(1), gpuscope-replay(1), gpuscope-doctor(1)",
	},
	{
	        .name = "replay",
	        .summary = "feed a recording to top, watch, status or record",
	        .synopsis = "FILE [top|watch|status|record|info] [--speed N] [--from TIME | --at "
	                    "TIME] [options of the command]",
	        .description =
	                "Feed a recording (with its rotated files, oldest first) to top (the "
	                "default; paced as recorded), watch, status or record (as fast as they "
	                "read), or print what it holds with info. The first operand is the "
	                "FILE, the second one of top, watch, status, record or info; the "
	                "command's own options follow its name.\n"
	                "\n"
	                "--speed changes the pace, --from the start, and --at (which implies "
	                "status) shows the machine at a moment: the last sample at or before "
	                "TIME.\n"
	                "\n"
	                "TIME is seconds since the epoch, a local date and time "
	                "(2026-11-30T03:12[:SS], with Z for UTC), a time of day (03:12[:SS]; the "
	                "last such moment in the recording), or a duration before the end (-10m) "
	                "or after the start (+90s).",
	        .options = replay_options,
	        .operand = CLI_FILE,
	        .operand_choices = "top,watch,status,record,info",
	        .examples = "gpuscope replay /var/log/gpu.rec status --at 03:12  the machine at "
	                    "03:12\n"
	                    "gpuscope replay /var/log/gpu.rec --from -10m --speed 10  top, the "
	                    "last 10 minutes, ten times as fast\n"
	                    "gpuscope replay gpu.rec info  what the recording holds\n"
	                    "gpuscope replay gpu.rec watch --format csv  every sample as CSV",
	        .see_also = "gpuscope(1), gpuscope-record(1), gpuscope-top(1), gpuscope-watch(1)",
	},
	{
	        .name = "doctor",
	        .summary = "is this machine set up right for GPU work, and are its GPUs well",
	        .synopsis = "[--json] [--log FILE] [--watch SEC [-d SEC]] [--recording FILE "
	                    "[--since TIME]] [--only CHECK,...] [--skip ID,...] [--fail-on "
	                    "error|warning] | --explain ID | --list",
	        .description =
	                "Is this machine set up right for GPU work? Every finding has a stable id "
	                "(such as setup.torch.cpu_only), a severity (ok, info, warning, error), "
	                "its evidence, what it means and what to do, software causes before "
	                "hardware.\n"
	                "\n"
	                "It checks, without starting Python or any other program, the kernel "
	                "driver bound to each GPU, the NVIDIA module against its library, "
	                "persistence, compute and MIG modes, CUDA_VISIBLE_DEVICES, device node "
	                "access, containers, the CUDA toolkits and the PyTorch, TensorFlow, JAX "
	                "and CuPy builds against the driver, rendering and video engines.\n"
	                "\n"
	                "Then the GPUs' health (throttling, temperatures, PCIe link, ECC, retired "
	                "pages, row remapping, lost GPUs), the kernel log (NVIDIA Xid, amdgpu, "
	                "i915 and xe, PCIe AER; storms counted once) and, over a window of "
	                "samples, workload patterns (a GPU starved by its input, idle memory "
	                "holders, memory leaks, possible miners).\n"
	                "\n"
	                "With --root, doctor reads /dev, /etc, /usr and the home and Python "
	                "directories under DIR too.",
	        .options = doctor_options,
	        .exit_status = "0 nothing worse than a note; 1 a warning; 2 an error; 3 doctor "
	                       "could not run (a usage error, or its report could not be "
	                       "written). With --fail-on error, warnings exit 0.",
	        .examples =
	                "gpuscope doctor  what is wrong with this set-up\n"
	                "gpuscope doctor --json | jq '.findings[] | select(.severity != "
	                "\"ok\")'  the findings worse than ok\n"
	                "gpuscope doctor --explain setup.torch.cpu_only  one finding at length\n"
	                "gpuscope doctor --log <(journalctl -k)  judge a kernel log\n"
	                "gpuscope doctor --watch 60  sample a minute first, for the workload",
	        .see_also = "gpuscope(1), gpuscope-record(1), gpuscope-serve(1), dmesg(1)",
	},
	{
	        .name = "serve",
	        .summary = "a Prometheus exporter and a live web page",
	        .synopsis = "[--listen ADDR] [--web-config FILE] [-d SEC] [--processes N] "
	                    "[--doctor-interval SEC] [--max-connections N] [--connection-timeout "
	                    "SEC] [--user NAME] [--names gpuscope|dcgm] [-i ID,...] | "
	                    "--hash-password",
	        .description =
	                "A Prometheus exporter and a live web page, for every vendor gpuscope "
	                "reads. The GPUs are sampled every -d seconds on a thread of their own, "
	                "and every response is prepared from the last sample, so a scrape never "
	                "waits for a GPU.\n"
	                "\n"
	                "Paths: /metrics (Prometheus text format, or OpenMetrics when the Accept "
	                "header prefers it; docs/metrics.md), /api/v1/status (the document of "
	                "status --json), /api/v1/findings (doctor's report on the GPUs), /healthz "
	                "(200 while samples keep coming, 503 when they stop) and / (a web page "
	                "with charts of every GPU and the process table).\n"
	                "\n"
	                "It listens on 127.0.0.1:9947 unless --listen says otherwise. TLS and "
	                "basic auth come from --web-config, a file in the format of Prometheus's "
	                "exporters; the hash of a password is what 'gpuscope serve "
	                "--hash-password' prints for the password on its standard input.\n"
	                "\n"
	                "serve loads libmicrohttpd (libmicrohttpd.so.12) when it starts; without "
	                "it serve stops with one line saying so and exit status 3. docs/serve.md "
	                "describes it all.",
	        .options = serve_options,
	        .examples = "gpuscope serve  on 127.0.0.1:9947\n"
	                    "gpuscope serve --listen :9947 --web-config /etc/gpuscope/web.yml  "
	                    "every address, with TLS and basic auth\n"
	                    "echo 'the password' | gpuscope serve --hash-password  a hash for "
	                    "basic_auth_users\n"
	                    "gpuscope serve --names dcgm  dcgm-exporter's metric names",
	        .see_also = "gpuscope(1), gpuscope-status(1), gpuscope-doctor(1), prometheus(1)",
	},
	{ .name = NULL },
};
