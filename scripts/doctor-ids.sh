#!/bin/sh
# Rewrite the table of finding ids in docs/doctor.md from 'gpuscope doctor
# --list' (tests/cli/docs.sh checks that every id is there).
#   scripts/doctor-ids.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build}/gpuscope
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
	sed -n '1,/^<!-- ids -->$/p' docs/doctor.md
	echo "| id | about |"
	echo "|---|---|"
	"$bin" doctor --list | sed -E 's/^([^ ]+) +(.*)$/| `\1` | \2 |/'
	sed -n '/^<!-- \/ids -->$/,$p' docs/doctor.md
} >"$tmp"
cat "$tmp" >docs/doctor.md
