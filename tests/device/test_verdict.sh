#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_verdict.sh - `rdmig send` succeeds only when `rdmig recv` durably
# committed the images, on a real device inside the test guest
# (scripts/rdma-vm).
#
# Usage: tests/device/test_verdict.sh BUILD_DIR CASE DEVICE
#   ends    send's exit status against recv's end: committed (0, the
#           verdict in its JSON); a commit that fails because a file took
#           an output's name while the data moved (1, recv's reason);
#           fsync failing with ENOSPC at the very end (injected with
#           strace: 1); recv killed after the last byte, while it flushes
#           (1, the verdict unknown); a destination that gives no verdict
#           (3, and 0 with --unconfirmed).
#   trace   strace of recv: every output is fsync'ed before it gets its
#           name, and the directory after the last name, before recv exits.
#   DEVICE: rxe | siw
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed".

# shellcheck disable=SC2016,SC2034,SC2153,SC2154 # check "..." eval '...'; BUILD, END_RC: migtest.sh
set -uo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 BUILD_DIR CASE DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
CASE=$2
DEVICE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/device/migtest.sh
. "$HERE/migtest.sh"
migtest_init

case $CASE in
ends) PORT=22200 ;; trace) PORT=22300 ;;
*) echo "FAIL - unknown case '$CASE'"; exit 1 ;;
esac
[ "$DEVICE" = siw ] && PORT=$((PORT + 500))

IMG=$WORK/image.bin
head -c $((24 * 1048576)) /dev/urandom >"$IMG"
IMG_OUT=image.bin.img

# strace ARGS... as a wrapper: LeakSanitizer cannot run under ptrace (it
# says so and fails the exit), so a sanitized recv under strace runs
# without leak checks; everything else stays on.
STRACE=(env "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" strace)

# no_sanitizer TAG: the run's stderr holds no sanitizer report (an abort
# would pass for the expected failure)
no_sanitizer() { ! grep -qsE 'Sanitizer|runtime error' "$WORK/$1.err"; }

# json_field TAG PATH: a field of the run's JSON object ("verdict.state")
json_field() {
	python3 -c 'import json,sys
o=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): o=o.get(k, {}) if isinstance(o, dict) else {}
print(o if o != {} else "")' "$WORK/$1.out" "$2" 2>/dev/null
}

# send_to N [ARGS...]: send IMG to port PORT+N as TAG sN; SEND_RC set
send_to() {
	local n=$1
	shift
	SEND_RC=99
	bg "s$n" -- send --to "$IP:$((PORT + n))" --timeout 20 --json "$@" "$IMG"
	wait_end "s$n" 180 && SEND_RC=$END_RC
}

# the child of a wrapper (strace) that bg started as TAG: rdmig itself
child_of() {
	local pid=$1 c
	for ((i = 0; i < 500; i++)); do
		c=$(cat /proc/"$pid"/task/*/children 2>/dev/null | tr ' ' '\n' | sed -n 1p)
		[ -n "$c" ] && { echo "$c"; return 0; }
		nap 0.01
	done
	return 1
}

# --------------------------------------------------------------- ends --

committed() {
	local o=$WORK/out1
	start_recv r1 $((PORT + 1)) "$o" --timeout 20 || { fail "recv 1 did not start"; return; }
	send_to 1
	wait_end r1 60
	check "committed: send exits 0 (exit $SEND_RC): $(error_lines s1)" [ "$SEND_RC" = 0 ]
	check "committed: recv exits 0 (exit $END_RC): $(error_lines r1)" [ "$END_RC" = 0 ]
	check "committed: the verdict in send's JSON says committed, 1 image of 24 MiB" \
		eval '[ "$(json_field s1 verdict.state)" = committed ] &&
		      [ "$(json_field s1 verdict.images)" = 1 ] &&
		      [ "$(json_field s1 verdict.bytes)" = 25165824 ]'
	check "committed: the image is what was sent" cmp -s "$IMG" "$o/$IMG_OUT"
}

# A file takes the output's name while the data moves: recv's link fails
# at its commit, after every byte landed.
name_taken() {
	local o=$WORK/out2 i
	start_recv r2 $((PORT + 2)) "$o" --timeout 20 || { fail "recv 2 did not start"; return; }
	bg s2 -- send --to "$IP:$((PORT + 2))" --timeout 20 --json "$IMG"
	for ((i = 0; i < 3000; i++)); do
		compgen -G "$o/.rdmig-*.$IMG_OUT" >/dev/null && break
		nap 0.01
	done
	echo intruder >"$o/$IMG_OUT"
	SEND_RC=99
	wait_end s2 180 && SEND_RC=$END_RC
	wait_end r2 60
	check "a name taken meanwhile: recv exits 1 (exit $END_RC): $(error_lines r2)" \
		eval '[ "$END_RC" = 1 ] && error_lines r2 | grep -q "exists (a file)" && no_sanitizer r2'
	check "... and send exits 1 with recv's reason (exit $SEND_RC): $(error_lines s2)" \
		eval '[ "$SEND_RC" = 1 ] && error_lines s2 | grep -q "did not commit the images: .*exists (a file)" &&
		      no_sanitizer s2'
	check "... its JSON: verdict failed, error not_committed" \
		eval '[ "$(json_field s2 verdict.state)" = failed ] && [ "$(json_field s2 error.code)" = not_committed ]'
	check "... the intruder is untouched" eval '[ "$(cat "$o/$IMG_OUT")" = intruder ]'
}

# fsync fails with ENOSPC at the very end (strace injects it)
enospc_at_end() {
	local o=$WORK/out3
	RECV_WRAPPER=("${STRACE[@]}" -f -qq -o /dev/null -e trace=fsync -e inject=fsync:error=ENOSPC)
	start_recv r3 $((PORT + 3)) "$o" --timeout 20 || { RECV_WRAPPER=(); fail "recv 3 did not start"; return; }
	RECV_WRAPPER=()
	send_to 3
	wait_end r3 60
	check "ENOSPC at the flush: recv exits 1 (exit $END_RC): $(error_lines r3)" \
		eval '[ "$END_RC" = 1 ] && error_lines r3 | grep -q "No space left" && no_sanitizer r3'
	check "... send exits 1, saying so (exit $SEND_RC): $(error_lines s3)" \
		eval '[ "$SEND_RC" = 1 ] && error_lines s3 | grep -q "did not commit the images: .*No space left"'
	check "... nothing of the image stays under its name" [ ! -e "$o/$IMG_OUT" ]
}

# recv killed after the last byte, while its flush is held up 6 s
killed_at_end() {
	local o=$WORK/out4 rpid i
	RECV_WRAPPER=("${STRACE[@]}" -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=6000000)
	start_recv r4 $((PORT + 4)) "$o" --timeout 20 ||
		{ RECV_WRAPPER=(); fail "recv 4 did not start"; return; }
	RECV_WRAPPER=()
	rpid=$(child_of "$PID_r4")
	bg s4 -- send --to "$IP:$((PORT + 4))" --timeout 20 --json "$IMG"
	# every byte landed and recv flushes: one of its threads sits in
	# fsync (x86_64 syscall 74), held there by strace
	for ((i = 0; i < 3000; i++)); do
		grep -qs '^74 ' /proc/"$rpid"/task/*/syscall && break
		ended s4 && break
		nap 0.05
	done
	check "recv reached its flush after the last byte, send still waits" \
		eval 'grep -qs "^74 " /proc/"$rpid"/task/*/syscall && ! ended s4'
	kill -9 "$rpid" 2>/dev/null
	SEND_RC=99
	wait_end s4 60 && SEND_RC=$END_RC
	check "recv killed after the last byte: send exits 1, the verdict unknown (exit $SEND_RC): $(error_lines s4)" \
		eval '[ "$SEND_RC" = 1 ] && error_lines s4 | grep -q "no verdict from the destination" &&
		      [ "$(json_field s4 verdict.state)" = unknown ] && no_sanitizer s4'
}

# a destination that cannot give a verdict (an rdmig before 0.3)
no_verdict() {
	local n
	for n in 5 6; do
		bg "p$n" --run -- "$BUILD/tests/plain_dest" "$IP" $((PORT + n))
		for ((i = 0; i < 3000; i++)); do
			has_line "$WORK/p$n.out" listening && break
			nap 0.01
		done
	done
	send_to 5
	check "a destination without a verdict: send exits 3 (exit $SEND_RC): $(error_lines s5)" \
		eval '[ "$SEND_RC" = 3 ] && error_lines s5 | grep -q "gives no verdict" &&
		      [ "$(json_field s5 verdict.state)" = none ] && [ "$(json_field s5 error.code)" = unconfirmed ]'
	send_to 6 --unconfirmed
	check "... with --unconfirmed: exit 0 (exit $SEND_RC): $(error_lines s6)" [ "$SEND_RC" = 0 ]
	wait_end p5 30
	wait_end p6 30
}

case_ends() {
	committed
	name_taken
	enospc_at_end
	killed_at_end
	no_verdict
}

# -------------------------------------------------------------- trace --

case_trace() {
	local o=$WORK/out7 trace=$WORK/recv.strace
	RECV_WRAPPER=("${STRACE[@]}" -f -qq -o "$trace" -e trace=openat,fsync,fdatasync,linkat,renameat,unlinkat,exit_group)
	start_recv r7 $((PORT + 7)) "$o" --timeout 20 || { RECV_WRAPPER=(); fail "recv 7 did not start"; return; }
	RECV_WRAPPER=()
	send_to 7
	wait_end r7 60
	check "traced: send and recv exit 0 ($SEND_RC/$END_RC): $(error_lines s7) $(error_lines r7) $(head -c 300 "$WORK/s7.err")" [ "$SEND_RC$END_RC" = 00 ]
	# every linkat(..., NAME) is preceded by an fsync of a descriptor
	# opened on NAME's temporary file; an fsync of the directory follows
	# the last linkat; all before exit_group
	check "traced: each output flushed before its name, the directory after the last name" \
		python3 "$HERE/check_fsync_order.py" "$trace" "$o" stream.bin "$IMG_OUT"
}

case_$CASE
finish
