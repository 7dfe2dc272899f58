#!/usr/bin/env bash
# fanin-vm.sh BUILD [N...] -- inside the lab VM: the fan-in phase of `make
# bench` (bench/fanin.c).  Eight netns-mode hosts of netns/topo, one target
# (t) and seven client hosts (a..g), each with its own rxe device and
# network namespace; for each N (default 64 256) N servers spread over the
# client hosts connect to t at one moment.  netns mode needs a kernel whose
# rxe sockets are per namespace (7.x); on another the topology says so and
# the phase fails.  Every step is bounded by `timeout`; topo tears the
# hosts down on exit.
set -eu -o pipefail
build=${1:-build}
shift || true
[ $# -gt 0 ] || set -- 64 256
cd "$(dirname "$0")/.."
topo=netns/topo
# fanin runs from a copy in /run, a tmpfs in the guest's memory, as
# bench/rdma-vm.sh runs rdma_setup: the build directory is shared over 9p
# without a cache, and each of fanin's processes (it runs itself again in
# every host's namespace) would read its code pages from the host.
bindir='' name=''
trap '[ -z "$bindir" ] || rm -rf "$bindir"; [ -z "$name" ] || $topo down --name "$name"' EXIT
bindir=$(mktemp -d /run/qplab-fanin-bin.XXXXXX)
cp "$build/bench/fanin" "$bindir/"
json=$($topo up --name fanb --hosts t,a,b,c,d,e,f,g --mode netns)
name=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])' <<<"$json")
# --target NS,DEV,ADDR and one --client NS,DEV,ADDR per other host.
mapfile -t hostargs < <(python3 -c '
import json, sys
for i, h in enumerate(json.load(sys.stdin)["hosts"]):
    print("--target" if i == 0 else "--client")
    print("%s,%s,%s" % (h["netns"], h["rxe"], h["addr4"]))
' <<<"$json")
echo "# fanin on $(uname -r): 1 target, $((${#hostargs[@]} / 2 - 1)) client hosts; guest load: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 1200 "$bindir/fanin" run "${hostargs[@]}" "$@" | tee "$build/bench/fanin.txt"
echo "# Mooncake PR 2793 reports 240 concurrent handshakes to one target taking about 96 s on real NICs (unpatched); guest load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
