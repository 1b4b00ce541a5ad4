# shellcheck shell=bash
# Shared by the benchmark scripts (sourced, not run).

# Build bench/wait4run.c into $1/wait4run when it is missing or older than
# its source (statically where the C library allows: see wait4run.c).
build_wait4run() {
	if [ ! -x "$1/wait4run" ] || [ bench/wait4run.c -nt "$1/wait4run" ]; then
		${CC:-cc} -O2 -static -o "$1/wait4run" bench/wait4run.c 2>/dev/null ||
			${CC:-cc} -O2 -o "$1/wait4run" bench/wait4run.c
	fi
}

# The median of column $2 of the whitespace-separated file $1 (a wait4run
# results file: wall, user, system, peak RSS KiB, status).
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The median of user + system CPU seconds of a wait4run results file.
median_cpu() {
	awk '{ print $2 + $3 }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Start $1 sleeping processes, for a scenario whose GPU processes must exist in
# /proc: their pids are appended to the array PIDS and written to the file $2.
start_sleepers() {
	echo "== starting $1 sleeping processes"
	: >"$2"
	for _ in $(seq "$1"); do
		sleep 86400 &
		PIDS+=($!)
		echo $! >>"$2"
	done
}

# Kill and reap the processes of the array PIDS (from an EXIT trap).
stop_sleepers() {
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill "${PIDS[@]}" 2>/dev/null || true
		wait "${PIDS[@]}" 2>/dev/null || true
	fi
}
