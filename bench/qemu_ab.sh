# bench/qemu_ab.sh - sourced by bench/run-in-guest.sh: part qemu_ab, the
# inline series' own claim measured QEMU -> QEMU in the same guest boot.
#
# Three QEMUs migrate the same RAM to themselves over rdma:, interleaved
# round by round (A B C A B C ...) so that drift in the guest's load hits
# all three alike:
#   stock   QEMU 10.2.2 built from the same source without the series
#   inline  10.2.2 with qemu/*.patch (scripts/qemu-inline)
#   off     the same patched binary with -global migration.x-rdma-max-inline=0
# on each device, with dynamic registration and with pin-all, for
#   - a stopped VM whose RAM is RDMIG_BENCH_AB_MIB (256) MiB of random and
#     zero chunks (tests/interop/ramimage.py): migration time (total-time);
#   - the running dirtier guest (tests/interop/dirtier.S, 64 MiB): downtime.
# The patched runs trace qemu_rdma_alloc_qp_inline* and
# qemu_rdma_post_send_control_posted (its inline flag) on both sides: the
# rung granted, and how many control messages went inline and how many were
# copied.  Every run
# traces, with timestamps (-msg timestamp=on), the source's REGISTER
# requests and results (qemu_rdma_write_one_sendreg, _recvregres): the
# REGISTER round trip's p50 and p99, in microseconds.  The order of the
# three QEMUs rotates from round to round.
# Writes OUT/qemu_ab.json (one row per run) and lines in the summary.
#
# Knobs: RDMIG_BENCH_AB_MIB (256), RDMIG_BENCH_AB_ROUNDS (3),
# RDMIG_BENCH_AB_VMS ("stopped live").

AB_MIB=${RDMIG_BENCH_AB_MIB:-256}
AB_ROUNDS=${RDMIG_BENCH_AB_ROUNDS:-3}
AB_VMS=${RDMIG_BENCH_AB_VMS:-stopped live}

# ab_qemu TAG FLAVOUR MIB ARGS...: a QEMU of FLAVOUR (stock|inline|off), QMP
# on $DATA/TAG.qmp, trace (patched flavours) in $OUT/TAG.trace; sets QPID
ab_qemu() {
	local tag=$1 flavour=$2 mib=$3 bin extra=()
	shift 3
	case $flavour in
	stock) bin=${QEMU_BIN[10.2.2]} ;;
	inline) bin=${QEMU_BIN[inline]} ;;
	off) bin=${QEMU_BIN[inline]}; extra=(-global migration.x-rdma-max-inline=0) ;;
	esac
	extra+=(-msg timestamp=on -trace 'qemu_rdma_write_one_sendreg' -trace 'qemu_rdma_write_one_recvregres'
		-D "$OUT/$tag.trace")
	[ "$flavour" = stock ] ||
		extra+=(-trace 'qemu_rdma_alloc_qp_inline*' -trace 'qemu_rdma_post_send_control_*')
	timeout 900 "$bin" -M pc,memory-backend=pc.ram -m "$mib" -nodefaults -no-user-config \
		-display none -accel tcg -qmp "unix:$DATA/$tag.qmp,server=on,wait=off" "${extra[@]}" \
		"$@" </dev/null >"$OUT/$tag.qemu.log" 2>&1 &
	QPID=$!
	QPIDS+=("$QPID")
	timeout 120 "$QMP" "$DATA/$tag.qmp" status >/dev/null
}

# ab_count TRACE inline|copy: control messages that took that path
# (grep -c prints 0 itself when nothing matches, and nothing for a missing file)
ab_count() {
	local n
	local flag=1
	[ "$2" = inline ] || flag=0
	n=$(grep -cE "qemu_rdma_post_send_control_posted .* bytes, inline $flag\$" "$1" 2>/dev/null)
	echo "${n:-0}"
}
# ab_granted TRACE: "asked/written back/granted/tries" of the QP
ab_granted() {
	sed -n 's/.*qemu_rdma_alloc_qp_inline inline data asked \([0-9]*\) written back \([0-9]*\) granted \([0-9]*\) send SGEs [0-9]* tries \([0-9]*\).*/\1\/\2\/\3\/\4/p' \
		"$1" 2>/dev/null | head -n1
}

# ab_rtt TRACE: "p50 p99 n" of the REGISTER round trips (us) in the
# source's trace: each request to the result that follows it (a round
# trip across midnight UTC would be lost)
ab_rtt() {
	awk '
		# the time of a line: "2026-12-03T10:10:05.711064Z event" (QEMU 10.2
		# and later with -msg timestamp=on) or "PID@SECONDS.MICROS:event"
		function when(f,   a, b) {
			if (f ~ /^[0-9]+-[0-9]+-[0-9]+T/) {
				split(f, a, "T"); split(a[2], b, ":")
				return b[1] * 3600 + b[2] * 60 + b[3]
			}
			split(f, a, "[@:]")
			return a[2]
		}
		/qemu_rdma_write_one_sendreg / { t = when($1); next }
		/qemu_rdma_write_one_recvregres / && t != "" { printf "%.1f\n", (when($1) - t) * 1e6; t = "" }' \
		"$1" 2>/dev/null | sort -n | awk '
		{ r[n++] = $1 }
		END {
			if (n == 0) { print "null null 0"; exit }
			# nearest rank: the smallest value with at least p of them at or below
			i = int(0.5 * n); if (i < 0.5 * n) i++
			j = int(0.99 * n); if (j < 0.99 * n) j++
			printf "%s %s %d\n", r[i - 1], r[j - 1], n
		}'
}

# ab_run DEV IP FLAVOUR REG KIND ROUND: one migration; KIND stopped|live
ab_run() {
	local dev=$1 ip=$2 flavour=$3 reg=$4 kind=$5 round=$6 tag spid dpid mrc mib src=() dst=() j
	tag=ab_${kind}_${dev}_${reg}_${flavour}_$round
	if [ "$kind" = stopped ]; then
		mib=$AB_MIB
		src=(-S -object "memory-backend-file,id=pc.ram,size=${mib}M,mem-path=$DATA/ab.ram,share=on")
	else
		mib=64
		cp "$DATA/ab-live.ram" "$DATA/ab-live-run.ram"
		src=(-kernel "$DATA/dirtier.elf" -serial "file:$DATA/$tag.serial"
			-object "memory-backend-file,id=pc.ram,size=${mib}M,mem-path=$DATA/ab-live-run.ram,share=on")
		# the same machine on both sides, serial port included
		dst=(-kernel "$DATA/dirtier.elf" -serial "file:$DATA/$tag-dst.serial")
	fi
	ab_qemu "$tag-dst" "$flavour" "$mib" -S -incoming "rdma:$ip:$PORT" "${dst[@]}" \
		-object "memory-backend-ram,id=pc.ram,size=${mib}M"
	dpid=$QPID
	ab_qemu "$tag-src" "$flavour" "$mib" "${src[@]}"
	spid=$QPID
	if [ "$kind" = live ]; then
		for ((j = 0; j < 300; j++)); do
			grep -q 'DIRTIER up' "$DATA/$tag.serial" 2>/dev/null && break
			sleep 0.1
		done
		sleep 1
	fi
	[ "$reg" = pin-all ] && timeout 60 "$QMP" "$DATA/$tag-src.qmp" caps rdma-pin-all=on
	timeout 900 "$QMP" "$DATA/$tag-src.qmp" migrate "rdma:$ip:$PORT" 850 \
		>"$OUT/$tag.json" 2>"$OUT/$tag.err"
	mrc=$?
	timeout 60 "$QMP" "$DATA/$tag-src.qmp" quit >/dev/null 2>&1
	timeout 60 "$QMP" "$DATA/$tag-dst.qmp" quit >/dev/null 2>&1
	wait "$spid" "$dpid" 2>/dev/null
	next_port
	ab_record "$tag" "$dev" "$flavour" "$reg" "$kind" "$round" "$mrc"
}

AB_FIRST=1
ab_record() {
	local tag=$1 dev=$2 flavour=$3 reg=$4 kind=$5 round=$6 mrc=$7 s=$OUT/$1-src.trace d=$OUT/$1-dst.trace
	local si sc di dc sg dg rtt
	si=$(ab_count "$s" inline) sc=$(ab_count "$s" copy) di=$(ab_count "$d" inline) dc=$(ab_count "$d" copy)
	sg=$(ab_granted "$s") dg=$(ab_granted "$d")
	# (no process substitution: the test guest has no /dev/fd)
	# shellcheck disable=SC2207
	rtt=($(ab_rtt "$s"))
	[ $AB_FIRST = 1 ] || echo ',' >>"$OUT/qemu_ab.json"
	AB_FIRST=0
	printf '{"device": "%s", "qemu": "%s", "registration": "%s", "vm": "%s", "round": %d, "rc": %d, "src_inline": %d, "src_copied": %d, "dst_inline": %d, "dst_copied": %d, "src_qp": "%s", "dst_qp": "%s", "register_rtt_p50_us": %s, "register_rtt_p99_us": %s, "register_round_trips": %d, "guest_load": "%s", "result": ' \
		"$dev" "$flavour" "$reg" "$kind" "$round" "$mrc" "$si" "$sc" "$di" "$dc" "$sg" "$dg" \
		"${rtt[0]}" "${rtt[1]}" "${rtt[2]}" "$(loadavg)" >>"$OUT/qemu_ab.json"
	if [ -s "$OUT/$tag.json" ]; then tr -d '\n' <"$OUT/$tag.json" >>"$OUT/qemu_ab.json"; else echo -n null >>"$OUT/qemu_ab.json"; fi
	echo '}' >>"$OUT/qemu_ab.json"
	note "qemu_ab $kind $dev $reg $flavour #$round: rc=$mrc total-time=$(json_num "$OUT/$tag.json" total-time) ms" \
		"downtime=$(json_num "$OUT/$tag.json" downtime) ms; control sends src inline/copied $si/$sc," \
		"dst $di/$dc; QP asked/written back/granted/tries src ${sg:--} dst ${dg:--};" \
		"REGISTER round trip p50 ${rtt[0]} us, p99 ${rtt[1]} us (${rtt[2]})"
}

qemu_ab() {
	local dev ip reg kind round flavour order
	if [ ! -x "${QEMU_BIN[10.2.2]:-}" ] || [ ! -x "${QEMU_BIN[inline]:-}" ]; then
		note "qemu_ab: needs QEMU 10.2.2 and inline (RDMIG_BENCH_QEMUS); not run"
		return 1
	fi
	DATA=$(mktemp -d /tmp/rdmig-ab.XXXXXX)
	"$PY" "$ROOT/tests/interop/ramimage.py" "$AB_MIB" "$DATA/ab.ram"
	"$PY" "$ROOT/tests/interop/ramimage.py" 64 "$DATA/ab-live.ram" 8 56
	as --32 -o "$DATA/dirtier.o" "$ROOT/tests/interop/dirtier.S" &&
		ld -m elf_i386 -Ttext=0x100000 -e start -o "$DATA/dirtier.elf" "$DATA/dirtier.o" ||
		note "qemu_ab: the dirtier guest does not build"
	echo '{"ab_mib": '"$AB_MIB"', "rounds": '"$AB_ROUNDS"', "runs": [' >"$OUT/qemu_ab.json"
	for dev in $DEVICES; do
		ip=$(dev_ip "$dev")
		for kind in $AB_VMS; do
			for reg in dynamic pin-all; do
				for ((round = 1; round <= AB_ROUNDS; round++)); do
					# rotated: stock inline off, inline off stock, ...
					order=(stock inline off stock inline)
					for flavour in "${order[@]:$(((round - 1) % 3)):3}"; do
						ab_run "$dev" "$ip" "$flavour" "$reg" "$kind" "$round"
					done
				done
			done
		done
	done
	echo ']}' >>"$OUT/qemu_ab.json"
	rm -rf "$DATA"
	DATA=
}
