#!/bin/sh
# The Debian package (debian/, README.md, Install), from build to purge:
# - make deb builds gpuscope_VERSION_ARCH.deb in a copy of the tree under
#   $O/deb/ (the work tree stays as it was), with the runtime libraries in
#   Depends and what serve dlopens in Recommends;
# - lintian finds no error and no warning (its info and pedantic tags are
#   shown as comments);
# - in a fresh Debian root (debootstrap, minbase, from this machine's apt
#   mirror; the root is cached in /var/cache/gpuscope-test so that a rerun
#   takes seconds) the package installs with apt-get and its dependencies,
#   gpuscope --demo and --demo status --json run, man finds gpuscope-fit(1),
#   the completions are where the shells look, the units run /usr/bin/gpuscope
#   and systemd-analyze verify takes them, serve is enabled and record and
#   queued are not;
# - apt-get purge leaves the root's file list as it was before the install.
# Needs root (debootstrap, chroot). Slow (a whole build): the suite's SAN pass
# skips it by design, the package builds its own binary. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
case ${O##*/} in
build-san*) san=1 ;;
*) san=0 ;;
esac
[ -x "$bin" ] && grep -qa __asan_init "$bin" && san=1
if [ "$san" = 1 ]; then
	echo "1..1"
	echo "ok 1 # SKIP by design: the package builds its own binary, not the sanitised one"
	exit 0
fi
tmp=$(mktemp -d)
root=""
# shellcheck disable=SC2317 # called by the traps
cleanup() {
	# a root with anything mounted in it is left alone, never removed through its mounts
	if [ -n "$root" ] && [ -d "$root" ] && ! grep -q " ${root}[/ ]" /proc/mounts; then rm -rf "$root"; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | tail -n 40; done
}
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
have() { command -v "$1" >/dev/null 2>&1; }
finish() {
	echo "1..$n"
	[ "$fail" -eq 0 ]
	exit
}

missing=""
for t in dpkg-buildpackage dh fakeroot lintian debootstrap; do have "$t" || missing="$missing $t"; done
if [ -n "$missing" ] || [ "$(id -u)" -ne 0 ]; then
	skip_missing "the package: needs root and$missing (scripts/install-deps.sh check)"
	finish
fi
version=$(sed -n '1s/^gpuscope (\([^)]*\)).*/\1/p' debian/changelog)
arch=$(dpkg --print-architecture)
deb=$O/deb/gpuscope_${version}_$arch.deb

# 1. the build, in a copy
# what a build in the tree itself would leave: debian/'s build files (ignored), ../gpuscope_*
tree_state() {
	git status --porcelain --ignored --untracked-files=all -- debian 2>/dev/null
	ls -d ../gpuscope_* ../gpuscope-dbgsym_* 2>/dev/null
}
tree_state | sort >"$tmp/status.before"
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory O="$O" deb >"$tmp/build.log" 2>&1 && [ -f "$deb" ]; then
	ok "make deb builds $deb"
else
	not_ok "make deb: no $deb" "$tmp/build.log"
	finish
fi
tree_state | sort >"$tmp/status.after"
if cmp -s "$tmp/status.before" "$tmp/status.after"; then
	ok "no build file in debian/ nor beside the tree (the build ran in $O/deb/src)"
else
	diff "$tmp/status.before" "$tmp/status.after" >"$tmp/out"
	not_ok "make deb changed the work tree" "$tmp/out"
fi
dpkg-deb -f "$deb" Depends >"$tmp/depends"
dpkg-deb -f "$deb" Recommends >"$tmp/recommends"
miss=""
for p in libc6 libjansson4 libsqlite3-0 zlib1g libncursesw6; do grep -q "\\b$p\\b" "$tmp/depends" || miss="$miss $p"; done
for p in libmicrohttpd12 libcrypt1; do grep -q "\\b$p\\b" "$tmp/recommends" || miss="$miss $p"; done
if [ -z "$miss" ]; then
	ok "Depends: $(tr -d '\n' <"$tmp/depends"); Recommends: $(tr -d '\n' <"$tmp/recommends")"
else
	cat "$tmp/depends" "$tmp/recommends" >"$tmp/out"
	not_ok "the package's relations lack:$miss" "$tmp/out"
fi

# 2. lintian
changes=$O/deb/gpuscope_${version}_$arch.changes
lintian --fail-on error,warning --display-info --pedantic "$changes" >"$tmp/lintian" 2>&1
rc=$?
grep -v 'running with root privileges' "$tmp/lintian" >"$tmp/lintian.tags"
if [ "$rc" -eq 0 ]; then
	ok "lintian: no error, no warning ($(grep -c '^[IP]:' "$tmp/lintian.tags" | tr -d ' ') info and pedantic tags)"
	sed 's/^/# /' "$tmp/lintian.tags"
else
	not_ok "lintian (exit $rc)" "$tmp/lintian.tags"
fi

# 3. a fresh Debian root: debootstrap's packages and then the installed root, cached
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*\/debian\)\/* bookworm .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
# what a machine has besides minbase (systemd, for the units' check; procps: /bin/kill of
# queued's ExecReload; man-db) and the package's dependencies, so that installing it needs
# no download
include=init-system-helpers,libjansson4,libsqlite3-0,libmicrohttpd12,man-db,procps,systemd
cache=${GPUSCOPE_ROOT_CACHE:-/var/cache/gpuscope-test}
key=$(echo "$include" | cksum | cut -d' ' -f1)
debs=$cache/bookworm-minbase-$key.tgz
rootball=$cache/bookworm-minbase-$key-root.tar
case $O in
/*) root=$O/pkg-root ;;
*) root=$(pwd)/$O/pkg-root ;;
esac
rm -rf "$root"
mkdir -p "$cache" "$root"
start=$(date +%s)
if [ ! -f "$rootball" ]; then
	if [ ! -f "$debs" ]; then
		debootstrap --variant=minbase --include="$include" --make-tarball="$debs.tmp" bookworm \
			"$tmp/dl" "$mirror" >"$tmp/debootstrap.log" 2>&1 && mv "$debs.tmp" "$debs"
	fi
	if [ -f "$debs" ] && debootstrap --variant=minbase --include="$include" --unpack-tarball="$(cd "$cache" && pwd)/${debs##*/}" \
		bookworm "$root" "$mirror" >>"$tmp/debootstrap.log" 2>&1; then
		tar -C "$root" -cf "$rootball.tmp" . && mv "$rootball.tmp" "$rootball"
	fi
else
	tar -C "$root" -xf "$rootball" >"$tmp/debootstrap.log" 2>&1
fi
if [ -x "$root/usr/bin/apt-get" ] && [ -f "$rootball" ]; then
	ok "a fresh Debian bookworm root (minbase, $mirror) in $(($(date +%s) - start)) s"
else
	not_ok "debootstrap of a Debian root" "$tmp/debootstrap.log"
	finish
fi
# no service starts in the root (there is no systemd running in it anyway)
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
in_root() {
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 HOME=/root \
		chroot "$root" "$@"
}
# the root's files, but for what apt, dpkg and the logs rewrite as they go
list_root() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run -o -path ./tmp \
		-o -path ./var/log -o -path ./var/cache -o -path ./var/lib/apt -o -path './var/lib/dpkg/*-old' \
		-o -path ./var/lib/dpkg/lock -o -path ./var/lib/dpkg/lock-frontend -o -path ./var/lib/dpkg/triggers/Lock \) \
		-prune -o -print | sort)
}
list_root >"$tmp/files.before"

# 4. install, with the dependencies (from the mirror when the root lacks one)
cp "$deb" "$root/tmp/"
if in_root apt-get install -y -q "/tmp/${deb##*/}" >"$tmp/install.log" 2>&1 ||
	{ in_root apt-get update -q >>"$tmp/install.log" 2>&1 && in_root apt-get install -y -q "/tmp/${deb##*/}" >>"$tmp/install.log" 2>&1; }; then
	ok "apt-get install ./${deb##*/} in the root"
else
	not_ok "apt-get install in the root" "$tmp/install.log"
	finish
fi
rm -f "$root/tmp/${deb##*/}"

if in_root gpuscope --demo >"$tmp/out" 2>&1 && grep -q 'SIMULATED' "$tmp/out" && grep -q 'H100' "$tmp/out"; then
	ok "gpuscope --demo runs in the root"
else
	not_ok "gpuscope --demo in the root" "$tmp/out"
fi
if in_root gpuscope --demo status --json >"$tmp/out" 2>"$tmp/err" && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and d, "an empty document"
' "$tmp/out" 2>>"$tmp/err"; then
	ok "gpuscope --demo status --json: a JSON document"
else
	not_ok "gpuscope --demo status --json in the root" "$tmp/out" "$tmp/err"
fi
: >"$tmp/out"
for page in gpuscope gpuscope-fit gpuscope-status; do
	in_root man -w "$page" >>"$tmp/out" 2>&1 || echo "man -w $page: not found" >>"$tmp/out"
done
if ! grep -q 'not found\|No manual' "$tmp/out"; then ok "man finds $(tr '\n' ' ' <"$tmp/out")"; else not_ok "man pages in the root" "$tmp/out"; fi
: >"$tmp/out"
for f in /usr/share/bash-completion/completions/gpuscope /usr/share/zsh/vendor-completions/_gpuscope \
	/usr/share/fish/vendor_completions.d/gpuscope.fish /usr/share/gpuscope/contrib/queue.conf \
	/usr/share/gpuscope/contrib/grafana/gpuscope-dashboard.json /usr/share/doc/gpuscope/copyright; do
	[ -s "$root$f" ] || echo "no $f" >>"$tmp/out"
done
[ -x "$root/usr/share/gpuscope/contrib/slurm/gpuscope-prolog" ] || echo "the Slurm prolog is not executable" >>"$tmp/out"
if [ ! -s "$tmp/out" ]; then ok "completions for bash, zsh and fish, contrib and the copyright file are in place"; else not_ok "files of the package" "$tmp/out"; fi

# 5. the units: this prefix's binary, systemd-analyze verify, which ones are enabled
: >"$tmp/out"
units="gpuscope-serve.service gpuscope-record.service gpuscope-queued.service"
for u in $units; do
	f=$root/lib/systemd/system/$u
	if [ ! -f "$f" ]; then
		echo "no /lib/systemd/system/$u" >>"$tmp/out"
		continue
	fi
	grep '^ExecStart=' "$f" | grep -v '^ExecStart=/usr/bin/gpuscope ' | sed "s#^#$u: #" >>"$tmp/out"
done
if [ ! -s "$tmp/out" ]; then ok "the three units run /usr/bin/gpuscope"; else not_ok "the units' ExecStart" "$tmp/out"; fi
if have systemd-analyze; then
	# shellcheck disable=SC2086 # the units' names
	systemd-analyze verify --man=no --root="$root" $units >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && ! grep -q gpuscope "$tmp/out"; then
		ok "systemd-analyze verify --root takes the installed units"
	else
		not_ok "systemd-analyze verify of the installed units (exit $rc)" "$tmp/out"
	fi
else
	skip_missing "systemd-analyze verify of the installed units: no systemd-analyze"
fi
wants=$root/etc/systemd/system/multi-user.target.wants
if [ -L "$wants/gpuscope-serve.service" ] && [ ! -e "$wants/gpuscope-record.service" ] &&
	[ ! -e "$wants/gpuscope-queued.service" ]; then
	ok "gpuscope-serve is enabled, gpuscope-record and gpuscope-queued are not"
else
	ls -l "$wants" >"$tmp/out" 2>&1
	not_ok "the units enabled after the install" "$tmp/out"
fi

# 6. purge: nothing left
if in_root apt-get purge -y -q gpuscope >"$tmp/purge.log" 2>&1; then
	ok "apt-get purge gpuscope"
else
	not_ok "apt-get purge gpuscope" "$tmp/purge.log"
fi
list_root >"$tmp/files.after"
if cmp -s "$tmp/files.before" "$tmp/files.after"; then
	ok "after the purge the root has the $(wc -l <"$tmp/files.before" | tr -d ' ') files and directories it had before"
else
	diff "$tmp/files.before" "$tmp/files.after" >"$tmp/out"
	not_ok "the purge leaves (>) or removes (<)" "$tmp/out"
fi
finish
