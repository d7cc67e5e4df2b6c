#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_chunks.sh - `rdmig send --chunk-size` -> `rdmig recv` on a real RDMA
# device, inside the test guest (scripts/rdma-vm), where
# RDMAVM_RXE_IP and RDMAVM_SIW_IP are set.  Outside it the test FAILS.
#
# Usage: tests/device/test_chunks.sh BUILD_DIR CASE DEVICE
#   CASE:   shapes | round_trips
#   DEVICE: rxe | siw
#
#   shapes       chunk sizes 1M, 4M, 32M and 1G (siw: 1M and 32M, QEMU's
#                default and rdmig's; CHUNK_SIZES overrides), dynamic and pin-all:
#                blocks whose lengths are not a multiple of the chunk (and
#                shorter than one, at 1G), zero ranges that span chunk
#                borders; recv verifies every block, and the outputs are
#                compared byte for byte.  (256M is left out: every block
#                here is shorter than 256M, so it takes 1G's path, one
#                chunk per block.)
#   round_trips  64 MiB of random data at 1M and 32M dynamic and 32M
#                pin-all: 32M needs at least 16x fewer REGISTER round trips
#                than 1M, and registers its second chunk ahead; prints the
#                seconds of each ("# timing").  The other sizes and modes
#                are shapes' (timing is the bench's).
#
# recv learns the source's chunk size from the image stream's (v2) header;
# shapes also gives recv a --chunk-size that disagrees, which it refuses.
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed".

# shellcheck disable=SC2317 # helpers run through check() and trap
set -uo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 BUILD_DIR CASE DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
CASE=$2
DEVICE=$3
RDMIG=$BUILD/rdmig

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

device_ip "$DEVICE" device
[ -x "$RDMIG" ] || { echo "FAIL - $RDMIG is missing: build first"; exit 1; }

case $CASE in
shapes) PORT=18900 ;;
round_trips) PORT=18950 ;;
*) echo "FAIL - unknown case '$CASE'"; exit 1 ;;
esac
[ "$DEVICE" = siw ] && PORT=$((PORT + 100))

WORK=$(mktemp -d "${TMPDIR:-/tmp}/test-chunks.XXXXXX") || exit 1
RPID=""
cleanup() {
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null # our own recv, by pid
	rm -rf "$WORK"
}
trap cleanup EXIT

json_num() { grep -o "\"$2\": [0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: //'; }

# run TAG OUT CHUNK FLAGS FILE...: recv, then send with --chunk-size CHUNK
# (recv too when RECV_CHUNK is set: that size), FLAGS (e.g. --pin-all) on
# both.  Sets SEND_RC, RECV_RC.
RECV_CHUNK=
run() {
	local tag=$1 out=$2 chunk=$3 flags=$4 i
	shift 4
	SEND_RC=99
	RECV_RC=99
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # flags is a list of words
	timeout 600 "$RDMIG" recv --listen "$IP:$PORT" --out "$out" --timeout 120 --json -v \
		${RECV_CHUNK:+--chunk-size "$RECV_CHUNK"} $flags >"$WORK/$tag.recv.json" \
		2>"$WORK/$tag.recv.err" </dev/null &
	RPID=$!
	for ((i = 0; i < 600; i++)); do
		grep -q '^recv: listening on' "$WORK/$tag.recv.err" 2>/dev/null && break
		kill -0 "$RPID" 2>/dev/null || break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	timeout 600 "$RDMIG" send --to "$IP:$PORT" --timeout 120 --json --chunk-size "$chunk" $flags \
		"$@" >"$WORK/$tag.send.json" 2>"$WORK/$tag.send.err" </dev/null
	SEND_RC=$?
	wait "$RPID"
	RECV_RC=$?
	RPID=""
	if [ "$SEND_RC" != 0 ] || [ "$RECV_RC" != 0 ]; then
		echo "# $tag: send exit $SEND_RC, recv exit $RECV_RC" >&2
		tail -n 5 "$WORK/$tag.send.err" "$WORK/$tag.recv.err" >&2
	fi
}

# same_files OUT FILE...: every FILE equals OUT/<basename>.img
same_files() {
	local out=$1 f
	shift
	for f in "$@"; do
		cmp "$f" "$out/${f##*/}.img" >&2 || return 1
	done
}

checks() {
	local tag=$1 label=$2 out=$3
	shift 3
	check "$label: send exits 0" [ "$SEND_RC" = 0 ]
	check "$label: recv exits 0" [ "$RECV_RC" = 0 ]
	check "$label: recv verified every block" grep -q '"verified": true' "$WORK/$tag.recv.json"
	check "$label: every output equals its input byte for byte" same_files "$out" "$@"
}

put_random() {
	head -c "$3" /dev/urandom |
		dd of="$1" bs="$3" count=1 iflag=fullblock oflag=seek_bytes seek="$2" conv=notrunc status=none
}

MIB=1048576
case_shapes() {
	local d=$WORK/in c flags mode out tag
	mkdir -p "$d"
	# random with zero ranges across the 1M, 4M and 32M borders; 36 MiB
	# and 777 bytes: a multiple of no chunk size, shorter than 1G, past
	# the zero range over 32M
	head -c $((36 * MIB + 777)) /dev/urandom >"$d/mixed.bin"
	dd if=/dev/zero of="$d/mixed.bin" bs=4096 seek=$((3 * 256 - 5)) count=$((2 * 256 + 9)) \
		conv=notrunc status=none # [3M - 20K, 5M + 16K): spans 4M
	dd if=/dev/zero of="$d/mixed.bin" bs=$MIB seek=30 count=5 conv=notrunc status=none # spans 32M
	# zero with a few non-zero bytes, 9 MiB and 5 bytes
	truncate -s $((9 * MIB + 5)) "$d/sparse.bin"
	put_random "$d/sparse.bin" $((MIB - 1)) 2
	put_random "$d/sparse.bin" $((4 * MIB - 3)) 7
	put_random "$d/sparse.bin" $((9 * MIB)) 5
	# all zero, two 4M chunks and a bit; and a tiny block
	truncate -s $((8 * MIB + 4097)) "$d/zero.bin"
	head -c 4097 /dev/urandom >"$d/tiny.bin"
	local files=("$d/mixed.bin" "$d/sparse.bin" "$d/zero.bin" "$d/tiny.bin")
	# where chunks and blocks meet is the library's, not the device's: rxe
	# takes every size, siw the two defaults (half the time of the case)
	local sizes="1M 4M 32M 1G"
	[ "$DEVICE" = siw ] && sizes="1M 32M"
	for c in ${CHUNK_SIZES:-$sizes}; do
		for mode in dynamic pin_all; do
			flags=""
			[ "$mode" = pin_all ] && flags=--pin-all
			tag=$c.$mode
			out=$WORK/out.$tag
			run "$tag" "$out" "$c" "$flags" "${files[@]}"
			checks "$tag" "$c $mode" "$out" "${files[@]}"
			if [ "$mode" = dynamic ]; then
				# the engine skips zero pages for send (skip_zero)
				check "$c dynamic: zero ranges were skipped, not COMPRESSed" \
					eval '[ "$(json_num "$WORK/$tag.send.json" bytes_compressed)" = 0 ] &&
					[ "$(json_num "$WORK/$tag.send.json" bytes_skipped_zero)" -gt 0 ]'
			fi
			echo "# $DEVICE $c $mode: register_requests" \
				"$(json_num "$WORK/$tag.send.json" register_requests)," \
				"compressed $(json_num "$WORK/$tag.send.json" bytes_compressed)," \
				"$(json_num "$WORK/$tag.send.json" seconds) s"
			rm -rf "$out"
		done
	done
	# a receiver told another chunk size than the source's header says
	RECV_CHUNK=4M run mismatch "$WORK/out.mismatch" 32M "" "$d/tiny.bin"
	check "recv --chunk-size 4M, send 32M: recv refuses (exit $RECV_RC)" \
		tool_failed "$RECV_RC" 1 "$WORK/mismatch.recv.err"
	check "... saying it is a chunk-size mismatch" \
		grep -q "chunk-size mismatch: --chunk-size 4194304 here.* 33554432 bytes" \
		"$WORK/mismatch.recv.err"
	check "... the source fails too (exit $SEND_RC)" tool_failed "$SEND_RC" 1 "$WORK/mismatch.send.err"
}

sixteen_times_fewer() { [ -n "$1" ] && [ -n "$2" ] && [ "$2" -gt 0 ] && [ $(($2 * 16)) -le "$1" ]; }

# 64 MiB: 64 round trips at 1M, 2 at 32M; small enough for the guest's RAM
# (/tmp), so that nothing crosses the slow shared folder.  The bench times
# 256 and 512 MiB (docs/performance.md).
RT_MIB=64
case_round_trips() {
	local in out c tag rt1 rt32 mode flags
	in=$WORK/rt.bin
	head -c $((RT_MIB * MIB)) /dev/urandom >"$in"
	for tag in 1M.dynamic 32M.dynamic 32M.pin_all; do
		c=${tag%%.*}
		mode=${tag#*.}
		flags=""
		[ "$mode" = pin_all ] && flags=--pin-all
		out=$WORK/$tag.out
		run "$tag" "$out" "$c" "$flags" "$in"
		checks "$tag" "$RT_MIB MiB at $c $mode" "$out" "$in"
		echo "# timing $DEVICE ${RT_MIB}MiB chunk=$c $mode: register_requests" \
			"$(json_num "$WORK/$tag.send.json" register_requests)," \
			"send $(json_num "$WORK/$tag.send.json" seconds) s," \
			"$(json_num "$WORK/$tag.send.json" throughput_MBps) MB/s"
		rm -rf "$out"
	done
	rt1=$(json_num "$WORK/1M.dynamic.send.json" register_requests)
	rt32=$(json_num "$WORK/32M.dynamic.send.json" register_requests)
	check "$RT_MIB MiB: 1M takes $rt1 round trips, 32M $rt32: at least 16x fewer" \
		sixteen_times_fewer "$rt1" "$rt32"
	# send's lookahead: chunk 1's request goes while chunk 0 is written
	check "$RT_MIB MiB at 32M: the second chunk was registered ahead" \
		[ "$(json_num "$WORK/32M.dynamic.send.json" register_ahead)" = 1 ]
}

case $CASE in
shapes) case_shapes ;;
round_trips) case_round_trips ;;
esac
finish
