#!/bin/sh
# gpuscope completion bash|zsh|fish, driven in each real shell: bash (the
# script sourced, COMP_* set, the function called, COMPREPLY read), zsh (an
# interactive zsh -f in a zpty, compinit, a widget that completes the line
# with compadd wrapped to print what it adds) and fish (complete -C). Each
# shell completes subcommands, options, a choice (--format=), a comma list
# item by item, GPU ids of --demo (and none without it), doctor ids, fit's
# models, the spec table's GPUs, file names and the queue's job ids (from a
# stand-in daemon, --socket followed); and every command and option that
# gpuscope __cli-table lists (the table the scripts are made from) appears
# among the candidates, none of the hidden ones. __complete KIND itself:
# candidates or nothing, never an error, within seconds when a driver or the
# daemon hangs. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
. tests/skip.inc
bin=$O/gpuscope
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP needs $bin"
	exit 0
fi
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}

# the scripts run "gpuscope", as a user's shell would find it
mkdir -p "$tmp/bin" "$tmp/files/sub"
ln -s "$(pwd)/$bin" "$tmp/bin/gpuscope"
PATH=$tmp/bin:$PATH
export PATH
: >"$tmp/files/recording.rec"

# --- what the binary prints ---
for sh in bash zsh fish; do
	if "$bin" completion $sh >"$tmp/script.$sh" 2>"$tmp/err" && [ -s "$tmp/script.$sh" ]; then
		ok "completion $sh prints a script"
	else
		not_ok "completion $sh prints a script" "$tmp/err"
	fi
done
if "$bin" completion tcsh >"$tmp/out" 2>"$tmp/err"; then
	not_ok "completion tcsh is a usage error" "$tmp/out"
elif [ $? -eq 2 ] && grep -q "bash, zsh or fish" "$tmp/err" && [ ! -s "$tmp/out" ]; then
	ok "completion tcsh is a usage error naming the shells"
else
	not_ok "completion tcsh is a usage error naming the shells" "$tmp/err"
fi
# the built files (mk/completion.mk) are what the binary prints
for f in gpuscope.bash:bash _gpuscope:zsh gpuscope.fish:fish; do
	if [ ! -f "$O/completions/${f%%:*}" ]; then
		ok "# SKIP $O/completions/${f%%:*} not built (make all builds it)"
	elif [ -n "$(find "$bin" -newer "$O/completions/${f%%:*}")" ]; then
		ok "# SKIP $O/completions/${f%%:*} older than $bin (make all remakes it)"
	elif cmp -s "$O/completions/${f%%:*}" "$tmp/script.${f#*:}"; then
		ok "$O/completions/${f%%:*} is 'completion ${f#*:}'"
	else
		not_ok "$O/completions/${f%%:*} is 'completion ${f#*:}'"
	fi
done
for k in gpus fields-gpu fields-apps doctor-ids models spec-gpus bench-tests jobs; do
	if GPUSCOPE_QUEUE_SOCKET=$tmp/no.sock "$bin" __complete $k >"$tmp/k.$k" 2>"$tmp/err" &&
		[ ! -s "$tmp/err" ]; then
		ok "__complete $k: exit 0, nothing on stderr"
	else
		not_ok "__complete $k: exit 0, nothing on stderr" "$tmp/err"
	fi
done
for k in fields-gpu fields-apps doctor-ids models spec-gpus bench-tests; do
	if [ -s "$tmp/k.$k" ]; then ok "__complete $k lists candidates"; else not_ok "__complete $k lists candidates"; fi
done
if "$bin" --demo __complete gpus >"$tmp/k.demo" && grep -qx 7 "$tmp/k.demo" &&
	grep -q '^GPU-' "$tmp/k.demo" && grep -q '^0000' "$tmp/k.demo"; then
	ok "__complete gpus of --demo: indices, UUIDs, bus ids"
else
	not_ok "__complete gpus of --demo: indices, UUIDs, bus ids" "$tmp/k.demo"
fi
# GPUs of the fake driver; none without a driver; a driver that hangs or is slow to shut down
# costs the shell at most the few seconds __complete waits, and shows no error
fake="GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 GPUSCOPE_PROC_ROOT=tests/fixtures/proc
GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty"
for d in none:nvmlDeviceGetCount_v2 shut:nvmlShutdown; do
	awk -v f="${d#*:}" '{ print } /^\[system\]/ { print "delay = " f " 60000" }' \
		tests/scenarios/h100x2.scn >"$tmp/${d%%:*}.scn"
done
# shellcheck disable=SC2086
if env $fake FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$bin" __complete gpus >"$tmp/out" 2>&1 &&
	[ "$(grep -c '^GPU-' "$tmp/out")" = 2 ] && grep -qx 1 "$tmp/out" && grep -q '^00000000:' "$tmp/out"; then
	ok "__complete gpus: index, UUID and bus id of each GPU"
else
	not_ok "__complete gpus: index, UUID and bus id of each GPU" "$tmp/out"
fi
if GPUSCOPE_NVML=$tmp/none.so GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty "$bin" __complete gpus \
	>"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ]; then
	ok "__complete gpus without a GPU: nothing, exit 0"
else
	not_ok "__complete gpus without a GPU: nothing, exit 0" "$tmp/out"
fi
for d in none shut; do
	start=$(date +%s)
	# shellcheck disable=SC2086
	env $fake FAKE_NVML_SCENARIO=$tmp/$d.scn timeout 30 "$bin" __complete gpus >"$tmp/out" 2>"$tmp/err"
	rc=$? took=$(($(date +%s) - start))
	want=0
	[ $d = shut ] && want=2
	if [ $rc = 0 ] && [ $took -le 6 ] && [ ! -s "$tmp/err" ] && [ "$(grep -c '^GPU-' "$tmp/out")" = $want ]; then
		ok "__complete gpus, a driver that hangs ($d): exit 0 in ${took}s, $want UUIDs, no error"
	else
		not_ok "__complete gpus, a driver that hangs ($d): exit $rc in ${took}s" "$tmp/out" "$tmp/err"
	fi
done
# the queue's jobs, asked of a daemon that answers ls as queued does (one JSON line each way),
# and of one that never answers
have_queue=0
if command -v python3 >/dev/null 2>&1; then
	cat >"$tmp/queued.py" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
open(sys.argv[1] + ".ready", "w").close()
held = []
while True:
    c, _ = s.accept()
    if sys.argv[2] == "mute":
        held.append(c)
        continue
    req = json.loads(c.makefile("rb").readline())
    ids = [7, 12] if sys.argv[2] == "answer" else [31, 42]
    jobs = [{"id": i, "state": "waiting"} for i in ids]
    c.sendall((json.dumps({"ok": req.get("op") == "ls", "jobs": jobs}) + "\n").encode())
    c.close()
EOF
	python3 "$tmp/queued.py" "$tmp/q.sock" answer &
	pids="$pids $!"
	python3 "$tmp/queued.py" "$tmp/mute.sock" mute &
	pids="$pids $!"
	python3 "$tmp/queued.py" "$tmp/other.sock" other &
	pids="$pids $!"
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -e "$tmp/q.sock.ready" ] && [ -e "$tmp/mute.sock.ready" ] && [ -e "$tmp/other.sock.ready" ] &&
			break
		sleep 0.2
	done
	if GPUSCOPE_QUEUE_SOCKET=$tmp/q.sock "$bin" __complete jobs >"$tmp/out" 2>"$tmp/err" &&
		[ "$(tr '\n' ' ' <"$tmp/out")" = "7 12 " ]; then
		ok "__complete jobs: the ids the daemon lists"
		have_queue=1
	else
		not_ok "__complete jobs: the ids the daemon lists" "$tmp/out" "$tmp/err"
	fi
	start=$(date +%s)
	if GPUSCOPE_QUEUE_SOCKET=$tmp/mute.sock timeout 20 "$bin" __complete jobs >"$tmp/out" 2>&1 &&
		[ ! -s "$tmp/out" ] && [ $(($(date +%s) - start)) -le 6 ]; then
		ok "__complete jobs: a daemon that does not answer is given up on, silently"
	else
		not_ok "__complete jobs: a daemon that does not answer is given up on, silently" "$tmp/out"
	fi
else
	skip_missing "python3 is not installed (a daemon of the test's own answers __complete jobs)"
fi
if "$bin" __complete nothing >/dev/null 2>&1; then
	not_ok "__complete of an unknown kind is a usage error"
else
	ok "__complete of an unknown kind is a usage error"
fi

# --- the shells ---
# One section per line of $tmp/lines in $tmp/got.SHELL: "== LINE", then its candidates.
uuid=$(grep -m1 '^GPU-' "$tmp/k.demo")
spec=$(grep -m1 '^H100 ' "$tmp/k.spec-gpus")
cat >"$tmp/lines" <<EOF
gpuscope st
gpuscope status --
gpuscope status --format=j
gpuscope query --query-gpu=index,na
gpuscope --demo status -i 
gpuscope status -i 
gpuscope --demo query -i 0,GPU-
gpuscope doctor --explain health.f
gpuscope fit Llama-3.1-
gpuscope specs H100
gpuscope record -o $tmp/files/rec
gpuscope 
gpuscope --
EOF
[ $have_queue = 1 ] && cat >>"$tmp/lines" <<EOF
gpuscope queue show 
gpuscope queue --socket $tmp/other.sock cancel 
gpuscope queue why --socket=$tmp/other.sock 
EOF
GPUSCOPE_QUEUE_SOCKET=$tmp/q.sock
export GPUSCOPE_QUEUE_SOCKET
# the drift case: every command of the table, and each one's options
"$bin" __cli-table >"$tmp/table" 2>"$tmp/err" || : >"$tmp/table"
awk -F'\t' '$2 == "" && $7 != "hidden" { print $1 }' "$tmp/table" >"$tmp/commands"
while read -r c; do
	printf 'gpuscope %s --\ngpuscope %s -\n' "$c" "$c" >>"$tmp/lines"
	case $c in *' '*) printf 'gpuscope %s \n' "${c% *}" >>"$tmp/lines" ;; esac
done <"$tmp/commands"
sort -u -o "$tmp/lines" "$tmp/lines"
# what must be among the candidates: "LINE<tab>WORD", a command, an option, a hidden option
awk -F'\t' '$2 == "" && $7 != "hidden" {
	if (i = index($1, " ")) print "gpuscope " substr($1, 1, i - 1) " \t" substr($1, i + 1)
	else print "gpuscope \t" $1
}' "$tmp/table" >"$tmp/want.commands"
awk -F'\t' '$2 != "" {
	l = $1 == "*" ? "gpuscope --" : "gpuscope " $1 " --"
	if ($7 == "hidden") { print l "\t--" $2 >hidden; next }
	print l "\t--" $2
	if ($3 != "-" && $1 != "*") print "gpuscope " $1 " -\t-" $3
}' hidden="$tmp/want.hidden" "$tmp/table" >"$tmp/want.options"
[ -f "$tmp/want.hidden" ] || : >"$tmp/want.hidden"
# missing WANT GOT: the pairs of WANT that GOT's sections do not have ("--name=" is "--name")
missing() {
	awk 'NR == FNR { want[$0] = 1; next }
		/^== / { l = substr($0, 4); next }
		{ sub(/=$/, ""); seen[l "\t" $0] = 1 }
		END { for (w in want) if (!(w in seen)) print w }' "$1" "$2" | sort
}

cat >"$tmp/bash.sh" <<'EOF'
. "$1"
while IFS= read -r COMP_LINE; do
	COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<<"$COMP_LINE"
	[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_gpuscope gpuscope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '== %s\n' "$COMP_LINE"
	printf '%s\n' "${COMPREPLY[@]}"
done <"$2"
EOF
cat >"$tmp/zsetup.zsh" <<'EOF'
PS1='' PROMPT='' RPS1='' RPROMPT=''
fpath=($ZT_DIR/fpath $fpath)
autoload -Uz compinit
compinit -u -d $ZT_DIR/zcompdump
# no listing that stops to ask, nothing left of one line for the next
LISTMAX=100000
unsetopt autolist listambiguous
# print what each compadd adds ("<c>WORD"): a call that asks for arrays is passed on as it is
compadd() {
	if (( ${@[(I)-[OAD]*]} )); then
		builtin compadd "$@"
		return
	fi
	local -a zt_got
	local zt_x
	builtin compadd -A zt_got "$@"
	for zt_x in $zt_got; do print -r -- "<c>$zt_x"; done
	# and what it shows of them ("<d>status  -- what ..."), with -d
	local zt_i=${@[(i)-d]}
	if (( zt_i < $# )); then
		for zt_x in ${(P)${@[zt_i+1]}}; do print -r -- "<d>$zt_x"; done
	fi
	builtin compadd "$@"
}
zt_capture() {
	print -r -- '<start>'
	zle complete-word
	print -r -- '<end>'
	zle kill-whole-line
}
zle -N zt_capture
bindkey '^T' zt_capture
EOF
cat >"$tmp/zrun.zsh" <<'EOF'
zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z "source $ZT_DIR/zsetup.zsh"
while IFS= read -r line; do
	zpty -w -n z "$line"$'\x14'
	zpty -r z out '*<end>*' || exit 1
	print -r -- "== $line"
	print -rl -- "${(@M)${(@f)out//$'\r'/}:#\<[cd]\>*}" | sed 's/^<c>//'
done <$1
zpty -d z
EOF
mkdir -p "$tmp/fpath"
cp "$tmp/script.zsh" "$tmp/fpath/_gpuscope"
{
	echo "source '$tmp/script.fish'"
	while IFS= read -r l; do
		printf "echo '== %s'\ncomplete -C '%s'\n" "$l" "$l"
	done <"$tmp/lines"
} >"$tmp/fish.fish"

# the candidates of LINE in SHELL's section
got() {
	awk -v l="== $2" '$0 == l { on = 1; next } /^== / { on = 0 } on' "$tmp/got.$1"
}
# has SHELL LINE WORD...: each WORD is a candidate of LINE
has() {
	sh=$1 line=$2
	shift 2
	got "$sh" "$line" >"$tmp/c"
	for w in "$@"; do
		grep -qxF -- "$w" "$tmp/c" || { echo "'$w' is not a candidate of '$line'" >"$tmp/why"; return 1; }
	done
}
lacks() {
	got "$1" "$2" >"$tmp/c"
	! grep -qF -- "$3" "$tmp/c"
}
has_desc() {
	grep -q "$2" "$1" || { echo "no line matches '$2'" >"$tmp/why"; return 1; }
}
check() { # check SHELL WHAT has|lacks ARGS...
	sh=$1 what=$2
	shift 2
	if "$@"; then ok "$sh: $what"; else not_ok "$sh: $what" "$tmp/why" "$tmp/c"; fi
	rm -f "$tmp/why"
}

for sh in bash zsh fish; do
	if ! command -v $sh >/dev/null 2>&1; then
		skip_missing "$sh is not installed (scripts/install-deps.sh check installs it)"
		continue
	fi
	case $sh in
	bash) timeout 60 bash --norc --noprofile "$tmp/bash.sh" "$tmp/script.bash" "$tmp/lines" ;;
	zsh) ZT_DIR=$tmp timeout 60 zsh -f "$tmp/zrun.zsh" "$tmp/lines" ;;
	# fish: the candidate before its tab (the description), without the --option= it follows
	# (its history and universal variables under $tmp, not in the home directory)
	fish) XDG_CONFIG_HOME=$tmp/xdg XDG_DATA_HOME=$tmp/xdg XDG_CACHE_HOME=$tmp/xdg \
		timeout 60 fish --no-config "$tmp/fish.fish" | tee "$tmp/raw.fish" | cut -f1 |
		sed 's/^--[a-z.-]*=//' ;;
	esac >"$tmp/got.$sh" 2>"$tmp/err.$sh"
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^== gpuscope st$' "$tmp/got.$sh"; then
		ok "$sh: completes every line"
	else
		not_ok "$sh: completes every line (exit $rc)" "$tmp/err.$sh"
		continue
	fi
	check "$sh" "subcommands" has "$sh" "gpuscope st" status
	case $sh in
	zsh) check "$sh" "descriptions" has_desc "$tmp/got.zsh" '^<d>status  *-- [a-z]' ;;
	fish) check "$sh" "descriptions" has_desc "$tmp/raw.fish" '^status	[a-z]' ;;
	esac
	check "$sh" "a command's long options" has "$sh" "gpuscope status --" --json --no-processes
	check "$sh" "a choice after --format=" has "$sh" "gpuscope status --format=j" json
	# bash and fish complete the word from its last blank, zsh the item after the comma
	item=index,name
	[ $sh = zsh ] && item=name
	check "$sh" "a comma list item by item" has "$sh" "gpuscope query --query-gpu=index,na" "$item"
	check "$sh" "GPU ids of --demo" has "$sh" "gpuscope --demo status -i " 0 7 "$uuid"
	check "$sh" "no --demo: not the demo's GPUs" lacks "$sh" "gpuscope status -i " "$uuid"
	item=0,$uuid
	[ $sh = zsh ] && item=$uuid
	check "$sh" "a UUID after a comma of -i" has "$sh" "gpuscope --demo query -i 0,GPU-" "$item"
	check "$sh" "doctor ids" has "$sh" "gpuscope doctor --explain health.f" health.fan.stopped
	check "$sh" "fit's models" has "$sh" "gpuscope fit Llama-3.1-" Llama-3.1-8B
	item=$spec
	[ $sh = fish ] || item=$(printf '%s' "$spec" | sed 's/ /\\ /g')
	check "$sh" "the spec table's GPU names" has "$sh" "gpuscope specs H100" "$item"
	if [ $have_queue = 1 ]; then
		check "$sh" "the queue's job ids" has "$sh" "gpuscope queue show " 7 12
		check "$sh" "job ids of --socket PATH" has "$sh" "gpuscope queue --socket $tmp/other.sock cancel " 31 42
		check "$sh" "job ids of --socket=PATH" has "$sh" "gpuscope queue why --socket=$tmp/other.sock " 31 42
	fi
	item=$tmp/files/recording.rec
	[ $sh = zsh ] && item=recording.rec
	check "$sh" "file names for -o" has "$sh" "gpuscope record -o $tmp/files/rec" "$item"
	# drift: the table's commands, subcommands and options are all offered, no hidden one
	if [ ! -s "$tmp/commands" ]; then
		not_ok "$sh: __cli-table lists the commands" "$tmp/err"
		continue
	fi
	for w in commands options hidden; do
		missing "$tmp/want.$w" "$tmp/got.$sh" >"$tmp/miss"
		if [ $w = hidden ]; then
			# a hidden option is offered when it is not missing
			sort "$tmp/want.hidden" >"$tmp/a"
			sort "$tmp/miss" >"$tmp/b"
			if cmp -s "$tmp/a" "$tmp/b"; then
				ok "$sh: no hidden option of the table"
			else
				comm -23 "$tmp/a" "$tmp/b" | sed 's/^/offered: /' >"$tmp/why"
				not_ok "$sh: no hidden option of the table" "$tmp/why"
			fi
		elif [ -s "$tmp/miss" ]; then
			sed 's/^/missing: /' "$tmp/miss" >"$tmp/why"
			not_ok "$sh: every one of the table's $w" "$tmp/why"
		else
			ok "$sh: every one of the table's $w ($(wc -l <"$tmp/want.$w"))"
		fi
	done
done
# zsh: the script sourced after compinit (source <(gpuscope completion zsh)) registers itself
if command -v zsh >/dev/null 2>&1; then
	mkdir -p "$tmp/zsrc/fpath"
	{ cat "$tmp/zsetup.zsh"; echo "source '$tmp/script.zsh'"; } >"$tmp/zsrc/zsetup.zsh"
	echo 'gpuscope status --format=j' >"$tmp/zsrc/lines"
	ZT_DIR=$tmp/zsrc timeout 60 zsh -f "$tmp/zrun.zsh" "$tmp/zsrc/lines" >"$tmp/zsrc/got" 2>&1
	if grep -qx json "$tmp/zsrc/got"; then
		ok "zsh: the script sourced, not autoloaded, completes too"
	else
		not_ok "zsh: the script sourced, not autoloaded, completes too" "$tmp/zsrc/got"
	fi
fi
echo "1..$n"
[ "$fail" -eq 0 ]
