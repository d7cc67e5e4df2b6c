#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_guards.sh - what `rdmig recv` lets in and what a migration may pin,
# on a real device inside the test guest (scripts/rdma-vm).
#
# Usage: tests/device/test_guards.sh BUILD_DIR CASE DEVICE
#   allow    recv --allow: a listed source migrates; an unlisted one is
#            rejected with a clear message on both sides while recv holds no
#            MR, QP, CQ or PD (`rdma resource show`); bad rules are usage
#            errors; recv --qemu rejects an unlisted source too.
#   memlock  the locked-memory limit (prlimit, and setpriv to drop
#            CAP_IPC_LOCK, which lifts the limit for most devices): too low
#            for pin-all fails before any data moves, saying how much is
#            needed; exactly that much is enough (the kernel agrees); a send
#            refuses before it connects; a dynamic migration whose data
#            outgrows the limit is warned about and fails naming ulimit -l;
#            root's CAP_IPC_LOCK lifts the limit on rxe but not on siw.
#   vanished requesters that send a valid connection request and go away
#            (tests/device/vanish.c) do not end recv: the real source that
#            comes after them migrates (on iWARP they are handed out
#            established and end before a message: recv accepts again).
#   DEVICE: rxe | siw
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed".

# shellcheck disable=SC2016,SC2317,SC2154 # PID_TAG: set by bg (migtest.sh); check "..." eval '...': expanded when the check runs
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
allow) PORT=21800 ;; memlock) PORT=21900 ;; vanished) PORT=21950 ;;
*) echo "FAIL - unknown case '$CASE'"; exit 1 ;;
esac
[ "$DEVICE" = siw ] && PORT=$((PORT + 500))

IMG=$WORK/image.bin
head -c $((4 * 1048576)) /dev/urandom >"$IMG"
no_outputs() { [ -z "$(ls "$1" 2>/dev/null)" ]; }

# migrate N "RECV ARGS" SEND ARGS...: a whole migration on port PORT+N into
# $WORK/outN; RECV_RC and SEND_RC.
migrate() {
	local n=$1 rargs=$2
	shift 2
	RECV_RC=99 SEND_RC=99
	# shellcheck disable=SC2086 # rargs is a list of words
	start_recv "r$n" $((PORT + n)) "$WORK/out$n" --timeout 20 $rargs || return 1
	bg "s$n" -- send --to "$IP:$((PORT + n))" --timeout 20 "$@" "$IMG"
	wait_end "s$n" 120 && SEND_RC=$END_RC
	wait_end "r$n" 60 && RECV_RC=$END_RC
	if [ "$SEND_RC" = 99 ] || [ "$RECV_RC" = 99 ]; then
		echo "# migration $n hangs" >&2
		return 1
	fi
	return 0
}

# res_count PID KIND: lines of `rdma resource show KIND` of pid.  PDs count
# only when something uses them: librdmacm allocates an empty one per
# device for itself once a cm_id is bound to it (a connection request is).
res_count() {
	if [ "$2" = pd ]; then
		rdma resource show pd 2>/dev/null | grep " pid $1 " | grep -vc " users 0 "
	else
		rdma resource show "$2" 2>/dev/null | grep -c " pid $1 "
	fi
}
no_verbs_resources() {
	local k
	rdma resource show pd 2>/dev/null | grep " pid $1 " | sed 's/^/# /'
	for k in mr qp cq pd; do
		[ "$(res_count "$1" "$k")" = 0 ] || { echo "# pid $1 holds a $k" >&2; return 1; }
	done
}

# ----------------------------------------------------------------- allow --

case_allow() {
	local net=${IP%.*}.0/24 pid i
	if migrate 1 "--allow $net --allow fd00::/8"; then
		check "--allow $net: a source at $IP migrates (send $SEND_RC, recv $RECV_RC)" \
			eval '[ "$SEND_RC" = 0 ] && [ "$RECV_RC" = 0 ]'
		check "--allow $net: the image arrived" cmp -s "$IMG" "$WORK/out1/image.bin.img"
	else
		fail "--allow $net: the migration did not run"
	fi

	# an unlisted source: rejected before recv allocates anything; recv
	# keeps waiting for a listed one until its --timeout
	start_recv r2 $((PORT + 2)) "$WORK/out2" --allow 192.0.2.0/24 --allow "$IP/32x" 2>/dev/null
	check "a malformed --allow is a usage error (exit 2): $(error_lines r2)" \
		eval 'wait_end r2 10 && [ "$END_RC" = 2 ] && error_lines r2 | grep -q "prefix must be a number"'

	start_recv r3 $((PORT + 3)) "$WORK/out3" --timeout 8 --allow 192.0.2.0/24 ||
		{ fail "recv --allow did not start"; return; }
	bg s3 -- send --to "$IP:$((PORT + 3))" --timeout 8 "$IMG"
	wait_end s3 30
	check "an unlisted source is rejected (send exit $END_RC): $(error_lines s3)" \
		eval '[ "$END_RC" = 1 ] && error_lines s3 | grep -q "rejected the connection.*--allow"'
	for ((i = 0; i < 200; i++)); do
		has_line "$WORK/r3.err" 'recv: rejected a connection' && break
		nap 0.01
	done
	check "recv names the rejected source: $(grep -s '^recv: rejected' "$WORK/r3.err")" \
		grep -q "^recv: rejected a connection from $IP: not allowed by --allow" "$WORK/r3.err"
	pid=$PID_r3
	check "recv is still waiting for a listed source, and holds no MR, QP, CQ or PD in use" \
		eval 'alive "$pid" && no_verbs_resources "$pid"'
	wait_end r3 30
	check "recv gives up at its --timeout (exit $END_RC): $(error_lines r3)" \
		eval '[ "$END_RC" = 1 ] && error_lines r3 | grep -q "waiting for a source"'
	check "recv left no output" no_outputs "$WORK/out3"

	# recv --qemu takes --allow too
	bg q4 -- recv --qemu --listen "$IP:$((PORT + 4))" --out "$WORK/out4" --timeout 5 -v \
		--allow 192.0.2.7
	for ((i = 0; i < 3000; i++)); do
		has_line "$WORK/q4.err" 'recv: listening on' && break
		ended q4 && break
		nap 0.01
	done
	bg s4 -- send --to "$IP:$((PORT + 4))" "$IMG"
	wait_end s4 30
	wait_end q4 30
	check "recv --qemu --allow 192.0.2.7 rejects a source at $IP: $(grep -s '^recv: rejected' "$WORK/q4.err")" \
		eval 'has_line "$WORK/q4.err" "recv: rejected a connection from $IP:" &&
		      error_lines s4 | grep -q "rejected the connection"'
}

# -------------------------------------------------------------- vanished --

case_vanished() {
	local n=6
	start_recv r1 $((PORT + 1)) "$WORK/out1" --timeout 30 || { fail "recv did not start"; return; }
	check "$n requesters came and vanished" timeout 120 "$BUILD/tests/vanish" "$IP" $((PORT + 1)) $n
	check "recv is still waiting after them" alive "$PID_r1"
	bg s1 -- send --to "$IP:$((PORT + 1))" --timeout 30 "$IMG"
	wait_end s1 120 && SEND_RC=$END_RC
	wait_end r1 60 && RECV_RC=$END_RC
	check "the real source then migrates (send ${SEND_RC:-hung}, recv ${RECV_RC:-hung}): $(error_lines r1)" \
		eval '[ "${SEND_RC:-}" = 0 ] && [ "${RECV_RC:-}" = 0 ]'
	check "its image arrived" cmp -s "$IMG" "$WORK/out1/image.bin.img"
	grep -s 'ended before its first message' "$WORK/r1.err" | sed 's/^/# /' | sort | uniq -c
}

# --------------------------------------------------------------- memlock --

KIB_PIN=$(((3 * 524288 + 4 * 1048576) / 1024)) # control buffers + the image
NOCAP=(setpriv --bounding-set -ipc_lock)
# limited KIB [nocap]: the wrapper that runs rdmig with RLIMIT_MEMLOCK at KIB
limited() {
	local b=$(($1 * 1024))
	if [ "${2:-}" = nocap ]; then
		LIMITED=("${NOCAP[@]}" prlimit "--memlock=$b:$b")
	else
		LIMITED=(prlimit "--memlock=$b:$b")
	fi
}

case_memlock() {
	local k n
	if ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
		fail "setpriv and prlimit (util-linux) are needed"
		return
	fi

	limited $((KIB_PIN - 4)) nocap
	RECV_WRAPPER=("${LIMITED[@]}")
	if migrate 1 --pin-all --pin-all; then
		check "recv --pin-all at $((KIB_PIN - 4)) KiB: refused, saying it needs $KIB_PIN KiB: $(error_lines r1)" \
			eval '[ "$RECV_RC" = 1 ] && error_lines r1 | grep -q "limit is $((KIB_PIN - 4)) KiB; this migration needs $KIB_PIN KiB"'
		check "... before any data moved: send fails with ERROR: $(error_lines s1)" \
			eval '[ "$SEND_RC" = 1 ] && error_lines s1 | grep -q "peer sent ERROR"'
		check "... and recv left no output" no_outputs "$WORK/out1"
	else
		fail "recv --pin-all at $((KIB_PIN - 4)) KiB did not run"
	fi

	limited "$KIB_PIN" nocap
	RECV_WRAPPER=("${LIMITED[@]}")
	if migrate 2 --pin-all --pin-all; then
		check "recv --pin-all at exactly $KIB_PIN KiB (no CAP_IPC_LOCK): the kernel lets it pin all, the migration succeeds" \
			eval '[ "$RECV_RC" = 0 ] && [ "$SEND_RC" = 0 ] && cmp -s "$IMG" "$WORK/out2/image.bin.img"'
	else
		fail "recv --pin-all at $KIB_PIN KiB did not run"
	fi

	RECV_WRAPPER=()
	limited $((KIB_PIN - 4)) nocap
	start_recv r3 $((PORT + 3)) "$WORK/out3" --timeout 5 || { fail "recv did not start"; return; }
	bg s3 --as "${LIMITED[@]}" -- send --to "$IP:$((PORT + 3))" --pin-all "$IMG"
	wait_end s3 30
	check "send --pin-all at $((KIB_PIN - 4)) KiB: refused before connecting (exit $END_RC): $(error_lines s3)" \
		eval '[ "$END_RC" = 1 ] && error_lines s3 | grep -q "needs $KIB_PIN KiB"'
	wait_end r3 30
	check "... recv never saw it (it timed out waiting for a source)" \
		eval 'error_lines r3 | grep -q "waiting for a source" && no_outputs "$WORK/out3"'

	# dynamic with 1 MiB chunks: one chunk and the control buffers are
	# enough to start; the random image needs every chunk
	k=$((1536 + 2048))
	limited "$k" nocap
	RECV_WRAPPER=("${LIMITED[@]}")
	if migrate 4 "" --chunk-size 1M; then
		check "recv (dynamic) at $k KiB warns that it may need up to $KIB_PIN KiB" \
			grep -q "^recv: warning: the locked-memory limit is $k KiB; this migration may need up to $KIB_PIN KiB" "$WORK/r4.err"
		check "... and fails naming ulimit -l when the data outgrows it: $(error_lines r4)" \
			eval '[ "$RECV_RC" = 1 ] && error_lines r4 | grep -q "ulimit -l" && [ "$SEND_RC" = 1 ]'
	else
		fail "recv (dynamic) at $k KiB did not run"
	fi

	# dynamic with send's default 32 MiB chunk: the 4 MiB image is one
	# chunk, so recv knows from the stream header that it cannot start
	if migrate 7 ""; then
		check "recv (dynamic, 32 MiB chunks) at $k KiB: refused, needing $KIB_PIN KiB: $(error_lines r7)" \
			eval '[ "$RECV_RC" = 1 ] && error_lines r7 | grep -q "limit is $k KiB; this migration needs $KIB_PIN KiB"'
		check "... send fails with ERROR: $(error_lines s7)" \
			eval '[ "$SEND_RC" = 1 ] && error_lines s7 | grep -q "peer sent ERROR"'
	else
		fail "recv (dynamic, 32 MiB chunks) at $k KiB did not run"
	fi

	# the source pins its files whole only when the limit covers them all;
	# below that, chunk by chunk as before: an image whose third MiB is
	# zero (COMPRESSed, never registered) migrates with a limit of the
	# control buffers and three chunks, and with the limit of all four
	# chunks the files go whole
	head -c $((2 * 1048576)) "$IMG" >"$WORK/zero3.bin"
	head -c 1048576 /dev/zero >>"$WORK/zero3.bin"
	tail -c 1048576 "$IMG" >>"$WORK/zero3.bin"
	RECV_WRAPPER=()
	for n in 8 9; do
		[ $n = 8 ] && k=$((1536 + 3072)) || k=$KIB_PIN
		limited "$k" nocap
		start_recv "r$n" $((PORT + n)) "$WORK/out$n" --timeout 20 || { fail "recv did not start"; return; }
		bg "s$n" --as "${LIMITED[@]}" -- send --to "$IP:$((PORT + n))" --timeout 20 --chunk-size 1M \
			--json "$WORK/zero3.bin"
		wait_end "s$n" 120
		SEND_RC=$END_RC
		wait_end "r$n" 60
		if [ $n = 9 ]; then
			check "send (dynamic) with a limit of $k KiB, all it pins: its files go whole (pin_local true, exit $SEND_RC): $(error_lines s9)" \
				eval '[ "$SEND_RC" = 0 ] && [ "$END_RC" = 0 ] && grep -q "\"pin_local\": true" "$WORK/s9.out"'
		else
			check "send (dynamic) with a limit of $k KiB, below all of its files: chunk by chunk (pin_local false, exit $SEND_RC): $(error_lines s8)" \
				eval '[ "$SEND_RC" = 0 ] && [ "$END_RC" = 0 ] && grep -q "\"pin_local\": false" "$WORK/s8.out"'
		fi
		check "... and the image arrived" cmp -s "$WORK/zero3.bin" "$WORK/out$n/zero3.bin.img"
	done

	limited 1024 nocap
	bg r5 --as "${LIMITED[@]}" -- recv --listen "$IP:$((PORT + 5))" --out "$WORK/out5"
	wait_end r5 30
	check "recv at 1024 KiB: refused at once, needing 1536 KiB for control buffers (exit $END_RC): $(error_lines r5)" \
		eval '[ "$END_RC" = 1 ] && error_lines r5 | grep -q "limit is 1024 KiB; this migration needs 1536 KiB"'

	# root keeps CAP_IPC_LOCK: ib_umem (rxe) lifts the limit, siw does not
	limited $((KIB_PIN - 4))
	RECV_WRAPPER=("${LIMITED[@]}")
	if migrate 6 --pin-all --pin-all; then
		if [ "$DEVICE" = rxe ]; then
			check "root on rxe at $((KIB_PIN - 4)) KiB: CAP_IPC_LOCK lifts the limit, the migration succeeds" \
				eval '[ "$RECV_RC" = 0 ] && [ "$SEND_RC" = 0 ]'
		else
			check "root on siw at $((KIB_PIN - 4)) KiB: siw ignores CAP_IPC_LOCK, refused before any data: $(error_lines r6)" \
				eval '[ "$RECV_RC" = 1 ] && error_lines r6 | grep -q "needs $KIB_PIN KiB"'
		fi
	else
		fail "recv as root at $((KIB_PIN - 4)) KiB did not run"
	fi
	RECV_WRAPPER=()
}

case $CASE in
allow) case_allow ;;
memlock) case_memlock ;;
vanished) case_vanished ;;
esac
finish
