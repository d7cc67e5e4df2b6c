#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# guest-suite.sh - the device and interop tests, run inside ONE boot of the
# test guest (scripts/test starts it: scripts/rdma-vm -- bash THIS ...).
#
#   tests/vm/guest-suite.sh BUILD_DIR JOBS [RELEASE_DIR]
#
# One ctest run of the labels device and interop, JOBS at a time; then,
# with RELEASE_DIR, the build users run (release, no sanitizer) moves
# bytes on both devices: migrate.large at its full size (the sanitizer
# build cuts it to a quarter, and has it as "extended"), the image-set
# example, and the systemd unit's sandbox against what rdmig does
# (tests/device/test_unit_syscalls.sh, under strace).  A
# case's processes wait on each other (a device case's two ends, an interop
# case's nested QEMUs while rdmig works), so two cases side by side keep
# the guest's two vCPUs busier: measured on an idle 2-core host
# (2026-12-02), 731 s against 1087 s one at a time for the device cases,
# 562 s against 835 s for the interop ones.  One run, not one a label: the
# last long case of one label no longer runs beside an idle lane.
# tests/CMakeLists.txt keeps the kill trials alone (RUN_SERIAL), cases that
# share ports apart (RESOURCE_LOCK), and starts the long ones first (COST).
# The guest runs the host's root with the host's environment (scripts/rdma-vm),
# PATH included; a PATH through wrappers costs minutes there: pyenv's
# python3 shim is a bash script that runs several more before python, 4 to
# 12 s a start in the emulated guest against under 2 s for /usr/bin/python3,
# and the device and interop scripts start python3 about a hundred times.
# So the run gets the system's PATH.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 BUILD_DIR JOBS [RELEASE_DIR]" >&2
	exit 2
fi
ctest --test-dir "$1" -L '^(device|interop)$' -j "$2" --output-on-failure
rc=$?
[ $# = 3 ] || exit $rc
echo "# the release build ($3): a subset on the devices"
ctest --test-dir "$3" -R '^(migrate\.large_(rxe|siw)|examples\.copy_images_rxe|sandbox\.syscalls_(rxe|siw))$' \
	-j "$2" --output-on-failure ||
	rc=1
exit $rc
