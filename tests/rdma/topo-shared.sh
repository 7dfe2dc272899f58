#!/usr/bin/env bash
# topo-shared.sh up|down -- the rdma suite's two lab hosts in shared mode:
# one namespace, a veth pair qlrt-0/qlrt-1 with 10.199.0.201 and .202,
# rxe devices qlrt-a/qlrt-b, and policy routing that forces traffic between
# the two addresses across the veth (local table moved below per-pair
# rules, accept_local=1, rp_filter=0, arp_ignore/arp_announce).  Changes
# routing rules of the namespace it runs in: run it only inside the lab VM
# (QPLAB_IN_VM=1) or a namespace of its own.  `down` undoes everything and
# is safe to run twice.
#
# Prints, on `up`: QPLAB_RDMA_DEVS=qlrt-a,qlrt-b QPLAB_RDMA_ADDRS=10.199.0.201,10.199.0.202
set -u -o pipefail
A=10.199.0.201 B=10.199.0.202 TA=19951 TB=19952

down() {
	rdma link del qlrt-a 2>/dev/null
	rdma link del qlrt-b 2>/dev/null
	ip link del qlrt-0 2>/dev/null
	ip rule del pref 10 iif lo to $B lookup $TA 2>/dev/null
	ip rule del pref 11 iif lo to $A lookup $TB 2>/dev/null
	ip route flush table $TA 2>/dev/null
	ip route flush table $TB 2>/dev/null
	if ip rule show | grep -q '^100:.*lookup local' && ! ip rule show | grep -q '^0:.*lookup local'; then
		ip rule add pref 0 lookup local && ip rule del pref 100 lookup local
	fi
	return 0
}

up() {
	[ "${QPLAB_IN_VM:-0}" = 1 ] || [ "${QPLAB_ALLOW_HOST_ROUTING:-0}" = 1 ] ||
		{ echo "topo-shared.sh: refusing to change routing outside the lab VM" >&2; exit 2; }
	trap 'down' ERR
	set -e
	modprobe rdma_rxe
	ip link set lo up
	ip link add qlrt-0 type veth peer name qlrt-1
	ip addr add $A/24 dev qlrt-0
	ip addr add $B/24 dev qlrt-1
	for k in all default qlrt-0 qlrt-1; do
		sysctl -qw net.ipv4.conf.$k.accept_local=1 net.ipv4.conf.$k.rp_filter=0 \
			net.ipv4.conf.$k.arp_ignore=1 net.ipv4.conf.$k.arp_announce=2
	done
	ip link set qlrt-0 up
	ip link set qlrt-1 up
	if ! ip rule show | grep -q '^100:.*lookup local'; then
		ip rule add pref 100 lookup local
		ip rule del pref 0 lookup local
	fi
	ip rule add pref 10 iif lo to $B lookup $TA
	ip route add $B dev qlrt-0 src $A table $TA
	ip rule add pref 11 iif lo to $A lookup $TB
	ip route add $A dev qlrt-1 src $B table $TB
	rdma link add qlrt-a type rxe netdev qlrt-0
	rdma link add qlrt-b type rxe netdev qlrt-1
	for i in $(seq 50); do
		rdma link show qlrt-a/1 2>/dev/null | grep -q 'state ACTIVE' &&
			rdma link show qlrt-b/1 2>/dev/null | grep -q 'state ACTIVE' && break
		sleep 0.1
	done
	echo "QPLAB_RDMA_DEVS=qlrt-a,qlrt-b QPLAB_RDMA_ADDRS=$A,$B QPLAB_RDMA_NETDEVS=qlrt-0,qlrt-1"
}

case ${1:-} in
up) up ;;
down) down ;;
*) echo "usage: topo-shared.sh up|down" >&2; exit 2 ;;
esac
