#!/bin/bash
# bench/run-in-guest.sh BUILD OUT - every rdmig benchmark inside ONE boot of
# the test guest (scripts/bench starts it), so the ratios compare runs on the
# same devices, kernel and load.  Writes OUT/*.json, OUT/*.txt and
# OUT/summary.txt; bench/report.py turns them into bench.json and the goals.
#
#   1. footprint: rdmig probe --json (granted inline, queue bytes per
#      request) and rdmig-bench footprint (pinned bytes per connection)
#   2. control-plane latency: inline auto vs 0, interleaved in blocks of 25
#      operations (A B A B ...), per class
#   3. CPU cost: sender instructions per message (callgrind), per class/mode
#   5. qemu_ab (bench/qemu_ab.sh): QEMU 10.2.2 stock, with the inline
#      series, and with it switched off, QEMU -> QEMU on the same RAM:
#      migration time, live downtime, inline/copied control messages
#   4. bulk: one RAM block of random and of half-zero content, dynamic and
#      pin-all: rdmig-bench bulk (the engine alone), rdmig send -> recv (the
#      tool: kind tool checks XXH64 span digests as the data lands,
#      toolxxh3 XXH3-128, toolsha SHA-256, tooloff nothing, tool1 XXH64
#      on one thread a side)
#      and QEMU -> QEMU over RDMA (a stopped VM whose
#      RAM file holds the same bytes) for each QEMU of RDMIG_BENCH_BULK_QEMUS
#      (QEMU 11.1 at each chunk size, with x-rdma-chunk-size on both sides),
#      next to ib_write_bw on the device
#
# Knobs (environment): RDMIG_BENCH_BULK_MIB (512), RDMIG_BENCH_ITERS (3000),
# RDMIG_BENCH_COST_COUNT (60), RDMIG_BENCH_SPIN (3000 us),
# RDMIG_BENCH_PARTS ("footprint latency cost bulk qemu_ab"), RDMIG_BENCH_DEVICES
# ("rxe siw"), RDMIG_BENCH_QEMUS ("7.2 11.1 10.2.2 inline": QEMUs as
# scripts/qemu-peer names them, fetched on the host before the boot),
# RDMIG_BENCH_BULK_QEMUS ("7.2 11.1": bulk kinds qemu, qemu11, qemu11_32M;
# also 10.0.2 qemu10, 10.2.2 qemu102, inline qemu10i), RDMIG_BENCH_KINDS ("engine hashthread tool": the rdmig runs of
# the bulk part; also tool1, toolxxh3, toolsha, tooloff, and enginespin: the engine
# with both ends busy-polling RDMIG_BENCH_BULK_SPIN us, 3000), RDMIG_BENCH_IMAGES ("random
# halfzero"), RDMIG_BENCH_CHUNKS ("1M 32M": each engine and tool kind runs at
# each of these --chunk-size values, in MiB; kinds engine_32M, tool_32M...
# for the others; the engine with rdmig send's library settings),
# RDMIG_BENCH_ROUNDS (1: each bulk run that many times, interleaved; the
# report shows each kind's median and range).
# Engine and tool runs also record e2e_seconds: from the
# sender's start until both ends have exited (the receiver verified and
# wrote its images), and each process's wall time (walls: exec to exit,
# for the part of it that their "budget" cannot see: before main() and
# after the summary).  QEMU runs trace a few events of both QEMUs
# (bench/qemu-trace-events; -msg timestamp=on, wall clock) into
# OUT/TAG-src.trace and -dst.trace, and record the script's own marks
# (exec, QMP ready, migrate, quit, exit: times.json), from which
# bench/qemu_budget.py derives their budget; RDMIG_BENCH_QEMU_UNTRACED (1)
# adds an untraced twin of each dynamic-registration QEMU run in round 1
# (kind KIND_notrace), for what the tracing costs.  Every process
# runs under `timeout`; a part that fails is
# recorded as failed and the others still run.
set -uo pipefail
BUILD=$(cd "${1:?build dir}" && pwd)
OUT=${2:?output dir}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
# the tests' QMP client (tests/interop/qmp_client.c; scripts/bench builds it)
QMP="$BUILD/tests/qmp_client"
[ -x "$QMP" ] || { echo "bench: no $QMP: build the target qmp_client" >&2; exit 1; }
SUMMARY=$OUT/summary.txt
SPIN=${RDMIG_BENCH_SPIN:-3000}
# one size or several ("256 1024"): the bulk part runs at each, in one boot
BULK_SIZES=${RDMIG_BENCH_BULK_MIB:-512}
BULK_MIB=${BULK_SIZES%% *}
ITERS=${RDMIG_BENCH_ITERS:-3000}
COST_COUNT=${RDMIG_BENCH_COST_COUNT:-60}
PARTS=${RDMIG_BENCH_PARTS:-footprint latency cost bulk qemu_ab}
DEVICES=${RDMIG_BENCH_DEVICES:-rxe siw}
QEMUS=${RDMIG_BENCH_QEMUS:-7.2 11.1 10.2.2 inline}
# the QEMUs of the bulk part (QEMU -> QEMU beside rdmig); 11.1 at each chunk size
BULK_QEMUS=${RDMIG_BENCH_BULK_QEMUS:-7.2 11.1}
KINDS=${RDMIG_BENCH_KINDS:-engine hashthread tool}
BULK_SPIN=${RDMIG_BENCH_BULK_SPIN:-3000}
CHUNKS=${RDMIG_BENCH_CHUNKS:-1M 32M}
ROUNDS=${RDMIG_BENCH_ROUNDS:-1}
ROUND=1
RSUF=
SSUF=
IMAGES=${RDMIG_BENCH_IMAGES:-random halfzero}
QEMU_UNTRACED=${RDMIG_BENCH_QEMU_UNTRACED:-1}
declare -A QEMU_BIN QEMU_KIND=([7.2]=qemu [10.0.2]=qemu10 [10.2.2]=qemu102 [inline]=qemu10i [11.1]=qemu11)
for q in $QEMUS; do
	QEMU_BIN[$q]=$("$ROOT/scripts/qemu-peer" "$q" 2>/dev/null | tail -n1)
	[ -x "${QEMU_BIN[$q]}" ] || echo "bench: no QEMU $q (scripts/qemu-peer $q on the host first)" >&2
done
PORT=19100
: >"$SUMMARY"

# shellcheck source=bench/guest_lib.sh
. "$ROOT/bench/guest_lib.sh"
note() { echo "$*" | tee -a "$SUMMARY"; }
want() { [[ " $PARTS " == *" $1 "* ]]; }
next_port() { PORT=$((PORT + 1)); }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# the wall clock without a fork (a date(1) costs milliseconds in the guest);
# the QEMU traces print the same clock
stamp() { echo "$EPOCHREALTIME"; }
secs_between() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.6f", b - a}'; }


note "# rdmig benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), guest $(uname -r), $(nproc) vCPUs," \
	"$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB; guest load $(loadavg)"
cat >"$OUT/guest.json" <<EOF
{"date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "kernel": "$(uname -r)", "vcpus": $(nproc),
 "loadavg_start": "$(loadavg)", "bulk_mib": $BULK_MIB, "iters": $ITERS,
 "cost_count": $COST_COUNT, "spin_us": $SPIN, "qemu": "$(for q in $QEMUS; do echo -n "$q: $("${QEMU_BIN[$q]}" --version 2>/dev/null | head -n1); "; done)",
 "perftest": "$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"}
EOF

# ----------------------------------------------------------- 1 footprint --
footprint() {
	local dev ip
	timeout 120 "$BUILD/rdmig" probe --json >"$OUT/probe.json"
	timeout 120 "$BUILD/rdmig" probe | tee -a "$SUMMARY"
	for dev in $DEVICES; do
		ip=$(dev_ip "$dev")
		timeout 120 "$BUILD/rdmig-bench" server --listen "$ip:$PORT" --conns 2 \
			2>"$OUT/footprint_$dev.server.err" &
		local spid=$!
		wait_listening "$OUT/footprint_$dev.server.err" $spid
		timeout 120 "$BUILD/rdmig-bench" footprint --to "$ip:$PORT" \
			--json "$OUT/footprint_$dev.json" | tee -a "$SUMMARY"
		wait $spid
		next_port
	done
}

# ------------------------------------------------------------- 2 latency --
latency() {
	local dev ip spid
	for dev in $DEVICES; do
		ip=$(dev_ip "$dev")
		timeout 1800 "$BUILD/rdmig-bench" server --listen "$ip:$PORT" --conns 2 --spin "$SPIN" \
			2>"$OUT/latency_$dev.server.err" &
		spid=$!
		wait_listening "$OUT/latency_$dev.server.err" $spid
		timeout 1800 "$BUILD/rdmig-bench" latency --to "$ip:$PORT" --iters "$ITERS" \
			--warmup $((ITERS / 10)) --rounds $((ITERS / 25)) --spin "$SPIN" \
			--json "$OUT/latency_$dev.json" | tee -a "$SUMMARY"
		wait $spid
		next_port
	done
}

# ---------------------------------------------------------------- 3 cost --
# cg_inclusive FILE FUNCTION: the inclusive instruction count of FUNCTION
# in a callgrind profile (the largest entry of that name: inlined parts of
# a function are listed apart, their cost is inside the caller's entry)
cg_inclusive() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f=":$2 " '{ l = $0 " " } index(l, f) { gsub(",", "", $1); if ($1 + 0 > m) m = $1 + 0 }
			END { print m + 0 }'
}

# cg_per_message PREFIX: "median mean min max n" of the instruction counts
# of the dumps PREFIX.N (one per message)
cg_per_message() {
	local f
	for f in "$1".[0-9]*; do
		sed -n 's/^summary: *//p;s/^totals: *//p' "$f" | head -n1
	done | sort -n | awk '{ v[NR] = $1; s += $1 }
		END { if (!NR) { print "0 0 0 0 0"; exit }
		      printf "%d %.1f %d %d %d\n", v[int((NR + 1) / 2)], s / NR, v[1], v[NR], NR }'
}

# Instructions the sender executes in user space for one control message
# (one call of send_one: taking the READY credit, posting the message,
# reaping completions; the harness lets the credit arrive first, so no idle
# polling is counted), and the part that posts it (post_control).  One
# callgrind dump per message; the median is reported.  bytes 0 =
# REGISTER_REQUEST -> REGISTER_RESULT round trips (their wait is counted).
cost() {
	local dev ip bytes mode cg spid rc stats post first=1 mid
	# the dumps (one per message) stay in the guest's memory: writing them
	# through the shared folder would take longer than the runs
	local cgdir
	cgdir=$(mktemp -d /tmp/rdmig-callgrind.XXXXXX)
	mkdir -p "$OUT/callgrind"
	echo '{"count": '"$COST_COUNT"', "cost": [' >"$OUT/cost.json"
	for dev in $DEVICES; do
		ip=$(dev_ip "$dev")
		for bytes in 16 32 40 336 4112 32784 0; do
			for mode in auto 0; do
				cg=$cgdir/$dev.$mode.$bytes
				timeout 300 "$BUILD/rdmig-bench" server --listen "$ip:$PORT" --conns 1 --spin 0 \
					2>"$cg.server.err" &
				spid=$!
				wait_listening "$cg.server.err" $spid
				timeout 900 valgrind --tool=callgrind --callgrind-out-file="$cg" \
					--collect-atstart=no --toggle-collect=send_one --dump-after=send_one \
					"$BUILD/rdmig-bench" cost --to "$ip:$PORT" --inline "$mode" --bytes "$bytes" \
					--count "$COST_COUNT" --spin 0 >"$cg.log" 2>&1
				rc=$?
				wait $spid
				next_port
				stats=$(cg_per_message "$cg")
				# post_control does the same work every time: one dump shows it
				mid=$cg.$((COST_COUNT / 2))
				post=$(cg_inclusive "$mid" post_control)
				# keep one profile per run to look into; drop the rest
				[ -f "$mid" ] && mv "$mid" "$OUT/callgrind/${cg##*/}.sample"
				mv "$cg.log" "$cg.server.err" "$OUT/callgrind/" 2>/dev/null
				rm -f "$cg".[0-9]* "$cg"
				[ $first = 1 ] || echo ',' >>"$OUT/cost.json"
				first=0
				# shellcheck disable=SC2086 # stats: five numbers
				set -- $stats
				printf '{"device": "%s", "bytes": %s, "inline": "%s", "rc": %d, "instructions_per_message": %s, "mean": %s, "min": %s, "max": %s, "messages": %s, "post_instructions_per_message": %s}' \
					"$dev" "$bytes" "$mode" "$rc" "$1" "$2" "$3" "$4" "$5" "${post:-0}" >>"$OUT/cost.json"
				note "cost $dev bytes=$bytes inline=$mode rc=$rc instructions/message:" \
					"median $1 (mean $2, min $3, max $4, n $5), post_control $post"
			done
		done
	done
	echo ']}' >>"$OUT/cost.json"
	rm -rf "$cgdir"
}

# ---------------------------------------------------------------- 4 bulk --
DATA=
QPIDS=()
ROW_EXTRA=
bulk_cleanup() {
	local p
	# each QEMU runs under timeout in a subshell (timed_bg): end the
	# subshell's children first
	for p in "${QPIDS[@]}"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	[ -n "$DATA" ] && rm -rf "$DATA"
}
trap bulk_cleanup EXIT

# ib_write_bw_run DEV IP WHEN: the device's RDMA WRITE ceiling, 1 MiB
# messages (the size of rdmig's writes), for 20 seconds; sets BW (MB/s)
ib_write_bw_run() {
	local dev=$1 ip=$2 out=$OUT/ib_write_bw_$1_$3 spid
	timeout 120 ib_write_bw -d "${dev}0" -F -R -s 1048576 -D 20 -p "$PORT" \
		>"$out.server" 2>&1 &
	spid=$!
	sleep 2
	timeout 120 ib_write_bw -d "${dev}0" -F -R -s 1048576 -D 20 -p "$PORT" "$ip" >"$out.txt" 2>&1
	wait $spid
	next_port
	BW=$(awk '$1 == 1048576 {print $4}' "$out.txt" | tail -n1)
}

# timed_bg ENDFILE CMD...: CMD (run in the background by the caller); its
# exit time into ENDFILE, its status kept
timed_bg() {
	local end=$1 rc
	shift
	"$@"
	rc=$?
	stamp >"$end"
	return $rc
}

# walls SEND_T0 SEND_T1 RECV_T0 RECV_ENDFILE: the bulk.json members of both
# processes' wall times (exec to exit, as the script sees them)
walls() {
	local rt1
	rt1=$(cat "$4" 2>/dev/null)
	rm -f "$4"
	printf '"walls": {"send_seconds": %s, "recv_seconds": %s}' "$(secs_between "$1" "$2")" \
		"$( [ -n "$rt1" ] && secs_between "$3" "$rt1" || echo null)"
}

# engine_run KIND DEV IP IMG REG CHUNK: rdmig-bench bulk-recv / bulk-send
# --chunk-size CHUNK --as-send (the library set up as rdmig send sets it:
# lookahead and pin-local); KIND engine (no hashing) or hashthread (XXH64
# of the block on a second thread), recorded as KIND for 1M and
# KIND_CHUNK otherwise, as the tool's runs
engine_run() {
	local kind=$1 dev=$2 ip=$3 img=$4 reg=$5 chunk=$6 flag= hash=none rpid src rrc t0 tag bytes
	[ "$chunk" = 1M ] || kind=${kind}_$chunk
	tag=${kind}_${dev}_${img}_${reg}$RSUF
	bytes=$(( ${chunk%M} << 20 ))
	[ "$reg" = pin-all ] && flag=--pin-all
	[[ $kind == hashthread* ]] && hash=thread
	# enginespin: both ends busy-poll BULK_SPIN us before sleeping (the
	# library's default is 50): what the guest's wake-ups cost a transfer
	local spin=()
	[[ $kind == enginespin* ]] && spin=(--spin "$BULK_SPIN")
	local rt0 t1
	rt0=$(stamp)
	timed_bg "$OUT/$tag.recv.end" timeout 900 "$BUILD/rdmig-bench" bulk-recv --listen "$ip:$PORT" \
		--file "$DATA/$img.img" $flag --chunk-size $bytes "${spin[@]}" --json "$OUT/$tag.recv.json" \
		2>"$OUT/$tag.recv.err" &
	rpid=$!
	wait_listening "$OUT/$tag.recv.err" $rpid
	t0=$(stamp)
	timeout 900 "$BUILD/rdmig-bench" bulk-send --to "$ip:$PORT" --file "$DATA/$img.img" $flag \
		--chunk-size $bytes --as-send --hash $hash "${spin[@]}" --json "$OUT/$tag.json" 2>"$OUT/$tag.err"
	src=$?
	t1=$(stamp)
	wait $rpid
	rrc=$?
	E2E=$(secs_between "$t0" "$(stamp)")
	ROW_EXTRA=$(walls "$t0" "$t1" "$rt0" "$OUT/$tag.recv.end")
	next_port
	bulk_record "$kind" "$dev" "$img" "$reg" "$src" "$rrc" "$OUT/$tag.json" "$OUT/$tag.recv.json"
}

# tool_run KIND DEV IP IMG REG CHUNK: rdmig recv / rdmig send --chunk-size
# CHUNK; KIND tool (--verify xxh64, the default), tool1 (one hashing
# thread a side), toolxxh3 (xxh3-128), toolsha (sha256) or tooloff (off), recorded as KIND for
# 1M and KIND_CHUNK otherwise
tool_run() {
	local kind=$1 dev=$2 ip=$3 img=$4 reg=$5 chunk=$6 tag rpid src rrc t0 verify flag=
	[ "$chunk" = 1M ] || kind=${kind}_$chunk
	tag=${kind}_${dev}_${img}_${reg}$RSUF
	local threads=
	verify=$(case $kind in toolsha*) echo sha256 ;; tooloff*) echo off ;; toolxxh3*) echo xxh3-128 ;;
		*) echo xxh64 ;; esac)
	[[ $kind == tool1* ]] && threads=1
	[ "$reg" = pin-all ] && flag=--pin-all
	# recv decides verification: it takes a source without checksums only so
	local rflag=$flag
	[ "$verify" = off ] && rflag="$flag --verify off"
	rm -rf "$DATA/out"
	local rt0 t1
	rt0=$(stamp)
	# /usr/bin/time: the receiver's peak resident set (KiB), against the size
	timed_bg "$OUT/$tag.recv.end" /usr/bin/time -f %M -o "$OUT/$tag.recv.rss" \
		env RDMIG_HASH_THREADS=$threads timeout 900 "$BUILD/rdmig" recv \
		--listen "$ip:$PORT" --out "$DATA/out" $rflag --json -v \
		--timeout 600 >"$OUT/$tag.recv.json" 2>"$OUT/$tag.recv.err" &
	rpid=$!
	wait_listening "$OUT/$tag.recv.err" $rpid
	t0=$(stamp)
	RDMIG_HASH_THREADS=$threads timeout 900 "$BUILD/rdmig" send --to "$ip:$PORT" $flag --json --timeout 600 \
		--verify "$verify" --chunk-size "$chunk" "$DATA/$img.img" >"$OUT/$tag.json" 2>"$OUT/$tag.err"
	src=$?
	t1=$(stamp)
	wait $rpid
	rrc=$?
	E2E=$(secs_between "$t0" "$(stamp)")
	ROW_EXTRA="$(walls "$t0" "$t1" "$rt0" "$OUT/$tag.recv.end"), \"recv_max_rss_kib\": $(
		tail -n1 "$OUT/$tag.recv.rss" 2>/dev/null | grep -x '[0-9]*' || echo null)"
	rm -rf "$DATA/out"
	next_port
	bulk_record "$kind" "$dev" "$img" "$reg" "$src" "$rrc" "$OUT/$tag.json" "$OUT/$tag.recv.json"
}

# qemu_vm TAG ARGS...: a stopped TCG QEMU ($QBIN) with BULK_MIB of pc.ram,
# QMP on $DATA/TAG.qmp; traced into DATA/TAG.trace unless QTRACE is empty
# (the guest's own disk: the shared folder is slower to write);
# sets QPID; TIMES gets TAG's exec and QMP-ready marks, its exit time goes
# to $DATA/TAG.exit
qemu_vm() {
	local tag=$1 trace=()
	shift
	[ -n "$QTRACE" ] && trace=(-trace "events=$ROOT/bench/qemu-trace-events" -msg timestamp=on
		-D "$DATA/$tag.trace")
	TIMES+="\"${tag##*-}_exec\": $(stamp), "
	timed_bg "$DATA/$tag.exit" timeout 900 "$QBIN" -M pc,memory-backend=pc.ram -m "$BULK_MIB" \
		-nodefaults -no-user-config -display none -accel tcg -S \
		-qmp "unix:$DATA/$tag.qmp,server=on,wait=off" "${trace[@]}" \
		"$@" </dev/null >"$OUT/$tag.qemu.log" 2>&1 &
	QPID=$!
	QPIDS+=("$QPID")
	timeout 120 "$QMP" "$DATA/$tag.qmp" status >/dev/null
	TIMES+="\"${tag##*-}_ready\": $(stamp), "
}

# qemu_run DEV IP IMG REG QEMU [CHUNK [notrace]]: QEMU -> QEMU over rdma:,
# the source's RAM a shared file with the image's bytes; timed by QEMU
# (query-migrate) and traced (see the top).  CHUNK (QEMU 11.1:
# x-rdma-chunk-size on both sides, the destination started with -incoming
# defer) makes the kind KIND_CHUNK unless it is 1M, QEMU's default, as
# engine_run does; notrace: untraced, kind KIND_notrace.
qemu_run() {
	local dev=$1 ip=$2 img=$3 reg=$4 kind=${QEMU_KIND[$5]} QBIN=${QEMU_BIN[$5]} chunk=${6:-}
	local tag spid dpid mrc incoming=(-incoming "rdma:$ip:$PORT") params= QTRACE=1 TIMES=
	if [ -n "$chunk" ]; then
		[ "$chunk" = 1M ] || kind=${kind}_$chunk
		[ "${7:-}" = notrace ] && { kind=${kind}_notrace; QTRACE=; }
		params="{\"x-rdma-chunk-size\": $(( ${chunk%M} << 20 ))}"
		incoming=(-incoming defer)
	fi
	tag=${kind}_$1_$3_$4$RSUF
	cp "$DATA/$img.img" "$DATA/vm.ram"
	qemu_vm "$tag-dst" -object "memory-backend-ram,id=pc.ram,size=${BULK_MIB}M" "${incoming[@]}"
	dpid=$QPID
	qemu_vm "$tag-src" \
		-object "memory-backend-file,id=pc.ram,size=${BULK_MIB}M,mem-path=$DATA/vm.ram,share=on"
	spid=$QPID
	if [ -n "$params" ]; then
		timeout 60 "$QMP" "$DATA/$tag-dst.qmp" migrate-set-parameters "$params" >/dev/null &&
			timeout 60 "$QMP" "$DATA/$tag-src.qmp" migrate-set-parameters "$params" >/dev/null &&
			timeout 60 "$QMP" "$DATA/$tag-dst.qmp" migrate-incoming "{\"uri\": \"rdma:$ip:$PORT\"}" >/dev/null ||
			note "bulk $kind: x-rdma-chunk-size $chunk could not be set"
	fi
	[ "$reg" = pin-all ] && timeout 60 "$QMP" "$DATA/$tag-src.qmp" caps rdma-pin-all=on
	TIMES+="\"migrate\": $(stamp), "
	timeout 900 "$QMP" "$DATA/$tag-src.qmp" migrate "rdma:$ip:$PORT" 850 \
		>"$OUT/$tag.json" 2>"$OUT/$tag.err"
	mrc=$?
	TIMES+="\"migrate_done\": $(stamp), \"quit\": $(stamp), "
	timeout 60 "$QMP" "$DATA/$tag-src.qmp" quit >/dev/null 2>&1
	timeout 60 "$QMP" "$DATA/$tag-dst.qmp" quit >/dev/null 2>&1
	wait "$spid" "$dpid" 2>/dev/null
	TIMES+="\"src_exit\": $(cat "$DATA/$tag-src.exit" 2>/dev/null || echo null), "
	TIMES+="\"dst_exit\": $(cat "$DATA/$tag-dst.exit" 2>/dev/null || echo null)"
	rm -f "$DATA/vm.ram" "$DATA/$tag-src.exit" "$DATA/$tag-dst.exit"
	[ -n "$QTRACE" ] && mv "$DATA/$tag-src.trace" "$DATA/$tag-dst.trace" "$OUT/" 2>/dev/null
	next_port
	ROW_EXTRA="\"times\": {$TIMES}, \"traced\": $( [ -n "$QTRACE" ] && echo true || echo false)"
	[ -n "$QTRACE" ] && ROW_EXTRA+=", \"traces\": [\"$tag-src.trace\", \"$tag-dst.trace\"]"
	bulk_record "$kind" "$dev" "$img" "$reg" "$mrc" 0 "$OUT/$tag.json" ""
}

# bulk_record KIND DEV IMG REG RC1 RC2 SEND_JSON RECV_JSON: one bulk.json row
BULK_FIRST=1
bulk_record() {
	local kind=$1 dev=$2 img=$3 reg=$4 rc1=$5 rc2=$6 sj=$7 rj=$8 secs
	[ $BULK_FIRST = 1 ] || echo ',' >>"$OUT/bulk.json"
	BULK_FIRST=0
	printf '{"kind": "%s", "device": "%s", "image": "%s", "registration": "%s", "mib": %d, "round": %d, "rc": %d, "peer_rc": %d, "ib_write_bw_MBps": %s, "e2e_seconds": %s, "guest_load": "%s", %s"result": ' \
		"$kind" "$dev" "$img" "$reg" "$BULK_MIB" "$ROUND" "$rc1" "$rc2" "${BW:-null}" "${E2E:-null}" "$(loadavg)" \
		"${ROW_EXTRA:+$ROW_EXTRA, }" >>"$OUT/bulk.json"
	if [ -s "$sj" ]; then tr -d '\n' <"$sj" >>"$OUT/bulk.json"; else echo -n null >>"$OUT/bulk.json"; fi
	echo -n ', "peer": ' >>"$OUT/bulk.json"
	if [ -n "$rj" ] && [ -s "$rj" ]; then tr -d '\n' <"$rj" >>"$OUT/bulk.json"; else echo -n null >>"$OUT/bulk.json"; fi
	echo '}' >>"$OUT/bulk.json"
	if [[ $kind == qemu* ]]; then
		secs=$(awk -v ms="$(json_num "$sj" total-time)" 'BEGIN {printf "%.2f", ms / 1000}')
	else
		secs=$(json_num "$sj" seconds)
	fi
	note "bulk $kind $dev $img $reg ${BULK_MIB} MiB${RSUF:+ round $ROUND}: rc=$rc1/$rc2 seconds=${secs:-?}" \
		"${E2E:+e2e=$E2E}" \
		"$( [[ $kind == tool* ]] && echo "(hashing $(json_num "$sj" hash_seconds) s, exposed" \
			"$(json_num "$sj" hash_exposed_seconds) s / $(json_num "$rj" hash_exposed_seconds) s)")"
	E2E=
	ROW_EXTRA=
}

bulk() {
	echo '{"bulk_mib": '"$BULK_MIB"', "bulk": [' >"$OUT/bulk.json"
	for BULK_MIB in $BULK_SIZES; do
		# tags name the size when there are several
		SSUF=$( [ "$BULK_MIB" = "$BULK_SIZES" ] || echo "_${BULK_MIB}M")
		bulk_size
	done
	echo ']}' >>"$OUT/bulk.json"
	BULK_MIB=${BULK_SIZES%% *}
}

# bulk_size: the bulk part at BULK_MIB
bulk_size() {
	local dev ip img reg
	DATA=$(mktemp -d /tmp/rdmig-bench.XXXXXX)
	# random, and half-zero (random first half, zero second half)
	# (only the images asked for: at 1 GiB each one is a GiB of the guest's RAM)
	[[ " $IMAGES " == *" random "* ]] && head -c $((BULK_MIB << 20)) /dev/urandom >"$DATA/random.img"
	if [[ " $IMAGES " == *" halfzero "* ]]; then
		head -c $((BULK_MIB << 19)) /dev/urandom >"$DATA/halfzero.img"
		truncate -s $((BULK_MIB << 20)) "$DATA/halfzero.img"
	fi
	for dev in $DEVICES; do
		ip=$(dev_ip "$dev")
		# the ceiling before and after the device's runs: the host's load
		# drifts, and the mean of both is what the runs are held against
		ib_write_bw_run "$dev" "$ip" before
		BW_BEFORE=$BW
		note "ib_write_bw $dev (before): ${BW:-?} MB/s (BW average, 1 MiB RDMA WRITEs, 20 s)"
		for img in $IMAGES; do
			# rounds interleave the kinds (A B C A B C): a drift of the host's
			# load reaches every kind alike; the report takes each one's median
			for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
				RSUF=$SSUF$( [ "$ROUNDS" = 1 ] || echo "_r$ROUND")
				for reg in dynamic pin-all; do
					for c in $CHUNKS; do
						[[ " $KINDS " == *" engine "* ]] && engine_run engine "$dev" "$ip" "$img" "$reg" "$c"
						[[ " $KINDS " == *" enginespin "* ]] && engine_run enginespin "$dev" "$ip" "$img" "$reg" "$c"
						[[ " $KINDS " == *" hashthread "* ]] && [ $img = random ] &&
							engine_run hashthread "$dev" "$ip" "$img" "$reg" "$c"
					done
					for k in tool tool1 toolxxh3 toolsha tooloff; do
						[[ " $KINDS " == *" $k "* ]] || continue
						for c in $CHUNKS; do tool_run "$k" "$dev" "$ip" "$img" "$reg" "$c"; done
					done
					for q in $BULK_QEMUS; do
						# 11.1 runs at each chunk size rdmig runs at
						if [ "$q" = 11.1 ]; then
							for c in $CHUNKS; do
								qemu_run "$dev" "$ip" "$img" "$reg" "$q" "$c"
								[ "$QEMU_UNTRACED" = 1 ] && [ $ROUND = 1 ] && [ $reg = dynamic ] &&
									qemu_run "$dev" "$ip" "$img" "$reg" "$q" "$c" notrace
							done
						else
							qemu_run "$dev" "$ip" "$img" "$reg" "$q"
						fi
					done
				done
			done
		done
		ib_write_bw_run "$dev" "$ip" after
		BW_AFTER=$BW
		BW=
		note "ib_write_bw $dev (after): ${BW_AFTER:-?} MB/s"
		echo "{\"device\": \"$dev\", \"before_MBps\": ${BW_BEFORE:-null}, \"after_MBps\": ${BW_AFTER:-null}}" \
			>"$OUT/ib_write_bw_$dev.json"
	done
	rm -rf "$DATA"
	DATA=
}

# shellcheck source=bench/qemu_ab.sh
. "$ROOT/bench/qemu_ab.sh"

for part in footprint latency cost bulk qemu_ab; do
	want $part || continue
	t0=$(date +%s)
	$part
	note "# part $part: $(($(date +%s) - t0)) s, guest load $(loadavg)"
done
note "# done $(date -u +%H:%MZ)"
