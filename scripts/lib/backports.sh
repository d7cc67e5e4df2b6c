# backports.sh - sourced: a private apt configuration for Debian 12's
# bookworm-backports (and, for a pure-Python package, trixie; for QEMU 11.1
# and its runtime, sid), so that the
# project can fetch the few packages it needs from there with
# `apt-get download` / `apt-get source --download-only` while the machine's
# own apt configuration, package lists and installed packages stay untouched.
#
#   backports_apt DIR SUITE...   write DIR/sources.list for the suites (deb and
#                                deb-src, component main) and run `apt-get
#                                update` on it; prints nothing on success.
#                                BACKPORTS_DEB_SRC=0: deb lines only (a
#                                suite's source index is as big again, and
#                                a binary-only fetch does not need it)
#   backports_get DIR ARGS...    apt-get ARGS with that private configuration
#                                (e.g. download PKG=VERSION, source --download-only)
#   backports_cache DIR ARGS...  apt-cache ARGS with it (e.g. depends --recurse)
#
# The mirror is the one the machine's apt already uses for bookworm (read
# from /etc/apt/sources.list and /etc/apt/sources.list.d/*): no other host
# is ever named here.

# The first http(s) mirror the system's apt configuration names for Debian
# itself (not -security, not a third party).
backports_mirror() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: the URIs line of a stanza whose Suites include "bookworm"
		uri=$(awk '
			/^[[:space:]]*$/ { if (suite && uri) { print uri; exit } uri = ""; suite = 0; next }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") suite = 1 }
			END { if (suite && uri) print uri }' "$f" | head -n1)
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1 == "deb" && $0 ~ / bookworm / { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' "$f" | head -n1)
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	return 1
}

# apt-get options of the private configuration in DIR
backports_opts() {
	local dir=$1
	printf '%s\n' -o "Dir::Etc::sourcelist=$dir/sources.list" -o "Dir::Etc::sourceparts=/dev/null" \
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" \
		-o "Dir::State::status=$dir/status" \
		-o "APT::Sandbox::User=root" -o "Debug::NoLocking=1" -q
}

backports_apt() {
	local dir=$1 mirror suite
	shift
	mirror=$(backports_mirror) || { echo "backports: no Debian mirror in the system's apt sources" >&2; return 1; }
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" || return 1
	# an empty dpkg status: the candidate of every package is the
	# configured suites' version, whatever the machine has installed
	[ -f "$dir/status" ] || : >"$dir/status" || return 1
	: >"$dir/sources.list.new"
	for suite in "$@"; do
		printf 'deb %s %s main\n' "$mirror" "$suite" >>"$dir/sources.list.new"
		[ "${BACKPORTS_DEB_SRC:-1}" = 0 ] ||
			printf 'deb-src %s %s main\n' "$mirror" "$suite" >>"$dir/sources.list.new"
	done
	mv "$dir/sources.list.new" "$dir/sources.list"
	local -a opts
	mapfile -t opts < <(backports_opts "$dir")
	apt-get "${opts[@]}" update >"$dir/update.log" 2>&1 ||
		{ tail -n 5 "$dir/update.log" >&2; echo "backports: apt-get update of $* failed (log: $dir/update.log)" >&2; return 1; }
}

backports_get() {
	local dir=$1
	shift
	local -a opts
	mapfile -t opts < <(backports_opts "$dir")
	apt-get "${opts[@]}" "$@"
}

backports_cache() {
	local dir=$1
	shift
	local -a opts
	mapfile -t opts < <(backports_opts "$dir")
	apt-cache "${opts[@]}" "$@"
}
