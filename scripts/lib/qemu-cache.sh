# qemu-cache.sh - sourced: where the project keeps the QEMU builds it tests
# against, outside any clone so that a machine fetches or builds each one
# once (a fresh CI clone reuses them).
#
#   RDMIG_QEMU_CACHE               the cache (default /var/cache/rdmig/qemu)
#   qemu_cache_debian_10           Debian's QEMU 10.0.2 from bookworm-backports,
#                                  unpacked (never installed): prints its root
#   qemu_cache_wrapper NAME BIN DATA
#                                  writes $RDMIG_QEMU_CACHE/bin/NAME, a
#                                  qemu-system-x86_64 that runs BIN with the
#                                  firmware of DATA first: prints its path
#
# Needs scripts/lib/backports.sh sourced first.

RDMIG_QEMU_CACHE=${RDMIG_QEMU_CACHE:-/var/cache/rdmig/qemu}
QEMU10_DEB_VERSION='1:10.0.2+ds-2+deb13u1~bpo12+1'
QEMU10_DEB_PACKAGES="qemu-system-x86 qemu-system-common qemu-system-data"

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

qemu_cache_wrapper() {
	local name=$1 bin=$2 data=$3 w=$RDMIG_QEMU_CACHE/bin/$1
	mkdir -p "$RDMIG_QEMU_CACHE/bin" || return 1
	# -L: the first directory that has a file wins; Debian keeps SeaBIOS
	# in /usr/share/seabios, which the +ds builds do not bundle.
	printf '#!/bin/sh\n# %s: written by scripts/lib/qemu-cache.sh\nexec %q -L %q -L /usr/share/qemu -L /usr/share/seabios "$@"\n' \
		"$name" "$bin" "$data" >"$w.new" && chmod +x "$w.new" && mv "$w.new" "$w" || return 1
	echo "$w"
}
