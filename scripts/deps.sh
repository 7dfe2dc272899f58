#!/usr/bin/env bash
# deps.sh — install every build, test and lab dependency of qplab on Debian 12.
#
#   scripts/deps.sh            install what is missing (root), quiet when all is there
#   scripts/deps.sh --check    list what is missing; exit 1 if anything is
#   scripts/deps.sh --ensure   what `make` runs: install when root, otherwise
#                              print the exact command and exit 1
#   scripts/deps.sh --host     a lab host of the hosts backend (a Vagrant VM, a
#                              server with real NICs): only what builds and runs
#                              qplab there; no qemu, no lab kernels, no test tools
set -eu -o pipefail

here=$(cd "$(dirname "$0")" && pwd)

PACKAGES=(
	# build
	gcc make pkg-config libc6-dev libjson-c-dev libibverbs-dev librdmacm-dev
	# tests
	check libsubunit-dev g++ libjsoncpp-dev valgrind clang libclang-rt-14-dev libtsan2 util-linux
	shellcheck tshark tcpdump
	# the lab
	qemu-system-x86 busybox-static kmod cpio xz-utils rdma-core ibverbs-utils
	ibverbs-providers rdmacm-utils iproute2 iputils-ping procps perl-base python3-minimal
	# the firewall steps (netns/topo fault firewall)
	nftables
	# bench (linux-perf: make bench PROFILE=1, on the host and in the lab VM,
	# whose root is this machine's, shared read-only over 9p)
	hyperfine linux-perf
	# the browser test (tests/browser: report.html in headless Chromium)
	chromium nodejs
	# the hosts-vm backend: each lab guest runs its own sshd from the host's
	# root filesystem (installed so that the host's own sshd neither starts
	# nor is enabled: quiet_sshd below)
	openssh-server openssh-client
	# lab-kernels.sh
	apt dpkg ca-certificates
	# make ci-validate: the Vagrantfile (vagrant validate), the CI workflow
	# (an npm validator: nodejs below, the package in NPM_TOOLS)
	vagrant nodejs
)

# A lab host (--host): build qplab, run its agent, Soft-RoCE.
HOST_PACKAGES=(
	gcc make pkg-config libc6-dev libjson-c-dev libibverbs-dev librdmacm-dev
	kmod rdma-core ibverbs-utils ibverbs-providers iproute2 procps
)

# npm packages the tests run, pinned, installed into NPM_PREFIX (the
# machine's, like the lab kernels: nothing goes into the checkout).
NPM_PREFIX=${QPLAB_NPM_PREFIX:-/var/cache/qplab/npm}
NPM_TOOLS=(@action-validator/cli@0.6.0)

npm_missing() {
	local t name
	for t in "${NPM_TOOLS[@]}"; do
		name=${t%@*}
		[ -f "$NPM_PREFIX/node_modules/$name/package.json" ] &&
			grep -q "\"version\": *\"${t##*@}\"" "$NPM_PREFIX/node_modules/$name/package.json" ||
			printf '%s\n' "$t"
	done
}

install_npm_tools() {
	local missing
	missing=$(npm_missing)
	[ -n "$missing" ] || return 0
	command -v npm >/dev/null 2>&1 || { echo "deps.sh: npm missing (Debian: npm, or nodejs from NodeSource)" >&2; exit 1; }
	echo "deps.sh: installing into $NPM_PREFIX: $missing"
	mkdir -p "$NPM_PREFIX"
	# shellcheck disable=SC2086
	npm install --prefix "$NPM_PREFIX" --no-audit --no-fund --silent $missing
}

missing_packages() {
	local p status
	for p in "${PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$status" = "install ok installed" ] || printf '%s\n' "$p"
	done
}

# tests/browser's npm packages (playwright-core, pinned in its
# package-lock.json), installed into tests/browser/node_modules (ignored by
# git); npm itself comes with nodesource's nodejs, or Debian's npm package.
browser_dir="$here/../tests/browser"
browser_missing() {
	local want have
	[ -f "$browser_dir/package-lock.json" ] || return 1
	want=$(sed -n '/"node_modules\/playwright-core"/,/version/s/.*"version": "\([^"]*\)".*/\1/p' \
		"$browser_dir/package-lock.json")
	have=$(sed -n 's/^  "version": "\([^"]*\)".*/\1/p' \
		"$browser_dir/node_modules/playwright-core/package.json" 2>/dev/null || true)
	[ "$want" != "$have" ]
}

install_browser_packages() {
	if ! command -v npm >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm
	fi
	echo "deps.sh: npm ci in tests/browser (playwright-core; it downloads no browser)"
	(cd "$browser_dir" && npm ci --no-audit --no-fund --loglevel=error)
}

kernels_missing() {
	[ -x "$here/lab-kernels.sh" ] || return 1
	! "$here/lab-kernels.sh" --check >/dev/null 2>&1
}

# openssh-server is here for the lab guests' sshd (netns/vm runs it in each
# guest with keys made per run), not to serve this machine.  Debian's
# switch /etc/ssh/sshd_not_to_be_run (honoured by the init script and by
# ssh.service) keeps the host's sshd from ever starting; a policy-rc.d
# that refuses every start keeps the package's postinst from starting it;
# and the units the postinst enables are disabled again.
policy_rcd=/usr/sbin/policy-rc.d
made_policy=""
quiet_sshd() {
	mkdir -p /etc/ssh
	[ -e /etc/ssh/sshd_not_to_be_run ] || : >/etc/ssh/sshd_not_to_be_run
	if [ ! -e "$policy_rcd" ]; then
		printf '#!/bin/sh\n# deps.sh: no service starts while it installs openssh-server\nexit 101\n' >"$policy_rcd"
		chmod 755 "$policy_rcd"
		made_policy=1
		trap quiet_sshd_done EXIT
	fi
}
quiet_sshd_done() {
	if [ -n "$made_policy" ]; then
		rm -f "$policy_rcd"
		made_policy=""
	fi
	# systemctl disable works without a running systemd (it edits the
	# links); it also disables the SysV script's rc links.
	if command -v systemctl >/dev/null 2>&1; then
		systemctl disable ssh.service ssh.socket >/dev/null 2>&1 || true
	fi
}

mode=${1:-install}
if [ "$mode" = --host ]; then
	PACKAGES=("${HOST_PACKAGES[@]}")
fi
case "$mode" in
--check)
	missing=$(missing_packages)
	rc=0
	if [ -n "$missing" ]; then
		echo "missing packages: $missing"
		rc=1
	fi
	if kernels_missing; then
		echo "missing lab kernels: run scripts/lab-kernels.sh"
		rc=1
	fi
	missing=$(npm_missing)
	if [ -n "$missing" ]; then
		echo "missing npm tools in $NPM_PREFIX: $missing"
		rc=1
	fi
	if browser_missing; then
		echo "missing npm packages of tests/browser: run scripts/deps.sh"
		rc=1
	fi
	exit $rc
	;;
--ensure)
	missing=$(missing_packages)
	if [ -z "$missing" ] && ! kernels_missing && [ -z "$(npm_missing)" ] && ! browser_missing; then
		exit 0
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "qplab: dependencies are missing; as root run:" >&2
		echo "  sudo $here/deps.sh" >&2
		exit 1
	fi
	;;
install | --install | --host) ;;
-h | --help)
	sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
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
		echo "deps.sh: must run as root to install: $missing" >&2
		exit 1
	fi
	echo "deps.sh: installing: $missing"
	export DEBIAN_FRONTEND=noninteractive
	# tshark's package asks whether users outside group wireshark may
	# capture (a setuid dumpcap); the answer is no: the tests capture as root.
	echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
	case " $missing " in *" openssh-server "*) quiet_sshd ;; esac
	# shellcheck disable=SC2086
	if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing
	fi
	case " $missing " in *" openssh-server "*) quiet_sshd_done ;; esac
fi
if [ "$mode" = --host ]; then
	exit 0
fi
install_npm_tools
if browser_missing; then
	install_browser_packages
fi
if [ -x "$here/lab-kernels.sh" ]; then
	"$here/lab-kernels.sh"
fi
