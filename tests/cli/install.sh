#!/bin/sh
# make install and make uninstall (README.md, Install), into a DESTDIR, with
# PREFIX=/usr and with the default /usr/local:
# - the binary, man/gpuscope.1 and every generated page of $O/man, the three
#   completions where bash-completion, zsh (Debian's vendor-completions under
#   /usr, site-functions under /usr/local) and fish look, the systemd units,
#   contrib/ in share/gpuscope/contrib (scripts still executable), docs/*.md and
#   README.md in share/doc/gpuscope;
# - the units' ExecStart run PREFIX's bin/gpuscope, no @bindir@ is left, and
#   systemd-analyze verify takes them (with ExecStart pointing into DESTDIR);
# - make uninstall leaves the DESTDIR empty, but for a file of someone else's,
#   which stays with its directories;
# - the flight recorder's unit has serve's hardening, no network, and its
#   ExecStart's options record a sample on the fake NVML.
# Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP needs $bin"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 30; done
}
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
have() { command -v "$1" >/dev/null 2>&1; }
# make as a user would run it, without the make (and its variables) that may run this test
# (SAN=1 for the SAN pass's build-san, whose binary it installs as it is)
san=""
[ "${O##*/}" = build-san ] && san=SAN=1
# shellcheck disable=SC2086 # $san: nothing or one word
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s O="$O" $san "$@"; }

# what the tree holds: contrib's files but the unit templates, the docs, the generated pages
find contrib -type f ! -path 'contrib/systemd/*' | sort >"$tmp/contrib"
units=$(for f in contrib/systemd/*.service; do echo "${f##*/}"; done)
set -- docs/*.md
ndocs=$(($# + 1))

# run_prefix PREFIX ZSHDIR: one install and uninstall
run_prefix() {
	prefix=$1 zshdir=$2
	d=$tmp/dest${prefix%/}
	d=${d%/}
	rm -rf "$d"
	mkdir -p "$d"
	if ! mk install DESTDIR="$d" PREFIX="$prefix" >"$tmp/make.log" 2>&1; then
		not_ok "PREFIX=$prefix: make install fails" "$tmp/make.log"
		return
	fi
	p=$d$prefix
	: >"$tmp/out"
	[ -x "$p/bin/gpuscope" ] || echo "no $prefix/bin/gpuscope" >>"$tmp/out"
	cmp -s "$p/bin/gpuscope" "$bin" || echo "$prefix/bin/gpuscope is not $bin" >>"$tmp/out"
	[ -f "$p/share/man/man1/gpuscope.1" ] || echo "no gpuscope.1" >>"$tmp/out"
	for f in "$O"/man/gpuscope-*.1; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$p/share/man/man1/${f##*/}" || echo "no man page ${f##*/}" >>"$tmp/out"
	done
	cmp -s "$O/completions/gpuscope.bash" "$p/share/bash-completion/completions/gpuscope" ||
		echo "no bash completion in share/bash-completion/completions/gpuscope" >>"$tmp/out"
	cmp -s "$O/completions/_gpuscope" "$p/share/zsh/$zshdir/_gpuscope" ||
		echo "no zsh completion in share/zsh/$zshdir/_gpuscope" >>"$tmp/out"
	cmp -s "$O/completions/gpuscope.fish" "$p/share/fish/vendor_completions.d/gpuscope.fish" ||
		echo "no fish completion in share/fish/vendor_completions.d" >>"$tmp/out"
	while IFS= read -r f; do
		cmp -s "$f" "$p/share/gpuscope/$f" || echo "no share/gpuscope/$f" >>"$tmp/out"
		if [ -x "$f" ] && [ ! -x "$p/share/gpuscope/$f" ]; then echo "share/gpuscope/$f is not executable" >>"$tmp/out"; fi
	done <"$tmp/contrib"
	for f in README.md docs/*.md; do
		cmp -s "$f" "$p/share/doc/gpuscope/${f##*/}" || echo "no share/doc/gpuscope/${f##*/}" >>"$tmp/out"
	done
	for u in $units; do
		[ -f "$p/lib/systemd/system/$u" ] || echo "no lib/systemd/system/$u" >>"$tmp/out"
	done
	k=$(find "$d" -type f | wc -l | tr -d ' ')
	if [ ! -s "$tmp/out" ]; then
		ok "PREFIX=$prefix: make install puts the binary, man pages, completions, $(echo "$units" | wc -w | tr -d ' ') units, $(wc -l <"$tmp/contrib" | tr -d ' ') files of contrib and $ndocs docs in place ($k files)"
	else
		not_ok "PREFIX=$prefix: make install" "$tmp/out"
	fi

	# the units run this prefix's binary
	: >"$tmp/out"
	for u in $units; do
		f=$p/lib/systemd/system/$u
		[ -f "$f" ] || continue
		grep -n '@bindir@' "$f" | sed "s#^#$u: #" >>"$tmp/out"
		grep '^ExecStart=' "$f" >"$tmp/exec"
		[ -s "$tmp/exec" ] || echo "$u: no ExecStart" >>"$tmp/out"
		grep -v "^ExecStart=$prefix/bin/gpuscope " "$tmp/exec" | sed "s#^#$u: #" >>"$tmp/out"
	done
	if [ ! -s "$tmp/out" ]; then ok "PREFIX=$prefix: every unit's ExecStart runs $prefix/bin/gpuscope"; else not_ok "PREFIX=$prefix: the units' ExecStart" "$tmp/out"; fi
	if have systemd-analyze; then
		mkdir -p "$tmp/verify"
		: >"$tmp/out"
		for u in $units; do
			sed "s#^ExecStart=$prefix/bin/gpuscope #ExecStart=$p/bin/gpuscope #" "$p/lib/systemd/system/$u" >"$tmp/verify/$u"
			systemd-analyze verify --man=no "$tmp/verify/$u" >>"$tmp/out" 2>&1 || echo "$u: exit $?" >>"$tmp/out"
		done
		if ! grep -q 'gpuscope' "$tmp/out"; then ok "PREFIX=$prefix: systemd-analyze verify takes the installed units"; else not_ok "PREFIX=$prefix: systemd-analyze verify" "$tmp/out"; fi
	else
		skip_missing "PREFIX=$prefix: systemd-analyze verify: no systemd-analyze"
	fi

	# uninstall: nothing of ours left, someone else's file kept
	mkdir -p "$p/bin"
	echo other >"$p/bin/other-tool"
	if ! mk uninstall DESTDIR="$d" PREFIX="$prefix" >"$tmp/make.log" 2>&1; then
		not_ok "PREFIX=$prefix: make uninstall fails" "$tmp/make.log"
		return
	fi
	(cd "$d" && find . -mindepth 1 | sort) >"$tmp/left"
	rel=.$prefix
	printf '%s\n' ./usr "$rel" "$rel/bin" "$rel/bin/other-tool" | sort -u >"$tmp/want"
	if cmp -s "$tmp/left" "$tmp/want"; then
		ok "PREFIX=$prefix: make uninstall removes all it installed and the directories it made, not bin/other-tool"
	else
		diff "$tmp/want" "$tmp/left" >"$tmp/out"
		not_ok "PREFIX=$prefix: make uninstall leaves (>) or removes (<)" "$tmp/out"
	fi
	rm -f "$p/bin/other-tool"
	if mk uninstall DESTDIR="$d" PREFIX="$prefix" >"$tmp/make.log" 2>&1 && [ -z "$(ls -A "$d")" ]; then
		ok "PREFIX=$prefix: make uninstall again: nothing to do, and the DESTDIR is empty"
	else
		find "$d" >>"$tmp/make.log"
		not_ok "PREFIX=$prefix: a second make uninstall" "$tmp/make.log"
	fi
}
run_prefix /usr vendor-completions
run_prefix /usr/local site-functions

# the flight recorder's unit: hardened as serve's, and its ExecStart's options are
# ones gpuscope record takes (one sample on the fake NVML, into a file of its own)
unit=contrib/systemd/gpuscope-record.service
sed -e 's/[[:space:]]*$//' -e '/^[[:space:]]*[#;]/d' "$unit" >"$tmp/unit"
missing=""
for kv in DynamicUser=yes StateDirectory=gpuscope/record NoNewPrivileges=yes CapabilityBoundingSet= \
	ProtectSystem=strict ProtectHome=yes PrivateTmp=yes ProtectKernelTunables=yes ProtectControlGroups=yes \
	DevicePolicy=closed "DeviceAllow=char-nvidia rw" RestrictAddressFamilies=AF_UNIX IPAddressDeny=any \
	SystemCallFilter=@system-service Restart=on-failure "WantedBy=multi-user.target"; do
	grep -qxF "$kv" "$tmp/unit" || missing="$missing [$kv]"
done
if [ -z "$missing" ]; then ok "record unit: hardening settings"; else echo "missing:$missing" >"$tmp/out"; not_ok "record unit: hardening settings" "$tmp/out"; fi
exec_line=$(sed -n 's#^ExecStart=@bindir@/gpuscope ##p' "$tmp/unit")
fake=$O/fakenvml/current/libnvidia-ml.so.1
case $exec_line in
record*" -o /var/lib/gpuscope/record/gpuscope.rec "*" --max-size "*)
	# shellcheck disable=SC2046,SC2016 # the unit's words, its file replaced, a literal $GPUSCOPE_RECORD_OPTS left out
	set -- $(echo "$exec_line" | sed -e "s#/var/lib/gpuscope/record/gpuscope.rec#$tmp/gpuscope.rec#" -e 's/\$GPUSCOPE_RECORD_OPTS//')
	if [ -f "$fake" ] && GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn \
		"$bin" "$@" -c 1 >"$tmp/out" 2>&1 && "$bin" replay "$tmp/gpuscope.rec" info >>"$tmp/out" 2>&1 &&
		grep -q '^samples *1$' "$tmp/out"; then
		ok "record unit: gpuscope $exec_line -c 1 records a sample (into a file of its own)"
	else
		not_ok "record unit: its ExecStart does not record (needs $fake)" "$tmp/out"
	fi
	;;
*)
	echo "$exec_line" >"$tmp/out"
	not_ok "record unit: ExecStart is not gpuscope record -o /var/lib/gpuscope/record/gpuscope.rec --max-size" "$tmp/out"
	;;
esac

echo "1..$n"
[ "$fail" -eq 0 ]
