# shellcheck shell=sh disable=SC2154 # me is the sourcing script's
# gpuscope-slurm.sh: what gpuscope-healthcheck, gpuscope-prolog and
# gpuscope-epilog share (sourced, POSIX sh). Settings come from the
# environment or from the file $GPUSCOPE_SLURM_ENV (default
# /etc/default/gpuscope-slurm), sh assignments; see README.md. Every program
# it runs (gpuscope, scontrol) runs under timeout(1), so that a hung driver
# or an unreachable slurmctld cannot hang slurmd.

conf=${GPUSCOPE_SLURM_ENV:-/etc/default/gpuscope-slurm}
if [ -f "$conf" ]; then
	# shellcheck disable=SC1090 # the site's settings
	. "$conf" || {
		echo "$me: cannot read the settings in $conf: fix its sh syntax" >&2
		exit 1
	}
fi
: "${GPUSCOPE:=gpuscope}"                       # the gpuscope program
: "${GPUSCOPE_TIMEOUT:=30}"                     # seconds each gpuscope run may take
: "${GPUSCOPE_SCONTROL_TIMEOUT:=15}"            # seconds each scontrol run may take
: "${GPUSCOPE_DOCTOR_ARGS:=--only health}"      # which checks judge the node
: "${GPUSCOPE_FAIL_ON:=error}"                  # error or warning: what drains
: "${GPUSCOPE_SKIP:=}"                          # finding ids that never drain
: "${GPUSCOPE_MAX_USED_MIB:=1024}"              # a GPU with more in use is not free
: "${GPUSCOPE_EPILOG_WAIT:=30}"                 # seconds the epilog waits for a GPU
: "${GPUSCOPE_SLURM_LOG:=}"                     # a file for the log lines (else syslog)
node=${GPUSCOPE_SLURM_NODE:-${SLURMD_NODENAME:-$(hostname -s)}}

# One log line: on stderr (slurmd's log for a prolog), and in
# $GPUSCOPE_SLURM_LOG or syslog (through logger, when there is one).
log() {
	echo "$me: $*" >&2
	if [ -n "$GPUSCOPE_SLURM_LOG" ]; then
		echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) ${me}[$$]: $*" >>"$GPUSCOPE_SLURM_LOG" 2>/dev/null
	elif command -v logger >/dev/null 2>&1; then
		logger -t "$me" -- "$*" 2>/dev/null
	fi
}

if ! command -v timeout >/dev/null 2>&1; then
	log "timeout(1) is not on PATH ($PATH): install coreutils; nothing checked"
	exit 1
fi

# gpuscope ARGS...: its output on stdout, its exit status (124: it ran past
# $GPUSCOPE_TIMEOUT and was killed), its stderr in $err_file.
err_file=$(mktemp "${TMPDIR:-/tmp}/gpuscope-slurm.XXXXXX") || exit 1
state_file=$(mktemp "${TMPDIR:-/tmp}/gpuscope-slurm.XXXXXX") || exit 1
trap 'rm -f "$err_file" "$state_file"' EXIT
trap 'exit 1' INT TERM HUP
run_gpuscope() {
	timeout -k 2 "$GPUSCOPE_TIMEOUT" "$GPUSCOPE" "$@" 2>"$err_file"
}
err_line() {
	head -n 1 "$err_file"
}
run_scontrol() {
	timeout -k 2 "$GPUSCOPE_SCONTROL_TIMEOUT" scontrol "$@"
}

# A reason for scontrol: one line, no double quotes, at most 250 characters.
clean_reason() {
	printf '%s' "$1" | tr '\n\t"' "  '" | cut -c 1-250
}

# Drain this node with the reason $1 ("gpuscope: ID: TITLE" for the health
# check's own, "gpuscope-prolog: ..." and "gpuscope-epilog: ..." for what
# the health check must not resume); 0 when scontrol did it.
drain() {
	reason=$(clean_reason "$1")
	if run_scontrol update nodename="$node" state=drain reason="$reason"; then
		log "node $node drained: $reason"
		return 0
	fi
	log "node $node: scontrol could not drain it (reason was: $reason)"
	return 1
}

# shellcheck disable=SC2034 # state and reason are for the caller
# node_state: sets state (as "IDLE+DRAIN") and reason (without its
# "[user@time]" tail) from scontrol show node; 1 when scontrol failed.
node_state() {
	info=$(run_scontrol show node "$node") || return 1
	state=$(printf '%s\n' "$info" | sed -n 's/^.*[[:space:]]State=\([^[:space:]]*\).*$/\1/p' | head -n 1)
	reason=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*Reason=//p' | head -n 1 |
		sed 's/ \[[^]]*@[^]]*\]$//')
	return 0
}

# The job's GPUs (a comma list of indexes or UUIDs), from what Slurm gives a
# prolog or epilog; empty when the job has none.
job_gpus() {
	for g in "${SLURM_JOB_GPUS:-}" "${SLURM_STEP_GPUS:-}" "${CUDA_VISIBLE_DEVICES:-}"; do
		case $g in
		'' | NoDevFiles | -1) ;;
		*)
			printf '%s' "$g"
			return 0
			;;
		esac
	done
}

query_failed() { # STATUS WHAT
	if [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then
		log "$2 did not answer within ${GPUSCOPE_TIMEOUT} s (a hung driver?)"
	else
		log "$2 failed (exit $1): $(err_line)"
	fi
}

# gpu_state GPUS: lines "INDEX USED_MIB" of those GPUs, then lines
# "pid PID INDEX" of their processes, into $state_file; 0, or the status of
# the gpuscope run that failed (124: timed out) after a log line.
gpu_state() {
	q_gpus=$(run_gpuscope query --query-gpu=index,uuid,memory.used --format=csv,noheader,nounits -i "$1")
	rc=$?
	if [ $rc -ne 0 ]; then
		query_failed $rc "gpuscope query -i $1"
		return $rc
	fi
	q_apps=$(run_gpuscope query --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits -i "$1")
	rc=$?
	if [ $rc -ne 0 ]; then
		query_failed $rc "gpuscope query --query-compute-apps -i $1"
		return $rc
	fi
	printf '%s\n%s\n' "$q_gpus" "$q_apps" | awk -F', *' '
		NF >= 3 && $1 ~ /^[0-9]+$/ { idx[$2] = $1; used[$1] = $3; order[n++] = $1; next }
		NF >= 2 && $2 ~ /^[0-9]+$/ { pids[m++] = $2 " " ($1 in idx ? idx[$1] : $1) }
		END {
			for (i = 0; i < n; i++) print order[i], used[order[i]]
			for (i = 0; i < m; i++) print "pid", pids[i]
		}' >"$state_file"
}
