#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/docs/test_man_coverage.sh - every exported function has a man page
#
#   test_man_coverage.sh MANDIR LIBRARY.so...
#
# Takes the functions each shared library exports (objdump -T, the dynamic
# symbol table: what a program can link to) and the names that reach a
# page: a page's own name (man/NAME.3.scd) and every name of its NAME line
# (installed as a link to it, CMakeLists.txt).  An exported function that
# reaches none fails.  The private node RDMIG_PRIVATE_* is not the API
# (include/rdmig/private.h, docs/packaging.md) and needs no page.  Needs
# neither scdoc nor a device.
set -uo pipefail
. "$(dirname "$0")/../lib/check.sh"

[ $# -ge 2 ] || { echo "usage: $0 MANDIR LIBRARY.so..." >&2; exit 2; }
mandir=$1
shift

# The names of the pages and of their NAME lines ("a, b, c - what").
pages=$(for f in "$mandir"/*.scd; do
	b=${f##*/}
	echo "${b%.[0-9].scd}"
	sed -n '/^# NAME/,/^# /{/^[a-z_0-9, ]* - /{s/ - .*//;s/, /\n/g;p}}' "$f"
done | sort -u)

for lib; do
	# objdump -T: ADDR FLAGS DF .text SIZE VERSION NAME
	exports=$(objdump -T "$lib" | awk '$3 == "DF" && $4 == ".text" && $(NF-1) !~ /^RDMIG_PRIVATE_/ {print $NF}' | sort -u)
	n=$(wc -w <<<"$exports")
	[ "$n" -gt 0 ] || { fail "${lib##*/}: no exported function found"; continue; }
	missing=$(comm -23 <(echo "$exports") <(echo "$pages"))
	if [ -z "$missing" ]; then
		ok "${lib##*/}: all $n exported functions have a man page"
	else
		fail "${lib##*/}: $(wc -w <<<"$missing") of $n exported functions have no man page:" $missing
	fi
done
finish
