#!/usr/bin/env bash
# lab-kernels.sh -- fetch the lab's guest kernels into a private cache.
#
# The lab boots distribution kernels that ship rdma_rxe inside a throwaway
# VM (netns/vm). This script fetches three kernel lines from the Debian
# archive without installing anything on the host:
#
#   bookworm-6.1   Debian 12's default kernel (linux-image-amd64's dependency)
#   bookworm-6.12  Debian 12's 6.12 line (linux-image-6.12-amd64's dependency)
#   sid            Debian sid's current kernel (sid's linux-image-amd64)
#
# apt runs with private state (its own sources list, lists, archives and
# package cache under $QPLAB_CACHE/apt, dpkg status /dev/null), signatures
# checked against Debian's keyring; nothing is written under /etc/apt,
# /boot, /lib/modules or the dpkg database. Packages are unpacked with
# dpkg-deb -x. Each release ends up as
#
#   $QPLAB_KERNELS/<release>/vmlinuz
#   $QPLAB_KERNELS/<release>/lib/modules/<release>/...   (depmod -b run on it)
#   $QPLAB_KERNELS/<release>/VERSION                      (line, release, version, packages)
#
# and $QPLAB_KERNELS/lines/<line> names the release chosen for each line.
#
# Usage: lab-kernels.sh [--check] [--refresh] [--line LINE]... [-q|-v]
#   --check    download nothing; exit 1 listing every line not cached
#   --refresh  re-resolve each line against the archive (new point releases)
#   --line L   only this line (repeatable; default: all three)
# Environment: QPLAB_CACHE (default /var/cache/qplab),
#   QPLAB_DEBIAN_MIRROR (default http://deb.debian.org/debian),
#   QPLAB_DEBIAN_SECURITY (default http://deb.debian.org/debian-security).
set -eu -o pipefail

ALL_LINES="bookworm-6.1 bookworm-6.12 sid"
CACHE=${QPLAB_CACHE:-/var/cache/qplab}
KERNELS=$CACHE/kernels
MIRROR=${QPLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${QPLAB_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

check=0 refresh=0 verbose=0 lines=""
usage() { sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--check) check=1 ;;
	--refresh) refresh=1 ;;
	--line) [ $# -ge 2 ] || usage; lines="$lines $2"; shift ;;
	-q) verbose=0 ;;
	-v) verbose=1 ;;
	-h|--help) usage ;;
	*) echo "lab-kernels.sh: unknown argument '$1'" >&2; usage ;;
	esac
	shift
done
[ -n "$lines" ] || lines=$ALL_LINES
for l in $lines; do
	case " $ALL_LINES " in *" $l "*) ;; *) echo "lab-kernels.sh: unknown line '$l' (known: $ALL_LINES)" >&2; exit 2 ;; esac
done

say() { [ "$verbose" = 0 ] || echo "lab-kernels: $*" >&2; }
note() { echo "lab-kernels: $*" >&2; }
die() { echo "lab-kernels: error: $*" >&2; exit 1; }
require_cmd() {
	local c
	for c; do command -v "$c" >/dev/null 2>&1 || die "'$c' not found; install it (scripts/deps.sh installs every dependency)"; done
}

# A release is complete when its kernel image and a depmod'ed module tree
# with modules.builtin are present (the module-chain resolver needs both).
release_complete() {
	local d=$KERNELS/$1
	[ -s "$d/vmlinuz" ] && [ -s "$d/lib/modules/$1/modules.dep" ] &&
		[ -e "$d/lib/modules/$1/modules.builtin" ] && [ -s "$d/VERSION" ]
}

line_release() { [ -s "$KERNELS/lines/$1" ] && head -n1 "$KERNELS/lines/$1"; }

line_cached() {
	local r
	r=$(line_release "$1") || return 1
	release_complete "$r"
}

# --check, and the quiet fast path: nothing to do when every line is cached.
missing=""
for l in $lines; do line_cached "$l" || missing="$missing $l"; done
if [ "$check" = 1 ]; then
	if [ -n "$missing" ]; then
		for l in $missing; do
			r=$(line_release "$l" || true)
			echo "missing: $l${r:+ ($r incomplete)} in $KERNELS" >&2
		done
		echo "fix: run scripts/lab-kernels.sh (as root, needs deb.debian.org)" >&2
		exit 1
	fi
	exit 0
fi
if [ -z "$missing" ] && [ "$refresh" = 0 ]; then
	exit 0
fi
[ "$refresh" = 1 ] && missing=$lines

require_cmd apt-get apt-cache dpkg-deb depmod
[ -r "$KEYRING" ] || die "$KEYRING missing; install debian-archive-keyring"
[ "$(id -u)" = 0 ] || [ -w "$(dirname "$CACHE")" ] || [ -w "$CACHE" ] 2>/dev/null ||
	die "cannot write $CACHE; run as root or set QPLAB_CACHE"

# Cleanup: one EXIT trap unwinding the registered undo actions in reverse.
UNDO=()
cleanup() {
	local i
	for ((i = ${#UNDO[@]} - 1; i >= 0; i--)); do eval "${UNDO[i]}" || true; done
}
trap cleanup EXIT
mkdir -p "$KERNELS/lines"
WORK=$(mktemp -d "$CACHE/work.XXXXXX")
UNDO+=("rm -rf '$WORK'")

# apt with private state for one suite set. $1 = state name.
apt_state() {
	local st=$CACHE/apt/$1
	mkdir -p "$st/lists/partial" "$st/archives/partial" "$st/cache" "$st/prefs.d"
	echo "$st"
}
apt_opts() {
	local st=$1
	printf '%s\n' \
		-o "Dir::Etc::SourceList=$st/sources.list" \
		-o "Dir::Etc::SourceParts=$st/prefs.d" \
		-o "Dir::Etc::PreferencesParts=$st/prefs.d" \
		-o "Dir::Etc::Preferences=$st/prefs.d/none" \
		-o "Dir::State::Lists=$st/lists" \
		-o "Dir::State::status=/dev/null" \
		-o "Dir::State::extended_states=$st/extended_states" \
		-o "Dir::Cache=$st/cache" \
		-o "Dir::Cache::Archives=$st/archives" \
		-o "APT::Architecture=amd64" \
		-o "APT::Architectures::=amd64" \
		-o "APT::Sandbox::User=root" \
		-o "Acquire::Languages=none"
}

# Callers use $(suite_state ...), a subshell: remember the update in a file.
suite_state() { # suite-set name -> state dir, after one apt-get update per run
	local name=$1 st
	st=$(apt_state "$name")
	if [ ! -e "$WORK/updated-$name" ]; then
		case $name in
		bookworm)
			cat >"$st/sources.list" <<-EOF
			deb [signed-by=$KEYRING] $MIRROR bookworm main
			deb [signed-by=$KEYRING] $MIRROR bookworm-updates main
			deb [signed-by=$KEYRING] $SECURITY bookworm-security main
			EOF
			;;
		sid)
			echo "deb [signed-by=$KEYRING] $MIRROR sid main" >"$st/sources.list"
			;;
		esac
		local opts
		mapfile -t opts < <(apt_opts "$st")
		say "apt-get update ($name)"
		apt-get -q "${opts[@]}" update >"$WORK/update-$name.log" 2>&1 ||
			{ cat "$WORK/update-$name.log" >&2; die "apt-get update for $name failed (network to $MIRROR?)"; }
		if grep -q -E '^(W|E):' "$WORK/update-$name.log"; then
			grep -E '^(W|E):' "$WORK/update-$name.log" >&2
			die "apt-get update for $name reported errors (signatures are checked against $KEYRING)"
		fi
		: >"$WORK/updated-$name"
	fi
	echo "$st"
}

# The candidate's direct dependencies, one name per line.
depends_of() { # state pkg
	local opts
	mapfile -t opts < <(apt_opts "$1")
	apt-cache "${opts[@]}" depends --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$2" |
		awk '$1 ~ /^\|?(Pre)?Depends:$/ { print $2 }' | sed 's/[<>]//g'
}

version_of() { # state pkg
	local opts
	mapfile -t opts < <(apt_opts "$1")
	apt-cache "${opts[@]}" policy "$2" | awk '$1 == "Candidate:" { print $2 }'
}

# Which image package carries each line's kernel.
resolve_image() { # line -> "suite image-package"
	local st meta
	case $1 in
	bookworm-6.1) st=$(suite_state bookworm); meta=linux-image-amd64 ;;
	bookworm-6.12) st=$(suite_state bookworm); meta=linux-image-6.12-amd64 ;;
	sid) st=$(suite_state sid); meta=linux-image-amd64 ;;
	esac
	local img
	img=$(depends_of "$st" "$meta" | grep -E '^linux-image-[0-9]' | head -n1) ||
		die "cannot resolve $meta's kernel in $1"
	[ -n "$img" ] || die "cannot resolve $meta's kernel in $1"
	echo "$st $img"
}

# The packages that hold the kernel image, modules and modules.builtin.
# Older kernels ship them all in linux-image-<release>; sid's image package
# is a stub depending on linux-binary-*, linux-modules-* and linux-base-*.
packages_for() { # state image-package release
	local st=$1 img=$2 rel=$3
	echo "$img"
	# Compare whole names (releases contain '+', so no regex).
	depends_of "$st" "$img" | awk -v r="$rel" '
		$0 == "linux-binary-" r || $0 == "linux-binary-unsigned-" r ||
		$0 == "linux-modules-" r || $0 == "linux-base-" r ||
		$0 == "linux-image-unsigned-" r { print }'

}

fetch_line() {
	local line=$1 st img rel pkgs ver
	read -r st img < <(resolve_image "$line")
	rel=${img#linux-image-}
	rel=${rel%-unsigned}
	ver=$(version_of "$st" "$img")
	if release_complete "$rel"; then
		say "$line: $rel already cached"
		echo "$rel" >"$KERNELS/lines/$line"
		return 0
	fi
	mapfile -t pkgs < <(packages_for "$st" "$img" "$rel" | awk '!seen[$0]++')
	note "$line: fetching $rel ($ver): ${pkgs[*]}"
	local dl=$WORK/dl-$line x=$WORK/x-$line opts
	mkdir -p "$dl" "$x"
	mapfile -t opts < <(apt_opts "$st")
	(cd "$dl" && apt-get -q "${opts[@]}" download "${pkgs[@]}") >"$WORK/dl-$line.log" 2>&1 ||
		{ cat "$WORK/dl-$line.log" >&2; die "$line: apt-get download failed"; }
	local deb
	for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$x"; done
	local kimg moddir
	# 6.x: /boot/vmlinuz-<release>; sid's linux-binary-*: a vmlinuz file
	# in a directory named after the release.
	kimg=$(find "$x" \( -path "$x/boot/vmlinuz-$rel" -o -path "*/$rel/vmlinuz*" \) -type f | sort | head -n1 || true)
	[ -n "$kimg" ] || die "$line: no kernel image for $rel in ${pkgs[*]}"
	for moddir in "$x/lib/modules/$rel" "$x/usr/lib/modules/$rel"; do
		[ -d "$moddir/kernel" ] && break
	done
	[ -d "$moddir/kernel" ] || die "$line: no module tree for $rel in ${pkgs[*]}"
	[ -e "$moddir/modules.builtin" ] || die "$line: $rel has no modules.builtin in ${pkgs[*]}"

	# Assemble in a staging dir next to the final one, then rename, so an
	# interrupted run never leaves a half-filled release that looks complete.
	local stage=$KERNELS/.stage-$rel dest=$KERNELS/$rel
	rm -rf "$stage"
	UNDO+=("rm -rf '$stage'")
	mkdir -p "$stage/lib/modules"
	cp "$kimg" "$stage/vmlinuz"
	mv "$moddir" "$stage/lib/modules/$rel"
	# Keep only what a module tree needs: vmlinuz and lib/modules.
	rm -f "$stage/lib/modules/$rel/build" "$stage/lib/modules/$rel/source"
	depmod -b "$stage" "$rel" || die "$line: depmod failed for $rel"
	{
		echo "line=$line"
		echo "release=$rel"
		echo "version=$ver"
		echo "packages=${pkgs[*]}"
		echo "fetched=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$stage/VERSION"
	rm -rf "$dest"
	mv "$stage" "$dest"
	rm -rf "$dl" "$x"
	echo "$rel" >"$KERNELS/lines/$line"
	note "$line: $rel ready in $dest"
}

for l in $missing; do fetch_line "$l"; done
