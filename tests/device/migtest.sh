# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2034 # END_RC, END_MS, PID_*: for the sourcing script
# migtest.sh - shell helpers of the device tests that run `rdmig send` and
# `rdmig recv` as separate processes and watch them (test_kill.sh,
# test_guards.sh, soak_kill.sh).  Sourced, not run.  Inside the test guest
# only (scripts/rdma-vm), where RDMAVM_RXE_IP and RDMAVM_SIW_IP are set.
#
# The caller sets BUILD (the build directory) and DEVICE (rxe | siw), then
# calls migtest_init; it provides IP, RDMIG, WORK (removed on exit), the
# counters of ok/fail/finish, and:
#   bg TAG ARGS...   rdmig ARGS in the background, watched (see below)
#   nap SECONDS      sleep without a fork (processes are slow in the guest)
#   now_ms           CLOCK_REALTIME in milliseconds, without a fork

# shellcheck source=tests/lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"

now_ms() { local t=${EPOCHREALTIME//[!0-9]/}; echo $((10#$t / 1000)); }
# the same, into the variable named $1 (no subshell)
now_ms_to() { local t=${EPOCHREALTIME//[!0-9]/}; printf -v "$1" '%d' $((10#$t / 1000)); }

# nap SECONDS: read with a timeout on a FIFO nobody writes to.  A plain
# `sleep` forks a process, which takes long under emulation.
nap() { read -r -t "$1" -u 9 || true; }

migtest_init() {
	device_ip "$DEVICE" device
	RDMIG=$BUILD/rdmig
	if [ ! -x "$RDMIG" ]; then
		echo "FAIL - $RDMIG is missing: build first"
		exit 1
	fi
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/migtest.XXXXXX") || exit 1
	BG_PIDS=()
	RECV_WRAPPER=()
	trap migtest_cleanup EXIT
	mkfifo "$WORK/nap.fifo" && exec 9<>"$WORK/nap.fifo"
}

migtest_cleanup() {
	local p
	# only our own processes, by pid: what bg started, and its watchers
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	exec 9>&-
	rm -rf "$WORK"
}

# Is BUILD a sanitizer build?  Its hashing is about 10x slower.
sanitized() { grep -qs '^RDMIG_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt"; }

# bg TAG [--as WRAPPER... | --run] -- ARGS...: start `rdmig ARGS` (or
# `WRAPPER... rdmig ARGS`; with --run, ARGS alone: another program) in the
# background with stdout/stderr in $WORK/TAG.out/.err.
# Sets PID_<TAG> to its pid; a watcher writes "STATUS END_MS" to
# $WORK/TAG.end when it exits, so the moment it ended is known exactly.
bg() {
	local tag=$1 wrapper=() prog=("$RDMIG") pid
	shift
	if [ "$1" = --run ]; then
		prog=()
		shift
	elif [ "$1" = --as ]; then
		shift
		while [ "$1" != -- ]; do wrapper+=("$1"); shift; done
	fi
	[ "$1" = -- ] && shift
	rm -f "$WORK/$tag.end" "$WORK/$tag.pid"
	(
		"${wrapper[@]}" "${prog[@]}" "$@" >"$WORK/$tag.out" 2>"$WORK/$tag.err" </dev/null &
		echo $! >"$WORK/$tag.pid"
		wait $!
		rc=$?
		t=${EPOCHREALTIME//[!0-9]/}
		echo "$rc $((10#$t / 1000))" >"$WORK/$tag.end.tmp"
		mv "$WORK/$tag.end.tmp" "$WORK/$tag.end"
	) 2>/dev/null & # (not "Killed" notices of the watcher)
	BG_PIDS+=($!)
	while [ ! -s "$WORK/$tag.pid" ]; do nap 0.01; done
	pid=$(<"$WORK/$tag.pid")
	BG_PIDS+=("$pid")
	printf -v "PID_$tag" '%s' "$pid"
}

# ended TAG: has it exited?  Then END_RC and END_MS are set.
ended() {
	[ -s "$WORK/$1.end" ] || return 1
	read -r END_RC END_MS <"$WORK/$1.end"
}

# wait_end TAG SECONDS: wait until it exited (0) or the time is up (1).
wait_end() {
	local now deadline
	now_ms_to deadline
	deadline=$((deadline + $2 * 1000))
	until ended "$1"; do
		now_ms_to now
		[ "$now" -lt "$deadline" ] || return 1
		nap 0.02
	done
}

# has_line FILE PREFIX: does a line of FILE start with PREFIX?  Builtins
# only: the polling loops must not fork (it slows the processes watched).
has_line() {
	local line
	[ -s "$1" ] || return 1
	while IFS= read -r line; do
		[[ $line == "$2"* ]] && return 0
	done <"$1"
	return 1
}

# start_recv TAG PORT OUTDIR [ARGS...]: recv in the background (as TAG,
# under the command in the array RECV_WRAPPER if set), waiting until it
# listens.
start_recv() {
	local tag=$1 port=$2 out=$3 i
	shift 3
	if [ ${#RECV_WRAPPER[@]} -gt 0 ]; then
		bg "$tag" --as "${RECV_WRAPPER[@]}" -- recv --listen "$IP:$port" --out "$out" -v "$@"
	else
		bg "$tag" -- recv --listen "$IP:$port" --out "$out" -v "$@"
	fi
	for ((i = 0; i < 3000; i++)); do
		has_line "$WORK/$tag.err" 'recv: listening on' && return 0
		ended "$tag" && break
		nap 0.01
	done
	echo "# recv did not start listening:" >&2
	cat "$WORK/$tag.err" >&2
	return 1
}

# notify_listen: systemd's side of sd_notify(3), a stand-in: each datagram
# sent to $WORK/notify.sock (NOTIFY_SOCKET) becomes lines of
# $WORK/notify.txt; NOTIFY_PID, killed on exit.  Returns once it listens
# (python starts in seconds in the emulated guest: a minute at most).
notify_listen() {
	local i
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode() + "\n")
        f.flush()' "$WORK/notify.sock" "$WORK/notify.txt" &
	NOTIFY_PID=$!
	BG_PIDS+=("$NOTIFY_PID")
	for ((i = 0; i < 6000; i++)); do [ -S "$WORK/notify.sock" ] && return; nap 0.01; done
}

# The "rdmig: CMD: ..." error lines of a run (what a user reads).
error_lines() { grep -s '^rdmig: ' "$WORK/$1.err"; }
one_error_line() { [ "$(error_lines "$1" | wc -l)" = 1 ]; }
alive() { kill -0 "$1" 2>/dev/null; }
