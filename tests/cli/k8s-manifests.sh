#!/bin/sh
# contrib/kubernetes/ (docs/kubernetes.md), without a cluster:
# - its objects, alone and with each of its components, as kustomize makes
#   them (tests/fixtures/k8s/check.py builds them, for machines without
#   kubectl: Debian has none new enough) and, where kubectl is installed,
#   `kubectl kustomize` makes the same;
# - every object it makes is valid against the Kubernetes schemas
#   (kubernetes-validate from PyPI, strict, for the oldest and newest
#   Kubernetes it is meant for), the ServiceMonitor against the Prometheus
#   Operator's CRD schema (tests/fixtures/k8s/, with jsonschema), and both
#   validators refuse broken copies;
# - the objects fit together (selectors, port names, the namespace) and the
#   DaemonSet has its settings: hostPID, no capabilities, read-only root and
#   mounts, GPU nodes, probes, and a mount for each host path serve reads
#   (as src/ names them);
# - serve takes the DaemonSet's arguments and answers 200 on its probes'
#   paths and the ServiceMonitor's (on the fake NVML library, or the demo),
#   also with the dcgm-names component's;
# - the image recipe copies only files that exist and that hold all make
#   needs (make -n in a copy of them), starts `gpuscope serve`, is not root,
#   and installs what the binary needs (its NEEDED list, the libraries
#   serve loads with dlopen).
# kubernetes-validate is installed into $O/k8s-venv, pinned, on the first
# run; without network those checks are skipped, a failure under
# GPUSCOPE_NO_SKIP=1. The image itself is not built here (its base
# image cannot be fetched). Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
top=$(pwd)
dir=contrib/kubernetes
check=tests/fixtures/k8s/check.py
KV_VERSION=1.37.0                # kubernetes-validate, and its newest Kubernetes
K8S_VERSIONS="1.30.0 1.37.0"     # 1.30: securityContext.appArmorProfile
bin=$O/gpuscope
tmp=$(mktemp -d)
spid=""
# shellcheck disable=SC2317 # called by the traps
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 30; done
}
have() { command -v "$1" >/dev/null 2>&1; }
# check.py's lines as TAP cases, with PREFIX before each
tap() {
	prefix=$1 file=$2
	if [ ! -s "$file" ]; then
		not_ok "$prefix: check.py said nothing" "$file"
		return
	fi
	while IFS= read -r line; do
		case $line in
		"PASS "*) ok "$prefix: ${line#PASS }" ;;
		"FAIL "*) not_ok "$prefix: ${line#FAIL }" ;;
		*) not_ok "$prefix: check.py: $line" ;;
		esac
	done <"$file"
}

files="kustomization.yaml namespace.yaml serviceaccount.yaml daemonset.yaml service.yaml
servicemonitor.yaml Containerfile components/dcgm-names/kustomization.yaml
components/amd-intel/kustomization.yaml"
for f in $files; do
	if [ -f "$dir/$f" ]; then ok "$dir/$f is there"; else not_ok "$dir/$f is missing"; fi
done
undoc=""
for f in $files; do
	grep -q "$f" docs/kubernetes.md 2>/dev/null || undoc="$undoc $f"
done
if [ -z "$undoc" ]; then ok "docs/kubernetes.md names every file of $dir"; else not_ok "docs/kubernetes.md does not name:$undoc"; fi
if grep -q 'kubernetes/' contrib/README.md; then ok "contrib/README.md lists kubernetes/"; else not_ok "contrib/README.md does not list kubernetes/"; fi

# --- 1. kubernetes-validate in $O/k8s-venv, pinned ---------------------------
PYK=""
venv=$O/k8s-venv
if [ -x "$venv/bin/python" ] &&
	[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("kubernetes-validate"))' 2>/dev/null)" = "$KV_VERSION" ]; then
	PYK=$venv/bin/python
elif have python3; then
	rm -rf "$venv"
	mkdir -p "$O"
	if python3 -m venv "$venv" >"$tmp/venv.log" 2>&1 &&
		"$venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KV_VERSION" >>"$tmp/venv.log" 2>&1; then
		PYK=$venv/bin/python
	fi
fi
if [ -z "$PYK" ]; then
	[ -f "$tmp/venv.log" ] && sed 's/^/# /' "$tmp/venv.log" | tail -n 5
	skip_missing "kubernetes-validate==$KV_VERSION could not be installed into $venv: schema checks skipped"
fi

# --- 2. the objects: the base, each component, both ---------------------------
# check.py builds them as kustomize does (the features used here); where
# kubectl is installed, `kubectl kustomize` must make the same objects
built=""
if [ -n "$PYK" ]; then
	for c in base dcgm-names amd-intel all; do
		case $c in
		base) comps="" ;;
		all) comps="$dir/components/dcgm-names $dir/components/amd-intel" ;;
		*) comps="$dir/components/$c" ;;
		esac
		# shellcheck disable=SC2086 # one argument per component
		if "$PYK" "$check" build "$dir" "$tmp/$c.yaml" $comps >"$tmp/err" 2>&1; then
			ok "$c: the objects of $dir${comps:+ with }$(echo $comps | sed "s|$dir/||g")"
			built="$built $c"
		else
			not_ok "$c: the objects of $dir cannot be built" "$tmp/err"
		fi
	done
fi
if have kubectl && [ -n "$built" ]; then
	rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$top/$dir" "$tmp/k")
	for c in $built; do
		if [ "$c" = base ]; then
			kdir=$dir
		else
			kdir=$tmp/k
			mkdir -p "$kdir"
			{
				echo "resources:"
				echo "  - $rel"
				echo "components:"
				if [ "$c" = all ]; then
					echo "  - $rel/components/dcgm-names"
					echo "  - $rel/components/amd-intel"
				else
					echo "  - $rel/components/$c"
				fi
			} >"$kdir/kustomization.yaml"
		fi
		if kubectl kustomize "$kdir" >"$tmp/kubectl-$c.yaml" 2>"$tmp/err"; then
			ok "$c: kubectl kustomize builds it"
			"$PYK" "$check" same "$tmp/$c.yaml" "$tmp/kubectl-$c.yaml" >"$tmp/out" 2>&1
			tap "$c: kubectl kustomize and check.py" "$tmp/out"
		else
			not_ok "$c: kubectl kustomize" "$tmp/err"
		fi
	done
elif [ -n "$built" ]; then
	skip "kubectl kustomize: no kubectl here (Debian has none new enough); the objects are check.py's"
fi

if [ -n "$built" ]; then
	yamls=""
	for b in $built; do yamls="$yamls $tmp/$b.yaml"; done
	# shellcheck disable=SC2086 # one argument per file
	"$PYK" "$check" validate "$(echo $K8S_VERSIONS | tr ' ' ,)" $yamls >"$tmp/out" 2>&1
	tap "schemas" "$tmp/out"
	case " $built " in *" base "*)
		"$PYK" "$check" negative "$KV_VERSION" "$tmp/base.yaml" >"$tmp/out" 2>&1
		tap "validators" "$tmp/out"
		# the host paths serve reads, as src/ names them (below the root that stands for /)
		sock=$(sed -n 's/^#define PODRES_SOCKET *"\(.*\)".*/\1/p' src/backend/podres.h)
		logs=$(sed -n 's/.*kube_list(root, "\([^"]*\)".*/\1/p' src/core/procinfo.c)
		want=""
		[ -n "$sock" ] && want="/${sock%/*}"
		for l in $logs; do want="$want /$l"; done
		if [ -n "$sock" ] && [ "$(echo "$logs" | wc -w)" -eq 2 ]; then
			ok "src/ names the pod-resources socket and the two kubelet listings ($want)"
		else
			not_ok "the pod-resources socket ('$sock') or the kubelet listings ('$logs') not found in src/"
		fi
		# shellcheck disable=SC2086 # one argument per path
		"$PYK" "$check" fit "$tmp/base.yaml" $want >"$tmp/out" 2>&1
		tap "fit" "$tmp/out"
		;;
	esac
	case " $built " in *" dcgm-names "*)
		if "$PYK" "$check" get "$tmp/dcgm-names.yaml" args | tr '\n' ' ' | grep -q -- '--names dcgm '; then
			ok "components/dcgm-names: serve --names dcgm"
		else not_ok "components/dcgm-names does not add --names dcgm"; fi
		;;
	esac
	case " $built " in *" amd-intel "*)
		"$PYK" - "$tmp/amd-intel.yaml" >"$tmp/out" 2>&1 <<'EOF'
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x and x["kind"] == "DaemonSet"][0]
pod = d["spec"]["template"]["spec"]
c = pod["containers"][0]
caps = c["securityContext"]["capabilities"]
keys = {e["key"] for t in pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] for e in t["matchExpressions"]}
print("PASS SYS_PTRACE only" if caps.get("add") == ["SYS_PTRACE"] and caps.get("drop") == ["ALL"] else "FAIL capabilities %r" % caps)
print("PASS no NVIDIA runtime" if "runtimeClassName" not in pod and "env" not in c else "FAIL still the NVIDIA runtime")
print("PASS AMD and Intel nodes" if keys == {"feature.node.kubernetes.io/pci-1002.present", "feature.node.kubernetes.io/pci-8086.present"} else "FAIL nodes %r" % keys)
EOF
		tap "components/amd-intel" "$tmp/out"
		;;
	esac
fi

# --- 3. serve with the DaemonSet's arguments, on its probes' paths ----------
if [ -n "$PYK" ] && [ -x "$bin" ] && have curl && case " $built " in *" base "*) true ;; *) false ;; esac; then
	if [ -f "$O/fakenvml/current/libnvidia-ml.so.1" ]; then
		how="the fake NVML library"
		set -- env GPUSCOPE_NVML="$O/fakenvml/current/libnvidia-ml.so.1" \
			FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn GPUSCOPE_PROC_ROOT=tests/fixtures/proc \
			GPUSCOPE_SYSFS_ROOT=tests/fixtures/serve/sys "$bin" serve
	else
		how="the demo"
		set -- "$bin" --demo serve
	fi
	for b in base dcgm-names; do
		case " $built " in *" $b "*) ;; *) continue ;; esac
		"$PYK" "$check" get "$tmp/$b.yaml" args >"$tmp/args" 2>&1
		"$PYK" "$check" get "$tmp/$b.yaml" probes | sort -u >"$tmp/paths" 2>&1
		# the manifest's arguments, with --listen's address made a free local port
		: >"$tmp/argv"
		prev=""
		while IFS= read -r a; do
			if [ "$prev" = --listen ]; then a=127.0.0.1:0; fi
			printf '%s\n' "$a" >>"$tmp/argv"
			prev=$a
		done <"$tmp/args"
		: >"$tmp/serve.err"
		# shellcheck disable=SC2046 # the arguments have no blanks
		"$@" $(cat "$tmp/argv") 2>"$tmp/serve.err" &
		spid=$!
		url=""
		i=0
		while [ $i -lt 100 ]; do
			url=$(sed -n 's|.*listening on \(http://[^ ]*\).*|\1|p' "$tmp/serve.err")
			[ -n "$url" ] && break
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		if [ -z "$url" ]; then
			not_ok "$b: serve takes the DaemonSet's arguments ($(tr '\n' ' ' <"$tmp/args"))" "$tmp/serve.err"
		else
			ok "$b: serve takes the DaemonSet's arguments, on $how"
			while IFS= read -r p; do
				code=000
				i=0
				while [ $i -lt 100 ]; do
					code=$(curl -s -o "$tmp/body" -w '%{http_code}' -m 2 "${url%/}$p")
					[ "$code" = 200 ] && break
					sleep 0.1
					i=$((i + 1))
				done
				if [ "$code" = 200 ]; then ok "$b: GET $p: 200"; else not_ok "$b: GET $p: $code, not 200" "$tmp/body"; fi
				if [ "$b" = dcgm-names ] && [ "$p" = /metrics ]; then
					if grep -q '^DCGM_FI_DEV_' "$tmp/body"; then ok "$b: /metrics has dcgm-exporter's names"; else not_ok "$b: no DCGM_FI_DEV_ series" "$tmp/body"; fi
				fi
			done <"$tmp/paths"
			code=$(curl -s -o /dev/null -w '%{http_code}' -m 2 "${url%/}/health")
			if [ "$code" = 404 ]; then ok "$b: a path serve does not have is 404 (/health)"; else not_ok "$b: /health answered $code"; fi
		fi
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		spid=""
	done
elif [ ! -x "$bin" ]; then
	skip "serve with the DaemonSet's arguments: needs $bin"
elif ! have curl; then
	skip_missing "serve with the DaemonSet's arguments: no curl"
else
	skip "serve with the DaemonSet's arguments: no build of the manifests or no kubernetes-validate"
fi

# --- 4. the image recipe ------------------------------------------------------
cf=$dir/Containerfile
# COPY sources (not --from): each exists
awk '$1 == "COPY" && $2 !~ /^--from=/ { for (i = 2; i < NF; i++) print $i }' "$cf" >"$tmp/copies"
if [ -s "$tmp/copies" ]; then
	missing=""
	while IFS= read -r s; do [ -e "$s" ] || missing="$missing $s"; done <"$tmp/copies"
	if [ -z "$missing" ]; then ok "Containerfile: every COPY source exists ($(tr '\n' ' ' <"$tmp/copies"))"; else not_ok "Containerfile copies what is not there:$missing"; fi
	# make finds all it needs in them
	mkdir -p "$tmp/ctx"
	while IFS= read -r s; do
		mkdir -p "$tmp/ctx/$(dirname "$s")"
		cp -R "$s" "$tmp/ctx/$(dirname "$s")/"
	done <"$tmp/copies"
	rm -rf "$tmp/ctx/build"
	if make -n -C "$tmp/ctx" O=build build/gpuscope install PREFIX=/usr/local DESTDIR=/out >"$tmp/make" 2>&1; then
		ok "Containerfile: make has all it needs in what is copied (make -n build/gpuscope install)"
	else
		not_ok "Containerfile: make lacks files in what is copied" "$tmp/make"
	fi
else
	not_ok "Containerfile: no COPY"
fi
froms=$(awk '$1 == "FROM" { print $2 }' "$cf" | sort -u)
if [ "$froms" = docker.io/library/debian:bookworm-slim ] && [ "$(grep -c '^FROM ' "$cf")" -eq 2 ]; then
	ok "Containerfile: two stages, both Debian bookworm-slim"
else not_ok "Containerfile: stages from '$froms'"; fi
if grep -q '^ENTRYPOINT \["/usr/local/bin/gpuscope", "serve"\]' "$cf"; then ok "Containerfile: ENTRYPOINT gpuscope serve"; else not_ok "Containerfile: ENTRYPOINT is not gpuscope serve"; fi
user=$(awk '$1 == "USER" { u = $2 } END { print u }' "$cf")
case ${user%%:*} in
"" | 0 | root) not_ok "Containerfile: runs as root ('$user')" ;;
*) ok "Containerfile: not root (USER $user)" ;;
esac
if [ -n "$PYK" ] && case " $built " in *" base "*) true ;; *) false ;; esac; then
	port=$("$PYK" "$check" get "$tmp/base.yaml" port)
	if grep -q "^EXPOSE $port\$" "$cf"; then ok "Containerfile: EXPOSE $port, the DaemonSet's port"; else not_ok "Containerfile: does not EXPOSE $port"; fi
	image=$("$PYK" "$check" get "$tmp/base.yaml" image)
	version=$(sed -n 's/^VERSION := *//p' Makefile)
	if [ "${image##*:}" = "$version" ]; then ok "the image's tag is gpuscope's version ($image)"; else not_ok "the image is $image, gpuscope is $version"; fi
fi
# the runtime stage installs what the binary needs
runtime=$(awk '/^FROM /{ s++ } s == 2' "$cf")
if [ -x "$bin" ] && have readelf; then
	readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
	# (a SAN=1 build's sanitizer runtimes are not the image's: it is built without)
	extra=$(grep -v -x -E 'libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux[-a-z0-9_.]*\.so\.[0-9]|lib[amlt]san\.so\.[0-9]+|libubsan\.so\.[0-9]+' "$tmp/needed" | tr '\n' ' ')
	if [ -z "$extra" ]; then
		ok "$bin needs no library but the C library's, which bookworm-slim has (NEEDED: $(tr '\n' ' ' <"$tmp/needed"))"
	else
		# each extra library must come from a package the runtime stage installs
		left=""
		for l in $extra; do
			pkg=$(dpkg -S "*/$l" 2>/dev/null | head -n 1 | sed 's/[:,].*//')
			[ -n "$pkg" ] && printf '%s\n' "$runtime" | grep -q -w -- "$pkg" || left="$left $l(${pkg:-?})"
		done
		if [ -z "$left" ]; then ok "Containerfile installs the packages of $bin's libraries ($extra)"; else not_ok "Containerfile's runtime stage lacks the packages of:$left"; fi
	fi
elif [ ! -x "$bin" ]; then
	skip "the binary's NEEDED libraries: needs $bin"
else
	skip_missing "the binary's NEEDED libraries: no readelf (binutils)"
fi
# what serve loads with dlopen: libmicrohttpd always, libcrypt for basic auth
mhd=$(sed -n 's/.*"\(libmicrohttpd\.so\.[0-9]*\)".*/\1/p' src/serve/http.c | head -n 1)
crypt=$(sed -n 's/.*CRYPT_LIBRARY *"\(libcrypt\.so\.[0-9]*\)".*/\1/p' src/serve/*.c src/serve/*.h 2>/dev/null | head -n 1)
for so in $mhd $crypt; do
	# Debian names a library's package after its soname: libfoo.so.12 -> libfoo12
	pkg=$(echo "$so" | sed 's/\.so\./-/; s/^\(lib[a-z]*\)-\([0-9]*\)$/\1\2/')
	if printf '%s\n' "$runtime" | grep -q -w -- "$pkg" || { [ "$pkg" = libcrypt1 ] && grep -q 'libcrypt1' "$cf"; }; then
		ok "Containerfile: $so (serve's dlopen) from $pkg"
	else
		not_ok "Containerfile: the runtime stage does not install $pkg, for serve's $so"
	fi
done
[ -n "$mhd" ] || not_ok "the name of libmicrohttpd that serve loads not found in src/serve/http.c"

echo "1..$n"
[ "$fail" -eq 0 ]
