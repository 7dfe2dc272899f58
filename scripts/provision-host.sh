#!/usr/bin/env bash
# provision-host.sh — make a stock Linux machine a lab host for the hosts
# backend (docs/inventory.md): a Soft-RoCE device on the lab NIC, its port
# ACTIVE, and qplab installed.  Safe to run again: what is already there is
# checked, not made twice.
#
# Usage: provision-host.sh --netdev IF|--address ADDR [--device NAME] [--source DIR]
#                          [--prefix DIR] [--in-place] [--no-install] [--timeout S]
#
#   --netdev IF     the lab NIC (the private network; never the one ssh uses)
#   --address ADDR  or: the lab NIC is the one holding this IP address
#   --device NAME   the rxe device to create on it (default rxe_IF)
#   --source DIR    a qplab checkout to build and install from (default: the
#                   checkout this script is in)
#   --prefix DIR    install prefix (default /usr/local)
#   --in-place      build in the source checkout itself (yours alone), not in
#                   a copy (the default: a synced folder shared by several
#                   machines is never written to)
#   --no-install    only the device (qplab is installed already)
#   --timeout S     how long the port may take to become ACTIVE (default 10)
#
# Exit status: 0 when the device is ACTIVE on IF (and qplab installed),
# 1 on a failure (the reason on stderr), 2 for a usage error.  Run as root.
set -eu -o pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
netdev="" address="" device="" source=$(cd "$here/.." && pwd) prefix=/usr/local install=1 timeout=10 in_place=0

usage() { sed -n '/^# Usage:/,/^# Exit status/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "provision-host: $*" >&2; exit 1; }
bad() { echo "provision-host: $*" >&2; usage >&2; exit 2; }
say() { echo "provision-host: $*"; }

while [ $# -gt 0 ]; do
	case $1 in
	--netdev) [ $# -ge 2 ] || bad "--netdev needs a value"; netdev=$2; shift ;;
	--address) [ $# -ge 2 ] || bad "--address needs a value"; address=$2; shift ;;
	--device) [ $# -ge 2 ] || bad "--device needs a value"; device=$2; shift ;;
	--source) [ $# -ge 2 ] || bad "--source needs a value"; source=$2; shift ;;
	--prefix) [ $# -ge 2 ] || bad "--prefix needs a value"; prefix=$2; shift ;;
	--timeout) [ $# -ge 2 ] || bad "--timeout needs a value"; timeout=$2; shift ;;
	--no-install) install=0 ;;
	--in-place) in_place=1 ;;
	-h | --help) usage; exit 0 ;;
	*) bad "unknown argument '$1'" ;;
	esac
	shift
done
if [ -n "$address" ]; then
	[ -z "$netdev" ] || bad "--netdev or --address, not both"
	case $address in *[!0-9a-fA-F.:]* | "") bad "--address '$address' is not an IP address" ;; esac
	netdev=$(ip -o addr show | awk -v a="$address" '{ split($4, p, "/"); if (p[1] == a) { print $2; exit } }')
	[ -n "$netdev" ] || die "no netdev holds the address $address"
fi
[ -n "$netdev" ] || bad "--netdev or --address is required"
case $netdev in *[!A-Za-z0-9._-]* | "") bad "--netdev '$netdev' is not a netdev name" ;; esac
device=${device:-rxe_$netdev}
case $device in *[!A-Za-z0-9._-]*) bad "--device '$device' is not a device name" ;; esac
case $timeout in '' | *[!0-9]*) bad "--timeout wants whole seconds, got '$timeout'" ;; esac
[ "$(id -u)" = 0 ] || die "must run as root (rdma link add, make install)"
[ -e "/sys/class/net/$netdev" ] || die "no netdev $netdev on this machine"
for c in rdma modprobe ip; do
	command -v "$c" >/dev/null 2>&1 || die "$c missing (Debian: iproute2, kmod; or scripts/deps.sh)"
done

# rdma_rxe: loaded, built in, or loadable.
if [ ! -d /sys/module/rdma_rxe ]; then
	modprobe rdma_rxe 2>/dev/null || die "cannot load rdma_rxe on $(uname -r): the kernel has no Soft-RoCE (CONFIG_RDMA_RXE)"
fi

# The device: an rxe device on netdev already (ours or another name), else ours.
existing=""
for d in /sys/class/infiniband/*; do
	[ -e "$d/ports/1/gid_attrs/ndevs/0" ] || continue
	[ "$(cat "$d/ports/1/gid_attrs/ndevs/0" 2>/dev/null)" = "$netdev" ] || continue
	existing=$(basename "$d")
	break
done
if [ -n "$existing" ] && [ "$existing" != "$device" ]; then
	say "$netdev already carries RDMA device $existing: using it, not creating $device"
	device=$existing
elif [ -n "$existing" ]; then
	say "$device on $netdev is already there"
else
	ip link set "$netdev" up
	rdma link add "$device" type rxe netdev "$netdev" || die "rdma link add $device type rxe netdev $netdev failed"
	say "created $device on $netdev"
fi

# ACTIVE within the timeout (the netdev must be up and have carrier).
state=""
for _ in $(seq $((timeout * 10))); do
	state=$(cat "/sys/class/infiniband/$device/ports/1/state" 2>/dev/null || true)
	case $state in *ACTIVE*) break ;; esac
	sleep 0.1
done
case $state in
*ACTIVE*) say "$device port 1: $state" ;;
*) die "$device port 1 is '${state:-absent}', not ACTIVE after ${timeout} s (is $netdev up with a carrier?)" ;;
esac

if [ $install = 1 ]; then
	[ -f "$source/Makefile" ] || die "--source $source is not a qplab checkout"
	work=$source
	if [ $in_place = 0 ]; then
		# Built in a copy of its own: a source shared by several machines (a
		# Vagrant synced folder) is never written to.
		work=$(mktemp -d /var/tmp/qplab-provision.XXXXXX)
		trap 'rm -rf "$work"' EXIT
		(cd "$source" && tar --exclude=./build --exclude=./.git -cf - .) | tar -C "$work" -xf -
	fi
	make -s -C "$work" -j"$(nproc)" all >/dev/null || die "building qplab in $work failed"
	make -s -C "$work" install PREFIX="$prefix" >/dev/null || die "make install PREFIX=$prefix failed"
	[ -x "$prefix/bin/qplab" ] || die "make install left no $prefix/bin/qplab"
	say "qplab installed: $prefix/bin/qplab"
fi
say "ready: device $device on $netdev, port 1 ACTIVE"
