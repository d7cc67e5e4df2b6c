#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_kill.sh - `rdmig send` -> `rdmig recv` migrations whose one side dies
# (SIGKILL) or is interrupted (SIGINT, SIGTERM) mid-migration, on a real
# device inside the test guest (scripts/rdma-vm).
#
# Usage: tests/device/test_kill.sh BUILD_DIR CASE DEVICE [TRIALS]
#   kill_send | kill_recv  migrations with that side killed with SIGKILL at
#       a random moment between the arrival of the stream header and the
#       end of the transfer (a fifth of them within 0.2 s of the header: the
#       setup), alternating dynamic and pin-all, until TRIALS (default 10)
#       kills landed mid-migration (at most 3 x TRIALS migrations).  The
#       survivor must exit within 10 s of the kill (the default --timeout),
#       non-zero with one clear error line (or 0, when the kill came after
#       the migration got through), leave no process behind and, for recv,
#       no output file.
#   signals  SIGINT and SIGTERM to either side mid-migration, SIGINT to a
#       recv and SIGTERM to a recv --qemu waiting for a source: exit status
#       128 + signal, one line saying so, the peer fails with ERROR, recv's
#       partial outputs removed (recv --qemu keeps record.txt, saying why).
#   DEVICE: rxe | siw | both (rxe and siw at the same time: the guest is
#       slow to start processes, and the two devices' trials overlap well)
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed"; the kill cases
# end with the survivors' exit times.  tests/device/soak_kill.sh runs many
# more trials.

# shellcheck disable=SC2016,SC2317,SC2154 # PID_TAG: set by bg (migtest.sh); check "..." eval '...': expanded when the check runs
set -uo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 BUILD_DIR CASE DEVICE [TRIALS]" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
CASE=$2
DEVICE=$3
TRIALS=${4:-10}
HERE=$(cd "$(dirname "$0")" && pwd)

# both: this script once per device, concurrently; their outputs in turn
# and one summary line.
if [ "$DEVICE" = both ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/test-kill.XXXXXX") || exit 1
	bash "$0" "$1" "$CASE" rxe "$TRIALS" >"$out/rxe" 2>&1 &
	bash "$0" "$1" "$CASE" siw "$TRIALS" >"$out/siw" 2>&1
	wait $!
	cat "$out/rxe" "$out/siw"
	sums=$(cat "$out/rxe" "$out/siw" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
	rm -rf "$out"
	p=0 f=0 lines=0
	while read -r a b; do p=$((p + a)) f=$((f + b)) lines=$((lines + 1)); done <<<"$sums"
	[ "$lines" = 2 ] || f=$((f + 1)) # a run that did not finish
	echo "$p passed, $f failed"
	[ "$f" = 0 ] && [ "$p" -gt 0 ]
	exit $?
fi

# shellcheck source=tests/device/migtest.sh
. "$HERE/migtest.sh"
migtest_init

BOUND_MS=10000 # the default --timeout: the survivor must be out before it
case $CASE in
kill_send) PORT=18800 ;; kill_recv) PORT=19800 ;; signals) PORT=20800 ;;
*) echo "FAIL - unknown case '$CASE'"; exit 1 ;;
esac
[ "$DEVICE" = siw ] && PORT=$((PORT + 500))

# The image: big enough that a kill or a signal can land while the data
# moves.  Since the checksums are hashed beside the transfer, the
# transfer sets the pace: a 2 MiB image under the sanitizers was over 200 ms
# after its header, too soon for most kills.  Both sizes migrate in a few
# seconds here.
MIB=64
sanitized && MIB=32
# SIGINT/SIGTERM land 300 ms after the header: siw moves 32 MiB faster
[ "$CASE" = signals ] && MIB=96
IMG=$WORK/image.bin
head -c $((MIB * 1048576)) /dev/urandom >"$IMG"

# The processes run with the default --timeout (10 s), the bound tested.
# recv_bg N FLAGS...: recv (rN) into $WORK/outN on port PORT+N, in the
# background, without waiting for it.
declare -A RECV_STARTED
recv_bg() {
	local n=$1
	shift
	bg "r$n" -- recv --listen "$IP:$((PORT + n % 490))" --out "$WORK/out$n" -v "$@"
	RECV_STARTED[$n]=1
}

# migrate_bg N FLAGS...: recv (unless recv_bg started it) and, once it
# listens, send (sN) of the image, in the background.
migrate_bg() {
	local n=$1 i
	shift
	[ -n "${RECV_STARTED[$n]:-}" ] || recv_bg "$n" "$@"
	for ((i = 0; i < 3000; i++)); do
		has_line "$WORK/r$n.err" 'recv: listening on' && break
		ended "r$n" && break
		nap 0.01
	done
	if ! has_line "$WORK/r$n.err" 'recv: listening on'; then
		echo "# recv did not start listening:" >&2
		cat "$WORK/r$n.err" >&2
		return 1
	fi
	bg "s$n" -- send --to "$IP:$((PORT + n % 490))" "$@" "$IMG"
}

# wait_header N: until recv has the stream header (the temporary file of
# stream.bin is not empty: recv writes only valid stream bytes), that is the
# migration is under way; 1 if either side ended first.
wait_header() {
	local n=$1 i f
	for ((i = 0; i < 6000; i++)); do
		for f in "$WORK/out$1"/.rdmig-*.stream.bin; do [ -s "$f" ] && return 0; done
		ended "s$n" || ended "r$n" && return 1
		nap 0.01
	done
	return 1
}

# wait_data N: migration N is mid-transfer: recv wrote a first span into an
# image (the images are random: the written span is allocated).  Fails if
# either side ends first or a minute passes.
wait_data() {
	local n=$1 i f
	for ((i = 0; i < 6000; i++)); do
		for f in "$WORK/out$1"/.rdmig-*.img; do
			[ -f "$f" ] && [ "$(stat -c %b "$f")" -gt 0 ] && return 0
		done
		ended "s$n" || ended "r$n" && return 1
		nap 0.01
	done
	return 1
}

# no_outputs DIR: recv left neither stream.bin nor an image.
no_outputs() { [ -z "$(ls "$1" 2>/dev/null)" ]; }
no_sanitizer_report() { ! grep -qs 'Sanitizer' "$WORK/$1.err"; }

# --------------------------------------------------------------- kill -9 --

# The error line of a survivor says what happened to the peer, and it was
# noticed, not timed out.
clear_kill_message() {
	local line
	line=$(error_lines "$1")
	[[ $line =~ disconnect|ERROR|failed:|went\ away|reset|flush ]] && [[ ! $line =~ timed\ out ]]
}

calibrate() {
	local t0 th
	T_TRANSFER=0
	now_ms_to t0
	migrate_bg 0 || { fail "calibration: recv did not start"; return 1; }
	wait_header 0 || true
	now_ms_to th
	if ! wait_end s0 120 || [ "$END_RC" != 0 ] || ! wait_end r0 60 || [ "$END_RC" != 0 ]; then
		fail "calibration: a whole migration of $MIB MiB did not succeed"
		tail -n 3 "$WORK/s0.err" "$WORK/r0.err"
		return 1
	fi
	ended s0
	T_TRANSFER=$((END_MS - th))
	echo "# calibration ($MIB MiB, $DEVICE): header after $((th - t0)) ms, then $T_TRANSFER ms to the end"
	rm -rf "$WORK/out0"
}

EXIT_MS=()
HEADER_MS=() # from the start of a trial to the stream header
# trial_flags N: the flags of trial N into FLAGS (even trials use pin-all)
trial_flags() {
	FLAGS=()
	if (($1 % 2 == 0)); then FLAGS=(--pin-all); fi
}

kill_trial() {
	local n=$1 victim=$2 survivor flags=() mode=dynamic delay secs t_kill ms line what
	[ "$victim" = send ] && survivor=recv || survivor=send
	trial_flags "$n"
	flags=("${FLAGS[@]}")
	[ ${#flags[@]} -gt 0 ] && mode=pin-all
	if ((n % 5 == 1)); then
		delay=$((RANDOM % 200))
	else
		delay=$((RANDOM * WINDOW / 32768))
	fi
	what="$CASE $DEVICE trial $n ($mode)"
	local t_start t_header
	now_ms_to t_start
	migrate_bg "$n" "${flags[@]}" || { fail "$what: recv did not start"; return; }
	local vtag=${victim:0:1}$n stag=${survivor:0:1}$n
	local vpid=PID_$vtag spid=PID_$stag
	vpid=${!vpid}
	spid=${!spid}
	if ! wait_header "$n"; then
		fail "$what: the migration did not get under way"
		tail -n 3 "$WORK/s$n.err" "$WORK/r$n.err"
		return
	fi
	now_ms_to t_header
	HEADER_MS+=($((t_header - t_start)))
	# the next trial's recv starts up meanwhile (startup is slow here)
	if ((n < MAX_TRIALS)); then
		trial_flags $((n + 1))
		recv_bg $((n + 1)) "${FLAGS[@]}"
	fi
	printf -v secs '%d.%03d' $((delay / 1000)) $((delay % 1000))
	nap "$secs"
	if ended "$vtag" || ended "$stag" || ! kill -9 "$vpid" 2>/dev/null; then
		echo "# $what: the migration was over $delay ms after the header: not counted"
		MISSED=$((MISSED + 1))
		shrink_window
		wait_end "$stag" 30
		wait_end "$vtag" 30
		return
	fi
	now_ms_to t_kill
	KILLS=$((KILLS + 1))
	if ! wait_end "$stag" 30; then
		fail "$what: $survivor did not exit within 30 s of the kill (it hangs)"
		kill -9 "$spid"
		return
	fi
	ms=$((END_MS - t_kill))
	local rc=$END_RC
	# the victim's exit is the kernel's teardown of its RDMA resources,
	# slow under load; not what this test bounds
	wait_end "$vtag" 30
	if ((ms < 0)); then
		echo "# $what: $survivor ended just before the kill: not counted"
		KILLS=$((KILLS - 1)) MISSED=$((MISSED + 1))
		shrink_window
		return
	fi
	EXIT_MS+=("$ms")
	line=$(error_lines "$stag")
	if [ "$rc" = 0 ]; then
		# the kill came after the last byte: the migration got through
		LATE=$((LATE + 1))
		shrink_window
		check "$what: $victim killed $delay ms after the header, after the migration got through; $survivor exited 0 after $ms ms" \
			[ "$ms" -le "$BOUND_MS" ]
		return
	fi
	check "$what: $victim killed $delay ms after the header; $survivor exited $rc after $ms ms: $line" \
		[ "$ms" -le "$BOUND_MS" ]
	check "$what: $survivor exits 1, with one clear error line" \
		eval '[ "$rc" = 1 ] && one_error_line "$stag" && clear_kill_message "$stag"'
	local left=""
	alive "$vpid" && left+=" $victim"
	alive "$spid" && left+=" $survivor"
	check "$what: no process left${left:+ (still alive:$left)}, no sanitizer report" \
		eval '! alive "$vpid" && ! alive "$spid" && no_sanitizer_report "$stag"'
	[ "$survivor" = recv ] && check "$what: recv left no output" no_outputs "$WORK/out$n"
	rm -rf "$WORK/out$n"
}

# min / median / max of the survivors' exit times
exit_summary() {
	local sorted
	[ ${#EXIT_MS[@]} -gt 0 ] || return
	# a here-string, not <(...): the guest has no /dev/fd
	mapfile -t sorted <<<"$(printf '%s\n' "${EXIT_MS[@]}" | sort -n)"
	echo "# survivor exit after the kill ($DEVICE, ${#sorted[@]} trials): min ${sorted[0]} ms," \
		"median ${sorted[${#sorted[@]} / 2]} ms, max ${sorted[${#sorted[@]} - 1]} ms"
	mapfile -t sorted <<<"$(printf '%s\n' "${HEADER_MS[@]}" | sort -n)"
	echo "# from the start of a trial to the stream header: median ${sorted[${#sorted[@]} / 2]} ms"
}

# A migration that ended before its kill: aim earlier from now on (the
# guest's speed varies with the host's load).
shrink_window() {
	WINDOW=$((WINDOW * 3 / 4))
	((WINDOW >= 100)) || WINDOW=100
}

# TRIALS kills that land mid-migration, in at most three times as many trials.
case_kill() {
	local victim=$1 n=0
	KILLS=0 MISSED=0 LATE=0 MAX_TRIALS=$((3 * TRIALS))
	calibrate || return
	WINDOW=$((T_TRANSFER * 7 / 10))
	while ((KILLS - LATE < TRIALS && n < MAX_TRIALS)); do
		n=$((n + 1))
		kill_trial "$n" "$victim"
	done
	exit_summary
	echo "# $n trials: $((KILLS - LATE)) killed $victim mid-migration, $LATE after the migration" \
		"got through, $MISSED were over before the kill"
	check "$TRIALS kills of $victim landed mid-migration ($n trials)" [ $((KILLS - LATE)) -ge "$TRIALS" ]
}

# ---------------------------------------------------------- SIGINT/TERM --

# signal_run N SIDE SIGNAL FLAGS...: interrupt SIDE a little after the header.
signal_run() {
	local n=$1 side=$2 sig=$3 peer want t_sig ms rc prc mode=dynamic
	shift 3
	[ $# -gt 0 ] && mode=pin-all
	local what="SIG$sig to $side ($mode, $DEVICE)"
	[ "$sig" = INT ] && want=130 || want=143
	[ "$side" = send ] && peer=r$n || peer=s$n
	local tag=${side:0:1}$n
	migrate_bg "$n" "$@" || { fail "$what: recv did not start"; return; }
	local pid=PID_$tag
	pid=${!pid}
	if ! wait_header "$n" || ! wait_data "$n"; then
		fail "$what: the migration did not get under way"
		return
	fi
	if ended "$tag"; then
		fail "$what: $side ended before the signal (image too small?)"
		return
	fi
	kill -"$sig" "$pid"
	now_ms_to t_sig
	if ! wait_end "$tag" 30; then
		fail "$what: $side did not exit within 30 s"
		kill -9 "$pid"
		return
	fi
	rc=$END_RC
	ms=$((END_MS - t_sig))
	wait_end "$peer" 30
	prc=$END_RC
	check "$what: $side exits $want after $ms ms (got $rc): $(error_lines "$tag")" \
		eval '[ "$rc" = "$want" ] && [ "$ms" -le "$BOUND_MS" ]'
	check "$what: one line saying so" \
		eval 'one_error_line "$tag" && error_lines "$tag" | grep -q "interrupted by SIG$sig"'
	check "$what: the peer was told and failed with ERROR (exit $prc): $(error_lines "$peer")" \
		eval '[ "$prc" = 1 ] && error_lines "$tag" | grep -q "told" && error_lines "$peer" | grep -q ERROR'
	check "$what: recv's partial outputs are removed" no_outputs "$WORK/out$n"
	check "$what: no sanitizer report" eval 'no_sanitizer_report s$n && no_sanitizer_report r$n'
}

case_signals() {
	local t_sig ms i
	signal_run 1 send INT
	signal_run 2 send TERM --pin-all
	signal_run 3 recv INT --pin-all
	signal_run 4 recv TERM
	# a recv that waits for a source (no --timeout: for ever) stops at once
	start_recv r5 $((PORT + 5)) "$WORK/out5" || { fail "recv did not start"; return; }
	kill -INT "$PID_r5"
	now_ms_to t_sig
	if ! wait_end r5 10; then
		fail "SIGINT to a recv waiting for a source: still running after 10 s"
		return
	fi
	ms=$((END_MS - t_sig))
	check "SIGINT to a recv waiting for a source: exits 130 after $ms ms: $(error_lines r5)" \
		eval '[ "$END_RC" = 130 ] && [ "$ms" -lt 2000 ] && error_lines r5 | grep -q "while waiting for a source"'
	check "SIGINT to a recv waiting for a source: no stream.bin left" no_outputs "$WORK/out5"

	# the same for recv --qemu, which keeps record.txt to say why
	bg q6 -- recv --qemu --listen "$IP:$((PORT + 6))" --out "$WORK/out6" -v
	for ((i = 0; i < 3000; i++)); do
		has_line "$WORK/q6.err" 'recv: listening on' && break
		ended q6 && break
		nap 0.01
	done
	kill -TERM "$PID_q6"
	now_ms_to t_sig
	if ! wait_end q6 10; then
		fail "SIGTERM to recv --qemu waiting for a source: still running after 10 s"
		return
	fi
	ms=$((END_MS - t_sig))
	check "SIGTERM to recv --qemu waiting for a source: exits 143 after $ms ms: $(error_lines q6)" \
		eval '[ "$END_RC" = 143 ] && [ "$ms" -lt 2000 ] && one_error_line q6'
	check "... leaves only record.txt, which says why: $(tail -n1 "$WORK/out6/record.txt" 2>/dev/null)" \
		eval '[ "$(ls "$WORK/out6")" = record.txt ] &&
		      tail -n1 "$WORK/out6/record.txt" | grep -q "^end failed interrupted by SIGTERM"'
}

case $CASE in
kill_send) case_kill send ;;
kill_recv) case_kill recv ;;
signals) case_signals ;;
esac
finish
