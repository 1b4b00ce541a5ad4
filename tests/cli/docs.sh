#!/bin/sh
# The documentation says what the program does: every option of --help is in
# the man page, every JSON key gpuscope prints is in docs/json-schema.md, every
# scenario key the suite uses is in docs/scenario-format.md, and the README's
# two commands are make targets. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP $bin is not built"
	exit 0
fi

# 1. options of --help (and each command's) documented in the man page
missing="" nopt=0 badhelp=""
"$bin" --help >/dev/null 2>&1 || badhelp=" --help"
for c in query watch record replay top doctor fit specs bench serve queue queued; do
	"$bin" $c --help >/dev/null 2>&1 || badhelp="$badhelp $c"
done
for opt in $( ("$bin" --help; for c in query watch record replay top doctor fit specs bench serve queue queued; do "$bin" $c --help; done) 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
	nopt=$((nopt + 1))
	grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" man/gpuscope.1 || missing="$missing $opt"
done
if [ -n "$badhelp" ]; then
	not_ok "--help failed (exit not 0) for:$badhelp"
elif [ "$nopt" -lt 20 ]; then
	not_ok "--help listed only $nopt options"
elif [ -z "$missing" ]; then ok "every option of --help ($nopt) is in man/gpuscope.1"; else not_ok "options missing from man/gpuscope.1:$missing"; fi

# 2. every JSON key printed is documented
env_fake() {
	GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600 \
		GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc \
		GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd "$@"
}
# the mixed machine adds what AMD, Intel and their DRM clients print; each
# command must succeed (fit: exit 0 fits, 1 does not), or its stderr is shown
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT INT TERM
i=0 bad=""
json_of() { # WANT-EXIT COMMAND...: its output to $tmpd/N.json
	want=$1
	shift
	i=$((i + 1))
	"$@" >"$tmpd/$i.json" 2>"$tmpd/$i.err"
	rc=$?
	case " $want " in
	*" $rc "*) ;;
	*)
		bad="$bad $i"
		{ echo "$* -> exit $rc, wanted $want"; head -n 5 "$tmpd/$i.err"; } >"$tmpd/$i.why"
		;;
	esac
}
json_of 0 env_fake env FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$bin" --json
json_of 0 "$bin" --demo --json
json_of 0 env_fake env FAKE_NVML_SCENARIO=tests/scenarios/mixed-8.scn "$bin" --root tests/fixtures/mixed --json
# fit and specs: the catalog and the spec table are built in
json_of 0 "$bin" fit 8b --gpu "h100 sxm" --tokens 1e9 --json
json_of 0 "$bin" fit 8b --task full --gpus 8 --zero 3 --gpu "h100 sxm" --json
json_of "0 1" "$bin" fit 70b --task qlora --rent --json
json_of 0 "$bin" --demo fit 7b --json
json_of 0 "$bin" specs --json
if [ -z "$bad" ]; then
	ok "the $i commands whose JSON keys are checked succeed"
else
	set --
	for j in $bad; do set -- "$@" "$(cat "$tmpd/$j.why")"; done
	not_ok "commands whose JSON keys are checked failed" "$@"
fi
keys=$(cat "$tmpd"/*.json | grep -oE '^ *"[a-z_0-9]+":' | tr -d ' ":' | sort -u)
missing=""
for k in $keys; do
	grep -q "\`$k\`" docs/json-schema.md || missing="$missing $k"
done
if [ -z "$missing" ]; then ok "every JSON key gpuscope prints is in docs/json-schema.md ($(echo "$keys" | wc -w) keys)"; else not_ok "JSON keys missing from docs/json-schema.md:$missing"; fi

# 3. every scenario key used by the suite and the demo is documented
used=$(cat tests/scenarios/*.scn data/demo/h100x8.scn | grep -E '^[a-z_0-9]+ *=' | sed 's/ *=.*//' | sort -u)
missing=""
for k in $used; do
	grep -q "\`$k\`" docs/scenario-format.md || missing="$missing $k"
done
if [ -z "$missing" ]; then ok "every scenario key used is in docs/scenario-format.md"; else not_ok "scenario keys missing from docs/scenario-format.md:$missing"; fi

# 4. the exit codes are documented where users look
bad=""
for c in 0 1 2 3 4; do
	grep -q "^\.B $c\$" man/gpuscope.1 || bad="$bad man:$c"
done
"$bin" --help | grep -q "exit status: 0 ok; 1" || bad="$bad --help"
if [ -z "$bad" ]; then ok "exit codes 0-4 in the man page and --help"; else not_ok "exit codes undocumented:$bad"; fi

# 5. README's set-up commands exist
if grep -q '^make run ' README.md && grep -q '^make check ' README.md && grep -q '^run:' Makefile && grep -q '^check:' Makefile; then
	ok "README's 'make run' and 'make check' are make targets"
else
	not_ok "README's commands and the Makefile disagree"
fi
grep -q 'make check' .ci/run && ok ".ci/run calls make check" || not_ok ".ci/run does not call make check"

# 6. the man page renders without warnings
if command -v groff >/dev/null 2>&1; then
	w=$(groff -man -Tutf8 -ww man/gpuscope.1 2>&1 >/dev/null)
	if [ -z "$w" ]; then ok "man page renders cleanly"; else not_ok "groff warnings" "$w"; fi
elif [ "${GPUSCOPE_NO_SKIP:-0}" = 1 ]; then
	not_ok "man page: no groff to render it (Debian: groff-base), and GPUSCOPE_NO_SKIP=1"
else
	n=$((n + 1))
	echo "ok $n # SKIP man page: no groff to render it (Debian: groff-base)"
fi
# 7. the README's sample tables are what gpuscope prints (golden output)
missing=$(awk '/^```/ { inblock = !inblock; next } inblock' README.md |
	grep -E '^( {1,2}[0-9]{1,2} |     [A-Z][a-z]+ |GPU     PID)' | while IFS= read -r line; do
	cat tests/golden/*/expected.out | grep -qxF -- "$line" || echo "$line"
done)
if [ -z "$missing" ]; then
	ok "every table line in README.md is in a golden output"
else
	not_ok "README.md table lines gpuscope no longer prints (update them from tests/golden):" "$missing"
fi

# doctor's JSON keys are documented too
missing=""
for k in $(cat tests/golden/doctor-*-json/expected.out | grep -oE '"[a-z_]+":' | tr -d '":' | sort -u); do
	grep -q "\`$k\`" docs/json-schema.md || missing="$missing $k"
done
if [ -z "$missing" ]; then ok "every key of doctor --json is in docs/json-schema.md"; else not_ok "doctor JSON keys missing from docs/json-schema.md:$missing"; fi

# 8. doctor: every finding id is in docs/doctor.md and has an explanation, and
# the README's doctor sample is from a golden output
ids=$("$bin" doctor --list | awk '{ print $1 }')
if [ "$(echo "$ids" | wc -w)" -lt 10 ]; then
	not_ok "doctor --list listed $(echo "$ids" | wc -w) ids"
fi
missing=""
for id in $ids; do
	grep -qF "\`$id\`" docs/doctor.md || missing="$missing $id"
	"$bin" doctor --explain "$id" >/dev/null 2>&1 || missing="$missing $id(--explain)"
done
if [ -z "$missing" ]; then
	ok "every doctor finding id is in docs/doctor.md (scripts/doctor-ids.sh) and --explain"
else
	not_ok "doctor ids missing from docs/doctor.md:$missing"
fi
# every id is asserted by a unit test, shown by a golden case, or expected of a log fixture;
# an id of a message table (data/messages/*.tsv) is triggered by its rows' examples, each of
# which t_doctor_msg runs through the kernel-log check
missing=""
for id in $ids; do
	grep -qF "\"$id\"" tests/unit/t_doctor*.c ||
		grep -qF "\"id\":\"$id\"" tests/golden/doctor-*/expected.out ||
		grep -qsE "^(count )?$id( |\$)" tests/fixtures/doctor/*/*.expect ||
		grep -qsE "^$id	" data/messages/*.tsv || missing="$missing $id"
done
if [ -z "$missing" ]; then
	ok "every doctor finding id is triggered by a test"
else
	not_ok "doctor ids no test triggers:$missing"
fi
missing=$(awk '/^```/ { inblock = !inblock; next } inblock' README.md |
	grep -E '^(ERROR|WARN|INFO|ok)  |^        (id|evidence) ' | while IFS= read -r line; do
	cat tests/golden/doctor-*/expected.out | grep -qxF -- "$line" || echo "$line"
done)
if [ -z "$missing" ]; then
	ok "the README's doctor lines are in a golden output"
else
	not_ok "README.md doctor lines gpuscope no longer prints:" "$missing"
fi
echo "1..$n"
[ "$fail" -eq 0 ]
