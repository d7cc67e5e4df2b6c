# qemu-cache.sh - sourced: where the project keeps the QEMU builds it tests
# against, outside any clone so that a machine fetches or builds each one
# once (a fresh CI clone reuses them).
#
#   RDMIG_QEMU_CACHE               the cache (default /var/cache/rdmig/qemu)
#   qemu_cache_debian_10           Debian's QEMU 10.0.2 from bookworm-backports,
#                                  unpacked (never installed): prints its root
#   qemu_cache_debian_11           Debian unstable's stock QEMU 11.1 with its
#                                  own runtime libraries, unpacked (never
#                                  installed): prints its root
#   qemu_cache_wrapper_11 ROOT     writes $RDMIG_QEMU_CACHE/bin/qemu-11.1,
#                                  which starts ROOT's QEMU through ROOT's
#                                  own dynamic loader: prints its path
#   qemu_cache_wrapper NAME BIN DATA
#                                  writes $RDMIG_QEMU_CACHE/bin/NAME, a
#                                  qemu-system-x86_64 that runs BIN with the
#                                  firmware of DATA first: prints its path
#
# Needs scripts/lib/backports.sh sourced first.

RDMIG_QEMU_CACHE=${RDMIG_QEMU_CACHE:-/var/cache/rdmig/qemu}
QEMU10_DEB_VERSION='1:10.0.2+ds-2+deb13u1~bpo12+1'
QEMU10_DEB_PACKAGES="qemu-system-x86 qemu-system-common qemu-system-data"
# QEMU 11.1 is in Debian unstable only as binaries built against its glibc
# (2.43) and libraries: the package and every library package it needs come
# from sid and run through sid's loader; see qemu_cache_fetch_debian_11.
QEMU11_DEB_VERSION='1:11.1.3+ds-1'

# Run "$@" holding the cache's lock (one fetch or build at a time).
qemu_cache_locked() {
	mkdir -p "$RDMIG_QEMU_CACHE" || return 1
	(
		flock -w 3600 9 || { echo "qemu-cache: cannot lock $RDMIG_QEMU_CACHE/.lock" >&2; exit 1; }
		"$@"
	) 9>"$RDMIG_QEMU_CACHE/.peer.lock"
}

qemu_cache_debian_10() {
	local dir=$RDMIG_QEMU_CACHE/qemu-10.0.2-debian
	if [ ! -f "$dir/stamp" ] || [ "$(cat "$dir/stamp")" != "$QEMU10_DEB_VERSION" ]; then
		qemu_cache_locked qemu_cache_fetch_debian_10 "$dir" || return 1
	fi
	echo "$dir/root"
}

# (under the lock) apt-get download + dpkg -x of the three packages
qemu_cache_fetch_debian_10() {
	local dir=$1 p deb
	[ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$QEMU10_DEB_VERSION" ] && return 0
	echo "qemu-cache: fetching Debian's QEMU $QEMU10_DEB_VERSION (bookworm-backports) into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir/debs" "$dir/root.new" || return 1
	backports_apt "$RDMIG_QEMU_CACHE/peer-apt" bookworm-backports || return 1
	for p in $QEMU10_DEB_PACKAGES; do
		(cd "$dir/debs" && backports_get "$RDMIG_QEMU_CACHE/peer-apt" download "$p=$QEMU10_DEB_VERSION") \
			>>"$dir/download.log" 2>&1 ||
			{ tail -n 5 "$dir/download.log" >&2; echo "qemu-cache: apt-get download $p=$QEMU10_DEB_VERSION failed" >&2; return 1; }
	done
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root.new" || { echo "qemu-cache: dpkg -x $deb failed" >&2; return 1; }
	done
	"$dir/root.new/usr/bin/qemu-system-x86_64" --version 2>&1 | grep -q 'version 10\.0\.2' ||
		{ echo "qemu-cache: the unpacked QEMU does not run as 10.0.2:" >&2
		  "$dir/root.new/usr/bin/qemu-system-x86_64" --version >&2; return 1; }
	mv "$dir/root.new" "$dir/root" && rm -rf "$dir/debs" &&
		echo "$QEMU10_DEB_VERSION" >"$dir/stamp"
}

qemu_cache_debian_11() {
	local dir=$RDMIG_QEMU_CACHE/qemu-11.1-debian
	if [ ! -f "$dir/stamp" ] || [ "$(cat "$dir/stamp")" != "$QEMU11_DEB_VERSION" ]; then
		qemu_cache_locked qemu_cache_fetch_debian_11 "$dir" || return 1
	fi
	echo "$dir/root"
}

# The packages of QEMU 11.1's runtime: the recursive Depends of
# qemu-system-x86 in sid, cut down to the libraries, QEMU's own packages and
# its firmware.  Left out, so that the machine's own are used through the
# second --library-path entry:
#  - libibverbs1, librdmacm1t64, ibverbs-providers: QEMU needs only the
#    IBVERBS_1.0/1.1 and RDMACM_1.0 symbol versions, which Debian 12's
#    rdma-core has, and the providers must match the running kernel's
#    rdma stack (rxe, siw);
#  - systemd's, PAM's, SELinux's and audit's libraries: the closure drags
#    them in through tools QEMU does not start.
qemu11_closure() { # APTDIR: prints package names, one a line
	backports_cache "$1" depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances --no-pre-depends \
		"qemu-system-x86=$QEMU11_DEB_VERSION" |
		grep -E '^(lib|qemu-|ipxe|seabios$|zlib1g$|gcc-[0-9]+-base$)' |
		grep -vE '^(libibverbs|librdmacm|ibverbs-providers|libsystemd|libudev|libpam|libselinux|libsemanage|libsepol|libaudit)' |
		sort -u
}

# (under the lock) the closure's .debs from sid, each unpacked with dpkg -x
qemu_cache_fetch_debian_11() {
	local dir=$1 apt=$RDMIG_QEMU_CACHE/peer-apt-sid deb n t0 p
	local -a pkgs want
	[ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$QEMU11_DEB_VERSION" ] && return 0
	t0=$(date +%s)
	echo "qemu-cache: fetching Debian's QEMU $QEMU11_DEB_VERSION and its runtime (sid) into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir/debs" "$dir/root.new" || return 1
	BACKPORTS_DEB_SRC=0 backports_apt "$apt" sid || return 1
	mapfile -t pkgs < <(qemu11_closure "$apt")
	# the pinned version first: without it the closure is of whatever sid has
	printf '%s\n' "${pkgs[@]}" | grep -qx qemu-system-x86 ||
		{ echo "qemu-cache: sid has no qemu-system-x86=$QEMU11_DEB_VERSION (apt-cache depends found nothing)" >&2; return 1; }
	printf '%s\n' "${pkgs[@]}" >"$dir/packages"
	for p in "${pkgs[@]}"; do
		[ "$p" = qemu-system-x86 ] && p+="=$QEMU11_DEB_VERSION"
		want+=("$p")
	done
	(cd "$dir/debs" && backports_get "$apt" download "${want[@]}") \
		>"$dir/download.log" 2>&1 ||
		{ tail -n 5 "$dir/download.log" >&2; echo "qemu-cache: apt-get download of ${#pkgs[@]} packages from sid failed" >&2; return 1; }
	n=$(find "$dir/debs" -name '*.deb' | wc -l)
	[ "$n" = "${#pkgs[@]}" ] ||
		{ echo "qemu-cache: ${#pkgs[@]} packages asked, $n .debs downloaded (log: $dir/download.log)" >&2; return 1; }
	echo "qemu-cache: $n packages, $(du -sm "$dir/debs" | cut -f1) MB of .debs" >&2
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root.new" || { echo "qemu-cache: dpkg -x $deb failed" >&2; return 1; }
	done
	qemu11_run "$dir/root.new" --version 2>&1 | grep -q 'version 11\.1\.' ||
		{ echo "qemu-cache: the unpacked QEMU does not run as 11.1:" >&2
		  qemu11_run "$dir/root.new" --version 2>&1 | tail -n 3 >&2; return 1; }
	mv "$dir/root.new" "$dir/root" && rm -rf "$dir/debs" &&
		echo "$QEMU11_DEB_VERSION" >"$dir/stamp" || return 1
	echo "qemu-cache: QEMU 11.1 ready in $(($(date +%s) - t0)) s, $(du -sm "$dir/root" | cut -f1) MB unpacked" >&2
}

# qemu11_run ROOT ARGS...: what the wrapper runs (the check before the stamp)
qemu11_run() {
	local root=$1
	shift
	QEMU_MODULE_DIR=$root/usr/lib/x86_64-linux-gnu/qemu \
		"$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
		--library-path "$root/usr/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" \
		"$root/usr/bin/qemu-system-x86_64" "$@"
}

# The loader, not the kernel, starts QEMU: QEMU then sees ld.so as its
# program and cannot find its data next to itself, hence the -L paths; and
# its modules are the unpacked ones (QEMU_MODULE_DIR), never the machine's
# 7.2 modules in /usr/lib/x86_64-linux-gnu/qemu.  The paths are absolute,
# so the wrapper works as well in the test guest, which sees the host's
# root read-only at the same paths.
qemu_cache_wrapper_11() {
	local root=$1 w=$RDMIG_QEMU_CACHE/bin/qemu-11.1 lib=$1/usr/lib/x86_64-linux-gnu
	mkdir -p "$RDMIG_QEMU_CACHE/bin" || return 1
	{
		printf '#!/bin/sh\n# qemu-11.1: written by scripts/lib/qemu-cache.sh\n'
		printf 'QEMU_MODULE_DIR=%q\nexport QEMU_MODULE_DIR\n' "$lib/qemu"
		printf 'exec %q --library-path %q %q -L %q -L %q "$@"\n' "$lib/ld-linux-x86-64.so.2" \
			"$lib:/usr/lib/x86_64-linux-gnu" "$root/usr/bin/qemu-system-x86_64" \
			"$root/usr/share/qemu" "$root/usr/share/seabios"
	} >"$w.new.$$" && chmod +x "$w.new.$$" && mv "$w.new.$$" "$w" || { rm -f "$w.new.$$"; return 1; }
	echo "$w"
}

# Interop cases run two at a time, each asking for its peer: each writes
# its own temporary file (.new.PID) and renames it over the wrapper, so
# that two writers never rename the same file (a shared .new made one of
# them fail with "cannot write the wrapper").
qemu_cache_wrapper() {
	local name=$1 bin=$2 data=$3 w=$RDMIG_QEMU_CACHE/bin/$1
	mkdir -p "$RDMIG_QEMU_CACHE/bin" || return 1
	# -L: the first directory that has a file wins; Debian keeps SeaBIOS
	# in /usr/share/seabios, which the +ds builds do not bundle.
	printf '#!/bin/sh\n# %s: written by scripts/lib/qemu-cache.sh\nexec %q -L %q -L /usr/share/qemu -L /usr/share/seabios "$@"\n' \
		"$name" "$bin" "$data" >"$w.new.$$" && chmod +x "$w.new.$$" && mv "$w.new.$$" "$w" ||
		{ rm -f "$w.new.$$"; return 1; }
	echo "$w"
}
