#!/bin/sh
# The layers of src/ point one way: scripts/check-layers.sh passes on the
# tree, and fails, naming the file, on trees made to break each rule (an
# include up the layers, one into a peer, a relative include, a folder
# without a layer). Prints TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
check=scripts/check-layers.sh

if sh "$check" src >"$tmp/out" 2>&1; then
	ok "src/: no include against the layers"
else
	not_ok "src/: includes against the layers" "$tmp/out"
fi

# a small tree of src/'s shape, then one violation at a time
mk() {
	rm -rf "$tmp/src"
	mkdir -p "$tmp/src/core" "$tmp/src/backend" "$tmp/src/front" "$tmp/src/fit" "$tmp/src/cmd"
	printf '#include "core/a.h"\n' >"$tmp/src/core/a.c"
	: >"$tmp/src/core/a.h"
	: >"$tmp/src/front/json.h"
	: >"$tmp/src/fit/specs.h"
	printf '#include "core/a.h"\n#include "backend/b.h"\n' >"$tmp/src/backend/b.c"
	: >"$tmp/src/backend/b.h"
	printf '#include "front/json.h"\n#include "fit/specs.h"\n#include "backend/b.h"\n' >"$tmp/src/cmd/main.c"
}
# expect_fail WHAT FILE GREP: the check fails and its message names FILE and matches GREP
expect_fail() {
	if sh "$check" "$tmp/src" >"$tmp/out" 2>&1; then
		not_ok "$1: passed" "$tmp/out"
	elif grep -q "$2" "$tmp/out" && grep -q "$3" "$tmp/out"; then
		ok "$1: refused, naming the file"
	else
		not_ok "$1: refused without naming $2 ($3)" "$tmp/out"
	fi
}
mk
if sh "$check" "$tmp/src" >"$tmp/out" 2>&1; then ok "a clean tree passes"; else not_ok "a clean tree fails" "$tmp/out"; fi
mk
printf '#include "front/json.h"\n' >>"$tmp/src/core/a.c"
expect_fail "core includes front" "src/core/a.c" "above core"
mk
printf '#include "front/json.h"\n' >"$tmp/src/fit/fit.c"
printf '#include "fit/specs.h"\n' >"$tmp/src/front/json.c"
expect_fail "front and fit include each other" "src/front/json.c" "peer of front"
mk
printf '#include "../core/a.h"\n' >>"$tmp/src/backend/b.c"
expect_fail "a relative include" "src/backend/b.c" "spell it from src/"
mk
printf '#include "b.h"\n' >>"$tmp/src/backend/b.c"
expect_fail "a bare include of the folder's own header" "src/backend/b.c" "backend/b.h"
mk
mkdir -p "$tmp/src/newmod"
: >"$tmp/src/newmod/x.c"
expect_fail "a folder without a layer" "src/newmod" "without a layer"

echo "1..$n"
[ "$fail" -eq 0 ]
