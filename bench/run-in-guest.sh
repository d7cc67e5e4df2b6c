#!/bin/bash
# bench/run-in-guest.sh BUILD OUT - every rdmig benchmark, inside ONE boot of
# the test guest (scripts/bench starts it), so the ratios compare runs on the
# same devices, kernel and load.  Writes OUT/*.json and OUT/summary.txt.
#
#   1. footprint: rdmig probe --json (granted inline, queue bytes per request)
#   2. control-plane latency: inline auto vs off, interleaved, per class
#   3. CPU cost: sender instructions per message (callgrind), per class/mode
#   4. bulk: rdmig send -> recv, 512 MiB random and half-zero, dynamic and
#      pin-all, next to ib_write_bw on the same device
set -uo pipefail
BUILD=${1:?build dir}
OUT=${2:?output dir}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
PORT=19100
SPIN=${RDMIG_BENCH_SPIN:-3000}
BULK_MIB=${RDMIG_BENCH_BULK_MIB:-512}

note "# rdmig benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), guest $(uname -r), $(nproc) vCPUs"

# ---------------------------------------------------------------- 1 --
"$BUILD/rdmig" probe --json >"$OUT/probe.json"
"$BUILD/rdmig" probe | tee -a "$SUMMARY"

# ---------------------------------------------------------------- 2 --
for dev in rxe siw; do
	ip=$(eval echo "\$RDMAVM_${dev^^}_IP")
	"$BUILD/rdmig-bench" server --listen "$ip:$PORT" --conns 2 --spin "$SPIN" &
	"$BUILD/rdmig-bench" latency --to "$ip:$PORT" --iters "${RDMIG_BENCH_ITERS:-3000}" \
		--warmup 300 --rounds 10 --spin "$SPIN" --json "$OUT/latency_$dev.json" | tee -a "$SUMMARY"
	wait
	PORT=$((PORT + 1))
done

# ---------------------------------------------------------------- 3 --
# Instructions of post_control (the work of putting one message on the
# wire, our code + the provider's user-space post) per message.  bytes 0 =
# the REGISTER request of a round trip.
echo '{"cost": [' >"$OUT/cost.json"
first=1
for dev in rxe siw; do
	ip=$(eval echo "\$RDMAVM_${dev^^}_IP")
	for bytes in 16 32 40 336 4112 0; do
		for mode in auto 0; do
			"$BUILD/rdmig-bench" server --listen "$ip:$PORT" --conns 1 --spin 0 &
			cg=$OUT/callgrind.$dev.$mode.$bytes
			valgrind --tool=callgrind --callgrind-out-file="$cg" --collect-atstart=no \
				--toggle-collect=post_control "$BUILD/rdmig-bench" cost --to "$ip:$PORT" \
				--inline "$mode" --bytes "$bytes" --count 500 --spin 0 >/dev/null 2>&1
			wait
			PORT=$((PORT + 1))
			ir=$(sed -n 's/^summary: *//p;s/^totals: *//p' "$cg" | head -n1)
			# 500 messages plus the final REGISTER_FINISHED
			per=$(awk -v t="${ir:-0}" 'BEGIN { printf "%.1f", t / 501 }')
			[ $first = 1 ] || echo ',' >>"$OUT/cost.json"
			first=0
			printf '{"device": "%s", "bytes": %s, "inline": "%s", "instructions_per_message": %s}' \
				"$dev" "$bytes" "$mode" "$per" >>"$OUT/cost.json"
			note "cost $dev bytes=$bytes inline=$mode instructions/message=$per"
		done
	done
done
echo ']}' >>"$OUT/cost.json"

# ---------------------------------------------------------------- 4 --
DATA=$(mktemp -d /tmp/rdmig-bench.XXXXXX)
head -c $((BULK_MIB << 20)) /dev/urandom >"$DATA/random.img"
# half-zero: random first half, zero second half
head -c $((BULK_MIB << 19)) /dev/urandom >"$DATA/halfzero.img"
truncate -s $((BULK_MIB << 20)) "$DATA/halfzero.img"
echo '{"bulk": [' >"$OUT/bulk.json"
first=1
for dev in rxe siw; do
	ip=$(eval echo "\$RDMAVM_${dev^^}_IP")
	# the device's ceiling: perftest's RDMA WRITE bandwidth, 1 MiB messages
	ib_write_bw -d "${dev}0" -F -s 1048576 -n 400 -R >"$OUT/ib_write_bw_$dev.server" 2>&1 &
	sleep 1
	ib_write_bw -d "${dev}0" -F -s 1048576 -n 400 -R "$ip" >"$OUT/ib_write_bw_$dev.txt" 2>&1
	wait
	bw=$(awk '/^ *1048576/ {print $4}' "$OUT/ib_write_bw_$dev.txt" | tail -n1)
	note "ib_write_bw $dev: ${bw:-?} MB/s (BW average, 1 MiB messages)"
	for img in random halfzero; do
		for reg in dynamic pin-all; do
			flag=; [ $reg = pin-all ] && flag=--pin-all
			rm -rf "$DATA/out"
			"$BUILD/rdmig" recv --listen "$ip:$PORT" --out "$DATA/out" $flag --json \
				>"$OUT/recv_${dev}_${img}_$reg.json" 2>"$OUT/recv_${dev}_${img}_$reg.err" &
			sleep 0.5
			"$BUILD/rdmig" send --to "$ip:$PORT" $flag --json "$DATA/$img.img" \
				>"$OUT/send_${dev}_${img}_$reg.json" 2>"$OUT/send_${dev}_${img}_$reg.err"
			src=$?
			wait $!
			rrc=$?
			PORT=$((PORT + 1))
			[ $first = 1 ] || echo ',' >>"$OUT/bulk.json"
			first=0
			printf '{"device": "%s", "image": "%s", "registration": "%s", "send_rc": %d, "recv_rc": %d, "ib_write_bw_MBps": %s, "send": ' \
				"$dev" "$img" "$reg" $src $rrc "${bw:-null}" >>"$OUT/bulk.json"
			cat "$OUT/send_${dev}_${img}_$reg.json" >>"$OUT/bulk.json"
			echo '}' >>"$OUT/bulk.json"
			note "bulk $dev $img $reg: send rc=$src recv rc=$rrc $(grep -o '"throughput_MBps": *[0-9.]*' "$OUT/send_${dev}_${img}_$reg.json" | head -n1)"
		done
	done
done
echo ']}' >>"$OUT/bulk.json"
rm -rf "$DATA"
note "# done"
