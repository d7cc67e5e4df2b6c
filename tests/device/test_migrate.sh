#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_migrate.sh - `rdmig send` -> `rdmig recv` migrations on a real RDMA
# device, inside the test guest (scripts/rdma-vm), where RDMAVM_RXE_IP and
# RDMAVM_SIW_IP are set.  Outside it the test FAILS: a missing device is a
# broken setup, never a reason to skip.
#
# Usage: tests/device/test_migrate.sh BUILD_DIR CASE DEVICE
#   CASE:   shapes_dynamic | shapes_pin_all | large | ipv6_listen |
#           several_in_a_row | inline_auto_vs_off | bad_input
#   DEVICE: rxe | siw
# Example: scripts/rdma-vm -- bash tests/device/test_migrate.sh build shapes_dynamic rxe
#
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed"; exits
# non-zero on any failure.  Every process runs under `timeout`, so a hang
# fails the check instead of hanging the suite.  Only the guest-internal
# address of DEVICE is ever used.

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
if [ ! -x "$RDMIG" ]; then
	echo "FAIL - $RDMIG is missing: build first"
	exit 1
fi

# Fixed ports, one range per case and device, so cases never share one.
case_index() {
	local i=0 c
	for c in shapes_dynamic shapes_pin_all large ipv6_listen several_in_a_row \
		inline_auto_vs_off bad_input verify_modes many_blocks; do
		[ "$c" = "$1" ] && { echo $i; return 0; }
		i=$((i + 1))
	done
	return 1
}
idx=$(case_index "$CASE") || { echo "FAIL - unknown case '$CASE'"; exit 1; }
PORT=$((18500 + idx * 10))
[ "$DEVICE" = siw ] && PORT=$((PORT + 100))

WORK=$(mktemp -d "${TMPDIR:-/tmp}/test-migrate.XXXXXX") || exit 1
BIGDIR=""
cleanup() {
	# only our own background processes, by pid
	[ -n "${RPID:-}" ] && kill "$RPID" 2>/dev/null
	rm -rf "$WORK"
	[ -n "$BIGDIR" ] && rm -rf "$BIGDIR"
}
trap cleanup EXIT

now_ms() { local t=${EPOCHREALTIME//[!0-9]/}; echo $((10#$t / 1000)); }
PROC_TIMEOUT=300 # seconds any one rdmig process may run

# A number from one of our --json objects: json_num FILE KEY
json_num() {
	grep -o "\"$2\": [0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: //'
}
# Every --json output of the case is one valid JSON object: one jq (or
# python3, which takes seconds to start in the guest) for all of them; and
# each matches its schema, rdmig-json(7) (one python3 for all of them:
# tests/cli/check_json.py reads the man page's member lists).
JSON_FILES=()
SRC=$(cd "$(dirname "$0")/../.." && pwd)
check_json() {
	[ ${#JSON_FILES[@]} -gt 0 ] || return 0
	check "all ${#JSON_FILES[@]} --json outputs match rdmig-json(7)" \
		python3 "$SRC/tests/cli/check_json.py" "$SRC/man/rdmig-json.7.scd" "${JSON_FILES[@]}"
	if command -v jq >/dev/null; then
		check "all ${#JSON_FILES[@]} --json outputs are valid JSON" \
			jq -e -s 'all(.[]; type == "object")' "${JSON_FILES[@]}" >/dev/null
		return
	fi
	if ! command -v python3 >/dev/null; then
		check "--json outputs look like JSON objects (no python3)" grep -qc '^{.*}$' "${JSON_FILES[@]}"
		return
	fi
	check "all ${#JSON_FILES[@]} --json outputs are valid JSON" python3 -c '
import json, sys
for f in sys.argv[1:]:
    with open(f) as fh:
        obj = json.load(fh)
    assert isinstance(obj, dict), f
' "${JSON_FILES[@]}"
}

# ------------------------------------------------------- one migration --

# start_recv TAG PORT OUTDIR [ARGS...]: recv in the background; waits until
# it listens.  Sets RPID.  Output in $WORK/TAG.recv.{json,err}.
start_recv() {
	local tag=$1 port=$2 out=$3 listen=${LISTEN_HOST:-$IP} i
	shift 3
	RPID=""
	timeout "$PROC_TIMEOUT" "$RDMIG" recv --listen "$listen:$port" --out "$out" --timeout 120 --json -v \
		"$@" >"$WORK/$tag.recv.json" 2>"$WORK/$tag.recv.err" </dev/null &
	RPID=$!
	for ((i = 0; i < 600; i++)); do
		grep -q '^recv: listening on' "$WORK/$tag.recv.err" 2>/dev/null && return 0
		kill -0 "$RPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "# recv did not start listening:" >&2
	cat "$WORK/$tag.recv.err" >&2
	return 1
}

# wait_recv: the exit status of the recv started last.
wait_recv() {
	local rc
	wait "$RPID"
	rc=$?
	RPID=""
	return "$rc"
}

# migrate TAG PORT OUTDIR "RECV ARGS" SEND ARGS...: one full migration.
# Sets SEND_RC and RECV_RC.
migrate() {
	local tag=$1 port=$2 out=$3 rargs=$4 t0 t1 t2
	shift 4
	SEND_RC=99
	RECV_RC=99
	t0=$(now_ms)
	# shellcheck disable=SC2086 # rargs is a list of words
	if ! start_recv "$tag" "$port" "$out" $rargs; then
		wait_recv
		return 1
	fi
	t1=$(now_ms)
	timeout "$PROC_TIMEOUT" "$RDMIG" send --to "$IP:$port" --timeout 120 --json "$@" \
		>"$WORK/$tag.send.json" 2>"$WORK/$tag.send.err" </dev/null
	SEND_RC=$?
	t2=$(now_ms)
	wait_recv
	RECV_RC=$?
	echo "# $tag: recv listening after $((t1 - t0)) ms, send ran $((t2 - t1)) ms" \
		"(transfer $(json_num "$WORK/$tag.send.json" seconds) s), recv ended $(($(now_ms) - t2)) ms later"
	if [ "$SEND_RC" != 0 ] || [ "$RECV_RC" != 0 ]; then
		echo "# $tag: send exit $SEND_RC, recv exit $RECV_RC" >&2
		tail -n 5 "$WORK/$tag.send.err" "$WORK/$tag.recv.err" >&2
	fi
	return 0
}

# same_files OUTDIR FILE...: every FILE equals OUTDIR/<basename>.img.
# Processes are slow in the guest, so this is one stat per side and one
# cmp of the concatenations: equal sizes file by file plus equal
# concatenations mean every pair is equal byte for byte.
same_files() {
	local out=$1 f outs=()
	shift
	for f in "$@"; do outs+=("$out/${f##*/}.img"); done
	if [ "$(stat -c %s "$@")" != "$(stat -c %s "${outs[@]}" 2>/dev/null)" ]; then
		echo "# sizes differ, or an output is missing" >&2
		return 1
	fi
	# a FIFO, not <(...): the guest has no /dev/fd
	rm -f "$WORK/cmp.fifo"
	mkfifo "$WORK/cmp.fifo" || return 1
	cat "${outs[@]}" >"$WORK/cmp.fifo" &
	cat "$@" | cmp - "$WORK/cmp.fifo" >&2
	local rc=$?
	wait $!
	return "$rc"
}

# both_equal A B C: A = B = C
both_equal() { [ "$1" = "$2" ] && [ "$2" = "$3" ]; }
empty_file() { [ -f "$1" ] && [ ! -s "$1" ]; }
# one_of X A B...: X is one of A B...
one_of() {
	local x=$1
	shift
	for v in "$@"; do [ "$x" = "$v" ] && return 0; done
	return 1
}

# migration_checks TAG LABEL OUTDIR FILE...: the checks every successful
# migration (files $WORK/TAG.*) must pass; LABEL prefixes the messages.
migration_checks() {
	local tag=$1 label=$2 out=$3 total=0 f
	shift 3
	check "$label: send exits 0" [ "$SEND_RC" = 0 ]
	check "$label: recv exits 0" [ "$RECV_RC" = 0 ]
	check "$label: every output equals its input byte for byte" same_files "$out" "$@"
	check "$label: stream.bin exists and is not empty" [ -s "$out/stream.bin" ]
	JSON_FILES+=("$WORK/$tag.send.json" "$WORK/$tag.recv.json")
	check "$label: recv verified every block" \
		grep -q '\], "verified": true' "$WORK/$tag.recv.json"
	for f in $(stat -c %s "$@"); do
		total=$((total + f))
	done
	check "$label: bytes_total is $total on both sides" both_equal "$total" \
		"$(json_num "$WORK/$tag.send.json" bytes_total)" "$(json_num "$WORK/$tag.recv.json" bytes_total)"
}

# ----------------------------------------------------------- the inputs --

rand() { head -c "$2" /dev/urandom >"$1"; }
# put_random FILE OFFSET LENGTH: overwrite a range with random bytes
put_random() {
	head -c "$3" /dev/urandom |
		dd of="$1" bs="$3" count=1 iflag=fullblock oflag=seek_bytes seek="$2" conv=notrunc status=none
}

# The shapes: random, zero, sparse, odd lengths, empty, 100 small blocks.
# Their paths go into the array SHAPES.
make_shapes() {
	local d=$WORK/in i size
	mkdir -p "$d/small"
	rand "$d/random.bin" $((5 * 1048576))
	truncate -s 4M "$d/zero.bin"
	# sparse: zero, with single non-zero pages at chunk and page edges, a
	# run of pages, a whole zero chunk (chunk 4) and an odd tail
	truncate -s $((6 * 1048576 + 777)) "$d/sparse.bin"
	put_random "$d/sparse.bin" $((3 * 4096)) 4096
	put_random "$d/sparse.bin" $((100 * 4096 + 10)) 1
	put_random "$d/sparse.bin" $((1048576 - 1)) 2 # straddles chunks 0 and 1
	put_random "$d/sparse.bin" $((2 * 1048576 + 20 * 4096)) $((5 * 4096))
	put_random "$d/sparse.bin" $((3 * 1048576 + 255 * 4096)) 4096 # last page of chunk 3
	put_random "$d/sparse.bin" $((6 * 1048576 + 700)) 77 # the short last page
	rand "$d/odd.bin" $((3 * 1048576 + 123))
	# random, then a zero tail that is not a whole page
	rand "$d/tailzero.bin" $((1048576 + 4096))
	truncate -s $((1048576 + 4096 + 5000)) "$d/tailzero.bin"
	: >"$d/empty.bin"
	# 100 small blocks of 10 sizes (1 byte to 70001; the last size all
	# zero), ten files per `split`: one process per file is slow here
	local sizes=(1 4095 4096 4097 8191 12293 33333 65536 70001 5000)
	for ((i = 0; i < 10; i++)); do
		size=${sizes[i]}
		if ((i == 9)); then
			head -c $((size * 10)) /dev/zero
		else
			head -c $((size * 10)) /dev/urandom
		fi | split -b "$size" -d -a 1 - "$d/small/s${i}_"
	done
	SHAPES=("$d/random.bin" "$d/zero.bin" "$d/sparse.bin" "$d/odd.bin" "$d/tailzero.bin"
		"$d/empty.bin" "$d"/small/s*)
}

# --------------------------------------------------------------- cases --

case_shapes() {
	local mode=$1 flags="" out=$WORK/out json
	[ "$mode" = pin_all ] && flags=--pin-all
	make_shapes
	migrate shapes "$PORT" "$out" "$flags" $flags "${SHAPES[@]}" || { fail "migration did not start"; return; }
	migration_checks shapes "shapes ($mode, ${#SHAPES[@]} blocks)" "$out" "${SHAPES[@]}"
	json=$WORK/shapes.send.json
	if [ "$mode" = pin_all ]; then
		check "pin-all was negotiated" grep -q '"pin_all": true' "$json"
		check "no REGISTER round trips with pin-all" [ "$(json_num "$json" register_requests)" = 0 ]
	else
		check "dynamic registration" grep -q '"pin_all": false' "$json"
		# the engine skips zero pages for send (rdmig_source_set_skip_zero)
		check "zero chunks were skipped, not sent as COMPRESS" \
			[ "$(json_num "$json" bytes_compressed)" = 0 ]
		check "REGISTER round trips happened" [ "$(json_num "$json" register_requests)" -gt 0 ]
	fi
	check "zero pages were skipped" [ "$(json_num "$json" bytes_skipped_zero)" -gt 0 ]
	[ "$mode" = pin_all ] &&
		check "pin-all: recv keeps its blocks registered whole, gives nothing back" \
			[ "$(json_num "$WORK/shapes.recv.json" bytes_released)" = 0 ]
	check "the empty block has an empty output" empty_file "$out/empty.bin.img"
	check "one iteration on both sides" both_equal 1 "$(json_num "$json" iterations)" \
		"$(json_num "$WORK/shapes.recv.json" iterations)"
}

# Is BUILD a sanitizer build (ASan/UBSan, Debug)?  It hashes ~10x slower.
sanitized() { grep -qs '^RDMIG_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt"; }

case_large() {
	local mib=512 out in=$WORK/large.bin
	[ "$DEVICE" = siw ] && mib=128
	if sanitized; then
		# 512 MiB takes over 5 minutes per side in a sanitizer build
		# under emulation; the release build runs the full size
		mib=$((mib / 4 < 64 ? 64 : mib / 4))
		echo "# sanitizer build: large uses $mib MiB (the release build uses the full size)"
	fi
	PROC_TIMEOUT=800
	# the output goes to the shared build folder: the guest's /tmp is RAM,
	# and the input plus the receiver's memory already take 2 x $mib MiB
	BIGDIR=$(mktemp -d "$BUILD/test-migrate-large.XXXXXX") || { fail "no output dir"; return; }
	out=$BIGDIR/out
	rand "$in" $((mib * 1048576))
	migrate large "$PORT" "$out" "" "$in" || { fail "migration did not start"; return; }
	migration_checks large "large ($mib MiB)" "$out" "$in"
	echo "# large ($mib MiB over $DEVICE): send $(json_num "$WORK/large.send.json" throughput_MBps) MB/s" \
		"in $(json_num "$WORK/large.send.json" seconds) s (hashing $(json_num "$WORK/large.send.json" hash_seconds) s)," \
		"register p50 $(json_num "$WORK/large.send.json" register_rtt_p50_us) us" \
		"p99 $(json_num "$WORK/large.send.json" register_rtt_p99_us) us;" \
		"recv $(json_num "$WORK/large.recv.json" throughput_MBps) MB/s"
	check "throughput is reported" [ -n "$(json_num "$WORK/large.send.json" throughput_MBps)" ]
	# the file is pinned whole in pieces, one thread per CPU (at most 8),
	# no more pieces than its 32 MiB chunks
	local want=$(($(nproc) < 8 ? $(nproc) : 8)) chunks=$(((mib + 31) / 32))
	[ "$chunks" -lt "$want" ] && want=$chunks
	check "send pinned its file whole on $want threads: $(grep -o '"register_threads": [0-9]*' "$WORK/large.send.json")" \
		eval 'grep -q "\"pin_local\": true" "$WORK/large.send.json" &&
		      [ "$(json_num "$WORK/large.send.json" register_threads)" = "$want" ]'
	# dynamic registration: recv drops each chunk once its spans are in the
	# image, while the transfer goes (bytes_released, rdmig_images(3))
	local released
	released=$(json_num "$WORK/large.recv.json" bytes_released)
	check "recv gave back chunks during the transfer ($released of $((mib << 20)) bytes)" \
		[ "${released:-0}" -gt 0 -a "${released:-0}" -le $((mib << 20)) ]
}

# The IPv6 link-local address of DEVICE's netdev, with its scope.
link_local() {
	local nd
	nd=$([ "$DEVICE" = siw ] && echo "${RDMAVM_SIW_NETDEV:-}" || echo "${RDMAVM_RXE_NETDEV:-}")
	[ -n "$nd" ] || return 1
	ip -6 addr show dev "$nd" scope link 2>/dev/null |
		awk -v nd="$nd" '/inet6/ { sub("/.*", "", $2); print $2 "%" nd; exit }'
}

# recv on [::]: an IPv4 source must get through (rdmig binds 0.0.0.0
# beside an IPv6-only [::], because siw does not take IPv4 connections on
# an IPv6 listener), and an IPv6 one too (over the device's link-local
# address).
case_ipv6_listen() {
	local out=$WORK/out a=$WORK/a.bin b=$WORK/b.bin ll
	rand "$a" $((2 * 1048576 + 5))
	truncate -s 1M "$b"
	put_random "$b" 4096 100
	LISTEN_HOST="[::]" migrate v6 "$PORT" "$out" "" "$a" "$b" || { fail "recv on [::] did not start"; return; }
	migration_checks v6 "recv on [::]:$PORT, send to $IP" "$out" "$a" "$b"
	if ! ll=$(link_local) || [ -z "$ll" ]; then
		fail "no IPv6 link-local address on the $DEVICE netdev"
		return
	fi
	IP="[$ll]" LISTEN_HOST="[::]" migrate v6ll "$((PORT + 1))" "$WORK/out_ll" "" "$a" "$b" ||
		{ fail "recv on [::] did not start"; return; }
	migration_checks v6ll "recv on [::]:$((PORT + 1)), send to [$ll]" "$WORK/out_ll" "$a" "$b"
}

case_several_in_a_row() {
	local k out f
	for k in 1 2 3; do
		f=$WORK/run$k.bin
		rand "$f" $((k * 1048576 + k * 1000))
		out=$WORK/out$k
		migrate run$k "$PORT" "$out" "" "$f" || { fail "migration $k did not start"; continue; }
		migration_checks run$k "migration $k of 3 on port $PORT" "$out" "$f"
	done
}

# The default (xxh64), --verify xxh3-128 and sha256 on send, --verify off
# on send (refused by a recv that verifies, taken by one given --verify
# off), --verify off on recv: the data arrives byte for byte each time;
# verified only when both check.
case_verify_modes() {
	local f=$WORK/v.bin out
	rand "$f" $((9 * 1048576 + 77))
	out=$WORK/out_def
	migrate def "$PORT" "$out" "" "$f" || fail "default: did not start"
	migration_checks def "send with the default digest" "$out" "$f"
	check "send's default digest: recv says xxh64" grep -q '"verify": "xxh64"' "$WORK/def.recv.json"
	out=$WORK/out_xxh3
	migrate xxh3 "$PORT" "$out" "" --verify xxh3-128 "$f" || fail "xxh3-128: did not start"
	migration_checks xxh3 "send --verify xxh3-128" "$out" "$f"
	check "send --verify xxh3-128: recv says xxh3-128" grep -q '"verify": "xxh3-128"' "$WORK/xxh3.recv.json"
	out=$WORK/out_sha
	migrate sha "$PORT" "$out" "" --verify sha256 "$f" || fail "sha256: did not start"
	migration_checks sha "send --verify sha256" "$out" "$f"
	check "send --verify sha256: recv says sha256" grep -q '"verify": "sha256"' "$WORK/sha.recv.json"
	# the receiver decides: a source without checksums is refused ...
	out=$WORK/out_srefused
	migrate srefused "$PORT" "$out" "" --verify off "$f" || fail "send off: did not start"
	check "send --verify off, recv verifying: recv refuses (exit $RECV_RC)" [ "$RECV_RC" = 1 ]
	check "send --verify off, recv verifying: the message names both sides" \
		grep -q 'no checksums (--verify off there) and this recv verifies (--verify on here)' \
		"$WORK/srefused.recv.err"
	check "send --verify off, recv verifying: no image is left" \
		eval '[ -z "$(ls "$out" 2>/dev/null)" ]'
	# ... unless recv too was given --verify off
	out=$WORK/out_soff
	migrate soff "$PORT" "$out" "--verify off" --verify off "$f" || fail "send off: did not start"
	check "send and recv --verify off: both exit 0 ($SEND_RC/$RECV_RC)" [ "$SEND_RC$RECV_RC" = 00 ]
	check "send and recv --verify off: the output equals its input" same_files "$out" "$f"
	check "send and recv --verify off: recv reports it unverified" \
		eval 'grep -q "\"verify\": \"off\"" "$WORK/soff.recv.json" && grep -q "\], \"verified\": false" "$WORK/soff.recv.json"'
	out=$WORK/out_roff
	migrate roff "$PORT" "$out" "--verify off" "$f" || fail "recv off: did not start"
	check "recv --verify off: both exit 0 ($SEND_RC/$RECV_RC)" [ "$SEND_RC$RECV_RC" = 00 ]
	check "recv --verify off: the output equals its input" same_files "$out" "$f"
	check "recv --verify off: recv reports it unverified" \
		grep -q '\], "verified": false' "$WORK/roff.recv.json"
}

case_inline_auto_vs_off() {
	local in=$WORK/in.bin z=$WORK/z.bin mode json rjson
	rand "$in" $((3 * 1048576 + 4321))
	truncate -s 2M "$z"
	put_random "$z" 8192 4096
	for mode in auto 0; do
		migrate "inline_$mode" "$PORT" "$WORK/out_$mode" "--inline $mode" --inline "$mode" "$in" "$z" ||
			{ fail "migration with --inline $mode did not start"; continue; }
		migration_checks "inline_$mode" "--inline $mode" "$WORK/out_$mode" "$in" "$z"
	done
	check "identical outputs with --inline auto and 0" \
		cmp -s "$WORK/out_auto/in.bin.img" "$WORK/out_0/in.bin.img"
	json=$WORK/inline_auto.send.json
	rjson=$WORK/inline_auto.recv.json
	check "--inline auto: send posted messages inline ($(json_num "$json" inline_messages))" \
		[ "$(json_num "$json" inline_messages)" -gt 0 ]
	check "--inline auto: recv posted messages inline" [ "$(json_num "$rjson" inline_messages)" -gt 0 ]
	check "--inline auto: granted > 0" [ "$(json_num "$json" inline_granted)" -gt 0 ]
	json=$WORK/inline_0.send.json
	rjson=$WORK/inline_0.recv.json
	check "--inline 0: send posted nothing inline" [ "$(json_num "$json" inline_messages)" = 0 ]
	check "--inline 0: recv posted nothing inline" [ "$(json_num "$rjson" inline_messages)" = 0 ]
	check "--inline 0: every message was copied" [ "$(json_num "$json" copied_messages)" -gt 0 ]
}

# expect_error WHAT STATUS_FILE ERR_FILE PATTERN: a usage or runtime error:
# non-zero but not a crash (1 or 2), and a message matching PATTERN.
expect_error() {
	local what=$1 rc=$2 err=$3 pat=$4
	check "$what: exits 1 or 2 (got $rc)" one_of "$rc" 1 2
	check "$what: says '$pat'" grep -q -- "$pat" "$err"
}

# run_bad NAME PATTERN ARGS...: run rdmig ARGS, expect an error.
run_bad() {
	local name=$1 pat=$2 rc
	shift 2
	timeout 60 "$RDMIG" "$@" >"$WORK/bad.out" 2>"$WORK/bad.err" </dev/null
	rc=$?
	expect_error "$name" "$rc" "$WORK/bad.err" "$pat"
}

case_bad_input() {
	local f=$WORK/f.bin rc t0 ms
	rand "$f" 100000
	run_bad "recv --listen without a port" "expected HOST:PORT" recv --listen "$IP" --out "$WORK/o"
	run_bad "recv --listen with a bad port" "port must be a number" recv --listen "$IP:99999" --out "$WORK/o"
	run_bad "recv --listen with broken brackets" "expected \[IPV6\]:PORT" recv --listen "[::1:$PORT" --out "$WORK/o"
	run_bad "recv without --out" "--out DIR is required" recv --listen "$IP:$PORT"
	run_bad "recv --listen on an address of no device" "rdmig: recv:" recv --listen "192.0.2.1:$PORT" --out "$WORK/o" --timeout 5
	run_bad "send a missing file" "cannot open '$WORK/missing.bin'" send --to "$IP:$PORT" "$WORK/missing.bin"
	run_bad "send with a bad --to" "expected HOST:PORT" send --to "$IP" "$f"
	run_bad "send with --to port 0" "real port" send --to "$IP:0" "$f"
	run_bad "send --inline 5000" "--inline '5000'" send --to "$IP:$PORT" --inline 5000 "$f"
	run_bad "send --inline junk" "--inline 'x'" send --to "$IP:$PORT" --inline x "$f"
	run_bad "send a directory" "not a regular file" send --to "$IP:$PORT" "$WORK"
	run_bad "send two blocks of the same name" "would both be block" send --to "$IP:$PORT" "$f" "$f"
	run_bad "send an empty block name" "name length 0" send --to "$IP:$PORT" "=$f"
	run_bad "send with no file" "no FILE" send --to "$IP:$PORT"
	run_bad "an unknown option" "unknown option '--bogus' (see rdmig send --help)" send --bogus

	# nothing listens on this port: fail, and within the timeout
	t0=$(now_ms)
	timeout 60 "$RDMIG" send --to "$IP:$((PORT + 1))" --timeout 10 "$f" >/dev/null 2>"$WORK/nolisten.err"
	rc=$?
	ms=$(($(now_ms) - t0))
	expect_error "send to a port where nothing listens" "$rc" "$WORK/nolisten.err" "rdmig: send:"
	check "send to a port where nothing listens: gives up in ${ms} ms (< 30 s)" [ "$ms" -lt 30000 ]

	# recv with a short --timeout and no source: gives up by itself
	t0=$(now_ms)
	timeout 60 "$RDMIG" recv --listen "$IP:$((PORT + 2))" --out "$WORK/o2" --timeout 3 \
		>/dev/null 2>"$WORK/noaccept.err"
	rc=$?
	ms=$(($(now_ms) - t0))
	expect_error "recv with no source" "$rc" "$WORK/noaccept.err" "rdmig: recv:"
	check "recv with no source: gives up in ${ms} ms (< 30 s)" [ "$ms" -lt 30000 ]

	# the receiver refuses a stream above its --max-total: both sides fail
	if migrate maxtotal "$((PORT + 3))" "$WORK/o3" "--max-total 64K" "$f"; then
		expect_error "recv --max-total 64K, 100000 bytes sent" "$RECV_RC" \
			"$WORK/maxtotal.recv.err" "exceed the limit of 65536 bytes"
		expect_error "send to a recv that refuses" "$SEND_RC" "$WORK/maxtotal.send.err" "rdmig: send:"
	else
		fail "recv --max-total: recv did not start"
	fi
}

# 4096 blocks, the formats' maximum, under a limit of 256 open files (the
# usual is 1024): recv holds no descriptor per image while they wait to
# be verified and named (outdir.h, out_park).
case_many_blocks() {
	local d=$WORK/many out=$WORK/out_many files
	mkdir -p "$d"
	head -c $((4096 * 4096)) /dev/urandom >"$d/all"
	(cd "$d" && split -b 4096 -a 4 -d all b && rm all) # b0000 .. b4095: one process
	files=("$d"/b*)
	check "4096 files to send" [ "${#files[@]}" = 4096 ]
	ulimit -n 256 # soft and hard, for send and recv (send maps its files and closes them)
	migrate many "$PORT" "$out" "" "${files[@]}" || fail "4096 blocks: did not start"
	check "4096 blocks under ulimit -n 256: both exit 0 ($SEND_RC/$RECV_RC)" \
		[ "$SEND_RC$RECV_RC" = 00 ]
	check "4096 blocks: the outputs equal their inputs" same_files "$out" "${files[@]}"
	check "4096 blocks: verified" grep -q '"verified": true' "$WORK/many.recv.json"
}

case $CASE in
many_blocks) case_many_blocks ;;
shapes_dynamic) case_shapes dynamic ;;
shapes_pin_all) case_shapes pin_all ;;
large) case_large ;;
ipv6_listen) case_ipv6_listen ;;
several_in_a_row) case_several_in_a_row ;;
inline_auto_vs_off) case_inline_auto_vs_off ;;
verify_modes) case_verify_modes ;;
bad_input) case_bad_input ;;
esac
check_json
finish
