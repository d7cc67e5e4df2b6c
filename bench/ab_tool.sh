#!/bin/bash
# bench/ab_tool.sh BUILD_A BUILD_B OUT [BUILD_C...] - rdmig send -> rdmig recv
# of two (or more) builds, interleaved in ONE boot of the test guest
# (A B A B ...): per round, per device, per registration mode, every build
# once, so a drift of the host's load reaches every build alike.  Each run
# is timed as bench/run-in-guest.sh times the tool: e2e from the sender's
# start until both ends exited; the --json reports of both ends are kept.
# Writes OUT/ab.tsv (one row a run) and OUT/summary.txt (medians, ranges).
#
# Run on the host (the guest shares the current directory):
#   flock /var/tmp/rdmig-guest.lock env RDMAVM_CACHE=... scripts/rdma-vm \
#       --mem 4096 --timeout 3600 -- bash bench/ab_tool.sh A/build B/build out
#
# Knobs (environment): AB_MIB (256), AB_ROUNDS (3), AB_DEVICES ("rxe siw"),
# AB_MODES ("dynamic pin-all"), AB_CHUNK (32M).
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BUILD_A BUILD_B OUT [BUILD_C...]" >&2; exit 2; }
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
OUT=$3
shift 3
BUILDS=("$A" "$B")
for b in "$@"; do BUILDS+=("$(cd "$b" && pwd)"); done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
MIB=${AB_MIB:-256}
ROUNDS=${AB_ROUNDS:-3}
DEVICES=${AB_DEVICES:-rxe siw}
MODES=${AB_MODES:-dynamic pin-all}
CHUNK=${AB_CHUNK:-32M}
PORT=19500
DATA=$(mktemp -d /tmp/rdmig-ab.XXXXXX)
trap 'rm -rf "$DATA"' EXIT

note() { echo "$*" | tee -a "$OUT/summary.txt"; }
dev_ip() { eval echo "\$RDMAVM_${1^^}_IP"; }
json_num() { grep -o "\"$2\": *[0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: *//'; }
wait_listening() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'listening on' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# one_run LETTER BUILD DEV REG ROUND: one transfer, one ab.tsv row
one_run() {
	local v=$1 build=$2 dev=$3 reg=$4 round=$5 ip flag= tag rpid src rrc t0 e2e
	ip=$(dev_ip "$dev")
	[ "$reg" = pin-all ] && flag=--pin-all
	tag=${v}_${dev}_${reg}_r$round
	rm -rf "$DATA/out"
	timeout 900 "$build/rdmig" recv --listen "$ip:$PORT" --out "$DATA/out" $flag --json -v \
		--timeout 600 >"$OUT/$tag.recv.json" 2>"$OUT/$tag.recv.err" &
	rpid=$!
	wait_listening "$OUT/$tag.recv.err" $rpid
	t0=$(date +%s.%N)
	timeout 900 "$build/rdmig" send --to "$ip:$PORT" $flag --json --timeout 600 \
		--chunk-size "$CHUNK" "$DATA/random.img" >"$OUT/$tag.json" 2>"$OUT/$tag.err"
	src=$?
	wait $rpid
	rrc=$?
	e2e=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
	# the bytes must be the image's: a faster wrong answer is no answer
	cmp -s "$DATA/random.img" "$DATA/out/random.img" || rrc=99
	rm -rf "$DATA/out"
	PORT=$((PORT + 1))
	printf '%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$dev" "$reg" "$round" \
		"$src" "$rrc" "$e2e" "$(json_num "$OUT/$tag.json" seconds)" \
		"$(json_num "$OUT/$tag.recv.json" hash_seconds)" \
		"$(json_num "$OUT/$tag.recv.json" hash_exposed_seconds)" \
		"$(json_num "$OUT/$tag.recv.json" register_seconds)" \
		"$(json_num "$OUT/$tag.recv.json" write_seconds)" "$(cut -d' ' -f1 /proc/loadavg)" \
		>>"$OUT/ab.tsv"
	note "$tag: rc=$src/$rrc e2e=$e2e send_seconds=$(json_num "$OUT/$tag.json" seconds)" \
		"recv hash=$(json_num "$OUT/$tag.recv.json" hash_seconds)" \
		"exposed=$(json_num "$OUT/$tag.recv.json" hash_exposed_seconds)"
}

note "# ab_tool $(date -u +%Y-%m-%dT%H:%MZ) guest $(uname -r), $(nproc) vCPUs; $MIB MiB random," \
	"--chunk-size $CHUNK; builds: ${BUILDS[*]}"
printf 'variant\tdevice\treg\tround\trc\tpeer_rc\te2e\tsend_seconds\trecv_hash_seconds\trecv_hash_exposed\trecv_register_seconds\trecv_write_seconds\tload\n' \
	>"$OUT/ab.tsv"
head -c $((MIB << 20)) /dev/urandom >"$DATA/random.img"
letters=(A B C D E F)
for ((r = 1; r <= ROUNDS; r++)); do
	for dev in $DEVICES; do
		for reg in $MODES; do
			# alternate which build goes first, so neither always follows the other
			for ((i = 0; i < ${#BUILDS[@]}; i++)); do
				j=$(( (i + r) % ${#BUILDS[@]} ))
				one_run "${letters[$j]}" "${BUILDS[$j]}" "$dev" "$reg" "$r"
			done
		done
	done
done

# medians and ranges of e2e and of the sender's seconds, per variant/device/mode
note "# medians (min-max) over $ROUNDS rounds; failed runs (rc != 0) left out"
awk -F'\t' 'NR > 1 && $5 == 0 && $6 == 0 {
		k = $1 " " $2 " " $3; n[k]++; e[k, n[k]] = $7; s[k, n[k]] = $8; x[k, n[k]] = $10 }
	function med(a, k, c,   i, j, t, v) {
		for (i = 1; i <= c; i++) v[i] = a[k, i]
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
		return sprintf("%s (%s-%s)", c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2, v[1], v[c]) }
	END { for (k in n) printf "%s: n=%d e2e %s send %s recv_exposed %s\n", k, n[k], med(e, k, n[k]),
		med(s, k, n[k]), med(x, k, n[k]) }' "$OUT/ab.tsv" | sort | tee -a "$OUT/summary.txt"
