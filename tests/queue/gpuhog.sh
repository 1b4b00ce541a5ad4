#!/bin/sh
# A stand-in for a CUDA program, for tests on the fake NVML: it tells the
# fake that this process ($$) uses MIB MiB of memory on each of its GPUs, by
# writing $FAKE_NVML_LIVE_DIR/$$ (docs/scenario-format.md, live_processes),
# then sleeps and exits.
#
# usage: gpuhog.sh MIB [SECONDS] [EXIT] [--late S] [--gpu GPU]... [--leak]
#   MIB        MiB on each GPU (a whole number)
#   SECONDS    how long to hold it once registered (default: until killed)
#   EXIT       the exit status at the end (default 0)
#   --late S   wait S seconds before registering (a lazy allocator)
#   --gpu GPU  the GPU, a UUID or an index (repeatable, or a comma list);
#              default: each GPU of $CUDA_VISIBLE_DEVICES
#   --leak     the memory stays used after the process is gone (a dirty GPU),
#              until the file is deleted
# On SIGTERM it exits 143 (SIGINT 130, SIGHUP 129) and removes nothing: the
# fake sees the process gone. The file is written whole (a temporary file,
# then mv), so the fake never reads half of it.
set -u

me=gpuhog.sh
usage() {
	echo "usage: $me MIB [SECONDS] [EXIT] [--late S] [--gpu GPU]... [--leak]" >&2
	exit 2
}
die() {
	echo "$me: $*" >&2
	exit 2
}
is_uint() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
	return 0
}
is_seconds() {
	case $1 in
	'' | . | *[!0-9.]* | *.*.*) return 1 ;;
	esac
	return 0
}

mib='' secs='' code=0 late='' gpus='' leak='' nargs=0
while [ $# -gt 0 ]; do
	case $1 in
	--late)
		[ $# -ge 2 ] || usage
		late=$2
		shift 2
		;;
	--late=*)
		late=${1#--late=}
		shift
		;;
	--gpu)
		[ $# -ge 2 ] || usage
		gpus="$gpus,$2"
		shift 2
		;;
	--gpu=*)
		gpus="$gpus,${1#--gpu=}"
		shift
		;;
	--leak)
		leak=' leak'
		shift
		;;
	-h | --help) usage ;;
	-*) die "unknown option '$1'" ;;
	*)
		nargs=$((nargs + 1))
		case $nargs in
		1) mib=$1 ;;
		2) secs=$1 ;;
		3) code=$1 ;;
		*) usage ;;
		esac
		shift
		;;
	esac
done
[ -n "$mib" ] || usage
is_uint "$mib" || die "MIB '$mib' is not a whole number of MiB"
[ -z "$secs" ] || is_seconds "$secs" || die "SECONDS '$secs' is not a number of seconds"
{ is_uint "$code" && [ "$code" -le 255 ]; } || die "EXIT '$code' is not an exit status (0-255)"
[ -z "$late" ] || is_seconds "$late" || die "--late '$late' is not a number of seconds"
[ -n "$gpus" ] || gpus=${CUDA_VISIBLE_DEVICES:-}

# sleeps in a child that a signal does not wait for; the child goes with us
child=''
nap() {
	sleep "$1" &
	child=$!
	wait "$child"
	child=''
}
# shellcheck disable=SC2317 # called by the traps
quit() {
	[ -z "$child" ] || kill "$child" 2>/dev/null
	exit "$1"
}
trap 'quit 143' TERM
trap 'quit 130' INT
trap 'quit 129' HUP

[ -z "$late" ] || nap "$late"

lines=''
old_ifs=$IFS
IFS=,
for g in $gpus; do
	[ -n "$g" ] || continue
	lines="$lines$g $mib$leak
"
done
IFS=$old_ifs
if [ -n "$lines" ]; then
	dir=${FAKE_NVML_LIVE_DIR:-}
	[ -n "$dir" ] || die "FAKE_NVML_LIVE_DIR is not set: the fake NVML would not see this process"
	[ -d "$dir" ] || die "FAKE_NVML_LIVE_DIR '$dir' is not a folder"
	tmp="$dir/.$$.tmp"
	printf '%s' "$lines" >"$tmp" || die "cannot write $tmp"
	chmod 644 "$tmp"
	mv -f "$tmp" "$dir/$$" || die "cannot rename $tmp to $dir/$$"
else
	echo "$me: no GPU (CUDA_VISIBLE_DEVICES is empty and no --gpu): nothing registered" >&2
fi

if [ -n "$secs" ]; then
	nap "$secs"
else
	while :; do
		nap 3600
	done
fi
exit "$code"
