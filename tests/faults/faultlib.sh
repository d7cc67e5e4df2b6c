# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash disable=SC2034,SC2154 # FL_* for the caller; END_RC, PID_*: migtest.sh
# faultlib.sh - one `rdmig send` -> `rdmig recv` migration under one fault,
# inside the test guest (scripts/rdma-vm), as root.  Sourced by
# scripts/faults (the whole set, a table) and tests/faults/test_faults.sh
# (the CI subset).  See docs/reliability.md.
#
#   fl_init BUILD SIZE_MIB   RDMIG, WORK (removed on exit), the image
#   fl_pair_up rxe|siw       ends A and B joined by a veth pair (made here
#                            unless scripts/rdma-vm --two-hosts made them)
#   fl_case NAME WHERE FAULT [ARG]
#       WHERE: rxe | siw (the single device, talking to itself) or
#              rxe-pair | siw-pair (A sends, B receives, over the veth)
#       FAULT: none | netem "QDISC ARGS" | linkdown SECONDS |
#              stop SECONDS | enospc | memcg | lostdreq (rxe-pair: the
#              sender's first disconnect request is dropped)
#     runs it and sets FL_OUTCOME (completed | failed | hung), FL_MS (send
#     start -> both ended), FL_DETAIL (the error lines), FL_BOUNDED (1: both
#     ended within the bound), FL_LEFT (a final output name left after a
#     failure, or empty), FL_FLAW (another reason a failure is not clean,
#     or empty), FL_ROW (a line of the table, without FL_DETAIL).
#   fl_strike, fl_netem, fl_bound, fl_case_end: its parts, which
#     qemufaults.sh (a real QEMU as the source) uses too
#
# Bound of a failure: each side ends within the fault's length + 2 x the
# timeout (FL_TIMEOUT, seconds, given to both sides) after the fault began.

# shellcheck source=tests/device/migtest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../device/migtest.sh"

FL_TIMEOUT=${FL_TIMEOUT:-10}
FL_PORT=${FL_PORT:-23000}
FL_MADE_PAIRS=()
declare -A FL_BASE_MS=()
# a row's case, device, outcome, time and x base
FL_ROW_FMT='| %-22s | %-11s | %-26s | %6.1f | %6s'

fl_init() {
	BUILD=$1
	FL_SIZE=$2
	RDMIG=$BUILD/rdmig
	[ -x "$RDMIG" ] || { echo "FAIL - $RDMIG is missing: build first"; exit 1; }
	[ "$(id -u)" = 0 ] || { echo "FAIL - faults need root (inside scripts/rdma-vm)"; exit 1; }
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/faults.XXXXXX") || exit 1
	BG_PIDS=()
	RECV_WRAPPER=()
	trap fl_cleanup EXIT
	mkfifo "$WORK/nap.fifo" && exec 9<>"$WORK/nap.fifo"
	modprobe -a veth sch_netem sch_prio cls_u32 act_gact 2>/dev/null
	IMG=$WORK/image.bin
	head -c $((FL_SIZE * 1048576)) /dev/urandom >"$IMG" || exit 1
}

fl_cleanup() {
	local m
	for m in "$WORK"/out.*; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
	rmdir /sys/fs/cgroup/rdmig-faults 2>/dev/null
	fl_pairs_down
	migtest_cleanup
}

# ------------------------------------------------------------- the pairs --

# The layout of scripts/rdma-vm --two-hosts (docs/rdma-vm.md): each end on
# its own veth, one namespace, a rule per direction ahead of the local
# table so that what a host makes for the other end leaves by its veth.
fl_spec() { # rxe|siw A|B -> NAME NETDEV IP TABLE
	case $1$2 in
	rxeA) echo rxe_a rxa 10.99.2.1 101 ;; rxeB) echo rxe_b rxb 10.99.2.2 102 ;;
	siwA) echo siw_a swa 10.99.3.1 103 ;; siwB) echo siw_b swb 10.99.3.2 104 ;;
	esac
}

fl_pair_up() {
	local kind=$1 an ad ai at bn bd bi bt
	read -r an ad ai at <<<"$(fl_spec "$kind" A)"
	read -r bn bd bi bt <<<"$(fl_spec "$kind" B)"
	if [ ! -e "/sys/class/infiniband/$an" ]; then
		sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.all.accept_local=1
		if ip rule show pref 0 | grep -q 'lookup local'; then
			ip rule add pref 1000 lookup local && ip rule del pref 0 lookup local
		fi
		ip link add "$ad" type veth peer name "$bd" || return 1
		FL_MADE_PAIRS+=("$kind")
		for d in "$ad" "$bd"; do
			sysctl -qw "net.ipv4.conf.$d.rp_filter=0" "net.ipv4.conf.$d.accept_local=1"
		done
		ip addr add "$ai/24" dev "$ad" && ip addr add "$bi/24" dev "$bd" &&
			ip link set "$ad" up && ip link set "$bd" up &&
			ip rule add pref "$at" iif lo to "$bi" lookup "$at" &&
			ip rule add pref "$bt" iif lo to "$ai" lookup "$bt" &&
			ip route add "$bi" dev "$ad" src "$ai" table "$at" &&
			ip route add "$ai" dev "$bd" src "$bi" table "$bt" &&
			rdma link add "$an" type "$kind" netdev "$ad" &&
			rdma link add "$bn" type "$kind" netdev "$bd" || return 1
		local i
		for ((i = 0; i < 250; i++)); do
			grep -qs ACTIVE "/sys/class/infiniband/$bn/ports/1/state" &&
				grep -qs ACTIVE "/sys/class/infiniband/$an/ports/1/state" && break
			nap 0.02
		done
	fi
	return 0
}

# Remove what fl_pair_up made (not what scripts/rdma-vm made).
fl_pairs_down() {
	local kind an ad ai at bn bd bi bt
	for kind in "${FL_MADE_PAIRS[@]}"; do
		read -r an ad ai at <<<"$(fl_spec "$kind" A)"
		read -r bn bd bi bt <<<"$(fl_spec "$kind" B)"
		rdma link del "$an" 2>/dev/null
		rdma link del "$bn" 2>/dev/null
		ip rule del pref "$at" 2>/dev/null
		ip rule del pref "$bt" 2>/dev/null
		ip route flush table "$at" 2>/dev/null
		ip route flush table "$bt" 2>/dev/null
		ip link del "$ad" 2>/dev/null
	done
	if [ ${#FL_MADE_PAIRS[@]} -gt 0 ] && ! ip rule show | grep -qE '^(10[1-4]):'; then
		ip rule add pref 0 lookup local && ip rule del pref 1000 lookup local
	fi
	FL_MADE_PAIRS=()
}

# fl_pair_renew rxe|siw: the pair's two devices made anew over their
# netdevs (after a 20 s link-down of rxe_b no new connection over
# rxe_a -> rxe_b came up in the test guest: docs/reliability.md)
fl_pair_renew() {
	local kind=$1 an ad ai at bn bd bi bt i
	read -r an ad ai at <<<"$(fl_spec "$kind" A)"
	read -r bn bd bi bt <<<"$(fl_spec "$kind" B)"
	rdma link del "$an" 2>/dev/null
	rdma link del "$bn" 2>/dev/null
	rdma link add "$an" type "$kind" netdev "$ad" && rdma link add "$bn" type "$kind" netdev "$bd" ||
		return 1
	for ((i = 0; i < 250; i++)); do
		grep -qs ACTIVE "/sys/class/infiniband/$bn/ports/1/state" &&
			grep -qs ACTIVE "/sys/class/infiniband/$an/ports/1/state" && break
		nap 0.02
	done
	fl_route_back "$kind"
}

# After B's veth went down and up: its addresses came back, its route in
# its table did not (a route through a downed device is removed).
fl_route_back() {
	local kind=$1 an ad ai at bn bd bi bt
	read -r an ad ai at <<<"$(fl_spec "$kind" A)"
	read -r bn bd bi bt <<<"$(fl_spec "$kind" B)"
	ip route replace "$ai" dev "$bd" src "$bi" table "$bt"
}

# ------------------------------------------------------------- one case --

# The last progress line of TAG (--progress json on stderr): FL_DONE and
# FL_TOTAL, its bytes_done and bytes_total (0 and 0 before the first).
fl_progress_last() {
	local line re='"bytes_done": *([0-9]+)' rt='"bytes_total": *([0-9]+)'
	FL_DONE=0 FL_TOTAL=0
	[ -s "$WORK/$1.err" ] || return 1
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		FL_DONE=${BASH_REMATCH[1]}
		[[ $line =~ $rt ]] && FL_TOTAL=${BASH_REMATCH[1]}
	done <"$WORK/$1.err"
}

# TAG's progress reached BYTES?
fl_progress_at() {
	fl_progress_last "$1" && [ "$FL_DONE" -ge "$2" ]
}

# Wait until recv created its images under their temporary names in OUT
# (.rdmig-*: its check of the free space passed, its writes are ahead), or
# the send TAG ended, or 120 s.  A full --out waits for this rather than
# for send's progress: recv verifies and writes each span as its record
# lands, so a 16 MiB image can be written whole before send's progress
# line says a quarter.
fl_wait_created() {
	local i f
	for ((i = 0; i < 6000; i++)); do
		for f in "$1"/.rdmig-*; do [ -e "$f" ] && return 0; done
		ended "$2" && return 1
		nap 0.02
	done
	return 1
}

# Wait for where FAULT strikes, OUT being recv's --out and TAG the process
# whose progress tells (send, or recv --qemu) [at BYTES]: recv's images
# created for a full --out, a quarter through otherwise.
fl_fault_point() {
	if [ "$1" = enospc ]; then fl_wait_created "$2" "$3"; else fl_wait_mid "$3" "${4:-}"; fi
}

# Wait until TAG's progress is a quarter of the image through [or at
# BYTES] (or it ended, or 120 s).
fl_wait_mid() {
	local i at=${2:-$((FL_SIZE * 1048576 / 4))}
	for ((i = 0; i < 6000; i++)); do
		fl_progress_at "$1" "$at" && return 0
		ended "$1" && return 1
		nap 0.02
	done
	return 1
}

# The packets the root qdisc of NETDEV dropped.
fl_qdisc_dropped() {
	local re='dropped ([0-9]+)'
	[[ $(tc -s qdisc show dev "$1" root) =~ $re ]] && echo "${BASH_REMATCH[1]}"
}

# Drop the disconnect requests (DREQ) that leave NETDEV: RoCE's CM
# datagrams go to QP 1 (UDP 4791; after IPv4's 20 bytes and UDP's 8, the
# BTH's destination QP at bytes 4-7), and their MAD's attribute ID, after
# the BTH's 12 bytes and the DETH's 8, at byte 16, is 0x0015 for a DREQ.
fl_dreq_drop_on() {
	tc qdisc add dev "$1" root handle 1: prio &&
		tc filter add dev "$1" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u32 0x00000001 0x00ffffff at 32 \
			match u16 0x0015 0xffff at 64 action drop
}

# Wait until the filter of fl_dreq_drop_on on NETDEV dropped one (at most
# 30 s), then take it away so that the kernel's resend passes; FL_DROPPED
# says how many it dropped.
fl_dreq_drop_once() {
	local i
	FL_DROPPED=0
	for ((i = 0; i < 1500; i++)); do
		FL_DROPPED=$(fl_qdisc_dropped "$1")
		[ "${FL_DROPPED:-0}" -gt 0 ] && break
		nap 0.02
	done
	tc qdisc del dev "$1" root
}

fl_where() { # WHERE -> KIND SEND-IP RECV-IP DEVICE-LABEL FAULT-NETDEV
	local an ad ai at bn bd bi bt
	case $1 in
	rxe) echo rxe "$RDMAVM_RXE_IP" "$RDMAVM_RXE_IP" rxe0 - ;;
	siw) echo siw "$RDMAVM_SIW_IP" "$RDMAVM_SIW_IP" siw0 - ;;
	*-pair)
		read -r an ad ai at <<<"$(fl_spec "${1%-pair}" A)"
		read -r bn bd bi bt <<<"$(fl_spec "${1%-pair}" B)"
		echo "${1%-pair}" "$ai" "$bi" "$an>$bn" "$ad:$bd" ;;
	esac
}

# The first error line of TAG, shortened for the table.
fl_err() {
	local l
	l=$(grep -s -m1 '^rdmig: ' "$WORK/$1.err")
	l=${l#rdmig: }
	echo "${l:0:90}"
}

# fl_strike FAULT ARG KIND ND OUT WATCH RECV [BYTES]: wait for FAULT's
# point (fl_fault_point, on WATCH's progress [at BYTES]) and strike: for
# linkdown the netdev of ND's B end down ARG s (KIND's pair), for stop the
# process of the bg tag RECV stopped ARG s, for enospc --out OUT filled.
# Sets FL_TF to when it struck (0: the point never came, or no such fault),
# FL_DONE, FL_TOTAL to WATCH's progress then, and FL_STRUCK to 1 only when
# the fault is seen in effect: the link down, the process in state T
# (stopped), the filler of --out refused with ENOSPC.
fl_strike() {
	local fault=$1 arg=$2 kind=$3 nd=$4 out=$5 watch=$6 recv=$7 pv
	FL_TF=0 FL_DONE=0 FL_TOTAL=0 FL_STRUCK=0
	case $fault in linkdown | stop | enospc) ;; *) return 0 ;; esac
	fl_fault_point "$fault" "$out" "$watch" "${8:-}" || return 0
	now_ms_to FL_TF
	fl_progress_last "$watch"
	case $fault in
	linkdown)
		ip link set "${nd#*:}" down
		# administratively down: UP is gone from the flags
		[[ $(ip -o link show "${nd#*:}") != *[,\<]UP[,\>]* ]] && FL_STRUCK=1
		nap "$arg"
		ip link set "${nd#*:}" up
		fl_route_back "$kind" ;;
	stop)
		pv=PID_$recv
		kill -STOP "${!pv}" && fl_proc_stopped "${!pv}" && FL_STRUCK=1
		nap "$arg"
		kill -CONT "${!pv}" ;;
	enospc)
		# what is left of --out goes to a filler: the next writes fail.
		# dd's own ENOSPC is the proof (free space read afterwards is
		# not: recv, failing, removes its outputs at once)
		dd if=/dev/zero of="$out/filler" bs=1M oflag=append conv=notrunc 2>"$out.dd" ||
			{ grep -q 'No space left on device' "$out.dd" && FL_STRUCK=1; } ;;
	esac
}

# fl_proc_stopped PID: is PID in state T (stopped) within 2 s?  Builtins
# only, as the watchers.
fl_proc_stopped() {
	local i stat
	for ((i = 0; i < 100; i++)); do
		read -r stat <"/proc/$1/stat" 2>/dev/null || return 1
		stat=${stat##*) }
		[ "${stat:0:1}" = T ] && return 0
		nap 0.02
	done
	return 1
}

# fl_netem ND add|del [QDISC ARGS]: netem on ND's A end (the data's way).
# del first reads the packets netem dropped into FL_DROPPED, so that a
# loss case can tell that its loss happened.
fl_netem() {
	local dev=${1%%:*}
	if [ "$2" = add ]; then
		# shellcheck disable=SC2086 # the qdisc's arguments are words
		tc qdisc add dev "$dev" root netem $3
	else
		FL_DROPPED=$(fl_qdisc_dropped "$dev")
		tc qdisc del dev "$dev" root
	fi
}

fl_case() {
	local name=$1 where=$2 fault=$3 arg=${4:-} kind sip rip label nd out port
	local t0 tf s_end=0 r_end=0 bound s_rc=99 r_rc=99 i pv
	read -r kind sip rip label nd <<<"$(fl_where "$where")"
	FL_PORT=$((FL_PORT + 1))
	port=$FL_PORT
	out=$WORK/out.$name.$where
	mkdir -p "$out"
	RECV_WRAPPER=()
	case $fault in
	netem) fl_netem "$nd" add "$arg" ;;
	enospc)
		# room for the image and 2 MiB more: recv's check before any data
		# moves passes; the filler takes the rest mid-transfer (below)
		mount -t tmpfs -o size=$((FL_SIZE * 2))m rdmig-faults "$out" &&
			head -c $(((FL_SIZE - 2) * 1048576)) /dev/zero >"$out/filler" ;;
	lostdreq) fl_dreq_drop_on "${nd%%:*}" ;;
	memcg)
		mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
		mkdir -p /sys/fs/cgroup/rdmig-faults
		echo $((FL_SIZE / 2))M >/sys/fs/cgroup/rdmig-faults/memory.max
		echo 0 >/sys/fs/cgroup/rdmig-faults/memory.swap.max 2>/dev/null
		RECV_WRAPPER=(sh -c 'echo $$ >/sys/fs/cgroup/rdmig-faults/cgroup.procs && exec "$@"' sh) ;;
	esac
	FL_OUTCOME=failed FL_DETAIL="" FL_LEFT="" FL_BOUNDED=1 FL_DROPPED="" FL_FLAW="" FL_STRUCK=0
	IP=$rip # start_recv listens there
	if ! start_recv r$port "$port" "$out" --timeout "$FL_TIMEOUT" 2>/dev/null; then
		FL_OUTCOME=failed FL_DETAIL="recv did not start: $(fl_err r$port)" FL_MS=0
		fl_case_end "$name" "$label" "$fault" "$arg" "$nd" "$out"
		return
	fi
	now_ms_to t0
	bg s$port -- send --to "$rip:$port" --timeout "$FL_TIMEOUT" --progress json "$IMG"
	[ "$fault" = lostdreq ] && fl_dreq_drop_once "${nd%%:*}"
	fl_strike "$fault" "$arg" "$kind" "$nd" "$out" s$port r$port
	tf=$FL_TF
	[ "$tf" = 0 ] && tf=$t0
	# a failure must end on each side within the fault's length + 2 x the
	# timeout; a side still running after FL_HANG_S is killed and "hung"
	bound=$(fl_bound "$fault" "$arg")
	wait_end s$port "${FL_HANG_S:-300}" && s_rc=$END_RC && s_end=$END_MS
	wait_end r$port $((bound + 30)) && r_rc=$END_RC && r_end=$END_MS
	for i in s r; do
		pv=PID_$i$port
		ended $i$port || { FL_OUTCOME=hung; kill -9 "${!pv}" 2>/dev/null; }
	done
	[ "$fault" = netem ] && fl_netem "$nd" del
	if [ "$FL_OUTCOME" != hung ]; then
		FL_MS=$(( (s_end > r_end ? s_end : r_end) - t0 ))
		if [ "$s_rc" = 0 ] && [ "$r_rc" = 0 ] && cmp -s "$IMG" "$out/image.bin.img"; then
			FL_OUTCOME=completed
		else
			FL_OUTCOME=failed
			[ $((s_end - tf)) -le $((bound * 1000)) ] && [ $((r_end - tf)) -le $((bound * 1000)) ] ||
				FL_BOUNDED=0
			FL_DETAIL="send $s_rc: $(fl_err s$port) | recv $r_rc: $(fl_err r$port)"
			FL_DETAIL="$FL_DETAIL | ends $(( (s_end - tf) / 1000 ))/$(( (r_end - tf) / 1000 )) s after the fault (bound ${bound} s)"
		fi
	else
		FL_MS=-1 FL_BOUNDED=0
		FL_DETAIL="send $s_rc, recv $r_rc: one side did not end"
	fi
	[ "$fault" = lostdreq ] && FL_DETAIL="${FL_DETAIL:+$FL_DETAIL | }DREQs dropped: ${FL_DROPPED:-0}"
	[ "$fault" = netem ] && FL_DETAIL="${FL_DETAIL:+$FL_DETAIL | }netem dropped: ${FL_DROPPED:-none}"
	case $fault in
	linkdown | stop | enospc) FL_DETAIL="${FL_DETAIL:+$FL_DETAIL | }struck: $([ "$FL_STRUCK" = 1 ] && echo yes || echo NO)" ;;
	esac
	fl_case_end "$name" "$label" "$fault" "$arg" "$nd" "$out"
}

# fl_bound FAULT ARG: the seconds within which a failed side must end after
# the fault began: the fault's length + 2 x the timeout
fl_bound() {
	case $1 in stop | linkdown) echo $((FL_TIMEOUT * 2 + $2)) ;; *) echo $((FL_TIMEOUT * 2)) ;; esac
}

# fl_case_end NAME LABEL FAULT ARG ND OUT [BASE-KEY]: check what is left
# under --out, make FL_ROW, clean up.  BASE-KEY (default LABEL) keys the
# fault-free time that later netem cases compare with.  After a failure
# only `recv --qemu`'s record.txt saying so may stay.
fl_case_end() {
	local name=$1 label=$2 fault=$3 arg=$4 out=$6 key=${7:-$2} f tput=-
	for f in "$out"/*; do
		[ -e "$f" ] || continue
		case ${f##*/} in
		filler) continue ;;
		record.txt) grep -qs '^end failed' "$f" && continue ;;
		esac
		[ "$FL_OUTCOME" = completed ] || FL_LEFT="$FL_LEFT ${f##*/}"
	done
	if [ "$fault" = none ] && [ "$FL_OUTCOME" = completed ]; then
		FL_BASE_MS[$key]=$FL_MS
	elif [ "$fault" = netem ] && [ "$FL_OUTCOME" = completed ] && [ -n "${FL_BASE_MS[$key]:-}" ]; then
		tput=$(awk -v b="${FL_BASE_MS[$key]}" -v t="$FL_MS" 'BEGIN { printf "%.2f", b / t }')
	fi
	local outcome=$FL_OUTCOME
	[ "$FL_OUTCOME" = completed ] && outcome="completed, byte-identical"
	[ -n "$FL_LEFT" ] && outcome="$outcome; LEFT:$FL_LEFT"
	[ "$FL_BOUNDED" = 1 ] || outcome="$outcome; OUT OF BOUND"
	# shellcheck disable=SC2059 # the one format of every row
	printf -v FL_ROW "$FL_ROW_FMT" "$name" "$label" "$outcome" \
		"$(awk -v t="$FL_MS" 'BEGIN { printf "%.1f", t / 1000 }')" "$tput"
	mountpoint -q "$out" && umount -l "$out"
	[ "$fault" = memcg ] && { rmdir /sys/fs/cgroup/rdmig-faults 2>/dev/null || true; }
	rm -rf "$out"
}

# ------------------------------------------------------------- the soak --

# The open descriptors of PID (nothing when it is gone).
fl_fd_count() {
	local fds=("/proc/$1/fd/"*)
	[ -e "${fds[0]}" ] && echo "${#fds[@]}"
}

# fl_soak DEVICE N M ROUNDS SECONDS: one `rdmig recv --serve` on rxe0 or
# siw0, images of 4 MiB; after one migration to warm it up, N migrations back to back and
# then ROUNDS times M at once, each image compared with the one sent and
# removed, until done or SECONDS passed.  Sets FL_OUTCOME (completed: every
# migration byte-identical and the server still up), FL_MS, FL_DETAIL (the
# counts, recv's descriptors and pinned memory after the warm-up and after
# the soak), FL_SOAK_LEAK (empty, or what grew).
fl_soak() {
	local dev=$1 n=$2 m=$3 rounds=$4 secs=$5 ip port out t0 now deadline
	local pid fd0 pin0 fd1 pin1 done=0 failed=0 checked=0 i r tags=() tag
	case $dev in rxe) ip=$RDMAVM_RXE_IP ;; siw) ip=$RDMAVM_SIW_IP ;; esac
	FL_PORT=$((FL_PORT + 1))
	port=$FL_PORT
	out=$WORK/soak.$dev
	mkdir -p "$out"
	SOAK_IMG=$WORK/soak.bin
	[ -s "$SOAK_IMG" ] || head -c $((4 * 1048576)) /dev/urandom >"$SOAK_IMG"
	FL_OUTCOME=failed FL_SOAK_LEAK="" FL_MS=0
	bg serve$port -- recv --serve --listen "$ip:$port" --out "$out" --max-sources "$m" \
		--timeout "$FL_TIMEOUT" -v
	for ((i = 0; i < 3000; i++)); do
		has_line "$WORK/serve$port.err" 'recv: listening on' && break
		ended serve$port && break
		nap 0.01
	done
	pid=PID_serve$port
	pid=${!pid}
	fl_soak_one() { # TAG: start one send
		bg "$1" -- send --to "$ip:$port" --timeout "$FL_TIMEOUT" "$SOAK_IMG"
	}
	# TAG...: wait for them, check each; failed counts what did not complete
	fl_soak_check() {
		local t
		for t in "$@"; do
			if wait_end "$t" 120 && [ "$END_RC" = 0 ]; then
				done=$((done + 1))
			else
				failed=$((failed + 1))
				[ -n "$FL_DETAIL" ] || FL_DETAIL="first failure: send $(fl_err "$t")"
			fi
		done
	}
	FL_DETAIL=""
	fl_soak_one sw$port
	fl_soak_check sw$port
	# every migration's dir must hold the image sent: wait until those of
	# the DONE migrations so far are there (the server writes a source's
	# dir once it ended), compare and remove them
	fl_soak_outputs() {
		local d k
		for ((k = 0; k < 1000; k++)); do
			d=("$out"/*/)
			[ -d "${d[0]}" ] || d=()
			[ $((${#d[@]} + checked)) -lt "$done" ] || break
			nap 0.02
		done
		for d in "$out"/*/; do
			[ -d "$d" ] || continue
			checked=$((checked + 1))
			if ! cmp -s "$SOAK_IMG" "$d/soak.bin.img"; then
				failed=$((failed + 1))
				[ -n "$FL_DETAIL" ] || FL_DETAIL="first failure: $(basename "$d") differs or is missing"
			fi
			rm -rf "$d"
		done
	}
	# give the server a moment to finish writing the last one
	fl_soak_outputs
	fd0=$(fl_fd_count "$pid")
	pin0=$(awk '/^VmPin:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	now_ms_to t0
	deadline=$((t0 + secs * 1000))
	for ((i = 0; i < n; i++)); do
		now_ms_to now
		[ "$now" -lt "$deadline" ] || break
		fl_soak_one s${port}_$i
		fl_soak_check s${port}_$i
	done
	for ((r = 0; r < rounds; r++)); do
		now_ms_to now
		[ "$now" -lt "$deadline" ] || break
		tags=()
		for ((i = 0; i < m; i++)); do
			tag=c${port}_${r}_$i
			fl_soak_one "$tag"
			tags+=("$tag")
		done
		fl_soak_check "${tags[@]}"
	done
	now_ms_to now
	FL_MS=$((now - t0))
	fl_soak_outputs
	fd1=$(fl_fd_count "$pid")
	pin1=$(awk '/^VmPin:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ "${fd1:-0}" -le "${fd0:-0}" ] || FL_SOAK_LEAK="$FL_SOAK_LEAK descriptors"
	[ "${pin1:-0}" -le "${pin0:-0}" ] || FL_SOAK_LEAK="$FL_SOAK_LEAK pinned"
	alive "$pid" && [ "$failed" = 0 ] && [ -n "$fd0" ] && [ -n "$fd1" ] && FL_OUTCOME=completed
	alive "$pid" || FL_DETAIL="the server ended: $(fl_err serve$port) $FL_DETAIL"
	kill -TERM "$pid" 2>/dev/null
	wait_end serve$port 30 || kill -9 "$pid" 2>/dev/null
	FL_DETAIL="$done migrations, $failed failed, in $((FL_MS / 1000)) s; recv's fds $fd0 -> $fd1, VmPin $pin0 -> $pin1 kB${FL_DETAIL:+; $FL_DETAIL}"
	rm -rf "$out"
}
