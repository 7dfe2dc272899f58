#!/usr/bin/env bash
# rdma-vm.sh BUILD [--quick] [--profile PROFBUILD [--profiles LIST]] [N...] -- inside the lab VM: the two shared-mode hosts of
# netns/topo, our setup figures (bench/rdma_setup.c), then
# rdma-core's cmtime (rdma_cm) on the same devices in the same boot, and
# our per-connection time as a ratio to rdma_cm's.  Every step is bounded
# by `timeout`; the cmtime server we start is stopped by its pid.
#
# What each side counts, per connection:
#   ours    connect() until both endpoints are ready (active: QPs taken or
#           created, Connection RPC including the peer's passive setup, our
#           four transitions, the ready-ACK RPC; passive: ready when the ACK
#           arrived).  Device open, PD and CQ are outside.  "cold": the
#           default, every QP created on the critical path; "warm": a QP
#           pool (qp_pool_size) filled before the timed part.
#   rdma_cm cmtime's client steps create id, bind, resolve addr, resolve
#           route, create qp (the client's QP: 1 WR, 1 SGE) and connect
#           (REQ/REP/RTU, the server creating its QP and both sides'
#           transitions), up to the client's ESTABLISHED event; the server's
#           own ESTABLISHED may come later.  Device open, PD, CQ outside.
#           Concurrent: step wall time / N, all N in flight per step.
#           Back to back: `cmtime -c 1`, one connection per run, median.
set -eu -o pipefail
build=${1:-build}
shift || true
quick=() # --quick: no QP-count probe, no per-transition figures
if [ "${1:-}" = --quick ]; then quick=(--quick); shift; fi
prof= # --profile PROFBUILD: a frame-pointer build to profile a cold burst with
if [ "${1:-}" = --profile ]; then prof=${2:?--profile needs a build directory}; shift 2; fi
profiles="cold:64 cmshape:256 warm:256 cmtime:64 cmtime:256" # --profiles LIST: which (below)
if [ "${1:-}" = --profiles ]; then profiles=${2:?--profiles needs a list}; shift 2; fi
[ $# -gt 0 ] || set -- 64 256
cd "$(dirname "$0")/.."
topo=netns/topo
json=$($topo up --name rdmab --hosts a,b --mode shared)
# topo names it rdmab plus a unique suffix.
name=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])' <<<"$json")
srv=
stop_server() { [ -z "$srv" ] || { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true; srv=; }; }
data= # a profile's perf.data while it is written (below)
trap 'stop_server; [ -z "$data" ] || rm -f "$data"; $topo down --name "$name"' EXIT
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
load() { cut -d' ' -f1-3 /proc/loadavg; }
# The guest's busy CPU time so far, ms (/proc/stat: not idle, not iowait).
busy_ms() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" {
		t = 0; for (i = 2; i <= 9; i++) t += $i; printf "%.0f", (t - $5 - $6) * 1000 / hz; exit }' /proc/stat
}

# One cmtime server for every client run (it serves until stopped).
start_server() {
	timeout 3000 cmtime -b "$B" -c 1000000 >/dev/null 2>&1 &
	srv=$!
	for _ in $(seq 100); do rdma res show cm_id 2>/dev/null | grep -q LISTEN && break; sleep 0.1; done
}
start_server
cm_client() { timeout 300 cmtime -s "$B" -b "$A" -c "$1"; }
# ms per connection: the "us / conn" column summed over create id .. connect.
cm_per_conn() {
	awk -F: '/^(create id|bind addr|resolve addr|resolve route|create qp|connect) /{
		split($2, f, " "); s += f[4] } END { printf "%.3f", s / 1000 }' "$1"
}
# cmtime's figures, run before and after ours (pass 1, 2): under TCG on a
# shared host the load drifts, so the ratio uses the mean of the two.
cm_set() { # pass
	echo "# cmtime pass $1: -c 1, 9 runs (one connection at a time); guest load: $(load)"
	for i in $(seq 9); do
		cm_client 1 >"$build/bench/cmtime-1-$i.txt" 2>&1 || true
		cm_per_conn "$build/bench/cmtime-1-$i.txt"
		echo
	done | sort -n | awk -v p="$1" '{v[NR] = $1} END {printf "rdma_cm_p%s_1_back_to_back_per_conn %.3f ms (median; min %.3f, max %.3f)\n", p, v[int((NR + 1) / 2)], v[1], v[NR]}' |
		tee -a "$cmout"
	for n in "${ns[@]}"; do
		echo "# cmtime pass $1: -c $n (all in flight); guest load: $(load)"
		b0=$(busy_ms)
		cm_client "$n" | tee "$build/bench/cmtime-$n-p$1.txt" | grep -E 'step|:'
		b1=$(busy_ms)
		echo "rdma_cm_p$1_${n}_concurrent_per_conn $(cm_per_conn "$build/bench/cmtime-$n-p$1.txt") ms (create id .. connect, wall time / $n)" | tee -a "$cmout"
		# Its CPU cost: the whole run (setup, disconnect, destroy, process
		# start and exit) is all that /proc/stat can bracket, so this is
		# an upper bound on what its setup alone costs.
		echo "rdma_cm_p$1_${n}_concurrent_guest_cpu_ms_per_conn_whole_run $(awk -v a="$b0" -v b="$b1" -v n="$n" 'BEGIN {printf "%.3f", (b - a) / n}') ms (upper bound: setup and teardown)" | tee -a "$cmout"
	done
}
ns=("$@")
cmout=$build/bench/cmtime.txt
: >"$cmout"
cm_client 4 >/dev/null 2>&1 || true # ARP, CM and module warm-up
cm_set 1
echo "# rdma_setup on $QPLAB_RDMA_DEVS ($(uname -r)); guest load: $(load)"
timeout 2400 "$build/bench/rdma_setup" "${quick[@]}" "$@" | tee "$out"
cm_set 2
stop_server

# Ratios, ours / rdma_cm (below 1: faster than rdma_cm).
key() { awk -v k="$1" '$1 == k {print $2}' "$out"; }
cm_mean() { # name without the pass: the mean of passes 1 and 2
	awk -v a="rdma_cm_p1_$1" -v b="rdma_cm_p2_$1" '$1 == a || $1 == b {s += $2; n++}
		END { if (n) printf "%.3f", s / n }' "$cmout"
}
# One comparison: the ratio, and plainly whether the target (ours not
# slower than rdma_cm per connection: ratio <= 1) is met.  A figure that is
# missing (a phase that failed or was skipped) says so instead.
met=0 missed=0 missed_list=
ratio() {
	local line
	line=$(awk -v o="$2" -v c="$3" -v l="$1" 'BEGIN {
		if (o > 0 && c > 0) printf "ratio_%s %.2f (ours %.3f ms / rdma_cm %.3f ms) target %s\n",
			l, o / c, o, c, o <= c ? "MET" : "MISSED"
		else printf "ratio_%s n/a (ours \"%s\", rdma_cm \"%s\": a figure is missing) target MISSED\n", l, o, c }')
	echo "$line"
	case $line in
	*"target MET") met=$((met + 1)) ;;
	*) missed=$((missed + 1)) missed_list="$missed_list $1" ;;
	esac
}
cm1=$(cm_mean 1_back_to_back_per_conn)
echo "# ratios: ours / rdma_cm per connection, rdma_cm = mean of its two passes (cold = default config, warm = qp_pool_size)"
ratio 1ep_cold_latency "$(key connect_ready_1ep_2qp_median)" "$cm1"
ratio 1ep_warm_latency "$(key warm_connect_ready_1ep_2qp_median)" "$cm1"
for n in "$@"; do
	cm=$(cm_mean "${n}_concurrent_per_conn")
	for tag in "" warm_ cmshape_; do
		t=${tag:-cold_}
		ratio "${t}${n}_concurrent" "$(key "${tag}endpoints_${n}_concurrent_per_conn")" "$cm"
		ratio "${t}${n}_back_to_back" "$(key "${tag}endpoints_${n}_back_to_back_per_conn")" "$cm1"
	done
done
# Concurrent bursts are CPU-bound in this guest: guest CPU per connection,
# ours during the burst against rdma_cm's whole run (an upper bound).
for n in "$@"; do
	echo "# guest CPU per connection, $n concurrent: ours cold $(key "endpoints_${n}_concurrent_guest_cpu_ms_per_conn") ms, warm $(key "warm_endpoints_${n}_concurrent_guest_cpu_ms_per_conn") ms, cmshape $(key "cmshape_endpoints_${n}_concurrent_guest_cpu_ms_per_conn") ms; rdma_cm at most $(cm_mean "${n}_concurrent_guest_cpu_ms_per_conn_whole_run") ms (its whole run, teardown included)"
done
echo "# target (ours not slower than rdma_cm per connection): met in $met of $((met + missed)) comparisons${missed_list:+; missed:$missed_list}"
echo "# guest load at the end: $(load)"
[ -n "$prof" ] || exit 0

# The profiles (make bench PROFILE=1), from the frame-pointer build: the
# whole guest sampled (both sides' threads, rxe's softirqs and kworkers,
# kernel and user) on the cpu-clock event every ms of CPU (TCG has no
# PMU).  --profiles lists them, CONFIG:N each: a burst of ours
# (cold, warm, cmshape), sampled only while it runs (rdma_setup opens and
# closes the window through QPLAB_BENCH_PERF_CTL), or cmtime:N, rdma_cm's
# burst, sampled for cmtime's whole client run (its teardown is split out
# by kind).  Stacks are folded and drawn by bench/flame, and split by whose
# code and what work, with the CPU ms per connection of each kind; the
# figures of these runs are not the bench's.
# The samples go to the guest's own /run: perf's writes to the build
# directory, the host's over 9p, fail ("failed to write perf data, error:
# Bad address", linux-perf 6.1 on a 7.2 guest).
nm --defined-only "$prof/libqphs.a" 2>/dev/null | awk '$2 ~ /^[tT]$/ {print $3}' | sort -u >"$build/bench/profile-own.txt"
profile_one() { # CONFIG N
	local cfg=$1 n=$2 tag=$1-$2 ctl ack what
	data=$(mktemp /run/qplab-perf-data.XXXXXX)
	if [ "$cfg" = cmtime ]; then
		what="rdma_cm (cmtime -c $n) burst, its whole client run"
		start_server
		echo "# profile: $what (perf record -a -g -e cpu-clock)"
		timeout 900 perf record -a -g -e cpu-clock -c 1000000 -o "$data" -- \
			timeout 300 cmtime -s "$B" -b "$A" -c "$n" >"$build/bench/profile-guest-$tag-run.txt" 2>&1 ||
			echo "# profile: perf record failed: $(tail -3 "$build/bench/profile-guest-$tag-run.txt")"
		stop_server
	else
		what="$cfg $n-concurrent burst of ours"
		ctl=$(mktemp -u /run/qplab-perf-ctl.XXXXXX)
		ack=$(mktemp -u /run/qplab-perf-ack.XXXXXX)
		mkfifo -m 600 "$ctl" "$ack"
		echo "# profile: $what (perf record -a -g -e cpu-clock)"
		QPLAB_BENCH_PERF_CTL=$ctl QPLAB_BENCH_PERF_ACK=$ack QPLAB_BENCH_CONFIGS=$cfg QPLAB_BENCH_MODES=concurrent \
			timeout 900 perf record -a -g -e cpu-clock -c 1000000 -D -1 --control "fifo:$ctl,$ack" \
			-o "$data" -- "$prof/bench/rdma_setup" --quick "$n" >"$build/bench/profile-guest-$tag-run.txt" 2>&1 ||
			echo "# profile: perf record failed: $(tail -3 "$build/bench/profile-guest-$tag-run.txt")"
		rm -f "$ctl" "$ack"
	fi
	timeout 600 perf script -i "$data" -F comm,ip,sym,dso 2>/dev/null | "$build/bench/flame" fold >"$build/bench/profile-guest-$tag.folded"
	rm -f "$data"
	data=
	"$build/bench/flame" svg "$what, guest $(uname -r), cpu-clock" \
		<"$build/bench/profile-guest-$tag.folded" >"$build/bench/profile-guest-$tag.svg"
	echo "# profile: $build/bench/profile-guest-$tag.svg; the costliest functions:"
	"$build/bench/flame" top 20 <"$build/bench/profile-guest-$tag.folded"
	# Whose code and what work: libqphs's own functions are its archive's.
	"$build/bench/flame" split "$build/bench/profile-own.txt" "$n" <"$build/bench/profile-guest-$tag.folded"
}
for p in $profiles; do
	case $p in
	cold:[0-9]* | warm:[0-9]* | cmshape:[0-9]* | cmtime:[0-9]*) profile_one "${p%%:*}" "${p#*:}" ;;
	*) echo "# profile: --profiles: '$p' is not CONFIG:N (cold, warm, cmshape or cmtime)" ;;
	esac
done
