#!/usr/bin/env bash
# `make bench`: runs every benchmark binary, each bounded in time.
set -eu -o pipefail

build=${1:-build}
echo "# bench/hs_load (about 40 s on an idle machine, bounded at 150 s)"
timeout 150 "$build/bench/hs_load"
echo "# bench/hs_attack (a hostile peer against qplab hs serve: about 25 s, bounded at 130 s)"
timeout 130 "$build/bench/hs_attack" "$build/qplab"
echo "# bench/rdma.sh (in the lab VM: connect-to-ready, N endpoints, modify_qp per transition, cmtime)"
bench/rdma.sh "$build"
