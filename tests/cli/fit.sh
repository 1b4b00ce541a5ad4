#!/bin/sh
# gpuscope fit and gpuscope specs end to end: impossible inputs are refused
# with one line and exit 2; with the model catalog and the spec table built
# in, a small model fits an H100 (exit 0), a 405B one does not fit a 4090
# (exit 1), --rent finds GPUs, --json parses, the demo's GPUs are judged, and
# specs shows consumer cards' cut FP64 rate. The catalog and the table are
# built in: a model or GPU they lack is a failure, not a skip. Prints TAP.
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
	"$bin" fit llama-3.1-8b --task qlora --gpu "rtx 4090" >"$tmp/out" 2>&1
	if grep -q '^with --checkpointing: [0-9.]* GiB per GPU' "$tmp/out"; then
		ok "qlora 8B on a 4090 without checkpointing: the checkpointed need is shown"
	else
		not_ok "the --checkpointing hint" "$tmp/out"
	fi
	"$bin" fit llama-3.1-8b --task qlora --gpu "rtx 4090" --checkpointing >"$tmp/out" 2>&1
	if ! grep -q '^with --checkpointing' "$tmp/out" && grep -q ' fits ' "$tmp/out"; then
		ok "... and with --checkpointing it fits, with no hint"
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
echo "1..$n"
[ "$fail" -eq 0 ]
