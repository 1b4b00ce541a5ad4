#!/bin/sh
# Install what building (and, with "check", testing) gpuscope needs, when it
# is missing, on Debian or Ubuntu. Installs nothing when all is present.
#   scripts/install-deps.sh [run|check]
set -eu
mode=${1:-run}
need=""
# what only some tests need, and some distributions lack as a package (Ubuntu's chromium is a snap):
# installed when possible, those tests skipped when not (a failure with
# GPUSCOPE_NO_SKIP=1, as CI sets it: there a skip is a missing install)
optional=""
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
# libmicrohttpd for gpuscope serve, libcrypt (libxcrypt) for its bcrypt basic auth
if have pkg-config; then
	pkg-config --exists libmicrohttpd || need="$need libmicrohttpd-dev"
elif [ ! -e /usr/include/microhttpd.h ]; then
	need="$need libmicrohttpd-dev"
fi
[ -e /usr/include/crypt.h ] || need="$need libcrypt-dev"
# jansson reads the JSON gpuscope reads; zlib's crc32() frames the recorder's records
if have pkg-config; then
	pkg-config --exists jansson || need="$need libjansson-dev"
	pkg-config --exists zlib || need="$need zlib1g-dev"
else
	[ -e /usr/include/jansson.h ] || need="$need libjansson-dev"
	[ -e /usr/include/zlib.h ] || need="$need zlib1g-dev"
fi
# SQLite keeps the job queue's state
if have pkg-config; then
	pkg-config --exists sqlite3 || need="$need libsqlite3-dev"
else
	[ -e /usr/include/sqlite3.h ] || need="$need libsqlite3-dev"
fi
if [ "$mode" = check ]; then
	have python3 || need="$need python3"
	python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need="$need python3-venv"
	# the tests of gpuscope top drive it in tmux
	have tmux || need="$need tmux"
	# the tests of gpuscope serve: a real Prometheus server (and promtool), headless Chromium, curl
	have curl || need="$need curl"
	have prometheus && have promtool || optional="$optional prometheus"
	have chromium || optional="$optional chromium"
	# bench matmul's BLAS row and its unit test: a real cblas_sgemm (loaded with dlopen)
	[ -e /usr/lib/x86_64-linux-gnu/libopenblas.so.0 ] || [ -e /usr/lib/aarch64-linux-gnu/libopenblas.so.0 ] ||
		ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0' || optional="$optional libopenblas0"
	# bench matmul's OpenCL rows and their unit test: the ICD loader and PoCL, the CPU OpenCL
	ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1' || optional="$optional ocl-icd-libopencl1"
	[ -e /etc/OpenCL/vendors/pocl.icd ] || optional="$optional pocl-opencl-icd"
	# the fake library's test runs a client under memcheck and helgrind; docs renders the man page
	have valgrind || need="$need valgrind"
	have groff || need="$need groff-base"
	# the per-command man pages' test: mandoc's lint, and man -l and lexgrog (man-db)
	have mandoc || need="$need mandoc"
	have man && have lexgrog || need="$need man-db"
	# serve's tests: the binary's NEEDED list, a TLS certificate; contrib's: the systemd unit's check
	have readelf || need="$need binutils"
	have openssl || need="$need openssl"
	have systemd-analyze || need="$need systemd"
	# the completions' test drives each shell (bash is there already)
	have zsh || need="$need zsh"
	have fish || need="$need fish"
	# record's fault tests hold a recorder in the middle of a rotation (strace's delay injection)
	have strace || need="$need strace"
	# the package's test (tests/cli/package.sh): build it, lintian it, install it in a debootstrap root
	have dpkg-buildpackage || need="$need dpkg-dev"
	have dh || need="$need debhelper"
	have fakeroot || need="$need fakeroot"
	have lintian || need="$need lintian"
	have debootstrap || need="$need debootstrap"
	# the Slurm test (tests/cli/slurm.sh) starts its own munged, slurmctld and slurmd
	have munged || optional="$optional munge"
	have slurmctld || optional="$optional slurmctld"
	have slurmd || optional="$optional slurmd"
	have sbatch && have scontrol || optional="$optional slurm-client"
fi
[ -z "$need$optional" ] && exit 0

echo "gpuscope: installing build dependencies:$need$optional"
if ! have apt-get; then
	if [ -z "$need" ] && [ "${GPUSCOPE_NO_SKIP:-0}" != 1 ]; then
		echo "gpuscope: without$optional, some tests are skipped (this script knows only apt-get)" >&2
		exit 0
	fi
	echo "gpuscope: please install:$need$optional (this script knows only apt-get)" >&2
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
[ -z "$need" ] || $sudo apt-get install -y -qq $need
for p in $optional; do
	if ! $sudo apt-get install -y -qq --no-install-recommends "$p"; then
		if [ "${GPUSCOPE_NO_SKIP:-0}" = 1 ]; then
			echo "gpuscope: could not install $p, and GPUSCOPE_NO_SKIP=1: the tests that need it may not skip" >&2
			exit 1
		fi
		echo "gpuscope: could not install $p: the tests that need it are skipped" >&2
	elif [ "$p" = prometheus ] && [ -d /run/systemd/system ]; then
		# the tests start their own Prometheus; the package's service is not wanted here
		$sudo systemctl disable --now prometheus >/dev/null 2>&1 || :
	elif { [ "$p" = munge ] || [ "$p" = slurmctld ] || [ "$p" = slurmd ]; } && [ -d /run/systemd/system ]; then
		# likewise: the Slurm test starts its own daemons, on ports of its own
		$sudo systemctl disable --now "$p" >/dev/null 2>&1 || :
	fi
done
