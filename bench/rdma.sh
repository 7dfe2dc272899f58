#!/usr/bin/env bash
# rdma.sh [BUILD] -- `make bench`'s RDMA part: runs bench/rdma-vm.sh in the
# lab VM (netns/vm; the host kernel here has no rxe).  Skips, saying why,
# when no VM runner is available.
set -eu -o pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
vm=${QPLAB_VM:-netns/vm}
if [ ! -x "$vm" ]; then
	echo "# SKIP rdma bench: no VM runner ($vm); set QPLAB_VM to netns/vm of the lab"
	exit 0
fi
QPLAB_TIME_MULTIPLIER=${QPLAB_TIME_MULTIPLIER:-4} timeout 900 "$vm" --timeout 800 -- \
	bench/rdma-vm.sh "$build" ${QPLAB_BENCH_ENDPOINTS:-64 256}
