#!/usr/bin/env bash
# `make bench`: runs every benchmark binary, each bounded in time.
# QPLAB_BENCH_PROFILE=DIR (make bench PROFILE=1): DIR is a frame-pointer
# build; hs serve is profiled under load, and bursts of ours and of
# rdma_cm in the VM (QPLAB_BENCH_PROFILES, bench/rdma.sh).
set -eu -o pipefail

build=${1:-build}
prof=${QPLAB_BENCH_PROFILE:-}
echo "# bench/hs_load (about 90 s on an idle machine, bounded at 260 s)"
timeout 260 "$build/bench/hs_load"
echo "# bench/hs_attack (a hostile peer against qplab hs serve: about 25 s, bounded at 130 s)"
timeout 130 "$build/bench/hs_attack" "$build/qplab"
echo "# bench/hs_remote (qplab hs serve and the ceiling as processes; about 3 minutes, bounded at 660 s)"
timeout 660 "$build/bench/hs_remote" "$build/qplab" "$build/bench/hs_serve.log"
rm -f "$build/bench/hs_serve.log"
if [ -n "$prof" ]; then
	# The daemon's profile: hs serve (frame pointers) driven by hs_remote;
	# that run's figures (under perf) are kept apart, not shown.
	echo "# profile: qplab hs serve under hs_remote's load (perf record -g -e cpu-clock)"
	data=$build/bench/profile-daemon.data
	QPLAB_BENCH_PERF=$data timeout 660 "$prof/bench/hs_remote" "$prof/qplab" \
		"$build/bench/hs_serve.log" >"$build/bench/profile-daemon-run.txt"
	rm -f "$build/bench/hs_serve.log"
	perf script -i "$data" -F comm,ip,sym,dso 2>/dev/null | "$build/bench/flame" fold \
		>"$build/bench/profile-daemon.folded"
	"$build/bench/flame" svg "qplab hs serve under load (hs_remote), host $(uname -r), cpu-clock" \
		<"$build/bench/profile-daemon.folded" >"$build/bench/profile-daemon.svg"
	echo "# profile: $build/bench/profile-daemon.svg; the costliest functions:"
	"$build/bench/flame" top 20 <"$build/bench/profile-daemon.folded"
	# Whose code and what work: libqphs's own functions are its archive's
	# (qplab links it statically), the harness's too.
	nm --defined-only "$prof/qplab" 2>/dev/null | awk '$2 ~ /^[tT]$/ {print $3}' | sort -u \
		>"$build/bench/profile-own.txt"
	"$build/bench/flame" split "$build/bench/profile-own.txt" <"$build/bench/profile-daemon.folded"
fi
echo "# bench/rdma.sh (in the lab VM: connect-to-ready, N endpoints, modify_qp per transition, cmtime)"
bench/rdma.sh "$build"
