#!/bin/bash
# qemu_inline.sh - QEMU 10.2.2 with the project's series (qemu/*.patch:
# small control messages sent with IBV_SEND_INLINE) migrates over RDMA to
# and from itself, the stock 10.2.2 built from the same source, and
# Debian's stock QEMU 11.1, inside the test guest (scripts/rdma-vm), where
# RDMAVM_RXE_IP and RDMAVM_SIW_IP are set.  A missing patched or stock
# QEMU FAILS: never a skip.
#
# Usage: tests/interop/qemu_inline.sh PATCHED_QEMU DEVICE [MODE]
#   PATCHED_QEMU  auto, or the path scripts/qemu-inline prints (run it on the host
#                 first: the guest sees the host read-only).  The stock
#                 10.2.2 is the `stock` build linked beside it
#                 (PATCHED_QEMU/../../stock), the firmware the `firmware`
#                 link's usr/share/qemu; QEMU 11.1 is scripts/qemu-peer 11.1.
#   DEVICE        rxe | siw
#   MODE          all (default) or one of:
#     dynamic     patched -> patched, dynamic registration
#     pin_all     patched -> patched, the rdma-pin-all capability
#     to_stock    patched -> stock, dynamic
#     from_stock  stock -> patched, dynamic
#     to_stock_pin_all, from_stock_pin_all
#                 the same with the rdma-pin-all capability
#     to_11, from_11, to_11_pin_all, from_11_pin_all
#                 patched <-> Debian's stock QEMU 11.1, both on the machine
#                 type pc-i440fx-10.2 (dynamic, pin-all)
#     off         patched -> patched with -global migration.x-rdma-max-inline=0
#                 on both sides: nothing may go inline
#     postfail    patched -> patched, both under an LD_PRELOAD shim whose
#                 device rejects every inline post (EINVAL at
#                 ibv_post_send, after granting inline data at QP
#                 creation): each side falls back to copying once, turns
#                 inline off for the connection, and the migration completes
#     postfail_neg  the same, the shim returning -EINVAL as cxgb4 does
#     postfail_eio  the shim returns EIO for inline posts: not an inline
#                 refusal, so no fallback, and the migration fails
#     sge0        patched -> patched, both under tests/shim/inline_sge0.c
#                 (only sg_list[0] of an inline send goes out, as irdma
#                 before rdma-core v44): one-SGE inline sends arrive whole
#     ladder      a device (an LD_PRELOAD shim) that refuses more than 20
#                 bytes of inline data: the ladder ends at 16
#     live        patched -> patched with a running guest (dirtier.S) that
#                 keeps writing memory; its downtime is reported, and the
#                 destination must carry on from the migrated state
#     ladder      patched -> patched, both under an LD_PRELOAD shim (built
#                 here with cc) whose rdma_create_qp() refuses more than 20
#                 bytes of inline data like a small device would (EINVAL,
#                 attributes scribbled): both QPs must walk down to 16 on
#                 the third try, and only header-only messages go inline
# Example: qemu=$(scripts/qemu-inline | tail -n1)
#          scripts/rdma-vm --mem 3072 -- bash tests/interop/qemu_inline.sh "$qemu" siw
#
# Every migration moves a stopped 64 MiB `-M pc` VM (TCG) whose RAM is a
# shared memory-backend-file of random, zero and patterned chunks
# (ramimage.py) into a paused destination whose RAM is a shared file too;
# the two files must be equal byte for byte.  Both QEMUs trace
# qemu_rdma_alloc_qp_inline* and qemu_rdma_post_send_control* (log
# backend, -D): the checks count inline and copied control sends per side
# and read the inline size each QP was granted.
#
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed";
# exits non-zero on any failure.  INTEROP_KEEP=DIR keeps the work directory.

# shellcheck disable=SC2317 # helpers run through check() and trap
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 PATCHED_QEMU DEVICE [all|MODE]" >&2
	exit 2
fi
PATCHED=$1
DEVICE=$2
MODE=${3:-all}
HERE=$(cd "$(dirname "$0")" && pwd)
MEM_MIB=64

# shellcheck source=tests/lib/check.sh
. "$HERE/../lib/check.sh"
# shellcheck source=tests/interop/interop_lib.sh
. "$HERE/interop_lib.sh"
device_ip "$DEVICE" interop
case $MODE in
all | dynamic | pin_all | to_stock | from_stock | to_stock_pin_all | from_stock_pin_all | \
	to_11 | from_11 | to_11_pin_all | from_11_pin_all | off | ladder | postfail | postfail_neg | \
	postfail_eio | sge0 | live) ;;
*) echo "FAIL - unknown mode '$MODE'"; exit 1 ;;
esac

# auto: the build scripts/qemu-inline left in the cache (ctest and CI: the
# host built it before the guest booted)
if [ "$PATCHED" = auto ]; then
	PATCHED=$("$HERE/../../scripts/qemu-inline" 2>/dev/null | tail -n1)
	[ -x "$PATCHED" ] || { echo "FAIL - no patched QEMU in the cache: run scripts/qemu-inline on the host first"; exit 1; }
fi
[ -x "$PATCHED" ] || { echo "FAIL - no patched QEMU at '$PATCHED': build it with scripts/qemu-inline"; exit 1; }
PATCHED=$(cd "$(dirname "$PATCHED")" && pwd)/$(basename "$PATCHED")
OUT=$(dirname "$PATCHED")/../..
STOCK=$OUT/stock/qemu-10.2.2/build/qemu-system-x86_64
[ -x "$STOCK" ] || { echo "FAIL - no stock QEMU 10.2.2 at '$STOCK' (scripts/qemu-inline links it)"; exit 1; }
[ -d "$OUT/firmware/usr/share/qemu" ] ||
	{ echo "FAIL - no firmware under '$OUT/firmware' (scripts/qemu-inline links it)"; exit 1; }
FIRMWARE=(-L "$OUT/firmware/usr/share/qemu" -L /usr/share/qemu -L /usr/share/seabios)
# the machine type both ends must have: -M pc is pc-i440fx-10.2 on 10.2.2
# and pc-i440fx-11.1 on 11.1
MACHINE=pc
QEMU11=''
case $MODE in
*_11 | *_11_pin_all | all)
	QEMU11=$("$HERE/../../scripts/qemu-peer" 11.1 2>/dev/null | tail -n1)
	[ -x "$QEMU11" ] || { echo "FAIL - no QEMU 11.1: run scripts/qemu-peer 11.1 on the host first"; exit 1; }
	;;
esac
"$PATCHED" -trace help 2>/dev/null | grep -q '^qemu_rdma_post_send_control_posted$' ||
	{ echo "FAIL - $PATCHED has no qemu_rdma_post_send_control_posted trace event: not the patched QEMU"; exit 1; }
echo "# patched: $("$PATCHED" --version | head -n1) ($PATCHED)"
echo "# stock:   $("$STOCK" --version | head -n1)"
[ -z "$QEMU11" ] || echo "# 11.1:    $("$QEMU11" --version | head -n1) ($QEMU11)"
echo "# device $DEVICE ($IP), accel tcg"

PORT=19800
[ "$DEVICE" = siw ] && PORT=19900

WORK=$(mktemp -d "${TMPDIR:-/tmp}/qemu-inline.XXXXXX") || exit 1
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "${INTEROP_KEEP:-}" ] && mkdir -p "$INTEROP_KEEP" && cp -r "$WORK" "$INTEROP_KEEP/"
	rm -rf "$WORK"
}
trap cleanup EXIT


# vm TAG BIN RAMFILE ARGS...: a paused 64 MiB VM whose RAM is RAMFILE
# (shared), QMP on $WORK/TAG.qmp, trace in $WORK/TAG.trace; sets QPID
vm() {
	local tag=$1 bin=$2 ram=$3
	shift 3
	timeout 600 env ${PRELOAD:+LD_PRELOAD=$PRELOAD} "$bin" -M "$MACHINE,memory-backend=pc.ram" -m "$MEM_MIB" -nodefaults -no-user-config \
		-display none -accel tcg "${FIRMWARE[@]}" -S \
		-object "memory-backend-file,id=pc.ram,size=${MEM_MIB}M,mem-path=$ram,share=on" \
		-qmp "unix:$WORK/$tag.qmp,server=on,wait=off" -pidfile "$WORK/$tag.pid" \
		-trace 'qemu_rdma_alloc_qp_inline*' -trace 'qemu_rdma_post_send_control*' \
		-D "$WORK/$tag.trace" "$@" </dev/null >"$WORK/$tag.log" 2>&1 &
	QPID=$!
	PIDS+=("$QPID")
	qmp "$WORK/$tag.qmp" status >/dev/null
}

# reap_within SECONDS PID...: the processes that have not exited within
# SECONDS are killed (SIGKILL)
reap_within() {
	local secs=$1 i p
	shift
	for ((i = 0; i < secs * 10; i++)); do
		for p in "$@"; do kill -0 "$p" 2>/dev/null && break; done
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$@" 2>/dev/null
}

# migrate_pair TAG SRC_BIN DST_BIN REG INLINE: REG dynamic | pin_all,
# INLINE on | off (x-rdma-max-inline 40 or 0 on both sides).  Sets MRC (the source's
# migrate), DST (the destination's incoming status; DST_WAIT: how long to
# wait for it, 0: not asked).  QUIT_WAIT: SIGKILL what has not exited so
# long after its quit.
migrate_pair() {
	local tag=$1 src=$2 dst=$3 reg=$4 inl=$5 attempt spid dpid
	local knob=(-global "migration.x-rdma-max-inline=0")
	[ "$inl" = on ] && knob=()
	ram_image "$MEM_MIB" "$WORK/$tag.src.ram" || { MRC=1 DST=none; return; }
	for attempt in 1 2; do
		rm -f "$WORK/$tag".{src,dst}.{trace,log,qmp} "$WORK/$tag.dst.ram"
		vm "$tag.dst" "$dst" "$WORK/$tag.dst.ram" "${knob[@]}" -incoming "rdma:$IP:$PORT"
		dpid=$QPID
		vm "$tag.src" "$src" "$WORK/$tag.src.ram" "${knob[@]}"
		spid=$QPID
		[ "$reg" = pin_all ] && qmp "$WORK/$tag.src.qmp" caps rdma-pin-all=on
		qmp "$WORK/$tag.src.qmp" migrate "rdma:$IP:$PORT" 300 >"$WORK/$tag.migrate.json" \
			2>"$WORK/$tag.migrate.err"
		MRC=$?
		if [ "${DST_WAIT:-120}" = 0 ]; then
			echo '{ "status": "not asked" }' >"$WORK/$tag.incoming.json"
		else
			qmp "$WORK/$tag.dst.qmp" incoming "${DST_WAIT:-120}" >"$WORK/$tag.incoming.json" 2>&1
		fi
		DST=$(json_str "$WORK/$tag.incoming.json" status)
		quit_vm "$WORK/$tag.src"
		quit_vm "$WORK/$tag.dst"
		[ -n "${QUIT_WAIT:-}" ] && reap_within "$QUIT_WAIT" "$spid" "$dpid"
		wait "$spid" "$dpid" 2>/dev/null
		PORT=$((PORT + 1))
		# the iWARP race of docs/design.md (connect error on siw without
		# peer-to-peer mode) is not what this test is about: once more
		if [ "$attempt" = 1 ] && [ "$MRC" != 0 ] &&
			grep -qi 'connect' "$WORK/$tag.migrate.json" "$WORK/$tag.migrate.err" "$WORK/$tag.src.log"; then
			echo "# $tag: the source could not connect ($(json_str "$WORK/$tag.migrate.json" error-desc)): once more"
			continue
		fi
		break
	done
}

count() { grep -c "$2" "$WORK/$1.trace" 2>/dev/null; } # TAG.SIDE PATTERN
# by_type TAG.SIDE inline|copied: "READY 5, REGISTER RESULT 30" from the trace
by_type() {
	local flag=0
	[ "$2" = inline ] && flag=1
	sed -n "s/.*qemu_rdma_post_send_control_posted CONTROL: \(.*\), [0-9]* bytes, inline $flag\$/\1/p" \
		"$WORK/$1.trace" | sort | uniq -c | awk '{ n = $1; $1 = ""; printf "%s%s %d", sep, substr($0, 2), n; sep = ", " }'
}
# granted TAG.SIDE: the inline size the QP was granted (the last QP's)
granted() {
	sed -n 's/.*qemu_rdma_alloc_qp_inline inline data asked \([0-9]*\) written back \([0-9]*\) granted \([0-9]*\) send SGEs [0-9]* tries \([0-9]*\)$/\3/p' \
		"$WORK/$1.trace" | tail -n1
}
alloc_line() {
	grep -h 'qemu_rdma_alloc_qp_inline' "$WORK/$1.trace" 2>/dev/null | sed 's/^.*qemu_rdma_alloc_qp_inline/qemu_rdma_alloc_qp_inline/' |
		tr '\n' ';' | sed 's/;$//; s/;/; /g'
}

show_failure() {
	local tag=$1 f
	for f in "$WORK/$tag.migrate.json" "$WORK/$tag.migrate.err" "$WORK/$tag.incoming.json" \
		"$WORK/$tag.src.log" "$WORK/$tag.dst.log"; do
		[ -s "$f" ] || continue
		echo "# --- ${f##*/}"
		tail -n 10 "$f" | sed 's/^/#   /'
	done
}

# check_side TAG SIDE KIND INLINE: KIND patched | stock
check_side() {
	local tag=$1 side=$2 kind=$3 inl=$4 t=$1.$2 n_in n_cp g
	n_in=$(count "$t" 'qemu_rdma_post_send_control_posted .*, inline 1$')
	n_cp=$(count "$t" 'qemu_rdma_post_send_control_posted .*, inline 0$')
	echo "# $tag $side ($kind, x-rdma-max-inline $([ "$inl" = on ] && echo 40 || echo 0)): inline $n_in [$(by_type "$t" inline)], copied $n_cp [$(by_type "$t" copied)]"
	if [ "$kind" != patched ]; then
		check "$tag: the stock $side sent control messages ($(count "$t" 'qemu_rdma_post_send_control ')), none inline" \
			test "$(count "$t" 'qemu_rdma_post_send_control ')" -gt 0 -a "$n_in" = 0
		return
	fi
	echo "# $tag $side: $(alloc_line "$t")"
	g=$(granted "$t")
	if [ "$inl" = on ]; then
		check "$tag: the patched $side's QP was granted inline data (${g:-none} bytes)" test "${g:-0}" -ge 16
		check "$tag: the patched $side sent control messages inline ($n_in inline, $n_cp copied)" \
			test "$n_in" -gt 0
		if [ "$side" = dst ]; then
			check "$tag: every READY of the $side went inline" \
				test "$(count "$t" 'CONTROL: READY, 16 bytes, inline 0')" = 0
		fi
	else
		check "$tag: x-rdma-max-inline=0: the $side's QP has no inline data (asked 0, granted ${g:-none})" \
			grep -q 'inline data asked 0 written back [0-9]* granted 0 send SGEs [0-9]* tries 1$' "$WORK/$t.trace"
		check "$tag: x-rdma-max-inline=0: nothing sent inline by the $side ($n_in inline, $n_cp copied)" \
			test "$n_in" = 0 -a "$n_cp" -gt 0
	fi
}

# run TAG SRC_KIND DST_KIND REG INLINE
run() {
	local tag=$1 sk=$2 dk=$3 reg=$4 inl=$5 sb=$PATCHED db=$PATCHED st
	[ "$sk" = stock ] && sb=$STOCK
	[ "$dk" = stock ] && db=$STOCK
	[ "$sk" = stock11 ] && sb=$QEMU11
	[ "$dk" = stock11 ] && db=$QEMU11
	migrate_pair "$tag" "$sb" "$db" "$reg" "$inl"
	st=$(json_str "$WORK/$tag.migrate.json" status)
	check "$tag: $sk -> $dk ($reg, x-rdma-max-inline $([ "$inl" = on ] && echo 40 || echo 0)) ${st:-did not complete}: total-time $(json_num "$WORK/$tag.migrate.json" total-time) ms, downtime $(json_num "$WORK/$tag.migrate.json" downtime) ms, wall $(json_num "$WORK/$tag.migrate.json" wall_seconds) s" \
		test "$MRC" = 0 -a "$st" = completed
	check "$tag: the destination's incoming migration ${DST:-(no status)}" test "$DST" = completed
	if [ "$MRC" != 0 ] || [ "$DST" != completed ]; then
		show_failure "$tag"
		return
	fi
	check "$tag: the destination's RAM file equals the source's byte for byte" \
		cmp -s "$WORK/$tag.src.ram" "$WORK/$tag.dst.ram"
	check_side "$tag" src "$sk" "$inl"
	check_side "$tag" dst "$dk" "$inl"
	if [ "$sk" = patched ] && [ "$inl" = on ] && [ "$reg" = dynamic ] && [ "$(granted "$tag.src")" -ge 40 ] 2>/dev/null; then
		check "$tag: REGISTER REQUEST and COMPRESS (40 bytes) went inline from the source" \
			test "$(count "$tag.src" 'REGISTER REQUEST, 40 bytes, inline 1')" -gt 0 \
			-a "$(count "$tag.src" 'COMPRESS, 40 bytes, inline 1')" -gt 0 \
			-a "$(count "$tag.src" ', 40 bytes, inline 0')" = 0
	fi
	if [ "$dk" = patched ] && [ "$inl" = on ] && [ "$reg" = dynamic ] && [ "$(granted "$tag.dst")" -ge 32 ] 2>/dev/null; then
		check "$tag: REGISTER RESULT (32 bytes) went inline from the destination" \
			test "$(count "$tag.dst" 'REGISTER RESULT, 32 bytes, inline 1')" -gt 0 \
			-a "$(count "$tag.dst" 'REGISTER RESULT, 32 bytes, inline 0')" = 0
	fi
	rm -f "$WORK/$tag".*.ram
}

# A device that refuses more than 20 bytes of inline data, as rdma_create_qp()
# does on one: EINVAL, with the attributes written back anyway.
build_shim() {
	cat >"$WORK/shim.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <rdma/rdma_cma.h>

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	static int (*real)(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *);

	if (attr->cap.max_inline_data > 20) {
		attr->cap.max_inline_data = 7;
		attr->cap.max_send_wr = 1;
		errno = EINVAL;
		return -1;
	}
	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *))
			dlsym(RTLD_NEXT, "rdma_create_qp");
	return real(id, pd, attr);
}
SHIM
	cc -shared -fPIC -o "$WORK/shim.so" "$WORK/shim.c" -ldl 2>&1 | sed 's/^/# /'
	[ -f "$WORK/shim.so" ]
}

# shimmed_pair TAG SHIM WHAT: patched -> patched, dynamic, both sides under
# the LD_PRELOAD shim SHIM; checks that it completed (WHAT says how) and
# that the RAM arrived byte for byte; non-zero if it did not complete
shimmed_pair() {
	local tag=$1
	PRELOAD=$2 migrate_pair "$tag" "$PATCHED" "$PATCHED" dynamic on
	check "$tag: patched -> patched, $3, completed ($(json_str "$WORK/$tag.migrate.json" status), total-time $(json_num "$WORK/$tag.migrate.json" total-time) ms)" \
		test "$MRC" = 0 -a "$DST" = completed
	if [ "$MRC" != 0 ] || [ "$DST" != completed ]; then
		show_failure "$tag"
		return 1
	fi
	check "$tag: the destination's RAM file equals the source's byte for byte" \
		cmp -s "$WORK/$tag.src.ram" "$WORK/$tag.dst.ram"
}

mode_ladder() {
	local tag=ladder-$DEVICE side
	check "the refusing rdma_create_qp shim builds (cc)" build_shim || return
	shimmed_pair "$tag" "$WORK/shim.so" "under the shim" || return
	for side in src dst; do
		echo "# $tag $side: $(alloc_line "$tag.$side"); inline [$(by_type "$tag.$side" inline)], copied [$(by_type "$tag.$side" copied)]"
		check "$tag: the $side's QP was refused 40 and 32, then granted 16 on the third try" \
			test "$(grep -c 'qemu_rdma_alloc_qp_inline_refused creating the QP with \(40\|32\) bytes of inline data failed: errno 22$' "$WORK/$tag.$side.trace")" = 2 \
			-a -n "$(grep 'qemu_rdma_alloc_qp_inline inline data asked 16 written back [0-9]* granted 16 send SGEs [0-9]* tries 3$' "$WORK/$tag.$side.trace")"
		check "$tag: the $side sent only 16-byte messages inline" \
			test "$(count "$tag.$side" 'qemu_rdma_post_send_control_posted .*, inline 1$')" = \
			"$(count "$tag.$side" ', 16 bytes, inline 1$')"
	done
	check "$tag: header-only messages went inline (READY from the destination: $(count "$tag.dst" 'READY, 16 bytes, inline 1'), REGISTER FINISHED from the source: $(count "$tag.src" 'REGISTER FINISHED, 16 bytes, inline 1'))" \
		test "$(count "$tag.dst" 'READY, 16 bytes, inline 1')" -gt 0 -a "$(count "$tag.src" 'REGISTER FINISHED, 16 bytes, inline 1')" -gt 0
	check "$tag: REGISTER REQUEST (40 bytes) and REGISTER RESULT (32) were copied" \
		test "$(count "$tag.src" 'REGISTER REQUEST, 40 bytes, inline 0')" -gt 0 -a "$(count "$tag.dst" 'REGISTER RESULT, 32 bytes, inline 0')" -gt 0
	rm -f "$WORK/$tag".*.ram
}


# A device that grants inline data at QP creation but rejects every
# inline send when it is posted (EINVAL), as a provider may check only at
# post time: the shim replaces the context's post_send once a QP exists.
build_postfail_shim() {
	cat >"$WORK/postfail.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <rdma/rdma_cma.h>

#include <stdlib.h>

static int (*real_post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);

/* what post_send returns for an inline WR: POSTFAIL_RET (cxgb4 returns
 * -EINVAL), EINVAL by default */
static int refusal(void)
{
	const char *r = getenv("POSTFAIL_RET");

	return r && *r ? atoi(r) : EINVAL;
}

static int refuse_inline(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct ibv_send_wr *w;

	for (w = wr; w; w = w->next) {
		if (w->send_flags & IBV_SEND_INLINE) {
			*bad = w;
			return refusal();
		}
	}
	return real_post_send(qp, wr, bad);
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	static int (*real)(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *);
	int ret;

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *))
			dlsym(RTLD_NEXT, "rdma_create_qp");
	ret = real(id, pd, attr);
	if (ret == 0 && id->qp->context->ops.post_send != refuse_inline) {
		real_post_send = id->qp->context->ops.post_send;
		id->qp->context->ops.post_send = refuse_inline;
	}
	return ret;
}
SHIM
	cc -shared -fPIC -o "$WORK/postfail.so" "$WORK/postfail.c" -ldl 2>&1 | sed 's/^/# /'
	[ -f "$WORK/postfail.so" ]
}

# mode_postfail [RET]: the shim's post_send returns RET (default EINVAL;
# -22 is cxgb4's -EINVAL) for every inline WR: a "not inline" error, so
# each side warns once, copies that message and every later one
mode_postfail() {
	local ret=${1:-22} tag=postfail-$DEVICE side n_in n_fail
	[ "$ret" = 22 ] || tag=postfail$ret-$DEVICE
	check "the shim that rejects inline posts builds (cc)" build_postfail_shim || return
	POSTFAIL_RET=$ret shimmed_pair "$tag" "$WORK/postfail.so" "every inline post rejected ($ret)" || return
	for side in src dst; do
		check "$tag: the $side warned once that the device refused an inline send" \
			test "$(grep -c 'refused to send a control message inline' "$WORK/$tag.$side.log")" = 1
		n_in=$(count "$tag.$side" 'qemu_rdma_post_send_control_posted .*, inline 1$')
		echo "# $tag $side: $(alloc_line "$tag.$side"); inline $n_in, copied [$(by_type "$tag.$side" copied)]"
		check "$tag: the $side's QP was granted inline data ($(granted "$tag.$side") bytes)" \
			test "$(granted "$tag.$side")" -ge 16
		check "$tag: the $side sent nothing inline after the refused post (inline $n_in)" \
			test "$n_in" = 0
		check "$tag: the $side copied its control messages after the fallback" \
			test "$(count "$tag.$side" 'qemu_rdma_post_send_control_posted .*, inline 0$')" -gt 0
	done
	rm -f "$WORK/$tag".*.ram
}

# postfail_eio: the shim's post_send returns EIO for inline WRs, an error
# that is not about inline: no fallback, the migration fails
mode_postfail_eio() {
	local tag=postfail-eio-$DEVICE
	check "the shim that rejects inline posts builds (cc)" build_postfail_shim || return
	# the source failed at its first control message: the destination,
	# its main loop held in QEMU's RDMA accept, answers no QMP until it
	# gives up on its own (a minute), so it is not asked (it cannot have
	# completed) and is killed if its quit does not end it
	QUIT_WAIT=5 DST_WAIT=0 POSTFAIL_RET=5 PRELOAD=$WORK/postfail.so migrate_pair "$tag" "$PATCHED" "$PATCHED" dynamic on
	check "$tag: an inline post failing with EIO fails the migration ($(json_str "$WORK/$tag.migrate.json" status), destination ${DST:-none})" \
		test "$(json_str "$WORK/$tag.migrate.json" status)" = failed -a "$DST" != completed
	check "$tag: a side reported the failed post as EIO ($(json_str "$WORK/$tag.migrate.json" error-desc))" \
		grep -qs 'post IB SEND for control: Input/output error' \
		"$WORK/$tag.migrate.json" "$WORK/$tag.src.log" "$WORK/$tag.dst.log"
	check "$tag: nothing was traced as posted inline (the refused post is not a send)" \
		test "$(cat "$WORK/$tag.src.trace" "$WORK/$tag.dst.trace" | grep -c 'qemu_rdma_post_send_control_posted .*, inline 1$')" = 0
	check "$tag: no side fell back to copying (no warning)" \
		test "$(cat "$WORK/$tag.src.log" "$WORK/$tag.dst.log" | grep -c 'refused to send a control message inline')" = 0
	rm -f "$WORK/$tag".*.ram
}

# sge0: both sides under tests/shim/inline_sge0.c, which sends only
# sg_list[0] of an inline send, as irdma before rdma-core v44: the series
# posts one SGE, so every byte arrives and inline sends go on
mode_sge0() {
	local tag=sge0-$DEVICE side
	check "the inline_sge0 shim builds (cc)" \
		cc -shared -fPIC -o "$WORK/sge0.so" "$HERE/../shim/inline_sge0.c" -ldl -lpthread
	INLINE_SGE0_REPORT=$WORK/sge0.report shimmed_pair "$tag" "$WORK/sge0.so" "only sg_list[0] of inline sends" || return
	echo "# $tag shim: $(tr '\n' ' ' <"$WORK/sge0.report")"
	check "$tag: the shim saw inline sends in both QEMUs and cut none" \
		test "$(grep -c '^inline_sends=[1-9][0-9]* cut=0$' "$WORK/sge0.report")" = 2
	check "$tag: REGISTER REQUEST (40 bytes) went inline ($(count "$tag.src" 'REGISTER REQUEST, 40 bytes, inline 1'))" \
		test "$(count "$tag.src" 'REGISTER REQUEST, 40 bytes, inline 1')" -gt 0
	check "$tag: REGISTER RESULT (32 bytes) went inline ($(count "$tag.dst" 'REGISTER RESULT, 32 bytes, inline 1'))" \
		test "$(count "$tag.dst" 'REGISTER RESULT, 32 bytes, inline 1')" -gt 0
	rm -f "$WORK/$tag".*.ram
}

# hot_word FILE: the dirtier's hot word (7 MiB into RAM), as a number
hot_word() { od -An -tu4 -j $((7 << 20)) -N4 "$1" | tr -d ' '; }

# live: the running dirtier guest, patched -> patched, dynamic registration
mode_live() {
	local tag=live-$DEVICE i st before after spid dpid
	check "the dirtier guest builds (as --32, ld -m elf_i386)" \
		eval 'as --32 -o "$WORK/dirtier.o" "$HERE/dirtier.S" &&
			ld -m elf_i386 -Ttext=0x100000 -e start -o "$WORK/dirtier.elf" "$WORK/dirtier.o"' || return
	ram_image "$MEM_MIB" "$WORK/$tag.src.ram" 8 56 || return
	# the same machine on both sides: the serial port too
	vm "$tag.dst" "$PATCHED" "$WORK/$tag.dst.ram" -kernel "$WORK/dirtier.elf" \
		-serial "file:$WORK/$tag.dst.serial" -incoming "rdma:$IP:$PORT"
	dpid=$QPID
	vm "$tag.src" "$PATCHED" "$WORK/$tag.src.ram" -kernel "$WORK/dirtier.elf" -serial "file:$WORK/$tag.serial"
	spid=$QPID
	qmp "$WORK/$tag.src.qmp" cont >/dev/null
	for ((i = 0; i < 600; i++)); do
		grep -q 'DIRTIER up' "$WORK/$tag.serial" 2>/dev/null && break
		sleep 0.1
	done
	sleep 2
	qmp "$WORK/$tag.src.qmp" migrate "rdma:$IP:$PORT" 300 >"$WORK/$tag.migrate.json" 2>"$WORK/$tag.migrate.err"
	MRC=$?
	qmp "$WORK/$tag.dst.qmp" incoming 120 >"$WORK/$tag.incoming.json" 2>&1
	DST=$(json_str "$WORK/$tag.incoming.json" status)
	PORT=$((PORT + 1))
	st=$(json_str "$WORK/$tag.migrate.json" status)
	check "$tag: the running guest migrated ${st:-did not complete}: total-time $(json_num "$WORK/$tag.migrate.json" total-time) ms, downtime $(json_num "$WORK/$tag.migrate.json" downtime) ms, $(json_num "$WORK/$tag.migrate.json" dirty-sync-count) dirty syncs" \
		test "$MRC" = 0 -a "$st" = completed -a "$DST" = completed
	if [ "$MRC" = 0 ] && [ "$DST" = completed ]; then
		check "$tag: QEMU reports a downtime ($(json_num "$WORK/$tag.migrate.json" downtime) ms)" \
			test -n "$(json_num "$WORK/$tag.migrate.json" downtime)"
		check "$tag: the destination's RAM equals the stopped source's byte for byte" \
			cmp -s "$WORK/$tag.src.ram" "$WORK/$tag.dst.ram"
		before=$(hot_word "$WORK/$tag.dst.ram")
		qmp "$WORK/$tag.dst.qmp" cont >/dev/null
		sleep 2
		after=$(hot_word "$WORK/$tag.dst.ram")
		check "$tag: the guest carries on at the destination (hot word $before -> $after, $(qmp "$WORK/$tag.dst.qmp" status))" \
			test "$after" -gt "$before"
		check_side "$tag" src patched on
		check_side "$tag" dst patched on
	else
		show_failure "$tag"
	fi
	quit_vm "$WORK/$tag.src"
	quit_vm "$WORK/$tag.dst"
	wait "$spid" "$dpid" 2>/dev/null
	rm -f "$WORK/$tag".*.ram
}

want() { [ "$MODE" = all ] || [ "$MODE" = "$1" ]; }
want dynamic && run "p2p-$DEVICE" patched patched dynamic on
want pin_all && run "p2p-pin-all-$DEVICE" patched patched pin_all on
want to_stock && run "p2stock-$DEVICE" patched stock dynamic on
want from_stock && run "stock2p-$DEVICE" stock patched dynamic on
want to_stock_pin_all && run "p2stock-pin-all-$DEVICE" patched stock pin_all on
want from_stock_pin_all && run "stock2p-pin-all-$DEVICE" stock patched pin_all on
want off && run "off-$DEVICE" patched patched dynamic off
# QEMU 11.1 knows the machine types of 10.2: the one both ends have
want to_11 && MACHINE=pc-i440fx-10.2 run "p2qemu11-$DEVICE" patched stock11 dynamic on
want from_11 && MACHINE=pc-i440fx-10.2 run "qemu11p-$DEVICE" stock11 patched dynamic on
want to_11_pin_all && MACHINE=pc-i440fx-10.2 run "p2qemu11-pin-all-$DEVICE" patched stock11 pin_all on
want from_11_pin_all && MACHINE=pc-i440fx-10.2 run "qemu11p-pin-all-$DEVICE" stock11 patched pin_all on
want postfail && mode_postfail
want postfail_neg && mode_postfail -22
want postfail_eio && mode_postfail_eio
want sge0 && mode_sge0
want ladder && mode_ladder
want live && mode_live
finish
