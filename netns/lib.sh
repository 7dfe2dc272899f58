# lib.sh -- helpers shared by the netns/ scripts (sourced, never run).
#
# Conventions (like the kernel's selftests/net/lib.sh): every script runs
# with `set -eu -o pipefail`; whatever it creates is undone by an action
# registered with `defer` right after the create; one EXIT trap runs the
# actions in reverse; waits poll against a deadline (`wait_until`).
# shellcheck shell=bash

# Under TCG every fork costs 0.05-0.1 s and every exec 0.1-0.3 s, and the
# runner starts topo for every build, fault and teardown: paths are worked
# out with string operations, a subshell only for an odd path.
# canon_dir DIR: DIR as an absolute path without ./.. (into REPLY).
canon_dir() {
	case $1 in
	/*) REPLY=$1 ;;
	*) REPLY=$PWD/$1 ;;
	esac
	REPLY=${REPLY%/}
	case $REPLY/ in
	*/./* | */../* | *//*) REPLY=$(cd "$REPLY" && pwd) ;;
	esac
}
case ${BASH_SOURCE[0]} in
*/*) canon_dir "${BASH_SOURCE[0]%/*}" ;;
*) canon_dir . ;;
esac
QPLAB_LIBDIR=$REPLY
# The checkout (netns/..) or the install prefix (libexec/qplab/../..).
if [ -z "${QPLAB_ROOT:-}" ]; then
	if [ -e "$QPLAB_LIBDIR/../Makefile" ] || [ -d "$QPLAB_LIBDIR/../.git" ] || [ -e "$QPLAB_LIBDIR/../.git" ]; then
		QPLAB_ROOT=${QPLAB_LIBDIR%/*}
	else
		QPLAB_ROOT=${QPLAB_LIBDIR%/*}
		QPLAB_ROOT=${QPLAB_ROOT%/*}
	fi
	QPLAB_ROOT=${QPLAB_ROOT:-/}
fi
QPLAB_CACHE=${QPLAB_CACHE:-/var/cache/qplab}
QPLAB_KERNELS=$QPLAB_CACHE/kernels
# The lab's address space: nothing of the lab ever uses an address outside.
# shellcheck disable=SC2034 # used by the scripts that source this file
QPLAB_NET4=10.199.0
# shellcheck disable=SC2034
QPLAB_NET6=fd00:199:
# shellcheck disable=SC2034 # every link, bridge, namespace and rxe device starts with it
QPLAB_PREFIX=ql

PROG=${PROG:-${0##*/}}

die() { echo "$PROG: error: $*" >&2; exit 1; }
warn() { echo "$PROG: $*" >&2; }
usage_error() { echo "$PROG: $*" >&2; echo "Try '$PROG --help'." >&2; exit 2; }

require_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null 2>&1 ||
			die "'$c' not found; install it (scripts/deps.sh installs every dependency)"
	done
}

# Undo stack: defer CMD... registers a command; run_deferred unwinds in reverse.
QPLAB_UNDO=()
defer() { QPLAB_UNDO+=("$(printf '%q ' "$@")"); }
run_deferred() {
	local i
	for ((i = ${#QPLAB_UNDO[@]} - 1; i >= 0; i--)); do
		eval "${QPLAB_UNDO[i]}" >/dev/null 2>&1 || true
	done
	QPLAB_UNDO=()
}
install_exit_trap() {
	# shellcheck disable=SC2154 # rc is assigned inside the trap
	trap 'rc=$?; trap - EXIT; run_deferred; exit $rc' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Under TCG every exec costs 0.1-0.3 s, so the helpers below use bash
# builtins only: time from $EPOCHREALTIME, naps from `read -t` on a fifo
# nobody writes to.
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
QPLAB_NAPFD=
nap() { # seconds (fractions allowed)
	if [ -z "$QPLAB_NAPFD" ]; then
		local f
		f=$(mktemp -u "${TMPDIR:-/tmp}/qplab-nap.XXXXXX")
		if ! { mkfifo "$f" && exec {QPLAB_NAPFD}<>"$f"; }; then
			sleep "$1"
			return 0
		fi
		rm -f "$f"
	fi
	read -r -t "$1" -u "$QPLAB_NAPFD" _ || true
}

# QPLAB_TIME_MULTIPLIER rounded up to a whole number: 1 to 100, as qplab
# accepts it (a decimal: digits, at most one '.').  check_time_mult refuses
# anything else as a usage error; time_mult assumes it was checked.
check_time_mult() {
	local m=${QPLAB_TIME_MULTIPLIER-1} w f
	case $m in
	'' | *[!0-9.]* | *.*.* | . | .*) usage_error "QPLAB_TIME_MULTIPLIER=$m is not a number (accepted: 1 to 100)" ;;
	esac
	w=${m%%.*} f=${m#"$w"}
	f=${f#.}
	w=$((10#$w))
	if [ "$w" -lt 1 ] || [ "$w" -gt 100 ] || { [ "$w" = 100 ] && [ -n "${f//0/}" ]; }; then
		usage_error "QPLAB_TIME_MULTIPLIER=$m is out of range (accepted: 1 to 100)"
	fi
}
time_mult() {
	local m=${QPLAB_TIME_MULTIPLIER:-1} w
	w=${m%%.*}
	case $w in '' | *[!0-9]*) w=1 ;; esac
	w=$((10#$w))
	[ "$m" = "$w" ] || w=$((w + 1))
	[ "$w" -ge 1 ] || w=1
	echo "$w"
}

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds or the
# deadline (multiplied by QPLAB_TIME_MULTIPLIER, an integer) passes.
wait_until() {
	local secs=$1 end t
	shift
	t=${EPOCHREALTIME/[.,]/}
	end=$((t / 1000 + secs * $(time_mult) * 1000))
	while :; do
		"$@" && return 0
		t=${EPOCHREALTIME/[.,]/}
		[ $((t / 1000)) -lt "$end" ] || return 1
		nap 0.1
	done
}

# Kernels the lab can boot: "RELEASE KERNEL-IMAGE MODULE-BASE" lines, where
# MODULE-BASE/lib/modules/RELEASE is the module tree. Looks in the cache of
# scripts/lab-kernels.sh, then at the host's /boot + /lib/modules.
# QPLAB_KERNEL_DIRS (colon-separated) adds more caches; QPLAB_BOOT_DIR
# stands for /boot (the self-tests point it at an empty directory).
kernel_dirs() { # the caches, one per line
	local d IFS=:
	for d in ${QPLAB_KERNEL_DIRS:+$QPLAB_KERNEL_DIRS:}$QPLAB_KERNELS; do echo "$d"; done
}
# Where list_kernels looks, one place per line (for the "looked at" of an
# error: list_kernels runs in a subshell, so it cannot leave a list behind).
kernel_places() {
	local d
	while IFS= read -r d; do echo "$d/<release>/{vmlinuz,lib/modules/<release>}"; done < <(kernel_dirs)
	echo "${QPLAB_BOOT_DIR:-/boot}/vmlinuz-<release> + /lib/modules/<release>"
}
list_kernels() {
	local d r boot=${QPLAB_BOOT_DIR:-/boot}
	while IFS= read -r d; do
		[ -d "$d" ] || continue
		for r in "$d"/*/; do
			r=$(basename "$r")
			[ -s "$d/$r/vmlinuz" ] && [ -s "$d/$r/lib/modules/$r/modules.dep" ] &&
				echo "$r $d/$r/vmlinuz $d/$r"
		done
	done < <(kernel_dirs)
	for r in "$boot"/vmlinuz-*; do
		[ -e "$r" ] || continue
		r=${r#"$boot"/vmlinuz-}
		[ -s "/lib/modules/$r/modules.dep" ] && echo "$r $boot/vmlinuz-$r /"
	done
	return 0
}

# has_module BASE RELEASE MODULE: the kernel has MODULE (module or built in).
has_module() {
	modprobe -d "$1" -S "$2" --show-depends "$3" >/dev/null 2>&1
}

# match_release RELEASE PATTERN: PATTERN is the full release or a prefix that
# ends on a component boundary ("6.1" matches 6.1.0-57-amd64, not 6.12.x).
match_release() {
	case $1 in
	"$2") return 0 ;;
	"$2".* | "$2"-* | "$2"+* | "$2"~*) return 0 ;;
	esac
	return 1
}
