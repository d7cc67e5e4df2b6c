#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/guest_lib.sh - shell helpers of the benchmarks that run inside the
# test guest (run-in-guest.sh, ab_tool.sh); sourced, not run.

# dev_ip rxe|siw: the guest's address of that device (scripts/rdma-vm)
dev_ip() { eval echo "\$RDMAVM_${1^^}_IP"; }

# wait_listening FILE PID: until a server wrote its "listening" line
wait_listening() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q 'listening on' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# json_num FILE KEY: the first number under "KEY"
json_num() { grep -o "\"$2\": *[0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: *//'; }
