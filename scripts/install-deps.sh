#!/bin/sh
# Install what building (and, with "check", testing) gpuscope needs, when it
# is missing, on Debian or Ubuntu. Installs nothing when all is present.
#   scripts/install-deps.sh [run|check]
set -eu
mode=${1:-run}
need=""
have() { command -v "$1" >/dev/null 2>&1; }

have cc || have gcc || need="$need gcc"
have make || need="$need make"
[ -e /usr/include/stdio.h ] || need="$need libc6-dev"
# ncursesw for gpuscope top: its header and library, found through pkg-config
have pkg-config || need="$need pkg-config"
if have pkg-config; then
	pkg-config --exists ncursesw || need="$need libncurses-dev"
elif [ ! -e /usr/include/ncursesw/curses.h ] && [ ! -e /usr/include/curses.h ]; then
	need="$need libncurses-dev"
fi
if [ "$mode" = check ]; then
	have python3 || need="$need python3"
	python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need="$need python3-venv"
	# the tests of gpuscope top drive it in tmux
	have tmux || need="$need tmux"
fi
[ -z "$need" ] && exit 0

echo "gpuscope: installing build dependencies:$need"
if ! have apt-get; then
	echo "gpuscope: please install:$need (this script knows only apt-get)" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif have sudo; then
	sudo="sudo"
else
	echo "gpuscope: run as root, or install:$need" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq $need
