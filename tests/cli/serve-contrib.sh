#!/bin/sh
# The files of contrib/ that go with gpuscope serve (contrib/README.md):
# - the Prometheus alerting rules pass 'promtool check rules' and their unit
#   tests 'promtool test rules'; every alert fires in those tests and has a
#   severity and summary, description and runbook_url annotations; its
#   runbook_url points to its own section of runbook.md (the base URL from
#   the external label gpuscope_runbook_url), and runbook.md has a section
#   for every alert and for no other;
# - every gpuscope command the operator is told to run (the descriptions'
#   "Next, on INSTANCE: `...`" as the unit tests fill them in, the rules
#   themselves, runbook.md, contrib/README.md) exists and takes its options:
#   each is run with --help added (which also looks up doctor --explain's
#   id), doctor ones also for real on an empty machine tree (--only's check
#   names), status and query ones under --demo; every finding id that the
#   rules and runbook.md name is in 'gpuscope doctor --list';
# - the Grafana dashboard is JSON with unique panel ids, the datasource,
#   instance and gpu variables, a unit on every chart and stat, and PromQL
#   that promtool parses;
# - every gpuscope_* name in the rules and the dashboard is listed in
#   docs/metrics.md;
# - the systemd unit runs 'gpuscope serve' with its hardening settings (and
#   passes 'systemd-analyze verify' where systemd is installed);
# - the web configuration example has TLS and a bcrypt hash of its
#   documented password, and serve on the fake NVML library takes it.
# Checks that need promtool, python3, systemd-analyze, openssl or curl are
# skipped without them. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
rules=contrib/prometheus/gpuscope-alerts.yml
rtests=contrib/prometheus/gpuscope-alerts.test.yml
dash=contrib/grafana/gpuscope-dashboard.json
unit=contrib/systemd/gpuscope-serve.service
webconf=contrib/web-config.example.yml
runbook=contrib/prometheus/runbook.md
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
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 40; done
}
have() { command -v "$1" >/dev/null 2>&1; }

for f in "$rules" "$rtests" "$runbook" "$dash" "$unit" "$webconf" contrib/README.md; do
	if [ -f "$f" ]; then ok "$f is there"; else not_ok "$f is missing"; fi
done

# 1. alerting rules
if have promtool; then
	if promtool check rules "$rules" >"$tmp/out" 2>&1; then ok "promtool check rules"; else not_ok "promtool check rules" "$tmp/out"; fi
	if promtool test rules "$rtests" >"$tmp/out" 2>&1; then ok "promtool test rules"; else not_ok "promtool test rules" "$tmp/out"; fi
else
	skip_missing "promtool check rules: no promtool (Debian: apt-get install prometheus)"
	skip_missing "promtool test rules: no promtool"
fi

# every alert: a severity, the three annotations, and a test in which it fires
awk '
	function done_() {
		if (name == "") return
		for (k = 1; k <= 4; k++) if (!(want[k] in seen)) print name ": no " want[k]
		delete seen
	}
	BEGIN { want[1] = "severity"; want[2] = "summary"; want[3] = "description"; want[4] = "runbook_url" }
	/^ *- alert: / { done_(); name = $3; next }
	/^ *- (record|name): / { done_(); name = ""; next }
	/^ +runbook:/ { print name ": the old runbook annotation (its commands go at the end of the description)" }
	{ for (k = 1; k <= 4; k++) if ($0 ~ "^ +" want[k] ":") seen[want[k]] = 1 }
	END { done_() }
' "$rules" >"$tmp/out"
if [ ! -s "$tmp/out" ]; then ok "every alert has a severity, a summary, a description and a runbook_url"; else not_ok "alerts without labels or annotations" "$tmp/out"; fi
# runbook_url: the operator's base URL (an external label) and the alert's own
# section of runbook.md; the description ends with the commands to run
awk -v q="'" '
	/^ *- alert: / { name = $3; next }
	/^ *- (record|name): / { name = ""; next }
	name != "" && /^ +runbook_url:/ {
		v = $0; sub(/^ +runbook_url: */, "", v)
		want = q "{{ with $externalLabels.gpuscope_runbook_url }}{{ . }}#" tolower(name) "{{ end }}" q
		if (v != want) print name ": runbook_url is " v ", not " want
	}
	name != "" && /^ +description:/ && index($0, "Next, on {{ $labels.instance }}: `") == 0 {
		print name ": the description does not end with \"Next, on {{ $labels.instance }}: `COMMAND`\""
	}
' "$rules" >"$tmp/out"
if [ ! -s "$tmp/out" ]; then ok "every runbook_url links to its alert's section; every description says what to run next"; else not_ok "runbook_url or description" "$tmp/out"; fi
sed -n 's/^## *//p' "$runbook" | sed 's/[[:space:]]*$//' | sort >"$tmp/sections"
sed -n 's/^ *- alert: *//p' "$rules" | sort -u >"$tmp/alertnames"
{
	comm -23 "$tmp/alertnames" "$tmp/sections" | sed 's/^/no section in runbook.md: /'
	comm -13 "$tmp/alertnames" "$tmp/sections" | sed 's/^/a section of runbook.md for no alert: /'
	sort "$tmp/sections" | uniq -d | sed 's/^/two sections: /'
} >"$tmp/out"
if [ -s "$tmp/alertnames" ] && [ ! -s "$tmp/out" ]; then
	ok "runbook.md has a section for each of the $(wc -l <"$tmp/alertnames" | tr -d ' ') alerts and no other"
else
	not_ok "runbook.md and the alerts differ" "$tmp/out"
fi
awk '/^ *alertname: / { a = $2; next } /^ *exp_alerts: *\[\] *$/ { a = ""; next }
	/^ *exp_alerts: *$/ { if (a != "") print a; a = "" }' "$rtests" | sort -u >"$tmp/fired"
sed -n 's/^ *- alert: *//p' "$rules" | sort -u >"$tmp/alerts"
comm -23 "$tmp/alerts" "$tmp/fired" >"$tmp/out"
if [ -s "$tmp/alerts" ] && [ ! -s "$tmp/out" ]; then
	ok "every alert ($(wc -l <"$tmp/alerts" | tr -d ' ')) fires in the unit tests"
else
	not_ok "alerts that no test sees firing" "$tmp/out"
fi
if grep -q 'up{job=~"\.\*gpuscope\.\*"}' "$rules"; then ok "the exporter-down rule matches the job by one regex"; else not_ok "no up{job=~\".*gpuscope.*\"} in $rules"; fi

# 1b. the commands the alerts, the runbook and the README tell the operator to run
bin=$O/gpuscope
# backquoted spans that start with gpuscope (or a path to it), outside fenced
# blocks, and the lines of fenced blocks that do; cut at a comment or a pipe
mdcmds() {
	awk '
		/^ *```/ { fence = !fence; next }
		fence { if ($0 ~ /^ *([^ ]*\/)?gpuscope /) print; next }
		{ buf = buf $0 "\n" }
		END {
			n = split(buf, part, "`")
			for (i = 2; i <= n; i += 2) {
				s = part[i]; gsub(/\n/, " ", s)
				if (s ~ /^([^ ]*\/)?gpuscope /) print s
			}
		}
	' "$1" | sed -e 's/^ *//' -e 's/ #.*//' -e 's/[|;&<>].*//' -e 's/^[^ ]*\/gpuscope /gpuscope /' -e 's/ *$//'
}
# the backquoted spans of each line
spans() { awk -F'`' '{ for (i = 2; i < NF; i += 2) print $i }'; }
# finding ids named in text: those a template completes (health.gpu.{{ ... }}) left out
ids_in() {
	sed -e 's/[a-z0-9_.]*\.{{[^}]*}}//g' "$@" | grep -oE '(^|[^a-z0-9_./-])(setup|health|log|workload)\.[a-z0-9_]+(\.[a-z0-9_]+)+' | sed 's/^[^a-z]//' | sort -u
}
if [ -x "$bin" ]; then
	# the descriptions as the unit tests fill them in
	sed -n 's/^ *description: *"\(.*\)" *$/\1/p' "$rtests" | spans | grep '^gpuscope ' | sort -u >"$tmp/cmds.tests"
	mdcmds "$runbook" | sort -u >"$tmp/cmds.runbook"
	mdcmds contrib/README.md | sort -u >"$tmp/cmds.readme"
	mkdir -p "$tmp/root"
	: >"$tmp/out"
	set -f
	for src in tests runbook readme; do
		[ -s "$tmp/cmds.$src" ] || echo "no gpuscope command found in the $src" >>"$tmp/out"
		while IFS= read -r cmd; do
			# shellcheck disable=SC2086 # the command's words
			set -- ${cmd#gpuscope }
			printf 'x\n' | "$bin" "$@" --help >"$tmp/cmd.out" 2>&1
			rc=$?
			if [ "$rc" -ne 0 ]; then
				echo "$src: '$cmd --help' exits $rc: $(head -n 2 "$tmp/cmd.out" | tr '\n' ' ')" >>"$tmp/out"
				continue
			fi
			# placeholders (GPU, ID, FILE) or an explanation: --help was the check
			case " $* " in *" --explain"* | *" --list "* | *" --help "*) continue ;; esac
			placeholder=""
			for w in "$@"; do case $w in *[!A-Z_]*) ;; *) placeholder=$w ;; esac; done
			[ -n "$placeholder" ] && continue
			sub=${1:-status}
			case $sub in -*) sub=status ;; esac
			case $sub in
			doctor)
				# for real, on an empty machine tree and no NVIDIA library: the
				# options are checked (--only's names too); what it finds does not
				# matter, exit 3 is "could not run"; --watch's wait left out
				shift
				keep=""
				skipnext=""
				for w in "$@"; do
					if [ -n "$skipnext" ]; then skipnext=""; continue; fi
					case $w in --watch) skipnext=1 ;; --watch=*) ;; *) keep="$keep $w" ;; esac
				done
				# shellcheck disable=SC2086
				GPUSCOPE_ROOT=$tmp/root GPUSCOPE_NVML=$tmp/root/libnvidia-ml.so.1 \
					"$bin" doctor $keep --log /dev/null >"$tmp/cmd.out" 2>&1 </dev/null
				rc=$?
				[ "$rc" -le 2 ] || echo "$src: '$cmd' (on an empty machine) exits $rc: $(grep '^gpuscope:' "$tmp/cmd.out" | head -n 2 | tr '\n' ' ')" >>"$tmp/out"
				;;
			status | query)
				"$bin" --demo "$@" >"$tmp/cmd.out" 2>&1 </dev/null
				rc=$?
				[ "$rc" -eq 0 ] || echo "$src: 'gpuscope --demo ${cmd#gpuscope }' exits $rc: $(grep '^gpuscope:' "$tmp/cmd.out" | head -n 2 | tr '\n' ' ')" >>"$tmp/out"
				;;
			esac
		done <"$tmp/cmds.$src"
	done
	set +f
	k=$(cat "$tmp/cmds.tests" "$tmp/cmds.runbook" "$tmp/cmds.readme" | sort -u | wc -l | tr -d ' ')
	if [ ! -s "$tmp/out" ]; then ok "the $k gpuscope commands of the descriptions, runbook.md and README.md exist and take their options"; else not_ok "gpuscope commands that do not work" "$tmp/out"; fi

	# the rules themselves, templates and all: each command's subcommand and
	# option names against its --help, and every finding id they or
	# runbook.md name against doctor --list
	: >"$tmp/out"
	grep -E '^ +(summary|description): ' "$rules" >"$tmp/annotations"
	spans <"$tmp/annotations" | grep '^gpuscope ' | sed 's/{{[^}]*}}/ /g' | sort -u >"$tmp/cmds.rules"
	[ -s "$tmp/cmds.rules" ] || echo "no gpuscope command in the rules' annotations" >>"$tmp/out"
	set -f
	while IFS= read -r cmd; do
		# shellcheck disable=SC2086
		set -- ${cmd#gpuscope }
		sub=${1:-status}
		case $sub in -*) sub=status ;; *) shift ;; esac
		if ! "$bin" "$sub" --help >"$tmp/help" 2>&1; then
			echo "rules: '$cmd': no subcommand $sub" >>"$tmp/out"
			continue
		fi
		for w in "$@"; do
			case $w in
			-*)
				o=${w%%=*}
				grep -qE -e "(^|[^a-z-])$o([^a-z-]|\$)" "$tmp/help" || echo "rules: '$cmd': $sub has no option $o" >>"$tmp/out"
				;;
			esac
		done
	done <"$tmp/cmds.rules"
	set +f
	"$bin" doctor --list 2>/dev/null | awk '{ print $1 }' | sort -u >"$tmp/known"
	ids_in "$tmp/annotations" "$runbook" >"$tmp/named"
	[ -s "$tmp/known" ] || echo "gpuscope doctor --list lists nothing" >>"$tmp/out"
	comm -23 "$tmp/named" "$tmp/known" | sed 's/^/a finding id doctor does not know: /' >>"$tmp/out"
	if [ ! -s "$tmp/out" ]; then
		ok "the rules' $(wc -l <"$tmp/cmds.rules" | tr -d ' ') command forms and $(wc -l <"$tmp/named" | tr -d ' ') finding ids exist"
	else
		not_ok "commands or finding ids in the rules" "$tmp/out"
	fi
else
	skip_missing "gpuscope commands of the alerts, runbook.md and README.md: needs $bin"
	skip_missing "commands and finding ids of the rules: needs $bin"
fi

# 2. the dashboard, and the metric names everywhere
if have python3; then
	if python3 - "$dash" "$rules" docs/metrics.md "$tmp/promql.yml" >"$tmp/out" 2>&1 <<'EOF'; then
import json, re, sys
dash_path, rules_path, metrics_path, promql_out = sys.argv[1:5]
bad = []
d = json.load(open(dash_path))
print("# JSON ok")

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
ps = list(panels(d.get("panels", [])))
ids = [p.get("id") for p in ps]
dup = sorted({i for i in ids if ids.count(i) > 1 or i is None}, key=str)
if dup: bad.append("panel ids not unique: %s" % dup)
if not 35 <= d.get("schemaVersion", 0) <= 41: bad.append("schemaVersion %s" % d.get("schemaVersion"))

var = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
ds = var.get("datasource", {})
if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
    bad.append("no datasource variable of type prometheus")
for name in ("instance", "gpu"):
    v = var.get(name, {})
    q = v.get("query")
    q = q.get("query", "") if isinstance(q, dict) else (q or "")
    if v.get("type") != "query" or not v.get("multi") or not v.get("includeAll") or "label_values(" not in q:
        bad.append("variable %s: not a multi, include-all label_values query" % name)

exprs = []
for p in ps:
    if p.get("type") == "row":
        continue
    if p.get("datasource", {}).get("uid") != "${datasource}":
        bad.append("panel %s (%s): datasource is not ${datasource}" % (p.get("id"), p.get("title")))
    if p.get("type") in ("timeseries", "stat", "gauge", "bargauge") and not p.get("fieldConfig", {}).get("defaults", {}).get("unit"):
        bad.append("panel %s (%s): no unit" % (p.get("id"), p.get("title")))
    if not p.get("targets"):
        bad.append("panel %s (%s): no query" % (p.get("id"), p.get("title")))
    for t in p.get("targets", []):
        e = t.get("expr", "")
        if not e:
            bad.append("panel %s: a target without expr" % p.get("id"))
        exprs.append(e)
        for sel in re.findall(r"gpuscope_gpu_[a-z0-9_]+\{([^}]*)\}", e):
            if "$instance" not in sel or "$gpu" not in sel:
                bad.append("panel %s (%s): a selector without $instance and $gpu: %s" % (p.get("id"), p.get("title"), e))
for v in var.values():
    q = v.get("query")
    exprs.append(q.get("query", "") if isinstance(q, dict) else str(q or ""))

# the PromQL, for promtool to parse as recording rules
with open(promql_out, "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    k = 0
    for e in exprs:
        if not e.startswith("gpuscope") and "(" not in e and "{" not in e:
            continue
        m = re.match(r"label_values\((.*),\s*\w+\)$", e)
        if m:
            e = m.group(1)
        e = e.replace("$instance", ".*").replace("$gpu", ".*").replace("$__rate_interval", "1m").replace("$__range", "1h")
        k += 1
        f.write("      - record: dashboard:expr_%d\n        expr: %s\n" % (k, json.dumps(e)))

# every gpuscope_ name, in the dashboard and in the rules (PromQL only, not comments)
doc = open(metrics_path).read()
documented = set(re.findall(r"`(gpuscope_[a-z0-9_]+)[`{]", doc))
names = {}
for e in exprs:
    for m in re.findall(r"\bgpuscope_[a-z0-9_]+", e):
        names.setdefault(m, set()).add("dashboard")
for line in open(rules_path):
    s = line.strip()
    if s.startswith("#") or s.startswith(("summary:", "description:", "runbook_url:")):
        continue
    for m in re.findall(r"\bgpuscope_[a-z0-9_]+", s):
        names.setdefault(m, set()).add("rules")
missing = sorted(set(names) - documented)
for m in missing:
    bad.append("%s (%s) is not in %s" % (m, ", ".join(sorted(names[m])), metrics_path))
print("# %d panels, %d queries, %d metric names" % (len(ps), len(exprs), len(names)))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
		ok "dashboard: JSON, unique panel ids, variables, units; every metric name in docs/metrics.md"
	else
		not_ok "dashboard or metric names" "$tmp/out"
	fi
	if [ ! -s "$tmp/promql.yml" ]; then
		not_ok "dashboard PromQL: no query extracted from the dashboard"
	elif have promtool; then
		if promtool check rules "$tmp/promql.yml" >"$tmp/out" 2>&1; then ok "dashboard: promtool parses every query"; else not_ok "dashboard: a query does not parse" "$tmp/out"; fi
	else
		skip_missing "dashboard PromQL: no promtool"
	fi
else
	skip_missing "dashboard: no python3 to read JSON"
	skip_missing "dashboard PromQL: no python3"
fi

# 3. the systemd unit (its settings, without systemd)
sed -e 's/[[:space:]]*$//' -e '/^[[:space:]]*[#;]/d' "$unit" >"$tmp/unit"
missing=""
for kv in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
	ProtectKernelTunables=yes ProtectKernelModules=yes ProtectControlGroups=yes DevicePolicy=closed \
	"DeviceAllow=char-nvidia-frontend rw" "DeviceAllow=char-nvidia rw" "DeviceAllow=/dev/kmsg r" \
	"RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK" SystemCallFilter=@system-service \
	SystemCallErrorNumber=EPERM CapabilityBoundingSet= Restart=on-failure \
	Environment=GPUSCOPE_LISTEN=127.0.0.1:9947 "SupplementaryGroups=video render"; do
	grep -qxF "$kv" "$tmp/unit" || missing="$missing [$kv]"
done
for k in MemoryMax TasksMax; do grep -q "^$k=[0-9]" "$tmp/unit" || missing="$missing [$k=]"; done
if [ -z "$missing" ]; then ok "unit: hardening settings"; else echo "missing:$missing" >"$tmp/out"; not_ok "unit: hardening settings" "$tmp/out"; fi
# shellcheck disable=SC2016 # a literal ${GPUSCOPE_LISTEN}
if grep -q '^ExecStart=@bindir@/gpuscope serve --listen \${GPUSCOPE_LISTEN}' "$tmp/unit"; then
	ok "unit: ExecStart runs gpuscope serve --listen"
else
	not_ok "unit: no ExecStart of gpuscope serve --listen" "$tmp/unit"
fi
# what would break the per-process metrics, the GPUs or the kernel log checks
if grep -E '^(ProtectProc=(invisible|noaccess|ptraceable)|ProcSubset=pid|PrivateDevices=(yes|true)|ProtectKernelLogs=(yes|true)|PrivateUsers=(yes|true))$' "$tmp/unit" >"$tmp/out"; then
	not_ok "unit: a setting that hides processes, GPUs or the kernel log" "$tmp/out"
else
	ok "unit: processes, GPU nodes and /dev/kmsg stay visible"
fi
# systemd-analyze verify of unit file $1 (named $2 in messages), a template of make install
# (@bindir@): the binary is not installed here, so a copy that runs true instead is verified
verify_unit() {
	if ! have systemd-analyze; then
		skip_missing "$2: no systemd-analyze"
		return
	fi
	mkdir -p "$tmp/unitdir"
	sed "s#^ExecStart=@bindir@/gpuscope #ExecStart=$(command -v true) #" "$1" >"$tmp/unitdir/${1##*/}"
	systemd-analyze verify --man=no "$tmp/unitdir/${1##*/}" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && ! grep -q "$(basename "$1" .service)" "$tmp/out"; then
		ok "$2: systemd-analyze verify"
	else
		not_ok "$2: systemd-analyze verify (exit $rc)" "$tmp/out"
	fi
}
verify_unit "$unit" unit

# 3b. the queue daemon's unit: jobs outlive a restart of the daemon (KillMode=process), the daemon
# owns its cgroups (Delegate=yes), nothing that jobs would inherit and users would miss
qunit=contrib/systemd/gpuscope-queued.service
missing=""
for kv in KillMode=process Delegate=yes Restart=on-failure RuntimeDirectory=gpuscope StateDirectory=gpuscope/queue \
	"ExecStart=@bindir@/gpuscope queued"; do
	grep -qxF "$kv" "$qunit" || missing="$missing [$kv]"
done
grep -Eq '^(NoNewPrivileges|ProtectHome|PrivateTmp|RestrictSUIDSGID|DeviceAllow|PrivateDevices)=' "$qunit" &&
	missing="$missing [a setting jobs would inherit]"
if [ -z "$missing" ]; then ok "queued unit: settings"; else echo "missing:$missing" >"$tmp/out"; not_ok "queued unit: settings" "$tmp/out"; fi
verify_unit "$qunit" "queued unit"
if "$bin" queued --check-config --config contrib/queue.conf >"$tmp/out" 2>&1; then
	ok "contrib/queue.conf: gpuscope queued --check-config accepts it"
else
	not_ok "contrib/queue.conf: refused by --check-config" "$tmp/out"
fi

# 4. the web configuration example
hash=$(sed -n 's/^  prometheus: *//p' "$webconf")
# shellcheck disable=SC2016 # a literal $2y$
if grep -q '^tls_server_config:' "$webconf" && grep -q '^  cert_file: tls.crt' "$webconf" &&
	grep -q '^  key_file: tls.key' "$webconf" && grep -q '^basic_auth_users:' "$webconf" &&
	[ "${#hash}" -eq 60 ] && case $hash in '$2'[aby]'$'*) true ;; *) false ;; esac; then
	ok "web config example: TLS, and user prometheus with a bcrypt hash"
else
	not_ok "web config example: no TLS section or no bcrypt hash" "$webconf"
fi
if grep -q 'example-only' contrib/README.md && grep -q 'example-only' "$webconf"; then
	ok "the example's password is documented"
else
	not_ok "the example's password (example-only) is not documented"
fi
fake=$O/fakenvml/current/libnvidia-ml.so.1
if [ -x "$bin" ] && [ -f "$fake" ] && have openssl && have curl && have python3; then
	# serve takes the example as it is, with a certificate made here
	cp "$webconf" "$tmp/web-config.yml"
	if openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
		-keyout "$tmp/tls.key" -out "$tmp/tls.crt" >"$tmp/openssl.log" 2>&1; then
		: >"$tmp/serve.log"
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn \
			"$bin" serve --listen "127.0.0.1:$port" --web-config "$tmp/web-config.yml" \
			--doctor-interval 0 >"$tmp/serve.log" 2>&1 &
		spid=$!
		i=0
		while [ $i -lt 50 ] && ! grep -q 'listening' "$tmp/serve.log"; do
			sleep 0.1
			i=$((i + 1))
		done
		url=https://127.0.0.1:$port/metrics
		c_none=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$tmp/tls.crt" "$url")
		c_bad=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$tmp/tls.crt" -u prometheus:wrong "$url")
		c_good=$(curl -s -o "$tmp/metrics" -w '%{http_code}' --cacert "$tmp/tls.crt" -u prometheus:example-only "$url")
		if [ "$c_none" = 401 ] && [ "$c_bad" = 401 ] && [ "$c_good" = 200 ] && grep -q '^gpuscope_gpus ' "$tmp/metrics"; then
			ok "serve takes the example: https, 401 without or with a wrong password, 200 with example-only"
		else
			echo "no password: $c_none, wrong: $c_bad, example-only: $c_good" >"$tmp/out"
			not_ok "serve with the example web config" "$tmp/out" "$tmp/serve.log"
		fi
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		spid=""
	else
		not_ok "openssl could not make a test certificate" "$tmp/openssl.log"
	fi
else
	skip_missing "serve with the example web config: needs $bin, $fake, openssl, curl and python3"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
