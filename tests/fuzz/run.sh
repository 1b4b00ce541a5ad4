#!/bin/sh
# Build the libFuzzer targets of tests/fuzz/ (fuzz_<name>.c) with clang,
# AddressSanitizer and UBSan, from the sources, into $O/fuzz/, then run
# each for SECONDS on a copy of its seed corpus (tests/fuzz/corpus/<name>/,
# with tests/fuzz/<name>.dict when there is one). Prints TAP: one line per
# target, then the plan; exits 1 when a target crashed, leaked, broke one
# of its checks or did not build.
#
#   tests/fuzz/run.sh [SECONDS]          default 10
#
# O names the build directory (default build), CLANG the compiler (default
# clang), FUZZ_TARGETS a space-separated subset of names. Without clang or
# its libFuzzer runtime it prints "1..0 # SKIP" and exits 0, unless
# GPUSCOPE_REQUIRE_FUZZ=1 (for CI), which makes that a failure; it installs
# nothing (CI installs clang). A crashing input is kept in
# $O/fuzz/artifacts/; rerun it with $O/fuzz/fuzz_<name> FILE.
set -u
secs=${1:-10}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 [SECONDS]" >&2
	exit 2
	;;
esac
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
O=${O:-build}
CLANG=${CLANG:-clang}
out=$O/fuzz
jobs=$(nproc 2>/dev/null || echo 2)

# No fuzzing here: a skip, or a failure where it is required.
skip() {
	if [ "${GPUSCOPE_REQUIRE_FUZZ:-0}" = 1 ]; then
		echo "not ok 1 - fuzz targets cannot be built: $*"
		echo "1..1"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

if ! command -v "$CLANG" >/dev/null 2>&1; then
	skip "$CLANG not found"
fi

# Is file $1 newer than file $2?
newer() {
	[ -n "$(find "$1" -prune -newer "$2" 2>/dev/null)" ]
}

mkdir -p "$out/obj" "$out/artifacts" "$out/corpus" || exit 2
log=$out/build.log
: >"$log"

SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
version=$(sed -n 's/^VERSION := *//p' Makefile)
VFLAG="-DGPUSCOPE_VERSION=\"${version:-0.1.0}\""
CFLAGS="-std=gnu11 -g -O1 $SAN -D_GNU_SOURCE -Isrc -Itests/fuzz -Wall -Wextra -Wshadow \
-Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2"

# Can this clang build and link a fuzzer with both sanitizers?
probe=$out/probe.c
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$probe"
# shellcheck disable=SC2086
if ! "$CLANG" $SAN -o "$out/probe" "$probe" >"$out/probe.log" 2>&1; then
	major=$("$CLANG" -dumpversion 2>/dev/null | cut -d. -f1)
	skip "$CLANG cannot link -fsanitize=fuzzer,address,undefined (no libFuzzer runtime? Debian: libclang-rt-${major:-N}-dev): $(head -n 1 "$out/probe.log")"
fi

targets=${FUZZ_TARGETS:-$(for f in tests/fuzz/fuzz_*.c; do
	f=${f#tests/fuzz/fuzz_}
	echo "${f%.c}"
done)}

# The library, from the sources it needs (core and front ends, doctor, and
# the backend files that the targets reach: parsers of kernel files, doctor's
# PCI listing, the kubelet pod-resources client's readers; serve's web configuration, whose bcrypt is libcrypt's, and its Accept negotiation), rebuilt when any of them, or this script, is newer than the
# archive. The tables built into the binary (data/cuda/drivers.tsv,
# data/nvidia/xid.tsv, data/specs/gpus.tsv, data/models/models.tsv,
# data/engines/engines.tsv, data/prices/prices.tsv) are
# assembled in by their *_data.S, as the Makefile does.
lib=$out/libgpuscope-fuzz.a
backend="src/backend/fdinfo.c src/backend/fdinfo.h src/backend/amdgpu_metrics.c src/backend/amdgpu_metrics.h
src/backend/pci.c src/backend/pci.h src/backend/nvml_probe.h src/backend/nvml_version.c
src/backend/podres.c src/backend/podres.h"
serve="src/serve/webconfig.c src/serve/webconfig.h src/serve/negotiate.c src/serve/negotiate.h"
# the queue daemon's readers of its configuration and of its clients' lines (no SQLite, no NVML)
queue="src/queue/conf.c src/queue/conf.h src/queue/proto.c src/queue/proto.h src/queue/job.c src/queue/job.h
src/queue/jobjson.c src/queue/jobjson.h"
lib_src=$(ls src/core/*.c src/front/*.c src/doctor/*.c src/fit/*.c src/record/*.c src/backend/fdinfo.c src/backend/amdgpu_metrics.c \
	src/backend/pci.c src/backend/nvml_version.c src/backend/podres.c src/serve/webconfig.c src/serve/negotiate.c \
	src/queue/conf.c src/queue/proto.c src/queue/job.c src/queue/jobjson.c)
build_ok=1
# shellcheck disable=SC2086
if [ ! -f "$lib" ] || [ -n "$(find src/core src/front src/doctor src/fit src/record data/cuda/drivers.tsv data/nvidia/xid.tsv data/messages data/specs/gpus.tsv data/models/models.tsv data/engines/engines.tsv data/prices/prices.tsv $backend $serve $queue tests/fuzz/run.sh -newer "$lib" 2>/dev/null)" ]; then
	rm -f "$lib"
	objs=""
	i=0
	for s in $lib_src; do
		o=$out/obj/$(echo "$s" | tr / _)
		o=${o%.c}.o
		objs="$objs $o"
		rm -f "$o"
		# The edit distance behind query's typo suggestions (src/core/strdist.c) runs a comparison per
		# cell; traced, they cut the query target to a sixth of its speed, and its
		# name matching goes through strcasecmp(), which libFuzzer hooks anyway.
		extra=""
		case $s in
		src/front/query.c | src/core/strdist.c) extra=-fno-sanitize-coverage=trace-cmp ;;
		esac
		# shellcheck disable=SC2086
		("$CLANG" $CFLAGS $extra "$VFLAG" -c -o "$o" "$s" >"$o.log" 2>&1 || rm -f "$o") &
		i=$((i + 1))
		[ $((i % jobs)) -ne 0 ] || wait
	done
	wait
	o=$out/obj/src_doctor_cuda_data.o
	objs="$objs $o"
	rm -f "$o"
	"$CLANG" -c -o "$o" -DCUDA_TSV_PATH='"data/cuda/drivers.tsv"' src/doctor/cuda_data.S >"$o.log" 2>&1 || rm -f "$o"
	o=$out/obj/src_doctor_xid_data.o
	objs="$objs $o"
	rm -f "$o"
	"$CLANG" -c -o "$o" -DXID_TSV_PATH='"data/nvidia/xid.tsv"' src/doctor/xid_data.S >"$o.log" 2>&1 || rm -f "$o"
	o=$out/obj/src_doctor_msg_data.o
	objs="$objs $o"
	rm -f "$o"
	# data/messages/*.tsv as one file, each table headed by "#file NAME", as the Makefile makes it
	for f in $(ls data/messages/*.tsv 2>/dev/null | sort); do
		printf '#file %s\n' "$f"
		cat "$f"
		echo
	done >"$out/messages.tsv"
	"$CLANG" -c -o "$o" -DMSG_TSV_PATH="\"$out/messages.tsv\"" src/doctor/msg_data.S >"$o.log" 2>&1 || rm -f "$o"
	o=$out/obj/src_fit_specs_data.o
	objs="$objs $o"
	rm -f "$o"
	"$CLANG" -c -o "$o" -DSPECS_TSV_PATH='"data/specs/gpus.tsv"' src/core/specs_data.S >"$o.log" 2>&1 || rm -f "$o"
	o=$out/obj/src_fit_models_data.o
	objs="$objs $o"
	rm -f "$o"
	"$CLANG" -c -o "$o" -DMODELS_TSV_PATH='"data/models/models.tsv"' src/fit/models_data.S >"$o.log" 2>&1 || rm -f "$o"
	o=$out/obj/src_fit_engines_data.o
	objs="$objs $o"
	rm -f "$o"
	"$CLANG" -c -o "$o" -DENGINES_TSV_PATH='"data/engines/engines.tsv"' src/fit/engines_data.S >"$o.log" 2>&1 || rm -f "$o"
	o=$out/obj/src_fit_prices_data.o
	objs="$objs $o"
	rm -f "$o"
	"$CLANG" -c -o "$o" -DPRICES_TSV_PATH='"data/prices/prices.tsv"' src/fit/prices_data.S >"$o.log" 2>&1 || rm -f "$o"
	for o in $objs; do
		cat "$o.log" >>"$log"
		[ -f "$o" ] || build_ok=0
	done
	# shellcheck disable=SC2086
	if [ "$build_ok" -ne 1 ] || ! ar rcs "$lib" $objs >>"$log" 2>&1; then
		rm -f "$lib"
		build_ok=0
	fi
fi

n=0
failed=0
for t in $targets; do
	n=$((n + 1))
	src=tests/fuzz/fuzz_$t.c
	bin=$out/fuzz_$t
	tlog=$out/$t.log
	if [ "$build_ok" -ne 1 ] || [ ! -f "$src" ]; then
		echo "not ok $n - $t # does not build (see $log)"
		sed 's/^/# /' "$log" | tail -n 20
		failed=$((failed + 1))
		continue
	fi
	if [ ! -x "$bin" ] || newer "$src" "$bin" || newer tests/fuzz/fuzz.h "$bin" ||
		newer "$lib" "$bin"; then
		# shellcheck disable=SC2086
		if ! "$CLANG" $CFLAGS "$VFLAG" -o "$bin" "$src" "$lib" -ldl -lpthread -lm -lcrypt -ljansson -lz >"$out/$t.build.log" 2>&1; then
			echo "not ok $n - $t # does not build"
			sed 's/^/# /' "$out/$t.build.log" | tail -n 20
			failed=$((failed + 1))
			continue
		fi
	fi
	corpus=$out/corpus/$t
	rm -rf "$corpus"
	mkdir -p "$corpus"
	if [ -d "tests/fuzz/corpus/$t" ]; then
		cp tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null
	fi
	set -- -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$t-"
	if [ -f "tests/fuzz/$t.dict" ]; then
		set -- "$@" -dict="tests/fuzz/$t.dict"
	fi
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		"$bin" "$@" "$corpus" >"$tlog" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tlog" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$tlog" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		echo "ok $n - $t: ${runs:-?} runs in ${secs} s, ${rate:-?} exec/s"
	else
		echo "not ok $n - $t: exit $rc after ${runs:-?} runs (log: $tlog)"
		grep -E 'ERROR: |fuzz check failed|runtime error|SUMMARY|Test unit written|^  ' "$tlog" |
			grep -v -E 'fuzzer::|libc|__sanitizer_print_stack_trace| in _start |Combine libFuzzer' |
			head -n 30 | sed 's/^/# /'
		art=$(sed -n 's/.*Test unit written to //p' "$tlog" | tail -n 1)
		echo "# reproduce: $bin ${art:-$out/artifacts/$t-...}"
		failed=$((failed + 1))
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
