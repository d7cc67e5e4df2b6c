#!/bin/bash
# qemu_to_rdmig.sh - a real QEMU migrates over RDMA into `rdmig recv --qemu`,
# inside the test guest (scripts/rdma-vm), where RDMAVM_RXE_IP and
# RDMAVM_SIW_IP are set.  Outside it, or without QEMU, the test FAILS: a
# missing piece is a broken setup, never a reason to skip.
#
# Usage: tests/interop/qemu_to_rdmig.sh BUILD_DIR DEVICE [MODE [QEMU]]
#   DEVICE: rxe | siw
#   QEMU:   7.2 (default) | 10.0.2 | 11.1 | inline: the peer, as
#           scripts/qemu-peer finds it (10.0.2, 11.1 and inline must have
#           been fetched or built on the host before the guest booted:
#           scripts/test does that)
#   MODE:   dynamic  both ways: a stopped 64 MiB VM (TCG, -M pc, RAM from a
#                    shared file of random, zero and patterned chunks)
#                    migrates into rdmig, dynamic registration (default);
#                    then `rdmig send --qemu-replay` sends that record into
#                    a fresh QEMU destination, whose RAM file must equal the
#                    source's and which must run on `cont`; and two hostile
#                    replays: into a QEMU with other RAM, and interrupted
#           pin_all  both ways with the rdma-pin-all capability
#           live     both ways with a running VM that keeps dirtying memory
#                    (dirtier.S); the replayed guest must carry on
#           killed   the source dies mid-migration: rdmig must fail
#           qmp      QEMU -> rdmig only, dynamic registration, with rdmig
#                    reading the source's RAM offsets over its QMP socket
#                    (--source-qmp, no --ramblocks) and --progress json: the
#                    JSON's downtime and total time must be QEMU's own, the
#                    progress lines must match rdmig-json(7) and reach the
#                    total
#           compare  QEMU->rdmig, rdmig->QEMU (the replay of that record) and
#                    QEMU->QEMU migration times, same VM (ctest label
#                    "timing": not part of the suite, timing is the bench's)
#           chunk4M, chunk32M  (QEMU 11.1 only) dynamic, both ways, with
#                    QEMU's x-rdma-chunk-size and rdmig's --chunk-size at
#                    that size: the source set with migrate-set-parameters,
#                    the destination started with -incoming defer, set, then
#                    migrate-incoming
#           chunk_mismatch  (QEMU 11.1 only) the sending side at one chunk
#                    size and the receiving side at another, both ways
#                    round: QEMU -> rdmig, rdmig -> QEMU and QEMU -> QEMU
#                    side by side, each asserted to behave as measured
# Example: scripts/rdma-vm --mem 3072 -- bash tests/interop/qemu_to_rdmig.sh build rxe
#
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed"; exits
# non-zero on any failure.  Every process runs under `timeout` and is
# stopped by its pid.  Only the guest-internal address of DEVICE is used.
# INTEROP_KEEP=DIR copies the work directory (images, records, logs) there.

# shellcheck disable=SC2317 # helpers run through check() and trap
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 4 ]; then
	echo "usage: $0 BUILD_DIR DEVICE [dynamic|pin_all|live|killed|qmp|compare|chunk4M|chunk32M|chunk_mismatch [7.2|10.0.2|11.1|inline]]" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
MODE=${3:-dynamic}
QEMU_VERSION=${4:-7.2}
HERE=$(cd "$(dirname "$0")" && pwd)
RDMIG=$BUILD/rdmig
MEM_MIB=64

# shellcheck source=tests/lib/check.sh
. "$HERE/../lib/check.sh"
# shellcheck source=tests/interop/interop_lib.sh
. "$HERE/interop_lib.sh"
device_ip "$DEVICE" interop
[ -x "$RDMIG" ] || { echo "FAIL - $RDMIG is missing: build first"; exit 1; }
QEMU=$("$HERE/../../scripts/qemu-peer" "$QEMU_VERSION" 2>"${TMPDIR:-/tmp}/qemu-peer.$$" | tail -n1)
if [ ! -x "$QEMU" ]; then
	echo "FAIL - no QEMU $QEMU_VERSION: $(tail -n1 "${TMPDIR:-/tmp}/qemu-peer.$$")"
	rm -f "${TMPDIR:-/tmp}/qemu-peer.$$"
	exit 1
fi
rm -f "${TMPDIR:-/tmp}/qemu-peer.$$"
echo "# $($QEMU --version | head -n1); accel tcg (no usable KVM in the test guest); device $DEVICE ($IP)"

# `rdmig recv --qemu` once the command table routes it; until then the
# temporary `recv-qemu` entry.
if "$RDMIG" recv --qemu --help 2>/dev/null | grep -q -- --ramblocks; then
	RECV=(recv --qemu)
else
	RECV=(recv-qemu)
	echo "# 'rdmig recv --qemu' is not routed yet: using 'rdmig recv-qemu'"
fi

# Fixed ports, one range per mode and device.
case $MODE in
dynamic) PORT=19600 ;; pin_all) PORT=19610 ;; live) PORT=19620 ;; killed) PORT=19630 ;;
compare) PORT=19680 ;; qmp) PORT=19690 ;;
chunk4M) PORT=19640 ;; chunk32M) PORT=19650 ;; chunk_mismatch) PORT=19660 ;;
*) echo "FAIL - unknown mode '$MODE'"; exit 1 ;;
esac
case $MODE in
chunk*)
	[ "$QEMU_VERSION" = 11.1 ] ||
		{ echo "FAIL - mode $MODE needs QEMU 11.1 (x-rdma-chunk-size), not $QEMU_VERSION"; exit 1; }
	;;
esac
[ "$DEVICE" = siw ] && PORT=$((PORT + 100))

WORK=$(mktemp -d "${TMPDIR:-/tmp}/qemu-interop.XXXXXX") || exit 1
PIDS=()
# the chunk modes: more arguments for `rdmig recv --qemu` and for
# `rdmig send --qemu-replay`, and the x-rdma-chunk-size (bytes) of the next
# source and destination QEMUs (empty: QEMU's default, and a destination
# started with -incoming URI as before)
RECV_EXTRA=()
REPLAY_EXTRA=()
SRC_CHUNK=
DST_CHUNK=
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	# INTEROP_KEEP=DIR keeps everything (records, logs) for a closer look
	[ -n "${INTEROP_KEEP:-}" ] && mkdir -p "$INTEROP_KEEP" && cp -r "$WORK" "$INTEROP_KEEP/"
	rm -rf "$WORK"
}
trap cleanup EXIT

now_ms() { local t=${EPOCHREALTIME//[!0-9]/}; echo $((10#$t / 1000)); }

# ------------------------------------------------------------ processes --

# (qemu_vm, source_vm: interop_lib.sh)

# set_chunk TAG BYTES: QEMU TAG's x-rdma-chunk-size, read back
set_chunk() {
	local got
	qmp "$WORK/$1.qmp" migrate-set-parameters "{\"x-rdma-chunk-size\": $2}" >/dev/null
	qmp "$WORK/$1.qmp" query-migrate-parameters >"$WORK/$1.params" 2>&1
	got=$(json_num "$WORK/$1.params" x-rdma-chunk-size)
	[ "$got" = "$2" ] || echo "# $1: x-rdma-chunk-size is ${got:-(none)} after setting $2"
}

# incoming_vm TAG PORT ARGS...: a destination QEMU for rdma:$IP:PORT.  With
# DST_CHUNK set, started with -incoming defer, its x-rdma-chunk-size set,
# then migrate-incoming (x-rdma-chunk-size is a migration parameter: it
# cannot be set before -incoming URI starts listening).
incoming_vm() {
	local tag=$1 port=$2
	shift 2
	if [ -z "$DST_CHUNK" ]; then
		qemu_vm "$tag" "$@" -incoming "rdma:$IP:$port"
		return
	fi
	qemu_vm "$tag" "$@" -incoming defer
	set_chunk "$tag" "$DST_CHUNK"
	qmp "$WORK/$tag.qmp" migrate-incoming "{\"uri\": \"rdma:$IP:$port\"}" >/dev/null
}

# start_rdmig TAG PORT ARGS...: rdmig in the background until it listens;
# sets RPID.  Output in $WORK/TAG.json, $WORK/TAG.err; images in $WORK/TAG.out.
start_rdmig() {
	local tag=$1 port=$2 i
	shift 2
	timeout 600 "$RDMIG" "${RECV[@]}" --listen "$IP:$port" --out "$WORK/$tag.out" --json -v \
		--timeout 120 "$@" >"$WORK/$tag.json" 2>"$WORK/$tag.err" </dev/null &
	RPID=$!
	PIDS+=("$RPID")
	for ((i = 0; i < 600; i++)); do
		grep -q '^recv: listening on' "$WORK/$tag.err" 2>/dev/null && return 0
		kill -0 "$RPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "# rdmig did not start listening:"
	sed 's/^/#   /' "$WORK/$tag.err"
	return 1
}

# wait_pid PID: its exit status (we started it; it is our child)
wait_pid() {
	local rc
	wait "$1"
	rc=$?
	return $rc
}

show_failure() { # TAG: what helps to understand a failed migration
	local tag=$1 f
	for f in "$WORK/$tag.err" "$WORK/$tag.migrate.json" "$WORK/$tag.qemu.log"; do
		[ -s "$f" ] || continue
		echo "# --- ${f##*/}"
		tail -n 15 "$f" | sed 's/^/#   /'
	done
}

# ------------------------------------------------------------- checks --

# (blocks_match, bios_matches, stream_ok: interop_lib.sh)

# qemu_sent_inline TAG: the inline series' QEMU of TAG sent control
# messages inline (its trace: count > 0), granted by its QP; a no-op check
# for stock QEMUs
qemu_sent_inline() {
	local t=$WORK/$1.trace n c g
	[ "$QEMU_VERSION" = inline ] || return 0
	n=$(grep -c 'qemu_rdma_post_send_control_posted .*, inline 1$' "$t" 2>/dev/null)
	c=$(grep -c 'qemu_rdma_post_send_control_posted .*, inline 0$' "$t" 2>/dev/null)
	g=$(sed -n 's/.*qemu_rdma_alloc_qp_inline inline data asked \([0-9]*\) written back \([0-9]*\) granted \([0-9]*\) send SGEs \([0-9]*\) tries \([0-9]*\).*/asked \1, written back \2, granted \3, send SGEs \4, tries \5/p' "$t" 2>/dev/null | head -n1)
	check "$1: the patched QEMU sent ${n:-0} control messages inline, ${c:-0} copied (QP: ${g:-no trace})" \
		test "${n:-0}" -gt 0 -a -n "$g"
}

inline_counts() { # TAG TYPE: "inline/copied" of a message type rdmig sent
	local j=$WORK/$1.json t=$2
	echo "$(json_num "$j" "${t}_inline")/$(json_num "$j" "${t}_copied")"
}

# check_migration TAG MODE MIGRATE_RC RDMIG_RC: everything a completed
# migration must show.
check_migration() {
	local tag=$1 mode=$2 mrc=$3 rrc=$4 rdy rr
	local status
	status=$(json_str "$WORK/$tag.migrate.json" status)
	check "$tag: QEMU reports the migration ${status:-(no status)} ($(json_num "$WORK/$tag.migrate.json" total-time) ms)" \
		test "$mrc" = 0 -a "$status" = completed
	check "$tag: rdmig recv --qemu exited 0" test "$rrc" = 0
	if [ "$mrc" != 0 ] || [ "$rrc" != 0 ]; then
		show_failure "$tag"
		return
	fi
	check "$tag: pc.ram.img equals the source's RAM file byte for byte" \
		cmp -s "$WORK/$tag.out/pc.ram.img" "$WORK/$tag.ram"
	check "$tag: every RAM block of the source has an image of its length" blocks_match "$tag"
	check "$tag: pc.bios.img equals QEMU's BIOS" bios_matches "$tag"
	check "$tag: stream.bin is the stream (QEVM, $(json_num "$WORK/$tag.json" stream_bytes) bytes, end $(json_str "$WORK/$tag.json" stream_end))" \
		stream_ok "$tag"
	check "$tag: recv --qemu's JSON matches rdmig-json(7)" matches_schema "$WORK/$tag.json"
	qemu_sent_inline "$tag"
	rdy=$(inline_counts "$tag" ready)
	rr=$(inline_counts "$tag" register_result)
	check "$tag: READY went inline (inline/copied $rdy)" \
		test "${rdy%/*}" -gt 0 -a "${rdy#*/}" = 0
	if [ "$mode" = pin_all ]; then
		check "$tag: pin-all was negotiated and no registration was needed" \
			grep -q '"pin_all": true, .*"register_requests": 0,' "$WORK/$tag.json"
	else
		check "$tag: REGISTER_RESULT went inline (inline/copied $rr)" \
			test "${rr%/*}" -gt 0 -a "${rr#*/}" = 0
		check "$tag: QEMU sent COMPRESS for zero chunks ($(json_num "$WORK/$tag.json" bytes_compressed) bytes)" \
			test "$(json_num "$WORK/$tag.json" bytes_compressed)" -gt 0
	fi
	if "$PY" "$HERE/check_record.py" "$WORK/$tag.out/record.txt" pc.ram "$WORK/$tag.ram" \
		"$mode" "${REC_CHUNK_MIB:-1}" >"$WORK/$tag.record-check"; then
		ok "$tag: record.txt agrees with the stream and the RAM ($(grep -c '^ok' "$WORK/$tag.record-check") checks)"
	else
		fail "$tag: record.txt"
		sed 's/^/#   /' "$WORK/$tag.record-check"
	fi
	grep '^#' "$WORK/$tag.record-check"
	echo "# $tag: $(json_num "$WORK/$tag.json" iterations) iterations, $(json_num "$WORK/$tag.json" register_requests) registrations, rdmig $(json_num "$WORK/$tag.json" seconds) s, QEMU total-time $(json_num "$WORK/$tag.migrate.json" total-time) ms, downtime $(json_num "$WORK/$tag.migrate.json" downtime) ms"
}

# ----------------------------------------------------------- migrations --

# to_rdmig TAG PORT MODE [QEMU ARGS...]: a stopped source (unless ARGS
# boot something) migrates into rdmig.  Sets MRC, RRC.
to_rdmig() {
	local tag=$1 port=$2 mode=$3 args=() attempt
	shift 3
	source_vm "$tag" "$@"
	local spid=$QPID
	qmp "$WORK/$tag.qmp" hmp "info ramblock" >"$WORK/$tag.ramblocks"
	if [ "$mode" = pin_all ]; then
		qmp "$WORK/$tag.qmp" caps rdma-pin-all=on
		args=(--pin-all)
	elif [ "$mode" = qmp ]; then
		args=(--source-qmp "$WORK/$tag.qmp" --progress json)
	else
		args=(--ramblocks "$WORK/$tag.ramblocks")
	fi
	[ -n "${SETUP_HOOK:-}" ] && "$SETUP_HOOK" "$tag"
	[ -n "$SRC_CHUNK" ] && set_chunk "$tag" "$SRC_CHUNK"
	for attempt in 1 2; do
		if ! start_rdmig "$tag" "$port" "${args[@]}" "${RECV_EXTRA[@]}"; then
			MRC=1 RRC=1
			return
		fi
		qmp "$WORK/$tag.qmp" migrate "rdma:$IP:$port" 300 >"$WORK/$tag.migrate.json" \
			2>"$WORK/$tag.migrate.err"
		MRC=$?
		wait_pid "$RPID"
		RRC=$?
		# QEMU's connect can lose the iWARP race of docs/design.md (siw
		# without peer-to-peer mode): that is not what this test is about
		if [ "$attempt" = 1 ] && [ "$MRC" != 0 ] &&
			grep -q 'connecting to destination' "$WORK/$tag.migrate.err"; then
			echo "# $tag: QEMU could not connect ($(head -n1 "$WORK/$tag.migrate.err")): once more"
			continue
		fi
		break
	done
	cat "$WORK/$tag.migrate.err" >&2
	# a killed source (mode killed) has no QMP to ask: the client would wait a
	# minute per call for the socket to answer
	if kill -0 "$(cat "$WORK/$tag.pid" 2>/dev/null)" 2>/dev/null; then
		qmp "$WORK/$tag.qmp" status >"$WORK/$tag.src-status" 2>/dev/null
		quit_vm "$WORK/$tag"
	fi
	wait "$spid" 2>/dev/null
}

# to_qemu TAG PORT MODE: the same stopped source migrates into a second QEMU.
to_qemu() {
	local tag=$1 port=$2 mode=$3
	local ram="memory-backend-ram,id=pc.ram,size=${MEM_MIB}M"
	# the chunk modes compare the destination's RAM with the source's
	[ -n "${DST_RAM_FILE:-}" ] &&
		ram="memory-backend-file,id=pc.ram,size=${MEM_MIB}M,mem-path=$WORK/$tag-dst.ram,share=on"
	incoming_vm "$tag-dst" "$port" -object "$ram" -S
	local dpid=$QPID
	source_vm "$tag" -S
	local spid=$QPID
	[ "$mode" = pin_all ] && qmp "$WORK/$tag.qmp" caps rdma-pin-all=on
	[ -n "$SRC_CHUNK" ] && set_chunk "$tag" "$SRC_CHUNK"
	qmp "$WORK/$tag.qmp" migrate "rdma:$IP:$port" 300 >"$WORK/$tag.migrate.json"
	MRC=$?
	# what the destination says (a failed migration may have ended it)
	if kill -0 "$(cat "$WORK/$tag-dst.pid" 2>/dev/null)" 2>/dev/null; then
		qmp "$WORK/$tag-dst.qmp" incoming 30 >"$WORK/$tag-dst.incoming.json" 2>&1
	else
		echo '{ "status": "exited" }' >"$WORK/$tag-dst.incoming.json"
	fi
	quit_vm "$WORK/$tag"
	quit_vm "$WORK/$tag-dst"
	wait "$spid" "$dpid" 2>/dev/null
}

ram_file() { # TAG [ZERO_FROM ZERO_TO]: the source's RAM, $WORK/TAG.ram
	ram_image "$MEM_MIB" "$WORK/$1.ram" "${@:2}"
}

# ---------------------------------------------------------------- modes --

# mode_stopped TAG MODE (dynamic | pin_all): a stopped VM into rdmig, and
# the record back into a QEMU destination (the recording is checked
# whole first: a replay of a bad record would prove nothing)
mode_stopped() {
	local tag=$1 mode=$2
	ram_file "$tag"
	to_rdmig "$tag" "$PORT" "$mode" -S
	check_migration "$tag" "$mode" "$MRC" "$RRC"
	[ "$MRC" = 0 ] && [ "$RRC" = 0 ] || return
	replay_into_qemu "$tag" $((PORT + 1)) "$mode"
	if check_replay "$tag" "$mode"; then
		check_cont "$tag"
	fi
	quit_vm "$WORK/$tag-rdst"
	wait "$DPID" 2>/dev/null
	if [ "$mode" = dynamic ]; then
		replay_refused "$tag" $((PORT + 3))
		replay_interrupted "$tag" $((PORT + 4))
	fi
	echo "# $tag: replay into QEMU $(json_num "$WORK/$tag.replay.json" seconds) s (rdmig, connect .. last byte; mode compare times it against QEMU -> QEMU)"
}

# mode_qmp: rdmig asks the source's QMP for its RAM offsets and, after the
# end, for QEMU's downtime; --progress json shows the RAM as it comes
mode_qmp() {
	local tag=qmp-$DEVICE dt tt
	ram_file "$tag"
	to_rdmig "$tag" "$PORT" qmp -S
	check_migration "$tag" dynamic "$MRC" "$RRC"
	[ "$MRC" = 0 ] && [ "$RRC" = 0 ] || return
	check "$tag: the offsets came from the source's QMP ($(grep "info ramblock' (QMP" "$WORK/$tag.err"))" \
		grep -q "^recv: the source's 'info ramblock' (QMP .*): [1-9][0-9]* RAM blocks" "$WORK/$tag.err"
	dt=$(json_num "$WORK/$tag.migrate.json" downtime)
	tt=$(json_num "$WORK/$tag.migrate.json" total-time)
	check "$tag: the JSON's QEMU status is completed" \
		grep -q '"qemu_status": "completed"' "$WORK/$tag.json"
	check "$tag: the JSON's QEMU downtime $(json_num "$WORK/$tag.json" qemu_downtime_seconds) s is QEMU's $dt ms" \
		"$PY" -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a * 1000 - b) > 0.5)' \
		"$(json_num "$WORK/$tag.json" qemu_downtime_seconds)" "$dt"
	check "$tag: the JSON's QEMU total time $(json_num "$WORK/$tag.json" qemu_total_seconds) s is QEMU's $tt ms" \
		"$PY" -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a * 1000 - b) > 0.5)' \
		"$(json_num "$WORK/$tag.json" qemu_total_seconds)" "$tt"
	check "$tag: --progress json lines match rdmig-json(7)" \
		"$PY" "$HERE/../cli/check_json.py" --progress "$HERE/../../man/rdmig-json.7.scd" "$WORK/$tag.err"
	grep '^{' "$WORK/$tag.err" >"$WORK/$tag.progress"
	check "$tag: $(wc -l <"$WORK/$tag.progress") progress lines, rising, the last at the total ($(tail -n1 "$WORK/$tag.progress"))" \
		"$PY" -c '
import json, sys
p = [json.loads(l) for l in open(sys.argv[1])]
done = [o["bytes_done"] for o in p]
assert len(p) >= 2 and all(o["command"] == "recv" and o["mode"] == "qemu" for o in p)
assert done == sorted(done) and done[-1] == p[-1]["bytes_total"] > 0
assert any(0 < d < p[-1]["bytes_total"] for d in done), "no line in the middle"
' "$WORK/$tag.progress"
}

build_dirtier() {
	as --32 -o "$WORK/dirtier.o" "$HERE/dirtier.S" &&
		ld -m elf_i386 -Ttext=0x100000 -e start -o "$WORK/dirtier.elf" "$WORK/dirtier.o"
}

# The source boots dirtier.elf and runs while it migrates.
live_setup() { # TAG: wait until the guest runs, and let it dirty a while
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'DIRTIER up' "$WORK/$1.serial" 2>/dev/null && break
		sleep 0.1
	done
	echo "# guest up after $((i / 10)) s: $(tr -d '\r' <"$WORK/$1.serial" | head -n1)"
	sleep 2
}

# mode_live: the running dirtier guest into rdmig, and back into a QEMU
# destination, where it must carry on from the migrated state
mode_live() {
	local tag=live before after
	check "the dirtier guest builds (as --32, ld -m elf_i386)" build_dirtier || return
	ram_file "$tag" 8 56
	SETUP_HOOK=live_setup to_rdmig "$tag" "$PORT" dynamic -kernel "$WORK/dirtier.elf" \
		-serial "file:$WORK/$tag.serial"
	check "$tag: the source ran until the migration and then stopped ($(cat "$WORK/$tag.src-status" 2>/dev/null))" \
		grep -q postmigrate "$WORK/$tag.src-status"
	check_migration "$tag" live "$MRC" "$RRC"
	echo "# $tag: QEMU dirty-sync-count $(json_num "$WORK/$tag.migrate.json" dirty-sync-count), transferred $(json_num "$WORK/$tag.migrate.json" transferred) bytes"
	[ "$MRC" = 0 ] && [ "$RRC" = 0 ] || return
	replay_into_qemu "$tag" $((PORT + 1)) dynamic -kernel "$WORK/dirtier.elf" \
		-serial "file:$WORK/$tag-rdst.serial"
	if check_replay "$tag" dynamic; then
		before=$(hot_word "$WORK/$tag-rdst.ram")
		check_cont "$tag"
		sleep 2
		after=$(hot_word "$WORK/$tag-rdst.ram")
		check "$tag: the guest carries on from the migrated state (hot word $before -> $after)" \
			test "$after" -gt "$before"
	fi
	quit_vm "$WORK/$tag-rdst"
	wait "$DPID" 2>/dev/null
}

# A source that never converges (downtime limit 1 ms while the guest
# dirties memory; pin-all) is killed after three registration phases.
killed_setup() {
	live_setup "$1"
	qmp "$WORK/$1.qmp" migrate-set-parameters '{"downtime-limit": 1}' >/dev/null
	(
		for ((i = 0; i < 3000; i++)); do
			[ "$(grep -c REGISTER_FINISHED "$WORK/$1.err" 2>/dev/null)" -ge 3 ] && break
			sleep 0.1
		done
		kill -9 "$(cat "$WORK/$1.pid")"
	) &
	PIDS+=("$!")
}

mode_killed() {
	local tag=killed lines
	check "the dirtier guest builds (as --32, ld -m elf_i386)" build_dirtier || return
	ram_file "$tag" 8 56
	SETUP_HOOK=killed_setup to_rdmig "$tag" "$PORT" pin_all -kernel "$WORK/dirtier.elf" \
		-serial "file:$WORK/$tag.serial"
	check "$tag: rdmig saw registration phases before the source died ($(grep -c REGISTER_FINISHED "$WORK/$tag.err"))" \
		test "$(grep -c REGISTER_FINISHED "$WORK/$tag.err")" -ge 3
	check "$tag: rdmig fails on its own (status $RRC, no sanitizer report)" \
		tool_failed "$RRC" 1 "$WORK/$tag.err"
	lines=$(grep -c '^rdmig: ' "$WORK/$tag.err")
	check "$tag: with one error line ($(grep '^rdmig: ' "$WORK/$tag.err" | head -n1))" \
		test "$lines" = 1
	check "$tag: which says the stream ended early" \
		grep -q '^rdmig: recv: the source disconnected before the end of its stream' "$WORK/$tag.err"
	check "$tag: record.txt says it failed" grep -q '^end failed ' "$WORK/$tag.out/record.txt"
	check "$tag: no images were written" test -z "$(ls "$WORK/$tag.out"/*.img 2>/dev/null)"
}

# compare: the same stopped VM into rdmig (and its record back into a QEMU)
# and into QEMU, alternating, RDMIG_COMPARE_ROUNDS times (1 in CI: the test
# proves the three paths agree; timing belongs to scripts/bench, whose bulk
# part runs QEMU -> QEMU beside rdmig on 512 MiB).
mode_compare() {
	local round m tag port=$PORT rounds=${RDMIG_COMPARE_ROUNDS:-1}
	declare -A times walls
	for m in dynamic pin_all; do
		for ((round = 1; round <= rounds; round++)); do
			tag=$m-rdmig-$round
			ram_file "$tag"
			to_rdmig "$tag" "$port" "$m" -S
			port=$((port + 1))
			if [ "$MRC" = 0 ] && [ "$RRC" = 0 ] && cmp -s "$WORK/$tag.out/pc.ram.img" "$WORK/$tag.ram"; then
				times[$m-rdmig]+=" $(json_num "$WORK/$tag.migrate.json" total-time)"
				walls[$m-rdmig]+=" $(json_num "$WORK/$tag.migrate.json" wall_seconds)"
				# and back: the record replayed into a QEMU destination
				replay_into_qemu "$tag" "$port" "$m"
				port=$((port + 1))
				if [ "$SRC" = 0 ] && [ "$DST" = completed ] && cmp -s "$WORK/$tag-rdst.ram" "$WORK/$tag.ram"; then
					times[$m-replay]+=" $(awk -v s="$(json_num "$WORK/$tag.replay.json" seconds)" 'BEGIN { printf "%d", s * 1000 }')"
				else
					fail "$tag: rdmig -> QEMU (replay)"
				fi
				quit_vm "$WORK/$tag-rdst"
				wait "$DPID" 2>/dev/null
				rm -f "$WORK/$tag-rdst.ram"
			else
				fail "$tag: QEMU -> rdmig"
				show_failure "$tag"
			fi
			rm -rf "$WORK/$tag.out" "$WORK/$tag.ram"
			tag=$m-qemu-$round
			ram_file "$tag"
			to_qemu "$tag" "$port" "$m"
			port=$((port + 1))
			if [ "$MRC" = 0 ]; then
				times[$m-qemu]+=" $(json_num "$WORK/$tag.migrate.json" total-time)"
				walls[$m-qemu]+=" $(json_num "$WORK/$tag.migrate.json" wall_seconds)"
			else
				fail "$tag: QEMU -> QEMU"
				show_failure "$tag"
			fi
			rm -f "$WORK/$tag.ram"
		done
	done
	echo "# 64 MiB stopped VM over $DEVICE; QEMU total-time in ms (query-migrate), $rounds round(s);"
	echo "# rdmig -> QEMU: the replay of the same round's record, rdmig's connect .. last byte:"
	for m in dynamic pin_all; do
		echo "#   $m: QEMU -> rdmig:${times[$m-rdmig]:- -}   rdmig -> QEMU:${times[$m-replay]:- -}   QEMU -> QEMU:${times[$m-qemu]:- -}"
		echo "#   $m: wall seconds, QEMU -> rdmig:${walls[$m-rdmig]:- -}   QEMU -> QEMU:${walls[$m-qemu]:- -}"
		check "$m: $rounds QEMU -> rdmig, rdmig -> QEMU and QEMU -> QEMU migration(s) each completed" \
			test "$(wc -w <<<"${times[$m-rdmig]:-}")" = "$rounds" \
			-a "$(wc -w <<<"${times[$m-qemu]:-}")" = "$rounds" \
			-a "$(wc -w <<<"${times[$m-replay]:-}")" = "$rounds"
	done
}

# ---------------------------------------------------------- chunk size --

mib_bytes() { echo $((${1%M} << 20)); }

# mode_chunk SIZE (4M, 32M): QEMU 11.1 with x-rdma-chunk-size SIZE into
# `rdmig recv --qemu --chunk-size SIZE`, and that record replayed with
# `rdmig send --qemu-replay --chunk-size SIZE` into a QEMU 11.1 destination
# with x-rdma-chunk-size SIZE; dynamic registration, RAM byte for byte.
mode_chunk() {
	local size=$1 tag=chunk$1-$DEVICE bytes rq most
	bytes=$(mib_bytes "$size")
	ram_file "$tag"
	SRC_CHUNK=$bytes RECV_EXTRA=(--chunk-size "$size")
	to_rdmig "$tag" "$PORT" dynamic -S
	SRC_CHUNK='' RECV_EXTRA=()
	check "$tag: the source's x-rdma-chunk-size was $bytes" \
		test "$(json_num "$WORK/$tag.params" x-rdma-chunk-size)" = "$bytes"
	REC_CHUNK_MIB=${size%M} check_migration "$tag" dynamic "$MRC" "$RRC"
	[ "$MRC" = 0 ] && [ "$RRC" = 0 ] || return
	# A stopped source registers each chunk once, and one REGISTER_REQUEST
	# asks for one chunk or more: at most sum(ceil(used / SIZE)) over the
	# blocks.  At the 1 MiB default the same VM takes about 52 (21 is
	# the bound at 4 MiB, 7 at 32 MiB): the bound fails if SIZE was not
	# what QEMU used.
	local name used
	most=0
	while read -r name used; do
		most=$((most + (used + bytes - 1) / bytes))
	done <"$WORK/$tag.used"
	rq=$(json_num "$WORK/$tag.json" register_requests)
	check "$tag: QEMU registered in $size chunks: $rq REGISTER_REQUESTs, at most $most" \
		test "$rq" -gt 0 -a "$rq" -le "$most"
	DST_CHUNK=$bytes REPLAY_EXTRA=(--chunk-size "$size")
	replay_into_qemu "$tag" $((PORT + 1)) dynamic
	DST_CHUNK='' REPLAY_EXTRA=()
	check "$tag: the destination's x-rdma-chunk-size was $bytes" \
		test "$(json_num "$WORK/$tag-rdst.params" x-rdma-chunk-size)" = "$bytes"
	if check_replay "$tag" dynamic; then
		rq=$(json_num "$WORK/$tag.replay.json" register_requests)
		check "$tag: the replay registered in $size chunks: $rq round trips, at most $most" \
			test "${rq:-0}" -gt 0 -a "${rq:-0}" -le "$most"
		check_cont "$tag"
	fi
	quit_vm "$WORK/$tag-rdst"
	wait "$DPID" 2>/dev/null
}

# A mismatch's outcome (OUTCOME): "completed" (and the RAM arrived whole) or
# "failed"; MS its milliseconds.  A failure must come within a bound, with a
# message: not a hang.  60 s for each path: measured on rxe (2026-12-03),
# rdmig's failed in 7-10 s, QEMU -> QEMU in 13 s.
MISMATCH_BOUND_RDMIG=60
MISMATCH_BOUND_QEMU=60

# mismatch_qemu_to_rdmig TAG SEND RECV: QEMU at SEND into rdmig at RECV
mismatch_qemu_to_rdmig() {
	local tag=$1 send=$2 recv=$3 t0
	ram_file "$tag"
	SRC_CHUNK=$(mib_bytes "$send") RECV_EXTRA=(--chunk-size "$recv")
	t0=$(now_ms)
	to_rdmig "$tag" "$PORT_NEXT" dynamic -S
	MS=$(($(now_ms) - t0))
	PORT_NEXT=$((PORT_NEXT + 1))
	SRC_CHUNK='' RECV_EXTRA=()
	OUTCOME=failed
	[ "$MRC" = 0 ] && [ "$RRC" = 0 ] && cmp -s "$WORK/$tag.out/pc.ram.img" "$WORK/$tag.ram" &&
		OUTCOME=completed
	echo "# $tag: QEMU (x-rdma-chunk-size $send) -> rdmig recv --qemu --chunk-size $recv: $OUTCOME in $MS ms;" \
		"QEMU: $(json_str "$WORK/$tag.migrate.json" status) $(json_str "$WORK/$tag.migrate.json" error-desc);" \
		"rdmig: exit $RRC $(grep '^rdmig: ' "$WORK/$tag.err" | head -n1)"
}

# mismatch_rdmig_to_qemu TAG RECORD_TAG SEND RECV: RECORD_TAG's record
# replayed at SEND into QEMU at RECV
mismatch_rdmig_to_qemu() {
	local tag=$1 rec=$2 send=$3 recv=$4 t0
	t0=$(now_ms)
	DST_CHUNK=$(mib_bytes "$recv")
	incoming_vm "$tag-rdst" "$PORT_NEXT" -object \
		"memory-backend-file,id=pc.ram,size=${MEM_MIB}M,mem-path=$WORK/$tag-rdst.ram,share=on" -S
	DPID=$QPID
	DST_CHUNK=''
	timeout 300 "$RDMIG" send --qemu-replay "$WORK/$rec.out" --to "$IP:$PORT_NEXT" --json -v \
		--timeout 30 --chunk-size "$send" >"$WORK/$tag.replay.json" 2>"$WORK/$tag.replay.err" </dev/null
	SRC=$?
	PORT_NEXT=$((PORT_NEXT + 1))
	if kill -0 "$(cat "$WORK/$tag-rdst.pid" 2>/dev/null)" 2>/dev/null; then
		qmp "$WORK/$tag-rdst.qmp" incoming 30 >"$WORK/$tag-rdst.incoming.json" 2>&1
	else
		echo '{ "status": "exited" }' >"$WORK/$tag-rdst.incoming.json"
	fi
	MS=$(($(now_ms) - t0))
	DST=$(json_str "$WORK/$tag-rdst.incoming.json" status)
	OUTCOME=failed
	[ "$SRC" = 0 ] && [ "$DST" = completed ] && cmp -s "$WORK/$tag-rdst.ram" "$WORK/$rec.ram" &&
		OUTCOME=completed
	echo "# $tag: rdmig send --qemu-replay --chunk-size $send -> QEMU (x-rdma-chunk-size $recv): $OUTCOME in $MS ms;" \
		"rdmig: exit $SRC $(grep '^rdmig: ' "$WORK/$tag.replay.err" | head -n1);" \
		"QEMU: ${DST:-?} $(json_str "$WORK/$tag-rdst.incoming.json" error-desc)"
	grep -h -i 'error\|fail' "$WORK/$tag-rdst.qemu.log" | head -n 2 | sed 's/^/#   QEMU: /'
	quit_vm "$WORK/$tag-rdst"
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
}

# mismatch_qemu_to_qemu TAG SEND RECV: QEMU at SEND into QEMU at RECV
mismatch_qemu_to_qemu() {
	local tag=$1 send=$2 recv=$3 t0
	ram_file "$tag"
	t0=$(now_ms)
	SRC_CHUNK=$(mib_bytes "$send") DST_CHUNK=$(mib_bytes "$recv") DST_RAM_FILE=1
	to_qemu "$tag" "$PORT_NEXT" dynamic
	SRC_CHUNK='' DST_CHUNK='' DST_RAM_FILE=''
	MS=$(($(now_ms) - t0))
	PORT_NEXT=$((PORT_NEXT + 1))
	OUTCOME=failed
	[ "$MRC" = 0 ] && [ "$(json_str "$WORK/$tag-dst.incoming.json" status)" = completed ] &&
		cmp -s "$WORK/$tag-dst.ram" "$WORK/$tag.ram" && OUTCOME=completed
	echo "# $tag: QEMU (x-rdma-chunk-size $send) -> QEMU (x-rdma-chunk-size $recv): $OUTCOME in $MS ms;" \
		"source: $(json_str "$WORK/$tag.migrate.json" status) $(json_str "$WORK/$tag.migrate.json" error-desc);" \
		"destination: $(json_str "$WORK/$tag-dst.incoming.json" status) $(json_str "$WORK/$tag-dst.incoming.json" error-desc)"
	grep -h -i 'error\|fail' "$WORK/$tag-dst.qemu.log" | head -n 2 | sed 's/^/#   QEMU destination: /'
}

# mismatch_check TAG WHAT WANT BOUND MESSAGE: the outcome is WANT; a
# failure within BOUND s and with a message
mismatch_check() {
	local tag=$1 what=$2 want=$3 bound=$4 msg=$5
	check "$tag: $what: $OUTCOME in $MS ms (measured before: $want)" test "$OUTCOME" = "$want"
	if [ "$OUTCOME" = failed ]; then
		check "$tag: it failed within $bound s, saying: ${msg:-(nothing)}" \
			test "$MS" -le $((bound * 1000)) -a -n "$msg"
	fi
}

# mismatch_expect PATH SEND RECV: the outcome measured in the test guest
# (docs/qemu-stream.md, "x-rdma-chunk-size"); MISMATCH_EXPECT=explore
# expects whatever happens (to find out, not for the suite)
mismatch_expect() {
	[ "${MISMATCH_EXPECT:-}" = explore ] && { echo "$OUTCOME"; return; }
	case $1:$2:$3 in
	# the receiver's chunk a multiple of the sender's: it registers the
	# bigger chunk around the address asked, which holds the sender's
	*:4M:32M) echo completed ;;
	# the other way round it registers less than the sender then writes:
	# the sender's RDMA write fails (remote access error)
	*:32M:4M) echo failed ;;
	*) echo unknown ;;
	esac
}

# mode_chunk_mismatch: for each pair SEND/RECV of chunk sizes, QEMU ->
# QEMU (the reference), QEMU -> rdmig and rdmig -> QEMU, each with the
# outcome measured
mode_chunk_mismatch() {
	local pair send recv tag
	PORT_NEXT=$PORT
	# a record to replay: QEMU at its default 1 MiB into rdmig at 1 MiB
	ram_file rec
	to_rdmig rec "$PORT_NEXT" dynamic -S
	PORT_NEXT=$((PORT_NEXT + 1))
	check "rec: QEMU -> rdmig at the default chunk size, for a record to replay" \
		test "$MRC" = 0 -a "$RRC" = 0
	for pair in ${CHUNK_MISMATCH_PAIRS:-32M/4M 4M/32M}; do
		send=${pair%/*} recv=${pair#*/}
		tag=mm-$send-$recv-q2q
		mismatch_qemu_to_qemu "$tag" "$send" "$recv"
		mismatch_check "$tag" "QEMU at $send -> QEMU at $recv" "$(mismatch_expect q2q "$send" "$recv")" \
			"$MISMATCH_BOUND_QEMU" "$(json_str "$WORK/$tag.migrate.json" error-desc)"
		tag=mm-$send-$recv-q2r
		mismatch_qemu_to_rdmig "$tag" "$send" "$recv"
		mismatch_check "$tag" "QEMU at $send -> rdmig at $recv" "$(mismatch_expect q2r "$send" "$recv")" \
			"$MISMATCH_BOUND_RDMIG" "$(grep '^rdmig: ' "$WORK/$tag.err" | head -n1)"
		[ "$OUTCOME" = failed ] && check "$tag: rdmig fails on its own ($RRC) with one error line" \
			eval 'tool_failed "$RRC" 1 "$WORK/$tag.err" && [ "$(grep -c "^rdmig: " "$WORK/$tag.err")" = 1 ]'
		tag=mm-$send-$recv-r2q
		mismatch_rdmig_to_qemu "$tag" rec "$send" "$recv"
		mismatch_check "$tag" "rdmig at $send -> QEMU at $recv" "$(mismatch_expect r2q "$send" "$recv")" \
			"$MISMATCH_BOUND_RDMIG" "$(grep '^rdmig: ' "$WORK/$tag.replay.err" | head -n1)"
		[ "$OUTCOME" = failed ] && check "$tag: rdmig fails on its own ($SRC) with one error line" \
			eval 'tool_failed "$SRC" 1 "$WORK/$tag.replay.err" && [ "$(grep -c "^rdmig: " "$WORK/$tag.replay.err")" = 1 ]'
	done
}

# ------------------------------------------------------------- replay --

# replay_into_qemu TAG PORT MODE [QEMU ARGS...]: `rdmig send --qemu-replay`
# plays TAG's record into a fresh, paused QEMU destination with the same
# machine arguments, whose RAM is the shared file $WORK/TAG-rdst.ram.  Sets
# SRC (rdmig's exit status) and DST (the destination's incoming status);
# the destination keeps running (DPID) for the caller's checks.
replay_into_qemu() {
	local tag=$1 port=$2 mode=$3 args=()
	shift 3
	incoming_vm "$tag-rdst" "$port" -object \
		"memory-backend-file,id=pc.ram,size=${MEM_MIB}M,mem-path=$WORK/$tag-rdst.ram,share=on" \
		-S "$@"
	DPID=$QPID
	[ "$mode" = pin_all ] && args=(--pin-all)
	timeout 300 "$RDMIG" send --qemu-replay "$WORK/$tag.out" --to "$IP:$port" --json -v \
		"${args[@]}" "${REPLAY_EXTRA[@]}" >"$WORK/$tag.replay.json" 2>"$WORK/$tag.replay.err" </dev/null
	SRC=$?
	qmp "$WORK/$tag-rdst.qmp" incoming 120 >"$WORK/$tag-rdst.incoming.json"
	DST=$(json_str "$WORK/$tag-rdst.incoming.json" status)
}

# sent_by_type TAG inline|copied TYPE: how many TYPE messages the replay sent so
sent_by_type() {
	grep -o "\"messages_sent_$2\": {[^}]*}" "$WORK/$1.replay.json" | grep -o "\"$3\": [0-9]*" |
		sed 's/.*: //'
}

# hot_word FILE: the dirtier's hot word (7 MiB into RAM), as a number
hot_word() { od -An -tu4 -j $((7 << 20)) -N4 "$1" | tr -d ' '; }

# matches_schema FILE: one --json object that rdmig-json(7) describes
matches_schema() {
	python3 "$HERE/../cli/check_json.py" "$HERE/../../man/rdmig-json.7.scd" "$1" >/dev/null
}

# check_replay TAG MODE: QEMU accepted the replay and holds the source's RAM
check_replay() {
	local tag=$1 mode=$2 st
	check "$tag: rdmig send --qemu-replay exited 0 ($(json_num "$WORK/$tag.replay.json" seconds) s)" \
		test "$SRC" = 0
	check "$tag: send --qemu-replay's JSON matches rdmig-json(7)" \
		matches_schema "$WORK/$tag.replay.json"
	check "$tag: QEMU's destination reports the incoming migration ${DST:-(no status)}" \
		test "$DST" = completed
	if [ "$SRC" != 0 ] || [ "$DST" != completed ]; then
		for f in "$WORK/$tag.replay.err" "$WORK/$tag-rdst.incoming.json" "$WORK/$tag-rdst.qemu.log"; do
			[ -s "$f" ] && { echo "# --- ${f##*/}"; tail -n 15 "$f" | sed 's/^/#   /'; }
		done
		return 1
	fi
	st=$(qmp "$WORK/$tag-rdst.qmp" status)
	# the source's run state travels: prelaunch for a source started with -S
	# that never ran, paused for one that ran
	check "$tag: the destination is stopped, waiting for cont ($st)" \
		test "$st" = prelaunch -o "$st" = paused
	check "$tag: its RAM file equals the source's byte for byte" \
		cmp -s "$WORK/$tag-rdst.ram" "$WORK/$tag.ram"
	qemu_sent_inline "$tag-rdst"
	check "$tag: the replay used $mode registration" \
		grep -q "\"pin_all\": $([ "$mode" = pin_all ] && echo true || echo false)," "$WORK/$tag.replay.json"
	check "$tag: every recorded phase was replayed ($(json_num "$WORK/$tag.replay.json" phases) phases, $(json_num "$WORK/$tag.replay.json" iterations) REGISTER_FINISHED)" \
		test "$(json_num "$WORK/$tag.replay.json" iterations)" = \
		"$(grep -c '^phase [0-9]* registration' "$WORK/$tag.out/record.txt")"
	if [ "$mode" != pin_all ]; then
		local inl cp
		inl=$(sent_by_type "$tag" inline REGISTER_REQUEST)
		cp=$(sent_by_type "$tag" copied REGISTER_REQUEST)
		check "$tag: REGISTER_REQUEST went inline to QEMU (inline/copied $inl/$cp)" \
			test "${inl:-0}" -gt 0 -a "${cp:-1}" = 0
		# QEMU takes a chunk's REGISTER_REQUEST sent before the previous
		# chunk's write was posted (the RAM file comparison proves it)
		check "$tag: registrations went ahead of the previous write ($(json_num "$WORK/$tag.replay.json" register_ahead) of $(json_num "$WORK/$tag.replay.json" register_requests))" \
			test "$(json_num "$WORK/$tag.replay.json" register_ahead)" -gt 0
		check "$tag: zero chunks went as COMPRESS ($(json_num "$WORK/$tag.replay.json" bytes_compressed) bytes)" \
			test "$(json_num "$WORK/$tag.replay.json" bytes_compressed)" -gt 0
	fi
	return 0
}

# cont TAG: resume the destination; it must be running afterwards
check_cont() {
	local tag=$1 st
	qmp "$WORK/$tag-rdst.qmp" cont >/dev/null
	sleep 1
	st=$(qmp "$WORK/$tag-rdst.qmp" status)
	check "$tag: the destination runs after cont ($st)" test "$st" = running
}

# replay_refused TAG PORT: a destination with twice the RAM refuses the
# recorded block list; rdmig must say so and fail, not hang.
replay_refused() {
	local tag=$1 port=$2 rc lines
	MEM_MIB=$((MEM_MIB * 2)) qemu_vm "$tag-big" -object \
		"memory-backend-ram,id=pc.ram,size=$((MEM_MIB * 2))M" -S -incoming "rdma:$IP:$port"
	local bpid=$QPID
	timeout 120 "$RDMIG" send --qemu-replay "$WORK/$tag.out" --to "$IP:$port" --timeout 20 \
		>/dev/null 2>"$WORK/$tag.refused.err" </dev/null
	rc=$?
	lines=$(grep -c '^rdmig: ' "$WORK/$tag.refused.err")
	check "$tag: a QEMU with $((MEM_MIB * 2)) MiB refuses the replay: rdmig exits $rc with one error line ($(grep '^rdmig: ' "$WORK/$tag.refused.err" | head -n1))" \
		eval 'tool_failed "$rc" 1 "$WORK/$tag.refused.err" && [ "$lines" = 1 ]'
	grep -h 'Length mismatch\|error' "$WORK/$tag-big.qemu.log" | head -n 2 | sed 's/^/#   QEMU: /'
	kill "$bpid" 2>/dev/null
	wait "$bpid" 2>/dev/null
}

# replay_interrupted TAG PORT: SIGTERM while a replay runs: rdmig tells
# QEMU (ERROR) and exits 143 with one line saying so; QEMU's destination
# gives the migration up at once (QEMU 7.2 and 10.0.2 then exit with status
# 1) instead of waiting for a peer that is gone.  rdmig is stopped (SIGSTOP)
# as soon as QEMU reports the migration active, and signalled only if QEMU
# still does then: a replay that finished first (64 MiB take seconds) would
# leave a destination with nothing to give up, so that attempt is made
# again, on the next port (three at most).
replay_interrupted() {
	local tag=$1 port=$2 rpid ipid st rc lines t0 gone=no attempt
	for attempt in 1 2 3; do
		qemu_vm "$tag-int" -object "memory-backend-ram,id=pc.ram,size=${MEM_MIB}M" -S \
			-incoming "rdma:$IP:$port"
		ipid=$QPID
		# no `timeout` around rdmig: the signal must reach rdmig itself
		"$RDMIG" send --qemu-replay "$WORK/$tag.out" --to "$IP:$port" --timeout 20 \
			>/dev/null 2>"$WORK/$tag.int.err" </dev/null &
		rpid=$!
		st=$(qmp "$WORK/$tag-int.qmp" active 60)
		kill -STOP "$rpid"
		qmp "$WORK/$tag-int.qmp" query-migrate >"$WORK/$tag.int.query" 2>&1
		st=$(json_str "$WORK/$tag.int.query" status)
		[ "$st" = active ] && break
		echo "# $tag: the replay was $st before it could be interrupted (attempt $attempt): once more"
		kill -KILL "$rpid" 2>/dev/null
		wait "$rpid" 2>/dev/null
		kill "$ipid" 2>/dev/null
		wait "$ipid" 2>/dev/null
		port=$((port + 1 + attempt))
	done
	kill -TERM "$rpid"
	kill -CONT "$rpid"
	# a watchdog, so that a hang fails the check instead of the test.  Its
	# sleep must neither outlive it nor hold the test's output: ctest waits
	# for every holder of its pipe, and a stray `sleep 60` cost each of
	# these cases a minute.
	(sleep 60; kill -KILL "$rpid" 2>/dev/null) >/dev/null 2>&1 &
	local dog=$!
	wait "$rpid"
	rc=$?
	pkill -P "$dog" 2>/dev/null
	kill "$dog" 2>/dev/null
	check "$tag: SIGTERM while QEMU's incoming migration is $st: rdmig exits 143 ($rc)" \
		test "$st" = active -a "$rc" = 143
	lines=$(grep -c '^rdmig: ' "$WORK/$tag.int.err")
	check "$tag: with one error line saying QEMU was told ($(grep '^rdmig: ' "$WORK/$tag.int.err" | head -n1))" \
		test "$lines" = 1 -a -n "$(grep '^rdmig: .*interrupted by SIGTERM.*QEMU was told' "$WORK/$tag.int.err")"
	t0=$(now_ms)
	while [ $(($(now_ms) - t0)) -lt 30000 ]; do
		kill -0 "$ipid" 2>/dev/null || { gone=yes; break; }
		sleep 0.2
	done
	wait "$ipid" 2>/dev/null
	rc=$?
	check "$tag: QEMU's destination gave up within $(($(now_ms) - t0)) ms (exited $rc)" \
		test "$gone" = yes -a "$rc" != 0
	grep -h -i 'error\|fail' "$WORK/$tag-int.qemu.log" | head -n 2 | sed 's/^/#   QEMU: /'
	kill "$ipid" 2>/dev/null
}

case $MODE in
dynamic | pin_all) mode_stopped "$MODE-$DEVICE" "$MODE" ;;
live) mode_live ;;
killed) mode_killed ;;
qmp) mode_qmp ;;
compare) mode_compare ;;
chunk4M) mode_chunk 4M ;;
chunk32M) mode_chunk 32M ;;
chunk_mismatch) mode_chunk_mismatch ;;
esac
finish
