#!/usr/bin/env bash
# deps.sh — install every build, test and lab dependency of qplab on Debian 12.
#
#   scripts/deps.sh            install what is missing (root), quiet when all is there
#   scripts/deps.sh --check    list what is missing; exit 1 if anything is
#   scripts/deps.sh --ensure   what `make` runs: install when root, otherwise
#                              print the exact command and exit 1
set -eu -o pipefail

here=$(cd "$(dirname "$0")" && pwd)

PACKAGES=(
	# build
	gcc make pkg-config libc6-dev libjson-c-dev libibverbs-dev librdmacm-dev
	# tests
	check libsubunit-dev g++ libjsoncpp-dev valgrind clang libclang-rt-14-dev libtsan2 util-linux
	shellcheck
	# the lab
	qemu-system-x86 busybox-static kmod cpio xz-utils rdma-core ibverbs-utils
	ibverbs-providers rdmacm-utils iproute2 iputils-ping procps perl-base python3-minimal
	# bench
	hyperfine
	# lab-kernels.sh
	apt dpkg ca-certificates
)

missing_packages() {
	local p status
	for p in "${PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$status" = "install ok installed" ] || printf '%s\n' "$p"
	done
}

kernels_missing() {
	[ -x "$here/lab-kernels.sh" ] || return 1
	! "$here/lab-kernels.sh" --check >/dev/null 2>&1
}

mode=${1:-install}
case "$mode" in
--check)
	missing=$(missing_packages)
	rc=0
	if [ -n "$missing" ]; then
		echo "missing packages:" $missing
		rc=1
	fi
	if kernels_missing; then
		echo "missing lab kernels: run scripts/lab-kernels.sh"
		rc=1
	fi
	exit $rc
	;;
--ensure)
	missing=$(missing_packages)
	if [ -z "$missing" ] && ! kernels_missing; then
		exit 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "qplab: dependencies are missing; as root run:" >&2
		echo "  sudo $here/deps.sh" >&2
		exit 1
	fi
	;;
install | --install) ;;
-h | --help)
	sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "deps.sh: unknown option '$mode' (try --help)" >&2
	exit 2
	;;
esac

missing=$(missing_packages)
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: must run as root to install:" $missing >&2
		exit 1
	fi
	echo "deps.sh: installing:" $missing
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing
	fi
fi
if [ -x "$here/lab-kernels.sh" ]; then
	"$here/lab-kernels.sh"
fi
