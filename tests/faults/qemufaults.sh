# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2034,SC2154 # FL_*, QEMU*, MEM_MIB, PIDS: for interop_lib.sh and the caller
# qemufaults.sh - a real QEMU migrates into `rdmig recv --qemu` under one
# fault, across a veth pair of the test guest (scripts/rdma-vm
# --two-hosts): the QEMU cases of scripts/faults (docs/reliability.md,
# "QEMU as the source").  Sourced after faultlib.sh's fl_init; a case is
# put together from fl_case's parts (fl_strike, fl_netem, fl_bound,
# fl_case_end) and interop_lib.sh's QEMU (source_vm, quit_vm) and checks
# of what the destination got (blocks_match, bios_matches, stream_ok).
#
#   flq_init BUILD MEM_MIB   the QMP client of BUILD, interop_lib.sh, the
#                            source's RAM size; fails with FLQ_INIT_WHY set
#   flq_case NAME WHERE VERSION FAULT [ARG]
#       WHERE: rxe-pair | siw-pair: QEMU on end A (started -S, its RAM a
#              shared file of ramimage.py's bytes), `rdmig recv --qemu
#              --timeout FL_TIMEOUT` on end B, QMP `migrate rdma:B:PORT`
#       VERSION: the peer, FLQ_PEER[VERSION] its program, or
#              FLQ_WHY[VERSION] why there is none (then a row "not run")
#       FAULT: none | netem "QDISC ARGS" | linkdown SECONDS | stop SECONDS
#              (the fault point: a quarter of the RAM registered or
#              zeroed, from recv's --progress json)
#     sets what fl_case sets; FL_MS runs from the migrate command until
#     recv and QEMU's migration both ended.  A completed case has QEMU
#     reporting completed, recv exiting 0 and the interop test's checks of
#     the RAM passing; FL_FLAW notes a fault that struck after the end or
#     not at all, and a failure without recv's error line.  QEMU's own
#     outcome goes into FL_DETAIL: its status, error and when it ended.
#     A first attempt whose QEMU could not connect, before anything moved,
#     is made once more (FL_DETAIL begins with what happened).
#
# FLQ_WAIT (60): the seconds QEMU's migration may stay active after recv
# ended; then it is recorded as such and cancelled (migrate_cancel).

FLQ_WAIT=${FLQ_WAIT:-60}
FLQ_INIT_WHY=
declare -A FLQ_PEER=() FLQ_WHY=()

flq_init() {
	local client=$1/tests/qmp_client
	MEM_MIB=$2
	PIDS=()
	[ -x "$client" ] || { FLQ_INIT_WHY="no $client (built with the tests)"; return 1; }
	command -v python3 >/dev/null || { FLQ_INIT_WHY="no python3 (ramimage.py)"; return 1; }
	RDMIG_QMP_CLIENT=$client
	# shellcheck source=tests/interop/interop_lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/../interop/interop_lib.sh"
}

# flq_not_run NAME LABEL WHY: the row of a case that could not run
flq_not_run() {
	FL_OUTCOME="not run" FL_MS=0 FL_DETAIL=$3 FL_FLAW=$3
	fl_case_end "$1" "$2" - "" - "$FLQ_OUT"
}

# flq_ram TAG: the interop test's checks of the RAM that arrived; nothing
# printed when they pass, the first that failed otherwise
flq_ram() {
	local tag=$1
	cmp -s "$WORK/$tag.out/pc.ram.img" "$WORK/$tag.ram" ||
		{ echo "pc.ram.img differs from the source's RAM"; return; }
	blocks_match "$tag" >/dev/null || { echo "a RAM block's image is missing or of another length"; return; }
	bios_matches "$tag" >/dev/null || { echo "pc.bios.img is not QEMU's BIOS"; return; }
	stream_ok "$tag" || echo "stream.bin is not the stream"
}

# flq_vm_end TAG: QEMU TAG quits, or is killed
flq_vm_end() {
	local pid i
	pid=$(cat "$WORK/$1.pid" 2>/dev/null)
	QMP_WAIT=15 quit_vm "$WORK/$1"
	for ((i = 0; i < 250; i++)); do
		alive "$pid" || break
		nap 0.02
	done
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	wait "$QPID" 2>/dev/null
	rm -f "$WORK/$1".* 2>/dev/null
}

flq_case() {
	local name=$1 where=$2 ver=$3 label note=""
	read -r _ _ _ label _ <<<"$(fl_where "$where")"
	FL_PORT=$((FL_PORT + 1))
	FLQ_OUT=$WORK/q$FL_PORT.out
	mkdir -p "$FLQ_OUT"
	FL_OUTCOME=failed FL_DETAIL="" FL_LEFT="" FL_BOUNDED=1 FL_FLAW=""
	if [ -n "$FLQ_INIT_WHY" ] || [ -z "${FLQ_PEER[$ver]:-}" ]; then
		flq_not_run "$name" "$label" "${FLQ_INIT_WHY:-no QEMU $ver: ${FLQ_WHY[$ver]:-not resolved}}"
		return
	fi
	QEMU=${FLQ_PEER[$ver]} QEMU_VERSION=$ver
	# QEMU's connect can fail before anything moved, the first on a pair
	# of a boot above all: once more then, on the next port, and said so
	if ! flq_try "$1" "$2" "$3" "$4" "${5:-}" 1; then
		note="first attempt: ${FLQ_FIRST:0:200}; once more: "
		FL_PORT=$((FL_PORT + 1))
		FLQ_OUT=$WORK/q$FL_PORT.out
		mkdir -p "$FLQ_OUT"
		flq_try "$1" "$2" "$3" "$4" "${5:-}" 2
	fi
	FL_DETAIL="$note$FL_DETAIL"
}

# flq_try NAME WHERE VERSION FAULT ARG ATTEMPT: one attempt of flq_case on
# port FL_PORT; returns 1 (everything cleaned up, no row, FLQ_FIRST: what
# happened) when the first attempt's QEMU could not connect
flq_try() {
	local name=$1 where=$2 ver=$3 fault=$4 arg=$5 attempt=$6 kind sip rip label nd
	local port=$FL_PORT tag=q$FL_PORT r=r$FL_PORT m=m$FL_PORT t0 tf q_end=0 r_end=0 r_rc=99 bound status err qwhat
	local since=fault at at_total
	read -r kind sip rip label nd <<<"$(fl_where "$where")"
	FL_OUTCOME=failed FL_DETAIL="" FL_LEFT="" FL_BOUNDED=1 FL_FLAW="" FL_DROPPED="" FL_STRUCK=0
	ram_image "$MEM_MIB" "$WORK/$tag.ram" ||
		{ flq_not_run "$name" "$label" "ramimage.py could not make the RAM"; return 0; }
	source_vm "$tag" -S
	BG_PIDS+=("$QPID")
	if ! alive "$(cat "$WORK/$tag.pid" 2>/dev/null)"; then
		flq_not_run "$name" "$label" "QEMU $ver did not start: $(tail -n1 "$WORK/$tag.qemu.log" | cut -c1-90)"
		flq_vm_end "$tag"
		return 0
	fi
	qmp "$WORK/$tag.qmp" hmp "info ramblock" >"$WORK/$tag.ramblocks"
	[ "$fault" = netem ] && fl_netem "$nd" add "$arg"
	IP=$rip
	if ! start_recv "$r" "$port" "$FLQ_OUT" --qemu --ramblocks "$WORK/$tag.ramblocks" \
		--timeout "$FL_TIMEOUT" --progress json --json 2>/dev/null; then
		[ "$fault" = netem ] && fl_netem "$nd" del
		flq_not_run "$name" "$label" "recv did not start: $(fl_err "$r")"
		flq_vm_end "$tag"
		return 0
	fi
	now_ms_to t0
	# the migration, watched to its end (QMP takes one client at a time:
	# nothing else may ask QEMU before this one ends)
	bg "$m" --run -- "$QMP_CLIENT" "$WORK/$tag.qmp" migrate "rdma:$rip:$port" 600
	fl_strike "$fault" "$arg" "$kind" "$nd" "$FLQ_OUT" "$r" "$r" $((MEM_MIB * 1048576 / 4))
	tf=$FL_TF at=$FL_DONE at_total=$FL_TOTAL
	[ "$tf" = 0 ] && tf=$t0 since="migrate command"
	bound=$(fl_bound "$fault" "$arg")
	if wait_end "$r" "${FL_HANG_S:-300}"; then
		r_rc=$END_RC r_end=$END_MS
	else
		FL_OUTCOME=hung
		kill -9 "$(cat "$WORK/$r.pid")" 2>/dev/null
		now_ms_to r_end
	fi
	# QEMU's side: its own business, recorded as it is
	if wait_end "$m" "$FLQ_WAIT"; then
		q_end=$END_MS
		status=$(json_str "$WORK/$m.out" status)
		err=$(json_str "$WORK/$m.out" error-desc)
		qwhat="QEMU $status"
		if [ -z "$status" ]; then
			err=$(head -n1 "$WORK/$m.err")
			err=${err#qmp: migrate: } qwhat="QEMU's migrate command failed"
		fi
		qwhat="$qwhat $(( (q_end - tf) / 1000 )) s after the $since"
	else
		kill -TERM "$(cat "$WORK/$m.pid")" 2>/dev/null
		wait_end "$m" 5
		now_ms_to q_end
		QMP_WAIT=20 qmp "$WORK/$tag.qmp" query-migrate >"$WORK/$tag.query" 2>&1
		status=$(json_str "$WORK/$tag.query" status)
		err=$(json_str "$WORK/$tag.query" error-desc)
		QMP_WAIT=20 qmp "$WORK/$tag.qmp" migrate_cancel >/dev/null 2>&1
		qwhat="QEMU still ${status:-(no answer)} $(( (q_end - tf) / 1000 )) s after the $since ($FLQ_WAIT s after recv ended; then migrate_cancel)"
	fi
	# what QEMU printed when its migration status says nothing more
	[ -n "$err" ] || err=$(grep -m1 'ERROR\|[Ee]rror' "$WORK/$tag.qemu.log")
	[ -n "$err" ] || [ "$status" = completed ] || err=$(tail -n1 "$WORK/$tag.qemu.log")
	err=${err#*qemu-system-x86_64: }
	[ "$fault" = netem ] && fl_netem "$nd" del
	fl_progress_last "$r"
	if [ "$attempt" = 1 ] && [ "$FL_OUTCOME" != hung ] && [ "$status" != completed ] &&
		[ "$FL_DONE" = 0 ] && [ "$FL_TF" = 0 ] && [[ $err == *"connecting to destination"* ]]; then
		FLQ_FIRST="$qwhat: $err; recv $r_rc: $(fl_err "$r")"
		flq_vm_end "$tag"
		rm -rf "$FLQ_OUT" "$WORK/$r".* "$WORK/$m".*
		return 1
	fi
	FL_MS=$(( (q_end > r_end ? q_end : r_end) - t0 ))
	if [ "$FL_OUTCOME" = hung ]; then
		FL_BOUNDED=0
		FL_DETAIL="$qwhat | recv did not end within ${FL_HANG_S:-300} s"
	elif [ "$status" = completed ] && [ "$r_rc" = 0 ]; then
		cp "$WORK/$r.out" "$WORK/$tag.json"
		FL_DETAIL=$(flq_ram "$tag")
		if [ -z "$FL_DETAIL" ]; then
			FL_OUTCOME=completed
			FL_DETAIL="QEMU completed, total-time $(json_num "$WORK/$m.out" total-time) ms; the RAM checks out (pc.ram identical, every block of its length, BIOS, stream)"
		fi
	fi
	if [ "$FL_OUTCOME" = failed ]; then
		[ $((r_end - tf)) -le $((bound * 1000)) ] || FL_BOUNDED=0
		grep -qs '^rdmig: ' "$WORK/$r.err" || FL_FLAW="recv printed no error line"
		FL_DETAIL="$qwhat: ${err:0:90} | recv $r_rc: $(fl_err "$r") | recv ends $(( (r_end - tf) / 1000 )) s after the $since (bound $bound s), $((FL_DONE * 100 / (FL_TOTAL > 0 ? FL_TOTAL : 1)))% of the RAM registered${FL_DETAIL:+ | $FL_DETAIL}"
	fi
	case $fault in
	netem)
		[[ $arg == *loss* && ${FL_DROPPED:-0} -lt 1 ]] && FL_FLAW="netem dropped nothing"
		FL_DETAIL="$FL_DETAIL | netem dropped: ${FL_DROPPED:-none}" ;;
	linkdown | stop)
		if [ "$FL_TF" = 0 ]; then
			FL_FLAW="the fault did not strike: the migration ended first"
		elif [ "$FL_STRUCK" != 1 ]; then
			FL_FLAW="the fault point came, but the $fault was not seen in effect"
		else
			[ "$r_end" -lt "$FL_TF" ] && FL_FLAW="the fault struck after recv had ended"
			FL_DETAIL="fault at $((at * 100 / (at_total > 0 ? at_total : 1)))% of the RAM; $FL_DETAIL"
		fi ;;
	esac
	[ -n "$FL_FLAW" ] && FL_DETAIL="$FL_DETAIL | NOT MET: $FL_FLAW"
	flq_vm_end "$tag"
	fl_case_end "$name" "$label" "$fault" "$arg" "$nd" "$FLQ_OUT" "qemu$ver $label"
	rm -f "$WORK/$r".* "$WORK/$m".*
	return 0
}
