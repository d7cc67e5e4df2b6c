# SPDX-License-Identifier: BSD-2-Clause
# deps.sh - sourced by scripts/test and scripts/demo: install the host
# packages rdmig builds with, when they are missing (needs root on a fresh
# Debian 12).  The guest's own packages are installed by scripts/rdma-vm.

RDMIG_BUILD_PKGS="gcc make cmake pkg-config libibverbs-dev librdmacm-dev libjson-c-dev libxxhash-dev libssl-dev clang valgrind strace systemd
	scdoc"

# How long an install waits for another apt or dpkg (an engineer's, the
# daily upgrade) to let go of the dpkg lock before it fails.
RDMIG_APT_LOCK_TIMEOUT=${RDMIG_APT_LOCK_TIMEOUT:-300}

# rdmig_apt_install PKG...: apt-get update, then install PKG, waiting up to
# RDMIG_APT_LOCK_TIMEOUT seconds for the dpkg lock (as root).
rdmig_apt_install() {
	local log
	log=$(mktemp /tmp/rdmig-apt.XXXXXX)
	echo "installing: $* (waiting up to ${RDMIG_APT_LOCK_TIMEOUT}s for the dpkg lock if it is held)" >&2
	apt-get -o DPkg::Lock::Timeout="$RDMIG_APT_LOCK_TIMEOUT" update -qq >"$log" 2>&1 ||
		echo "apt-get update failed; trying anyway" >&2
	if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$RDMIG_APT_LOCK_TIMEOUT" \
		install -y -q --no-install-recommends "$@" >>"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
}

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
	rdmig_apt_install "${missing[@]}"
}

# rdmig_build DIR [cmake options...]: configure once, then build.
rdmig_build() {
	local dir=$1
	shift
	cmake -S "$RDMIG_ROOT" -B "$RDMIG_ROOT/$dir" -DRDMIG_WERROR=ON "$@" >/dev/null &&
		cmake --build "$RDMIG_ROOT/$dir" -j"$(nproc)" -- --no-print-directory >/dev/null
}
