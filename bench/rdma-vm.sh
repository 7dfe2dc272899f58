#!/usr/bin/env bash
# rdma-vm.sh BUILD [N...] -- inside the lab VM: the two shared-mode hosts of
# netns/topo, our setup figures (bench/rdma_setup.c), then
# rdma-core's cmtime (rdma_cm) on the same devices, and our per-connection
# time as a ratio to rdma_cm's.  Every step is bounded by `timeout`.
set -eu -o pipefail
build=${1:-build}
shift || true
[ $# -gt 0 ] || set -- 64 256
cd "$(dirname "$0")/.."
topo=netns/topo
json=$($topo up --name rdmab --hosts a,b --mode shared)
trap '$topo down --name rdmab' EXIT
# The hosts' devices, addresses and netdevs, as the rdma suite names them.
eval "$(python3 -c '
import json, sys
h = json.load(sys.stdin)["hosts"]
for var, key in (("DEVS", "rxe"), ("ADDRS", "addr4"), ("NETDEVS", "ifname")):
    print("export QPLAB_RDMA_%s=%s" % (var, ",".join(x[key] for x in h)))
' <<<"$json")"
modprobe rdma_ucm
A=${QPLAB_RDMA_ADDRS%,*} B=${QPLAB_RDMA_ADDRS#*,}
out=$build/bench/rdma_setup.txt
echo "# rdma_setup on $QPLAB_RDMA_DEVS ($(uname -r))"
timeout 600 "$build/bench/rdma_setup" "$@" | tee "$out"

# cmtime: -c connections; the server exits after serving them.  The first
# run warms ARP and the rdma_cm modules; the second is the one reported.
cm_run() { # connections
	timeout 120 cmtime -b "$B" -c "$1" >/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 50); do ss -ltn 2>/dev/null | grep -q ":7471 " && break; sleep 0.1; done
	timeout 120 cmtime -s "$B" -b "$A" -c "$1"
	wait "$srv" || true
}
for n in "$@"; do
	cm_run "$n" >/dev/null 2>&1 || true
	echo "# cmtime -c $n (rdma_cm, one QP per connection)"
	cm_run "$n" | tee "$build/bench/cmtime-$n.txt" | grep -E 'step|:'
	cm=$(awk -F: '/^(create id|bind addr|resolve addr|resolve route|create qp|connect) /{split($2,f," "); s+=f[4]} END{printf "%.3f", s/1000}' "$build/bench/cmtime-$n.txt")
	echo "rdma_cm_${n}_per_conn $cm ms (create id .. connect, us/conn summed)"
	for tag in "" cmshape_; do
		ours_c=$(awk -v k="${tag}endpoints_${n}_concurrent_per_conn" '$1==k{print $2}' "$out")
		ours_s=$(awk -v k="${tag}endpoints_${n}_back_to_back_per_conn" '$1==k{print $2}' "$out")
		awk -v o="$ours_c" -v s="$ours_s" -v c="$cm" -v n="$n" -v t="$tag" 'BEGIN{
			if (c > 0 && o > 0) printf "%sratio_%d_concurrent_ours_to_rdma_cm %.2f\n%sratio_%d_back_to_back_ours_to_rdma_cm %.2f\n", t, n, o/c, t, n, s/c }'
	done
done
