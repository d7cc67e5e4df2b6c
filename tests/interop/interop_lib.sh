# shellcheck shell=bash
# interop_lib.sh - what both interop scripts (qemu_to_rdmig.sh,
# qemu_inline.sh) need to talk to QEMU and to make its RAM; sourced.
#
# Both start programs many times per case, and in the emulated test guest a
# Python interpreter takes 1.5-3 s to start: so QMP goes through a small C
# client (qmp_client.c, built with the tests; ctest passes its path in
# RDMIG_QMP_CLIENT), and the reproducible RAM image is made once per boot
# and copied.

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
QMP_CLIENT=${RDMIG_QMP_CLIENT:-}
[ -x "$QMP_CLIENT" ] || { echo "FAIL - no QMP client ('$QMP_CLIENT'): run through ctest, or set RDMIG_QMP_CLIENT to build/tests/qmp_client"; exit 1; }
"$PY" -c 'import random' 2>/dev/null || { echo "FAIL - python3 is missing"; exit 1; }

json_num() { grep -o "\"$2\": [0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: //'; }
json_str() { grep -o "\"$2\": \"[^\"]*\"" "$1" 2>/dev/null | head -n1 | sed 's/.*: "//; s/"$//'; }
qmp() { timeout 120 "$QMP_CLIENT" "$@"; }

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
		"$PY" "$HERE/ramimage.py" "$mib" "$tmp" "${@:3}" && mv -f "$tmp" "$cache" ||
			{ rm -f "$tmp"; return 1; }
	fi
	cp "$cache" "$out"
}
