#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_man_options.sh RDMIG MAN - every long option a command's --help shows
# is in that command's section of the man page (MAN: man/rdmig.1.scd), and
# every option the section lists is in the --help.  The man page lists a
# command's options as the terms of its section ("*-x*, *--xyz* _ARG_"
# lines); the help's options are every --word in it, outside '...' quotes
# (which cite other commands).  Prints "N passed, N failed"; exits
# non-zero on a failure.
set -u
RDMIG=${1:?usage: test_man_options.sh RDMIG MAN}
MAN=${2:?usage: test_man_options.sh RDMIG MAN}
PASSED=0
FAILED=0

# man_options HEADING: the long options on the term lines of the section
# whose "## " heading starts with HEADING
man_options() {
	awk -v h="## $1" '
		/^#/ { on = index($0, h) == 1 && (length($0) == length(h) ||
		       substr($0, length(h) + 1, 1) == " ") ; next }
		on && /^\*-/ { print }' "$MAN" |
		grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# help_options ARGS...: the long options in `rdmig ARGS --help`
help_options() {
	"$RDMIG" "$@" --help | sed "s/'[^']*'//g" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# check NAME HEADING ARGS...
check() {
	local name=$1 heading=$2 man help
	shift 2
	man=$(man_options "$heading")
	help=$(help_options "$@")
	if [ -z "$man" ] || [ -z "$help" ]; then
		FAILED=$((FAILED + 1))
		echo "FAILED: $name: no options found (man: '$heading', help: rdmig $* --help)"
		return
	fi
	if [ "$man" = "$help" ]; then
		PASSED=$((PASSED + 1))
		echo "ok: $name: $(echo $help | wc -w) options in --help and the man page"
	else
		FAILED=$((FAILED + 1))
		echo "FAILED: $name: --help and the man page differ (< help only, > man only):"
		diff <(echo "$help") <(echo "$man") | grep '^[<>]' | sed 's/^/  /'
	fi
}

check send "rdmig send --to" send
check recv "rdmig recv --listen" recv
check "recv --qemu" "rdmig recv --qemu" recv --qemu
check "recv --serve" "rdmig recv --serve" recv --serve
check "send --qemu-replay" "rdmig send --qemu-replay" send --qemu-replay DIR
check probe "rdmig probe" probe
check ping "rdmig ping" ping
check pong "rdmig pong" pong
check status "rdmig status" status

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
