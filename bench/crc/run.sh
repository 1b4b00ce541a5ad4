#!/bin/sh
# The CRC-32 of the flight recorder: zlib's crc32() against the private
# table it replaced (bench/crc/crc_bench.c), on records of the recorder's
# average size. Prints the machine, then the figures.
#   bench/crc/run.sh [RECORD_BYTES [RUNS]]
set -eu
cd "$(dirname "$0")/../.."
out=${O:-build}/bench
mkdir -p "$out"
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -o "$out/crc_bench" bench/crc/crc_bench.c -lz
echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
"$out/crc_bench" "$@"
