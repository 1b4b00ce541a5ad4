#!/bin/sh
# gpuscope fit and gpuscope specs end to end: impossible inputs are refused
# with one line and exit 2; with the model catalog and the spec table built
# in, a small model fits an H100 (exit 0), a 405B one does not fit a 4090
# (exit 1), --rent finds GPUs, --json parses, the demo's GPUs are judged, and
# specs shows consumer cards' cut FP64 rate. Issue 17's contract: every new
# option and each of its errors (one line naming the option and what it
# takes, exit 2), the headline (QLoRA of Llama 2 7B fits an RTX 4090 of 24564
# MiB), checkpointing as the trainer defaults to, trainers, pure bf16, offload
# against a fixture /proc/meminfo, quantisation formats and KV types, engines
# (the range, one engine, TP, MoE, llama.cpp's layer split and memory),
# serving capacity, the JSON keys and their types, --rent's prices with the
# built-in table, a good, an old, a dateless and a malformed --prices file.
# The catalog and the table are built in: a model or GPU they lack is a
# failure, not a skip. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP needs $bin"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# a case that needs a tool CI installs: a skip, a failure under GPUSCOPE_NO_SKIP=1
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
# run: expected exit status, then the command; output in $tmp/out, $tmp/err
expect() {
	want=$1 what=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else not_ok "$what: exit $rc, wanted $want" "$tmp/out" "$tmp/err"; fi
}
one_line() { # the error is one line starting "gpuscope: "
	if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^gpuscope: ' "$tmp/err"; then ok "$1: one line on stderr"; else not_ok "$1: not one error line" "$tmp/err"; fi
}
json_ok() { # the output is one JSON document
	if command -v python3 >/dev/null 2>&1; then
		if python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["schema"] == sys.argv[2]' "$tmp/out" "$1" 2>"$tmp/jerr"; then
			ok "valid JSON, schema $1"
		else
			not_ok "not valid JSON of schema $1" "$tmp/jerr" "$tmp/out"
		fi
	else
		skip_missing "python3 is not here to parse JSON"
	fi
}

# 1. impossible inputs: one line, exit 2 (checked before the model is looked up)
for case in "--gpus 0|--gpus 0" "--task full --gpus 4 --zero 2 --fsdp|--zero with --fsdp" \
	"--lora-rank 16|--lora-rank without lora" "--task full --lora-rank 16|--lora-rank with full" \
	"--precision fp6|unknown precision" "--ctx -1|negative ctx" "--ctx 0|ctx 0" "--batch 0|batch 0" \
	"--task pretrain|unknown task" "--task full --zero 3|--zero on one GPU" "--zero 4 --task full --gpus 2|ZeRO stage 4" \
	"--task full --precision int4|full training of int4" "--task qlora --precision bf16|qlora on bf16" \
	"--checkpointing|checkpointing for inference" "--optimizer sgd|optimizer for inference" \
	"--tokens -5|negative tokens" "--gpu h100 --rent|--gpu with --rent"; do
	args=${case%%|*} what=${case#*|}
	# shellcheck disable=SC2086
	expect 2 "refused: $what" "$bin" fit 7b $args
	one_line "$what"
done
expect 2 "refused: no MODEL" "$bin" fit
one_line "no MODEL"
expect 2 "refused: a model that is nothing" "$bin" fit no-such-model-xyz
one_line "unknown model"
expect 0 "fit --help" "$bin" fit --help
expect 0 "specs --help" "$bin" specs --help

# 2. with the catalog and the table
have_model() { "$bin" fit "$1" --json >/dev/null 2>&1 || [ $? -eq 1 ]; }
have_gpu() { "$bin" specs "$1" 2>/dev/null | grep -q .; }
if have_model 8b && have_gpu "h100 sxm"; then
	expect 0 "an 8B model fits an H100" "$bin" fit 8b --gpu "h100 sxm" --tokens 1e6
	grep -q 'decode' "$tmp/out" && grep -q 'KV cache' "$tmp/out" && ok "the table has memory lines and speed" ||
		not_ok "no memory lines or speed" "$tmp/out"
	expect 0 "--json" "$bin" fit 8b --gpu "h100 sxm" --json
	json_ok gpuscope.fit/1
	expect 0 "training, ZeRO-3 on 8 H100" "$bin" fit 8b --task full --gpus 8 --zero 3 --checkpointing --gpu "h100 sxm" --json
	json_ok gpuscope.fit/1
	expect 0 "qlora --json" "$bin" fit 8b --task qlora --lora-rank 16 --gpu "h100 sxm" --json
else
	not_ok "the catalog has no 8b size or the table no H100 SXM"
fi
if have_model 405b && have_gpu "rtx 4090"; then
	expect 1 "a 405B model does not fit a 4090" "$bin" fit 405b --gpu "rtx 4090"
	grep -q 'does not fit' "$tmp/out" && ok "and says so" || not_ok "no 'does not fit'" "$tmp/out"
else
	not_ok "the catalog has no 405b size or the table no RTX 4090"
fi
if have_model 7b && [ -n "$("$bin" specs --json 2>/dev/null | grep '"name"')" ]; then
	expect 0 "--rent" "$bin" fit 7b --task lora --rent
	grep -q 'to rent' "$tmp/out" && ok "--rent lists GPUs" || not_ok "--rent lists nothing" "$tmp/out"
	expect 0 "--rent --json" "$bin" fit 70b --rent --json
	json_ok gpuscope.fit/1
	expect 2 "--gpu with an unknown name" "$bin" fit 7b --gpu "no such gpu 9000"
	one_line "unknown --gpu"
	# the demo's eight simulated H100s: 7B fits
	expect 0 "--demo: 7B inference fits the simulated H100" "$bin" --demo fit 7b
	grep -q 'fits on' "$tmp/out" && ok "the demo's GPUs are judged" || not_ok "no verdict on the demo" "$tmp/out"
else
	not_ok "the catalog has no 7b size or the spec table is empty"
fi
# no GPU here: a breakdown, exit 0
if have_model 7b; then
	expect 0 "no GPU: the breakdown only" env GPUSCOPE_NVML=/nonexistent GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty "$bin" fit 7b
else
	not_ok "the catalog has no 7b size"
fi

# 3. specs
if "$bin" specs --json 2>/dev/null | grep -q '"name"'; then
	expect 0 "specs" "$bin" specs
	expect 0 "specs --json" "$bin" specs --json
	json_ok gpuscope.specs/1
	if have_gpu "rtx 4090"; then
		expect 0 "specs 4090" "$bin" specs "rtx 4090"
		grep -q '1:64' "$tmp/out" && ok "a consumer card's FP64 rate is 1:64" || not_ok "no 1:64 for the 4090" "$tmp/out"
	else
		not_ok "the table has no RTX 4090"
	fi
	expect 2 "specs of nothing" "$bin" specs "zzz no such gpu"
	one_line "specs of nothing"
else
	not_ok "the spec table is empty"
fi
# a training job that does not fit says what checkpointing would need; a vendor or
# architecture selects rows of the spec table
if have_gpu "rtx 4090"; then
	"$bin" fit llama-3.1-8b --task qlora --no-checkpointing --gpu "rtx 4090" >"$tmp/out" 2>&1
	if grep -q '^with --checkpointing: [0-9.]* GiB per GPU' "$tmp/out"; then
		ok "qlora 8B on a 4090 without checkpointing: the checkpointed need is shown"
	else
		not_ok "the --checkpointing hint" "$tmp/out"
	fi
	"$bin" fit llama-3.1-8b --task qlora --gpu "rtx 4090" >"$tmp/out" 2>&1
	if ! grep -q '^with --checkpointing' "$tmp/out" && grep -q ' fits ' "$tmp/out"; then
		ok "... and with checkpointing, qlora's default, it fits, with no hint"
	else
		not_ok "qlora 8B with --checkpointing on a 4090" "$tmp/out"
	fi
else
	not_ok "the table has no RTX 4090 (the --checkpointing hint)"
fi
if "$bin" specs hopper >"$tmp/out" 2>&1 && grep -q 'H100' "$tmp/out" && ! grep -q 'A100' "$tmp/out"; then
	ok "specs hopper: the Hopper rows only"
else
	not_ok "specs by architecture" "$tmp/out"
fi

# 4. issue 17: the options of the contract, their errors and their figures
# every bad value: one line naming the option (and what it takes), exit 2
for case in "--trainer deepspeed|--trainer 'deepspeed': hf, llama-factory, unsloth, axolotl or torchtune" \
	"--task lora --offload gpu|--offload 'gpu': optimizer, params or all" \
	"--kv-cache int3|--kv-cache 'int3': fp16" "--engine tgi|--engine 'tgi': " \
	"--precision q9_k|--precision 'q9_k': fp32, bf16, fp16, fp8, int8, int4, q2_k" \
	"--quant nf5|--precision 'nf5': " \
	"--gpu-memory-utilization 0|--gpu-memory-utilization '0': a share" \
	"--gpu-memory-utilization 1.5|--gpu-memory-utilization '1.5': a share" \
	"--gpu-memory-utilization x|--gpu-memory-utilization 'x': a share" \
	"--block-size 0|--block-size '0': a whole number" "--block-size 4096|--block-size '4096': a whole number" \
	"--max-num-batched-tokens 0|--max-num-batched-tokens '0': a whole number" "--max-num-seqs 1.5|--max-num-seqs '1.5': a whole number" \
	"--task lora --max-num-seqs 8|--max-num-seqs is for inference" "--task full --max-num-batched-tokens 8k|--max-num-batched-tokens is for inference" \
	"--precision awq --group-size 0|--group-size '0': a whole number" \
	"--group-size 128|--group-size is for --precision awq or gptq" \
	"--trainer hf|--trainer is for training" "--pure-bf16|--pure-bf16 is for training" \
	"--compile|--compile is for training" \
	"--offload optimizer|--offload is for training" "--task full --offload params|--offload params moves sharded parameters: give --zero 3 or --fsdp" \
	"--task full --zero 2|--zero shards over several GPUs: give --gpus 2 or more (or --offload on one GPU)" "--no-checkpointing|--no-checkpointing is for training" \
	"--task lora --checkpointing --no-checkpointing|--checkpointing and --no-checkpointing: one or the other" \
	"--task lora --kv-cache fp8|--kv-cache is for inference" "--task full --engine vllm|--engine is for inference" \
	"--task qlora --gpu-memory-utilization 0.8|--gpu-memory-utilization is for inference" \
	"--task lora --block-size 32|--block-size is for inference" \
	"--prices /dev/null|--prices FILE goes with --rent"; do
	args=${case%%|*} msg=${case#*|}
	# shellcheck disable=SC2086
	expect 2 "refused: $args" "$bin" fit 7b $args
	one_line "$args"
	grep -qF -- "$msg" "$tmp/err" && ok "$args: the message says '$msg'" || not_ok "$args: no '$msg'" "$tmp/err"
done
"$bin" fit 7b --engine tgi 2>"$tmp/err" >/dev/null
for e in vllm sglang trt-llm llama.cpp transformers gpt-fast exllamav2; do
	grep -qF "$e" "$tmp/err" || not_ok "--engine's error does not list $e" "$tmp/err"
done
ok "--engine's error lists the engines"

# JSON of a job into $tmp/j.json; jq-less checks with python3
fitj() { "$bin" fit "$@" --json >"$tmp/j.json" 2>"$tmp/err"; }
py() { # py WHAT SCRIPT: the script asserts on d (the JSON of $tmp/j.json), d2 ($tmp/j2.json)
	if ! command -v python3 >/dev/null 2>&1; then skip_missing "python3 is not here to parse JSON"; return; fi
	what=$1; shift
	if python3 -c "import json, sys
d = json.load(open('$tmp/j.json'))
try:
    d2 = json.load(open('$tmp/j2.json'))
except Exception:
    d2 = None
$1" 2>"$tmp/perr"; then ok "$what"; else not_ok "$what" "$tmp/perr"; fi
}

# the headline: QLoRA of Llama 2 7B on a 24 GB card fits, the card is 24 GiB (24564 MiB)
expect 0 "llama-2-7b qlora fits an RTX 4090" "$bin" fit llama-2-7b --task qlora --gpu "RTX 4090"
grep -q '^RTX 4090 .* 23\.99 .* fits ' "$tmp/out" && ok "the 4090 is 23.99 GiB and it fits" || not_ok "no 23.99 GiB fits" "$tmp/out"
grep -q '24564 MiB total' "$tmp/out" && ok "... 24564 MiB total, as nvidia-smi shows" || not_ok "no 24564 MiB" "$tmp/out"
grep -qF "checkpointing on (the trainer's default for qlora; --no-checkpointing)" "$tmp/out" &&
	ok "qlora: checkpointing on by default, said so" || not_ok "the default checkpointing is not said" "$tmp/out"
for w in 'not quantised' 'logits' 'dequantisation'; do
	grep -q "^  $w " "$tmp/out" && ok "qlora: a '$w' line" || not_ok "qlora: no '$w' line" "$tmp/out"
done
grep -q 'prepare_model_for_kbit_training' "$tmp/out" && ok "the upcast is said with its source" || not_ok "no prepare_model_for_kbit_training" "$tmp/out"
fitj llama-2-7b --task qlora --gpu "RTX 4090"
py "headline JSON: fits, total 24564 MiB, usable below it, checkpointing by default" '
t = d["targets"][0]
assert d["fits"] is True and t["fits"] is True, t
assert t["memory_total_bytes"] == 24564 * 1048576, t
assert 0 < t["memory_usable_bytes"] < t["memory_total_bytes"], t
assert d["job"]["checkpointing"] is True and d["job"]["checkpointing_default"] is True, d["job"]
assert d["serving"] is None and d["speed"]["engine"] is None and d["speed"]["decode_tokens_per_s"] is None
assert d["memory"]["logits_bytes"] > 0 and d["memory"]["logits_bytes"] < d["memory"]["total_bytes"]'
expect 1 "full: checkpointing off by default (and 7B does not fit one H100)" "$bin" fit 7b --task full --gpu "h100 sxm"
grep -qF "checkpointing off (the trainer's default for full; --checkpointing)" "$tmp/out" &&
	ok "full: off by default, said so" || not_ok "full's default not said" "$tmp/out"
expect 0 "lora --no-checkpointing" "$bin" fit 7b --task lora --no-checkpointing --gpu "h100 sxm"
grep -qF "checkpointing off (as asked)" "$tmp/out" && ok "as asked" || not_ok "no 'as asked'" "$tmp/out"
fitj 7b --task lora --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj 7b --task lora --no-checkpointing --gpu "h100 sxm"
py "--no-checkpointing keeps more activations than lora's default" '
assert d["memory"]["activations_bytes"] > d2["memory"]["activations_bytes"], (d["memory"], d2["memory"])
assert d["job"]["checkpointing"] is False and d["job"]["checkpointing_default"] is False'

# --trainer: unsloth's fused cross-entropy keeps less of the logits than HF's
fitj llama-3.1-8b --task qlora --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --task qlora --trainer unsloth --gpu "h100 sxm"
py "--trainer unsloth: smaller logits than hf" '
assert 0 < d["memory"]["logits_bytes"] < d2["memory"]["logits_bytes"], (d["memory"], d2["memory"])
assert d["job"]["trainer"] == "unsloth" and d2["job"]["trainer"] == "hf"'

# --compile: the fused loss keeps 16-bit logits, a quarter of torchtune's chunked fp32 rule
fitj llama-3.1-8b --task lora --trainer torchtune --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --task lora --trainer torchtune --compile --gpu "h100 sxm"
py "--compile: 2.75 of 6.5 bytes a token x vocab, said in the job" '
r = d["memory"]["logits_bytes"] / d2["memory"]["logits_bytes"]
assert abs(r - 2.75 / 6.5) < 1e-6, r
assert d["job"]["compile"] is True and d2["job"]["compile"] is False'
expect 0 "--compile: the logits line says why" "$bin" fit llama-3.1-8b --task qlora --compile --gpu "h100 sxm"
grep -q "torch.compile fuses the loss" "$tmp/out" && ok "compiled loss said" || not_ok "no compiled loss line" "$tmp/out"
for t in llama-factory axolotl torchtune; do
	expect 0 "--trainer $t" "$bin" fit 7b --task lora --trainer $t --gpu "h100 sxm"
	grep -q "trainer $t" "$tmp/out" && ok "--trainer $t is in the heading" || not_ok "no trainer $t" "$tmp/out"
done
# --pure-bf16: no fp32 master, 16-bit states
fitj 7b --task full --gpus 8 --zero 3 --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj 7b --task full --gpus 8 --zero 3 --pure-bf16 --gpu "h100 sxm"
py "--pure-bf16: fewer optimizer bytes" '
assert 0 < d["memory"]["optimizer_bytes"] < d2["memory"]["optimizer_bytes"], (d["memory"], d2["memory"])
assert d["job"]["pure_bf16"] is True'

# --offload: host memory, checked against this machine's RAM (a fixture /proc/meminfo)
mkdir -p "$tmp/small" "$tmp/big" "$tmp/none"
printf 'MemTotal:        8000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\n' >"$tmp/small/meminfo"
printf 'MemTotal:     2000000000 kB\nMemFree:      1000000000 kB\nMemAvailable: 1500000000 kB\n' >"$tmp/big/meminfo"
expect 1 "--offload optimizer in 8 GB of RAM does not fit" env GPUSCOPE_PROC_ROOT="$tmp/small" "$bin" fit 7b --task full --offload optimizer --gpu "h100 sxm"
grep -q '^host memory: [0-9.]* GiB needed, this machine has 7\.63 GiB (3\.81 available): does not fit in RAM' "$tmp/out" &&
	ok "the verdict line on RAM" || not_ok "no RAM verdict" "$tmp/out"
grep -q '^  host memory ' "$tmp/out" && ok "a host memory line" || not_ok "no host memory line" "$tmp/out"
expect 0 "--offload optimizer in 1.9 TB of RAM fits" env GPUSCOPE_PROC_ROOT="$tmp/big" "$bin" fit 7b --task full --offload optimizer --gpu "h100 sxm"
grep -q '^host memory: .*: fits$' "$tmp/out" && ok "fits in RAM, said" || not_ok "no 'fits' for RAM" "$tmp/out"
expect 0 "--offload with no meminfo: not judged" env GPUSCOPE_PROC_ROOT="$tmp/none" "$bin" fit 7b --task full --offload all --zero 3 --gpu "h100 sxm"
grep -q "RAM could not be read" "$tmp/out" && ok "unreadable RAM is said" || not_ok "unreadable RAM not said" "$tmp/out"
GPUSCOPE_PROC_ROOT="$tmp/small" "$bin" fit 7b --task full --offload all --zero 3 --gpu "h100 sxm" --json >"$tmp/j.json" 2>"$tmp/err"
cp "$tmp/j.json" "$tmp/j2.json"
fitj 7b --task full --gpu "h100 sxm"
py "--offload all: host bytes, less on the GPU, the RAM in JSON" '
assert d2["memory"]["host_bytes"] > 0 and d["memory"]["host_bytes"] == 0
assert d2["memory"]["total_bytes"] < d["memory"]["total_bytes"]
assert d2["host"]["ram_total_bytes"] == 8000000 * 1024 and d2["host"]["fits"] is False and d2["fits"] is False
assert d["host"] is None and d2["job"]["offload"] == "all"'

# quantisation formats: GGUF, AWQ/GPTQ with group size; --quant is --precision
fitj llama-3.1-8b --precision q4_k_m --gpu "rtx 4090"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --quant q4_k_m --gpu "rtx 4090"
py "--quant is --precision" '
for x in (d, d2):
    if x["host"]:  # llama.cpp keeps the token embeddings in host memory: RAM now is not the same twice
        x["host"].pop("ram_available_bytes")
assert d == d2'
fitj llama-3.1-8b --precision bf16 --gpu "rtx 4090"
py "q4_k_m weighs between 4.5 and 5.5 bits a weight, under bf16" '
q = d2["memory"]["weights_bytes"] + d2["memory"]["quantization_bytes"] + d2["memory"]["unquantized_bytes"]
b = d["memory"]["weights_bytes"]
assert 4.5 / 16 < q / b < 5.5 / 16, (q, b, q / b * 16)
assert d2["job"]["precision"] == "q4_k_m"'
for f in q2_k q3_k_m q4_0 q4_k_s q5_0 q5_k_s q5_k_m q6_k q8_0 awq gptq nf4 fp8 nvfp4 mxfp4 Q4_K_M; do
	expect 0 "--precision $f" "$bin" fit llama-3.1-8b --precision "$f" --gpu "h100 sxm"
done
fitj llama-3.1-8b --precision awq --group-size 32 --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --precision awq --gpu "h100 sxm"
py "awq group 32 weighs more than group 128" '
s = lambda x: x["memory"]["weights_bytes"] + x["memory"]["quantization_bytes"]
assert s(d2) > s(d), (s(d2), s(d))
assert d["job"]["group_size"] == 128 and d2["job"]["group_size"] == 32'

# --kv-cache: bytes per token at the cache's type
fitj llama-3.1-8b --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --kv-cache fp8 --gpu "h100 sxm"
py "--kv-cache fp8 halves the KV bytes per token" '
assert d["model"]["kv_bytes_per_token"] * 2 == d2["model"]["kv_bytes_per_token"] == 131072, (d["model"], d2["model"])
assert d["job"]["kv_cache"] == "fp8"'
fitj llama-3.1-8b --kv-cache q4_0 --gpu "h100 sxm"
py "--kv-cache q4_0: 18 bytes per 32 values" 'assert abs(d["model"]["kv_bytes_per_token"] - 131072 / 2 * 18 / 32) < 1, d["model"]'
for kv in fp16 bf16 q8_0; do expect 0 "--kv-cache $kv" "$bin" fit llama-3.1-8b --kv-cache $kv --gpu "h100 sxm"; done

# speed: without --engine the range and its middle; with it that engine and its source
expect 0 "the range of engines" "$bin" fit llama-3.1-8b --gpu "h100 sxm"
grep -qE '^  decode +[0-9.]+-[0-9.]+ tokens/s per sequence \([a-z.-]+ \.\. [a-z.-]+\), middle [0-9.]+' "$tmp/out" &&
	ok "decode as a range with its engines" || not_ok "no decode range" "$tmp/out"
grep -qE '^  prefill +[0-9]+-[0-9]+ tokens/s' "$tmp/out" && ok "prefill as a range" || not_ok "no prefill range" "$tmp/out"
fitj llama-3.1-8b --gpu "h100 sxm"
py "JSON speed: no engine, low <= middle <= high" '
s = d["speed"]
assert s["engine"] is None
assert 0 < s["decode_tokens_per_s_low"] <= s["decode_tokens_per_s"] <= s["decode_tokens_per_s_high"], s
assert 0 < s["prefill_tokens_per_s_low"] <= s["prefill_tokens_per_s"] <= s["prefill_tokens_per_s_high"], s'
for e in vllm sglang trt-llm llama.cpp transformers gpt-fast exllamav2 ollama; do
	expect 0 "--engine $e" "$bin" fit llama-3.1-8b --engine $e --gpu "h100 sxm"
	grep -qE '^  decode +[0-9.]+ tokens/s per sequence' "$tmp/out" && grep -q '(profile: ' "$tmp/out" &&
		ok "--engine $e: its decode and its source" || not_ok "--engine $e: no decode or source" "$tmp/out"
done
fitj llama-3.1-8b --engine ollama --gpu "h100 sxm"
py "--engine ollama is llama.cpp, in the range" '
s = d["speed"]
assert s["engine"] == "llama.cpp" and s["engine_source"], s
assert d["serving"]["speed_engine"] == "llama.cpp" and d["serving"]["engine"] == "vllm"'
fitj llama-3.1-8b --engine sglang --gpu "h100 sxm"
py "--engine sglang: its own pool formula" '
assert d["serving"]["engine"] == "sglang" and d["serving"]["speed_engine"] == "sglang"'
# TP cost and MoE experts
expect 0 "70B on 4 GPUs" "$bin" fit llama-3.1-70b --gpus 4 --gpu "h100 sxm"
grep -qE '^  tensor parallel over 4 GPUs: 2 all-reduces a layer .* ms a step' "$tmp/out" && ok "the TP cost line" || not_ok "no TP line" "$tmp/out"
fitj llama-3.1-70b --gpus 4 --gpu "h100 sxm"
py "JSON: TP communication per step" 'assert d["speed"]["tp_comm_s_per_step"] > 0, d["speed"]'
expect 0 "Mixtral at batch 8" "$bin" fit mixtral-8x7b --batch 8 --gpus 2 --gpu "h100 sxm"
grep -qE '^  MoE: a step of 8 sequences touches [0-9]+ % of each layer.s 8 routed experts' "$tmp/out" && ok "the MoE line" || not_ok "no MoE line" "$tmp/out"
expect 0 "Mixtral at batch 1" "$bin" fit mixtral-8x7b --gpus 2 --gpu "h100 sxm"
grep -q '^  MoE:' "$tmp/out" && not_ok "a MoE line at batch 1" "$tmp/out" || ok "no MoE line at batch 1"

# serving capacity as vLLM allocates it
expect 0 "serving capacity" "$bin" fit llama-3.1-8b --ctx 8192 --gpu "h100 sxm"
grep -qE '^  KV cache: [0-9]+ tokens = [0-9]+ sequences of 8192 tokens \(vllm, gpu_memory_utilization 0\.9, block 16\); [0-9]+ tokens/s in all at that batch' "$tmp/out" &&
	ok "the serving line" || not_ok "no serving line" "$tmp/out"
fitj llama-3.1-8b --ctx 8192 --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --ctx 8192 --gpu "h100 sxm" --gpu-memory-utilization 0.5 --block-size 32
py "serving: less pool at 0.5, blocks of 32" '
a, b = d2["serving"], d["serving"]
assert a["engine"] == "vllm" and a["gpu_memory_utilization"] == 0.9 and a["block_size"] == 16
assert 0 < b["kv_cache_tokens"] < a["kv_cache_tokens"] and b["kv_cache_tokens"] % 32 == 0, (a, b)
assert b["max_concurrent_seqs"] == min(256, b["kv_cache_tokens"] // 8192), b
assert a["aggregate_tokens_per_s"] > d2["speed"]["decode_tokens_per_s"]'

# JSON keys of the contract, present and typed
fitj llama-3.1-8b --engine vllm --gpu "h100 sxm"
py "the contract keys, typed" '
num = (int, float)
m, t, s, v = d["memory"], d["targets"][0], d["speed"], d["serving"]
for k in ("total_bytes", "activations_bytes", "logits_bytes", "kv_cache_bytes", "weights_bytes", "host_bytes"):
    assert isinstance(m[k], num), k
assert isinstance(d["model"]["kv_bytes_per_token"], num)
for k in ("max_ctx", "max_batch", "memory_total_bytes", "memory_usable_bytes"):
    assert isinstance(t[k], num), k
assert isinstance(t["fits"], bool)
for k in ("decode_tokens_per_s", "decode_tokens_per_s_low", "decode_tokens_per_s_high", "prefill_tokens_per_s",
          "prefill_tokens_per_s_low", "prefill_tokens_per_s_high"):
    assert isinstance(s[k], num), k
assert s["engine"] == "vllm" and "train_tokens_per_s" in s
assert v["engine"] == "vllm"
for k in ("kv_cache_tokens", "max_concurrent_seqs", "aggregate_tokens_per_s"):
    assert isinstance(v[k], num), k'
fitj 7b --task full --gpus 8 --zero 3 --gpu "h100 sxm"
py "training: train_tokens_per_s a number, serving null" '
assert isinstance(d["speed"]["train_tokens_per_s"], (int, float)) and d["serving"] is None'

# --rent with prices: the built-in table, a good file, a malformed one
expect 0 "--rent with prices" "$bin" fit llama-3.1-8b --rent
grep -q 'cheapest per hour first' "$tmp/out" && grep -q ' \$/h ' "$tmp/out" && grep -q '\$/Mtok' "$tmp/out" &&
	ok "--rent prices per hour and per million tokens" || not_ok "no prices" "$tmp/out"
grep -q '^prices: the built-in table (data/prices/prices.tsv), on-demand offers, newest of [0-9-]*' "$tmp/out" &&
	ok "the table's source and date" || not_ok "no table source/date" "$tmp/out"
fitj llama-3.1-8b --rent --tokens 1e9
py "rent JSON: priced rows cheapest per hour first, per Mtok and per run" '
r = [x for x in d["rent"]["single"] if x["price_per_hour"] is not None]
assert r, d["rent"]
h = [x["price_per_hour"] for x in r]
assert h == sorted(h), h
assert all(x["price_per_mtok"] > 0 and x["price_per_run"] > 0 for x in r), r
assert d["rent"]["prices"]["origin"] and d["rent"]["prices"]["old"] in (True, False)'
printf '# mine\ngpu\tusd_per_gpu_hour\tgpus\tprovider\tkind\tdate\tsource\tnotes\nRTX 4090\t0.30\t1\tUs\treserved\t2025-01-01\t\tour contract\nH100 SXM5 80GB\t1.00\t1\tUs\treserved\t2025-01-01\t\t\n' >"$tmp/prices.tsv"
expect 0 "--prices FILE" "$bin" fit llama-3.1-8b --rent --prices "$tmp/prices.tsv"
grep -q '^  1 x RTX 4090 .* 0\.30 \$/h Us ' "$tmp/out" && ok "the file's price, cheapest first" || not_ok "not the file's prices" "$tmp/out"
grep -q "note: the prices are [0-9]* days old" "$tmp/out" && ok "an old file is said to be old" || not_ok "no old note" "$tmp/out"
printf 'gpu\tusd_per_gpu_hour\tgpus\tprovider\tkind\tdate\tsource\tnotes\nRTX 4090\tcheap\t1\tUs\ton-demand\t2025-01-01\t\t\n' >"$tmp/bad.tsv"
expect 2 "--prices: a malformed file" "$bin" fit llama-3.1-8b --rent --prices "$tmp/bad.tsv"
one_line "--prices malformed"
grep -q 'bad.tsv' "$tmp/err" && grep -q ':2\|line 2' "$tmp/err" && ok "the error names the file and line" || not_ok "the error does not name file and line" "$tmp/err"
expect 2 "--prices: no such file" "$bin" fit llama-3.1-8b --rent --prices "$tmp/nothing.tsv"
one_line "--prices no such file"
expect 2 "--prices: a directory" "$bin" fit llama-3.1-8b --rent --prices "$tmp"
one_line "--prices a directory"
if command -v mkfifo >/dev/null 2>&1 && mkfifo "$tmp/fifo" 2>/dev/null; then
	expect 2 "--prices: a FIFO is refused without waiting" "$bin" fit llama-3.1-8b --rent --prices "$tmp/fifo"
	one_line "--prices a FIFO"
fi
printf 'gpu\tusd_per_gpu_hour\tgpus\tprovider\tkind\tdate\tsource\tnotes\nRTX 4090\t0.30\t1\tUs\treserved\t\t\t\n' >"$tmp/nodate.tsv"
expect 0 "--prices: a file without dates" "$bin" fit llama-3.1-8b --rent --prices "$tmp/nodate.tsv"
grep -q '^prices: .*nodate.tsv, all offers, no dates' "$tmp/out" && ! grep -q 'days old' "$tmp/out" &&
	ok "no dates: said, and never old" || not_ok "a file without dates" "$tmp/out"

# the catalog's other names, llama.cpp's layer split, training's framework share
"$bin" fit --list >"$tmp/out" 2>&1
grep -q '^Llama-3.1-8B .*(also DeepSeek-R1-Distill-Llama-8B' "$tmp/out" && ok "--list shows a row's other names" || not_ok "--list without aliases" "$tmp/out"
expect 0 "llama.cpp on 2 GPUs" "$bin" fit llama-3.1-8b --precision q4_k_m --gpus 2 --engine llama.cpp --gpu "rtx 4090"
grep -q '^  2 GPUs split the layers (llama.cpp): one after the other, no all-reduce' "$tmp/out" &&
	! grep -q '^  tensor parallel over' "$tmp/out" && ok "llama.cpp splits layers, no TP line" || not_ok "llama.cpp's split" "$tmp/out"
expect 0 "qlora: the framework share of training" "$bin" fit llama-3.1-8b --task qlora --gpu "h100 sxm"
grep -q '^  framework .* of activations and logits, .* of weights and states' "$tmp/out" && ok "the framework line says what it is a share of" || not_ok "framework line" "$tmp/out"
grep -q "^  logits .*the LM head's bf16 copy under autocast" "$tmp/out" && ok "the upcast LM head's copy is said" || not_ok "no LM head copy" "$tmp/out"
expect 0 "GGUF inference: the host memory line" "$bin" fit llama-3.1-8b --precision q4_k_m --gpu "rtx 4090"
grep -q '^  host memory .* the token embeddings: llama.cpp keeps the input layer in host memory' "$tmp/out" &&
	ok "llama.cpp's embeddings in host memory, said" || not_ok "llama.cpp's host memory" "$tmp/out"
# --engine vllm (a server that takes its share of the GPU up front): the verdict is its KV pool's
fitj llama-3.1-8b --engine vllm --ctx 8192 --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --ctx 8192 --gpu "h100 sxm"
py "--engine vllm: max_ctx and max_batch are the pool's; without it the memory model's" '
t, v = d2["targets"][0], d2["serving"]
assert t["judged_by_engine"] is True and t["fits"] is v["fits"] is True, (t, v)
assert t["max_ctx"] == min(v["kv_cache_tokens"], d2["model"]["max_ctx"]), (t, v)
assert t["max_batch"] == v["max_concurrent_seqs"], (t, v)
assert d["targets"][0]["judged_by_engine"] is False'
expect 0 "--engine llama.cpp: the memory model's verdict" "$bin" fit llama-3.1-8b --engine llama.cpp --gpu "h100 sxm"
grep -q '^(verdict, max batch and max ctx as' "$tmp/out" && not_ok "llama.cpp judged as a pool" "$tmp/out" || ok "llama.cpp allocates what it needs: no pool verdict"
# torchtune's chunked cross-entropy: less than HF's, more than unsloth's chunks
fitj llama-3.1-8b --task lora --trainer torchtune --gpu "h100 sxm"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --task lora --gpu "h100 sxm"
py "--trainer torchtune: smaller logits than hf" 'assert 0 < d2["memory"]["logits_bytes"] < d["memory"]["logits_bytes"], (d2["memory"], d["memory"])'
expect 0 "torchtune's logits line" "$bin" fit llama-3.1-8b --task lora --trainer torchtune --gpu "h100 sxm"
grep -q '^  logits .*CEWithChunkedOutputLoss' "$tmp/out" && ok "torchtune's loss is named" || not_ok "no CEWithChunkedOutputLoss" "$tmp/out"
# vLLM's profile run and batch cap
fitj llama-3.1-8b --engine vllm --ctx 20000 --gpu "rtx 3090"
cp "$tmp/j.json" "$tmp/j2.json"
fitj llama-3.1-8b --engine vllm --ctx 20000 --max-num-batched-tokens 20000 --max-num-seqs 1 --gpu "rtx 3090"
py "--max-num-batched-tokens shrinks the pool, --max-num-seqs caps the batch" '
assert 0 < d["serving"]["kv_cache_tokens"] < d2["serving"]["kv_cache_tokens"], (d["serving"], d2["serving"])
assert d["serving"]["max_concurrent_seqs"] == 1 and d2["serving"]["max_concurrent_seqs"] >= 1'
# training's longest context is not held to the model's
expect 0 "unsloth qlora of an 8B on 80 GB" "$bin" fit llama-3.1-8b --task qlora --trainer unsloth --lora-rank 32 --gpu "A100 SXM4 80GB"
grep -q "^(max ctx past the model's context of 131072" "$tmp/out" && ok "a max ctx past the model's is said" || not_ok "no past-context note" "$tmp/out"
fitj llama-3.1-8b --task qlora --trainer unsloth --lora-rank 32 --gpu "A100 SXM4 80GB"
py "training max_ctx past the model's" 'assert d["targets"][0]["max_ctx"] > d["model"]["max_ctx"], d["targets"]'
fitj llama-3.1-8b --gpu "A100 SXM4 80GB"
py "inference max_ctx at most the model's" 'assert d["targets"][0]["max_ctx"] == d["model"]["max_ctx"] == 131072, d["targets"]'
# llama.cpp's memory habits: a 512-token compute buffer, no allocator share, embeddings on the CPU
expect 0 "an 8B in f16 fits a 16 GB card under llama.cpp" "$bin" fit llama-3-8b --precision fp16 --engine llama.cpp --ctx 4096 --gpu "RTX 4080"
grep -q "^  activations .*llama.cpp's compute buffer: a 512-token ubatch" "$tmp/out" && ! grep -q '^  framework ' "$tmp/out" &&
	ok "llama.cpp: compute buffer, no framework line" || not_ok "llama.cpp's memory" "$tmp/out"
echo "1..$n"
[ "$fail" -eq 0 ]
