#!/usr/bin/env bash
# rdma.sh [BUILD] -- `make bench`'s RDMA part: runs bench/rdma-vm.sh in the
# lab VM (netns/vm; the host kernel here has no rxe).  Skips, saying why,
# when no VM runner is available.  The host's load is printed before and
# after: under TCG the figures scale with it.  QPLAB_BENCH_ENDPOINTS (the
# N of the N-endpoint figures, "64 256"), QPLAB_BENCH_QUICK=1 (skip the
# QP-count probe and the per-transition figures), QPLAB_BENCH_REPEATS=K
# (paired repeats of the concurrent comparisons, judged on their spread;
# 5 by default, 0 leaves one run each), QPLAB_BENCH_PROFILE=DIR
# (a frame-pointer build: profile bursts of ours and of rdma_cm with it),
# QPLAB_BENCH_PROFILES (which ones; by default both sides of every
# concurrent comparison: "cold:64 warm:64 cmshape:64 cold:256 warm:256
# cmshape:256 cmtime:64 cmtime:256"; one named K times is profiled K
# times, each burst's floor judged on its own).
# Then the fan-in phase (bench/fanin-vm.sh) in a second boot, on a 7.x
# kernel (netns mode: a namespace and an rxe device per host):
# QPLAB_BENCH_FANIN, the fan-in sizes ("64 256"; "none" skips it).
set -eu -o pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
vm=${QPLAB_VM:-netns/vm}
if [ ! -x "$vm" ]; then
	echo "# SKIP rdma bench: no VM runner ($vm); set QPLAB_VM to netns/vm of the lab"
	exit 0
fi
repeats=${QPLAB_BENCH_REPEATS:-5}
if ! [[ $repeats =~ ^[0-9]{1,2}$ ]] || [ "$repeats" -gt 20 ]; then
	echo "bench/rdma.sh: QPLAB_BENCH_REPEATS wants a count from 0 to 20, not '$repeats'" >&2
	exit 2
fi
echo "# host load before: $(uptime)"
rc=0
# shellcheck disable=SC2086 # QPLAB_BENCH_ENDPOINTS is a list of counts
QPLAB_TIME_MULTIPLIER=${QPLAB_TIME_MULTIPLIER:-4} timeout 3000 "$vm" --timeout 2900 -- \
	bench/rdma-vm.sh "$build" ${QPLAB_BENCH_QUICK:+--quick} --repeats "$repeats" \
	${QPLAB_BENCH_PROFILE:+--profile "$QPLAB_BENCH_PROFILE"} \
	${QPLAB_BENCH_PROFILE:+${QPLAB_BENCH_PROFILES:+--profiles "$QPLAB_BENCH_PROFILES"}} \
	${QPLAB_BENCH_ENDPOINTS:-64 256} || rc=$?
fanin=${QPLAB_BENCH_FANIN:-64 256}
if [ "$fanin" != none ]; then
	echo "# bench/fanin-vm.sh (in the lab VM, kernel 7.x, netns mode: 7 client hosts to 1 target; host load: $(cut -d' ' -f1-3 /proc/loadavg))"
	# shellcheck disable=SC2086 # QPLAB_BENCH_FANIN is a list of counts
	QPLAB_TIME_MULTIPLIER=${QPLAB_TIME_MULTIPLIER:-4} timeout 1500 "$vm" --kernel 7 --mem 3072 \
		--timeout 1400 -- bench/fanin-vm.sh "$build" $fanin || rc=$?
fi
echo "# host load after: $(uptime)"
exit $rc
