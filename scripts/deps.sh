# SPDX-License-Identifier: BSD-2-Clause
# deps.sh - sourced by scripts/test and scripts/demo: install the host
# packages rdmig builds with, when they are missing (needs root on a fresh
# Debian 12).  The guest's own packages are installed by scripts/rdma-vm.

RDMIG_BUILD_PKGS="gcc make cmake pkg-config libibverbs-dev librdmacm-dev libjson-c-dev libxxhash-dev libssl-dev clang valgrind strace
	scdoc"

rdmig_install_deps() {
	local missing=() p
	for p in $RDMIG_BUILD_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
		return 1
	fi
	echo "installing: ${missing[*]}" >&2
	apt-get update -qq >/dev/null 2>&1 || echo "apt-get update failed; trying anyway" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
		>/tmp/rdmig-apt.log 2>&1 || { tail -n 20 /tmp/rdmig-apt.log >&2; return 1; }
}

# rdmig_build DIR [cmake options...]: configure once, then build.
rdmig_build() {
	local dir=$1
	shift
	cmake -S "$RDMIG_ROOT" -B "$RDMIG_ROOT/$dir" -DRDMIG_WERROR=ON "$@" >/dev/null &&
		cmake --build "$RDMIG_ROOT/$dir" -j"$(nproc)" -- --no-print-directory >/dev/null
}
