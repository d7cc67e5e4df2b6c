# shellcheck shell=bash
# interop_lib.sh - what the interop scripts (qemu_to_rdmig.sh,
# qemu_inline.sh) and the QEMU cases of scripts/faults need to talk to QEMU,
# to make its RAM and to check what a destination received; sourced.
#
# Both start programs many times per case, and in the emulated test guest a
# Python interpreter takes 1.5-3 s to start: so QMP goes through a small C
# client (qmp_client.c, built with the tests; ctest passes its path in
# RDMIG_QMP_CLIENT), and the reproducible RAM image is made once per boot
# and copied.

INTEROP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
QMP_CLIENT=${RDMIG_QMP_CLIENT:-}
[ -x "$QMP_CLIENT" ] || { echo "FAIL - no QMP client ('$QMP_CLIENT'): run through ctest, or set RDMIG_QMP_CLIENT to build/tests/qmp_client"; exit 1; }
"$PY" -c 'import random' 2>/dev/null || { echo "FAIL - python3 is missing"; exit 1; }

json_num() { grep -o "\"$2\": [0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: //'; }
json_str() { grep -o "\"$2\": \"[^\"]*\"" "$1" 2>/dev/null | head -n1 | sed 's/.*: "//; s/"$//'; }
# (QMP_WAIT: seconds before a client that gets no answer is stopped)
qmp() { timeout "${QMP_WAIT:-120}" "$QMP_CLIENT" "$@"; }

# quit_vm PREFIX: ask the QEMU of PREFIX.qmp (its pid in PREFIX.pid, from
# -pidfile) to quit, if it still runs.  The client waits a minute for the
# socket of a QEMU that has exited: a failed migration ends a destination
# QEMU, and that minute was most of a refusal case's time.
quit_vm() {
	kill -0 "$(cat "$1.pid" 2>/dev/null)" 2>/dev/null || return 0
	qmp "$1.qmp" quit >/dev/null 2>&1
}

# ram_image MIB OUT [ZERO_FROM ZERO_TO]: ramimage.py's bytes in OUT, a copy
# of its output cached for the boot (QEMU writes into OUT: never share it).
ram_image() {
	local mib=$1 out=$2 cache tmp
	cache=${TMPDIR:-/tmp}/rdmig-ramimage-$mib-${3:-0}-${4:-0}.ram
	if [ ! -s "$cache" ]; then
		tmp=$(mktemp "$cache.XXXXXX") || return 1
		"$PY" "$INTEROP_DIR/ramimage.py" "$mib" "$tmp" "${@:3}" && mv -f "$tmp" "$cache" ||
			{ rm -f "$tmp"; return 1; }
	fi
	cp "$cache" "$out"
}

# ------------------------------------------------- QEMU and its RAM --

# (the caller sets QEMU, QEMU_VERSION, MEM_MIB, WORK and an array PIDS)

# qemu_vm TAG ARGS...: a QEMU with MEM_MIB MiB of pc.ram, QMP on $WORK/TAG.qmp,
# its own pid in $WORK/TAG.pid; sets QPID (of the `timeout` around it).
# The caller chooses the memory backend and the rest.
qemu_vm() {
	local tag=$1
	shift
	local trace=()
	# the inline series' QEMU says which path each control message took
	[ "$QEMU_VERSION" = inline ] && trace=(-trace 'qemu_rdma_alloc_qp_inline*'
		-trace 'qemu_rdma_post_send_control_*' -D "$WORK/$tag.trace")
	timeout 600 "$QEMU" -M pc,memory-backend=pc.ram -m "$MEM_MIB" -nodefaults -no-user-config \
		-display none -accel tcg -qmp "unix:$WORK/$tag.qmp,server=on,wait=off" \
		-pidfile "$WORK/$tag.pid" "${trace[@]}" "$@" \
		</dev/null >"$WORK/$tag.qemu.log" 2>&1 &
	QPID=$!
	PIDS+=("$QPID")
	qmp "$WORK/$tag.qmp" status >/dev/null
}

# source TAG [ARGS...]: a source whose RAM is the shared file $WORK/TAG.ram
source_vm() {
	local tag=$1
	shift
	qemu_vm "$tag" -object "memory-backend-file,id=pc.ram,size=${MEM_MIB}M,mem-path=$WORK/$tag.ram,share=on" "$@"
}

# -------------------------------------------- what a destination got --

safe_name() { printf '%s' "$1" | sed 's/[^A-Za-z0-9._-]/_/g'; }

# blocks_match TAG: every RAM block of the source (its `info ramblock`) has
# an image of its used length.
blocks_match() {
	local tag=$1 name used size n=0 bad=0
	# (no process substitution: the guest has no /dev/fd)
	# NAME PSIZE UNIT 0xOFFSET 0xUSED 0xTOTAL, and in 10.0 also 0xHVA RO
	awk 'NF >= 6 && $1 != "Block" { print $1, $5 }' "$WORK/$tag.ramblocks" >"$WORK/$tag.used"
	while read -r name used; do
		size=$(stat -c %s "$WORK/$tag.out/$(safe_name "$name").img" 2>/dev/null || echo -1)
		n=$((n + 1))
		if [ "$size" != "$((used))" ]; then
			echo "# block '$name': image has $size bytes, the source $((used))"
			bad=1
		fi
	done <"$WORK/$tag.used"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ]
}

# bios_dirs: where the peer looks for firmware, first first: the -L
# directories its wrapper passes (10.0.2, 11.1 and inline are wrappers;
# 11.1 brings its own SeaBIOS), then QEMU's usual places
bios_dirs() {
	[ "$(head -c 2 "$QEMU")" = '#!' ] && grep -o -- '-L [^ ]*' "$QEMU" | sed 's/^-L //'
	echo /usr/share/seabios
	echo /usr/share/qemu
}

bios_matches() { # TAG: pc.bios is the BIOS file QEMU loaded
	local bios d
	# (a word list, not a loop over <(...): the guest has no /dev/fd)
	for d in $(bios_dirs); do
		[ -f "$d/bios-256k.bin" ] && { bios=$d/bios-256k.bin; break; }
	done
	[ -n "${bios:-}" ] || { echo "# no bios-256k.bin in $(bios_dirs | tr '\n' ' ')"; return 1; }
	cmp "$bios" "$WORK/$1.out/pc.bios.img" | sed 's/^/# /'
	cmp -s "$bios" "$WORK/$1.out/pc.bios.img"
}

stream_ok() { # TAG: stream.bin holds the stream: QEVM, stream_bytes long
	local f=$WORK/$1.out/stream.bin
	[ "$(head -c 4 "$f")" = QEVM ] && [ "$(stat -c %s "$f")" = "$(json_num "$WORK/$1.json" stream_bytes)" ]
}
