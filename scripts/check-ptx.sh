#!/bin/sh
# The committed PTX of src/bench/kernels/ held to its source and to the
# toolkit, printing TAP (tests/cli/ptx.sh runs it as a suite):
#  (a) where nvcc exists: `make ptx` into a temporary folder and the result
#      byte for byte the committed file (a difference fails, naming the
#      file; a file made by another nvcc release is a skip saying which,
#      since another release writes other PTX from the same source);
#  (b) where ptxas exists: every file assembled for every architecture it is
#      meant to run on that this ptxas knows, from its level up (an
#      architecture ptxas calls unknown is a skip, any other error a
#      failure), and each file's .version the lowest that assembles (the
#      ISA version before it refused at the file's own level).
# Neither tool: "1..0 # SKIP". One tool only: the other half is a skip, a
# failure under GPUSCOPE_NO_SKIP=1 (tests/skip.inc). NVCC and PTXAS name
# the tools; else PATH, then $CUDA_HOME/bin, then /usr/local/cuda/bin.
set -u
cd "$(dirname "$0")/.." || exit 2

dir=src/bench/kernels
# each file's level, and the architectures (sm_XY) a level can run on, the
# newest known to CUDA 13.0 last; sm_70 has no file (gs.cu's header says why)
levels="75 80 89"
archs="75 80 86 87 88 89 90 100 103 110 120 121"
# the PTX ISA version before each file's (.version 6.3, 7.0 and 8.4 in mk/ptx.mk)
below() {
	case $1 in 75) echo 6.2 ;; 80) echo 6.5 ;; 89) echo 8.3 ;; esac
}

tool() {
	if command -v "$1" >/dev/null 2>&1; then
		command -v "$1"
	elif [ -x "${CUDA_HOME:-/nonexistent}/bin/$1" ]; then
		echo "$CUDA_HOME/bin/$1"
	elif [ -x "/usr/local/cuda/bin/$1" ]; then
		echo "/usr/local/cuda/bin/$1"
	fi
}
nvcc=${NVCC:-$(tool nvcc)}
ptxas=${PTXAS:-$(tool ptxas)}
[ -n "$nvcc" ] && [ ! -x "$nvcc" ] && nvcc=""
[ -n "$ptxas" ] && [ ! -x "$ptxas" ] && ptxas=""
if [ -z "$nvcc" ] && [ -z "$ptxas" ]; then
	echo "1..0 # SKIP no CUDA toolkit (nvcc, ptxas)"
	exit 0
fi

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
not_ok() { # what, then the files to show
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for shown in "$@"; do [ -f "$shown" ] && sed "s/^/# /" "$shown" | head -n 20; done
}
# the nvcc release a PTX file says made it ("V13.0.88"), or ""
release() { sed -n 's|^// Cuda compilation tools, release .*, \(V[0-9.]*\)$|\1|p' "$1" | head -n 1; }

# (a) the committed files are what gs.cu makes
if [ -z "$nvcc" ]; then
	skip_missing "no nvcc: the committed PTX is not regenerated to compare (CUDA toolkit)"
elif ! make -s --no-print-directory ptx PTX_DIR="$tmp/gen" NVCC="$nvcc" >"$tmp/make.log" 2>&1; then
	not_ok "make ptx with $nvcc fails" "$tmp/make.log"
else
	for l in $levels; do
		f=$dir/gs_sm$l.ptx
		if [ ! -f "$f" ]; then
			not_ok "$f is not committed (run make ptx)"
		elif cmp -s "$f" "$tmp/gen/gs_sm$l.ptx"; then
			ok "$f is what make ptx makes of gs.cu ($(release "$f"))"
		elif [ "$(release "$f")" != "$(release "$tmp/gen/gs_sm$l.ptx")" ]; then
			skip_missing "$f was made by nvcc $(release "$f"), this one is $(release "$tmp/gen/gs_sm$l.ptx") ($nvcc): not compared"
		else
			diff "$f" "$tmp/gen/gs_sm$l.ptx" >"$tmp/diff" 2>&1
			not_ok "$f differs from what make ptx makes of gs.cu (run make ptx and commit it)" "$tmp/diff"
		fi
	done
fi

# (b) ptxas takes every file for every architecture from its level up
if [ -z "$ptxas" ]; then
	skip_missing "no ptxas: the committed PTX is not assembled (CUDA toolkit)"
else
	echo "# $("$ptxas" --version 2>/dev/null | grep -m 1 release)"
	echo "# sm_70 (V100): no image; CUDA 13 has no sm_70 (see src/bench/kernels/gs.cu)"
	for l in $levels; do
		f=$dir/gs_sm$l.ptx
		if [ ! -f "$f" ]; then
			not_ok "$f is not committed (run make ptx)"
			continue
		fi
		for a in $archs; do
			[ "$a" -ge "$l" ] || continue
			if "$ptxas" -arch="sm_$a" -o "$tmp/out.cubin" "$f" >"$tmp/log" 2>&1; then
				ok "$f assembles for sm_$a"
			elif grep -q "Value 'sm_$a' is not defined" "$tmp/log"; then
				skip "$f for sm_$a: this ptxas does not know sm_$a"
			else
				not_ok "$f does not assemble for sm_$a" "$tmp/log"
			fi
		done
		v=$(sed -n 's/^\.version \([0-9.]*\)$/\1/p' "$f")
		below=$(below "$l")
		sed "s/^\.version .*/.version $below/" "$f" >"$tmp/lower.ptx"
		if "$ptxas" -arch="sm_$l" -o "$tmp/out.cubin" "$tmp/lower.ptx" >"$tmp/log" 2>&1; then
			not_ok "$f: .version $v is not the lowest: $below assembles too (lower it in mk/ptx.mk and gs.cu)"
		elif grep -q -E 'requires PTX ISA|does not support' "$tmp/log"; then
			ok "$f: .version $v is the lowest (at $below: $(sed -n 's/^.*error *: *//p' "$tmp/log" | head -n 1))"
		else
			not_ok "$f at .version $below fails for another reason than the version" "$tmp/log"
		fi
	done
fi

echo "1..$n"
[ "$fail" -eq 0 ]
