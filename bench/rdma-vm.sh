#!/usr/bin/env bash
# rdma-vm.sh BUILD [--quick] [--repeats K] [--profile PROFBUILD [--profiles LIST]] [N...]
# -- inside the lab VM: the two shared-mode hosts of netns/topo, our setup
# figures (bench/rdma_setup.c), then rdma-core's cmtime (rdma_cm) on the
# same devices in the same boot, and our per-connection time as a ratio to
# rdma_cm's.  The concurrent comparisons, whose single runs spread widely
# under TCG, are then run K more times (--repeats, default 5), ours and
# cmtime in turn, and judged on the spread of the paired ratios (below).
# Every step is bounded by `timeout`; the cmtime server we start is
# stopped by its pid.
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
#   floor   bench/setup_floor, not a comparison: the concurrent bursts of
#           cold, warm and cmshape with only the work the rules fix (QPs of
#           the phase's shape created or taken and taken to RTS on both
#           sides, two TCP connections a setup), raw verbs and blocking
#           sockets, timed as ours; judged against rdma_cm ("floor"
#           MISSED: out of reach under the rules) and set under ours.
#           Beyond Mooncake's accept queue at once, an accept thread
#           feeds its workers (setup_floor decides).
set -eu -o pipefail
build=${1:-build}
shift || true
quick=()   # --quick: no QP-count probe, no per-transition figures
repeats=5  # --repeats K: paired repeats of the concurrent comparisons
prof=      # --profile PROFBUILD: a frame-pointer build to profile bursts with
# --profiles LIST: which (below); by default every concurrent comparison's
# two sides
profiles="cold:64 warm:64 cmshape:64 cold:256 warm:256 cmshape:256 cmtime:64 cmtime:256"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=(--quick); shift ;;
	--repeats) repeats=${2:?--repeats needs a count}; shift 2 ;;
	--profile) prof=${2:?--profile needs a build directory}; shift 2 ;;
	--profiles) profiles=${2:?--profiles needs a list}; shift 2 ;;
	-*) echo "rdma-vm.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
if ! [[ $repeats =~ ^[0-9]{1,2}$ ]] || [ "$repeats" -gt 20 ]; then
	echo "rdma-vm.sh: --repeats wants a count from 0 to 20, not '$repeats'" >&2
	exit 2
fi
[ $# -gt 0 ] || set -- 64 256
for n in "$@"; do
	[[ $n =~ ^[1-9][0-9]{0,3}$ ]] || { echo "rdma-vm.sh: an endpoint count is 1-9999, not '$n'" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
topo=netns/topo
json=$($topo up --name rdmab --hosts a,b --mode shared)
# topo names it rdmab plus a unique suffix.
name=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])' <<<"$json")
srv=
stop_server() { [ -z "$srv" ] || { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true; srv=; }; }
data= # a profile's perf.data while it is written (below)
pctl='' pack='' perf_pid='' # its control fifos, and perf while it samples cmtime
bindir= # our bench programs' copies in the guest's memory (below)
trap 'stop_server; [ -z "$perf_pid" ] || kill -INT "$perf_pid" 2>/dev/null; [ -z "$data" ] || rm -f "$data"; [ -z "$pctl" ] || rm -f "$pctl" "$pack"; [ -z "$bindir" ] || rm -rf "$bindir"; $topo down --name "$name"' EXIT
# rdma_setup runs from a copy in /run, a tmpfs in the guest's memory, as
# cmtime runs from the guest's root, whose pages the guest's page cache
# keeps (netns/vm-init mounts it with cache=loose).  The build directory
# is shared over 9p without a cache: run from there, a process's first
# touches of its code pages were reads from the host inside the timed
# burst (a profile of a warm burst, the binary's first run in its boot:
# filemap_fault, then p9_client_read, under qphs_connect's callees).
bindir=$(mktemp -d /run/qplab-bench-bin.XXXXXX)
cp "$build/bench/rdma_setup" "$build/bench/setup_floor" "$bindir/"
[ -z "$prof" ] || cp "$prof/bench/rdma_setup" "$bindir/rdma_setup-prof"
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

# One cmtime server for every client run (it serves until stopped).
start_server() {
	timeout 3000 cmtime -b "$B" -c 1000000 >/dev/null 2>&1 &
	srv=$!
	for _ in $(seq 100); do rdma res show cm_id 2>/dev/null | grep -q LISTEN && break; sleep 0.1; done
}
start_server
cm_client() { timeout 300 cmtime -s "$B" -b "$A" -c "$1"; }
# The guest's busy and total CPU ticks so far (/proc/stat's first line:
# busy is neither idle nor iowait), into cpu_busy and cpu_all, and the
# busy time in ms into busy_ms, with bash builtins only: no fork between a
# line of cmtime's and the reading it marks.
hz=$(getconf CLK_TCK)
cpu_ticks() {
	local u n s i w q sq st
	read -r _ u n s i w q sq st _ </proc/stat
	cpu_all=$((u + n + s + i + w + q + sq + st)) cpu_busy=$((u + n + s + q + sq + st))
	busy_ms=$((cpu_busy * 1000 / hz))
}
# perf_cmd CMD CTL ACK: one command to perf record --control fifo:CTL,ACK,
# waiting for its "ack"; bounded, since a perf that died would leave both
# fifos without a peer.  It forks: not for a moment that is being timed.
perf_cmd() {
	# shellcheck disable=SC2016 # the inner shell expands its own $1..$3
	timeout 30 bash -c 'echo "$1" >"$2" && read -r _ <"$3"' _ "$@"
}
# perf_fd_cmd CMD: the same on the fifos held open as ctl_fd and ack_fd,
# with builtins only (no fork between a line of cmtime's and perf's
# window); a perf gone away is a write error (SIGPIPE ignored meanwhile)
# or a read that times out.
perf_fd_cmd() {
	echo "$1" >&"$ctl_fd" && read -r -t 30 -u "$ack_fd" _
}
# cm_timed N FILE [PERF]: one `cmtime -c N` run, its output in FILE, and
# the guest's CPU over the steps the comparison times, create id ..
# connect: cmtime (rdma-core 44, librdmacm/examples/cmtime.c, run_client
# and alloc_nodes) prints "creating id" before its first step and
# "disconnecting" after the connect step; stdbuf makes it write each line
# at once.  Sets cm_win_ms (the window's wall time, ms), cm_win_busy_ms
# and cm_win_pct (busy share of the guest's CPU), or leaves them empty when
# a line is missing.  With PERF (1), perf is enabled over the same window
# through ctl_fd and ack_fd (perf_fd_cmd).
cm_timed() {
	local n=$1 f=$2 perf=${3:-} line t0='' t1='' b0='' a0='' b1='' a1=''
	cm_win_ms='' cm_win_busy_ms='' cm_win_pct=''
	while IFS= read -r line; do
		case $line in
		"creating id")
			cpu_ticks
			t0=$EPOCHREALTIME b0=$cpu_busy a0=$cpu_all
			[ -z "$perf" ] || perf_fd_cmd enable || echo "# perf did not answer enable" >&2
			;;
		disconnecting)
			cpu_ticks
			t1=$EPOCHREALTIME b1=$cpu_busy a1=$cpu_all
			[ -z "$perf" ] || perf_fd_cmd disable || echo "# perf did not answer disable" >&2
			;;
		esac
		printf '%s\n' "$line"
	done < <(timeout 300 stdbuf -oL cmtime -s "$B" -b "$A" -c "$n" 2>&1) >"$f"
	[ -n "$t0" ] && [ -n "$t1" ] && [ "$a1" -gt "$a0" ] || return 0
	cm_win_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) * 1000}')
	cm_win_busy_ms=$(((b1 - b0) * 1000 / hz))
	cm_win_pct=$((100 * (b1 - b0) / (a1 - a0)))
}
# ms per connection: the "us / conn" column summed over create id .. connect.
cm_per_conn() {
	awk -F: '/^(create id|bind addr|resolve addr|resolve route|create qp|connect) *:/{
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
		cpu_ticks
		b0=$busy_ms
		cm_timed "$n" "$build/bench/cmtime-$n-p$1.txt"
		cpu_ticks
		b1=$busy_ms
		grep -E 'step|:' "$build/bench/cmtime-$n-p$1.txt"
		echo "rdma_cm_p$1_${n}_concurrent_per_conn $(cm_per_conn "$build/bench/cmtime-$n-p$1.txt") ms (create id .. connect, wall time / $n)" | tee -a "$cmout"
		# Its CPU cost over the timed steps (from its "creating id" line
		# to its "disconnecting" line: /proc/stat's ticks, 1000/hz ms
		# each), and over the whole run (setup, disconnect, destroy,
		# process start and exit).  Both count its main thread's
		# sched_yield loop, which spins until a step's last connection
		# completed (cmtime.c, run_client), as busy.
		if [ -n "$cm_win_busy_ms" ]; then
			echo "rdma_cm_p$1_${n}_concurrent_guest_cpu_ms_per_conn $(awk -v b="$cm_win_busy_ms" -v n="$n" 'BEGIN {printf "%.3f", b / n}') ms (create id .. connect: guest CPU busy $cm_win_pct % of ${cm_win_ms} ms)" | tee -a "$cmout"
		else
			echo "# cmtime pass $1: -c $n: no \"creating id\" .. \"disconnecting\" window in its output: $(tail -1 "$build/bench/cmtime-$n-p$1.txt")"
		fi
		echo "rdma_cm_p$1_${n}_concurrent_guest_cpu_ms_per_conn_whole_run $(awk -v a="$b0" -v b="$b1" -v n="$n" 'BEGIN {printf "%.3f", (b - a) / n}') ms (setup and teardown)" | tee -a "$cmout"
	done
}
ns=("$@")
cmout=$build/bench/cmtime.txt
: >"$cmout"
cm_client 4 >/dev/null 2>&1 || true # ARP, CM and module warm-up
cm_set 1
echo "# rdma_setup on $QPLAB_RDMA_DEVS ($(uname -r)); guest load: $(load)"
timeout 2400 "$bindir/rdma_setup" "${quick[@]}" "$@" | tee "$out"
# The measured floor (bench/setup_floor): Mooncake's protocol and QP
# shape with nothing but the work the rules fix, once after the run
# above (round 0) and in each repeat beside ours.  Its pairs, one line
# each as in $pairs below: ROUND N CONFIG FLOOR_MS RDMA_CM_MS, and ROUND N
# CONFIG OURS_MS FLOOR_MS.  A burst of the floor whose accept queue
# dropped a SYN waited out the client's 1 s retransmission, which is not
# work: that run is left out ("-").
mpairs=$build/bench/rdma_measured_floor_pairs.txt
opairs=$build/bench/rdma_over_floor_pairs.txt
: >"$mpairs"
: >"$opairs"
# setup_floor chooses how its workers get their connections: for
# themselves up to Mooncake's accept queue, from an accept thread beyond
# it (its first line says which).
run_floor() {
	timeout 600 "$bindir/setup_floor" "$n" >"$flf" 2>&1 ||
		echo "# round $r: setup_floor $n failed: $(tail -1 "$flf")"
}
for n in "$@"; do
	echo "# the measured floor (bench/setup_floor $n); guest load: $(load)"
	r=0 flf=$build/bench/setup_floor-$n.txt
	run_floor
	cat "$flf"
done
cm_set 2

key() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
cm_mean() { # name without the pass: the mean of passes 1 and 2
	awk -v a="rdma_cm_p1_$1" -v b="rdma_cm_p2_$1" '$1 == a || $1 == b {s += $2; n++}
		END { if (n) printf "%.3f", s / n }' "$cmout"
}
# The concurrent comparisons' pairs, one line each: ROUND N CONFIG OURS_MS
# RDMA_CM_MS.  Round 0 is the run above (rdma_cm: the mean of its two
# passes); rounds 1..K run one cmtime -c N and one burst of each of our
# three configurations, taking turns at going first, so that a drift in
# the host's load falls on both sides of a pair alike.
pairs=$build/bench/rdma_pairs.txt
: >"$pairs"
pair_lines() { # ROUND N OURS_FILE RDMA_CM_MS
	local tag v
	for tag in "" warm_ cmshape_; do
		v=$(key "${tag}endpoints_$2_concurrent_per_conn" "$3")
		echo "$1 $2 ${tag:-cold_} ${v:--} ${4:--}"
	done >>"$pairs"
}
# One round's two sides, N and the round in $n and $r.
run_cm() {
	cm_client "$n" >"$cmf" 2>&1 || echo "# repeat $r: cmtime -c $n failed: $(tail -1 "$cmf")"
}
run_ours() {
	QPLAB_BENCH_MODES=concurrent timeout 1200 "$bindir/rdma_setup" --quick "$n" >"$ours" 2>&1 ||
		echo "# repeat $r: rdma_setup $n failed: $(tail -1 "$ours")"
}
floor_lines() { # ROUND N FLOOR_FILE OURS_FILE RDMA_CM_MS
	local c tag f o
	for c in cold warm cmshape; do
		tag=$([ "$c" = cold ] || echo "${c}_")
		f=$(key "floor_${c}_$2_concurrent_per_conn" "$3")
		[ "$(key "floor_${c}_$2_concurrent_syn_retransmits" "$3")" = 0 ] || f=-
		o=$(key "${tag}endpoints_$2_concurrent_per_conn" "$4")
		echo "$1 $2 ${c}_ ${f:--} ${5:--}" >>"$mpairs"
		echo "$1 $2 ${c}_ ${o:--} ${f:--}" >>"$opairs"
	done
}
for n in "$@"; do
	pair_lines 0 "$n" "$out" "$(cm_mean "${n}_concurrent_per_conn")"
	floor_lines 0 "$n" "$build/bench/setup_floor-$n.txt" "$out" "$(cm_mean "${n}_concurrent_per_conn")"
done
for r in $(seq "$repeats"); do
	for n in "$@"; do
		ours=$build/bench/rdma_setup-$n-r$r.txt cmf=$build/bench/cmtime-$n-r$r.txt
		flf=$build/bench/setup_floor-$n-r$r.txt
		if [ $((r % 2)) = 1 ]; then
			echo "# repeat $r of $repeats: cmtime -c $n, then our $n-concurrent bursts (cold, warm, cmshape), then the measured floor's; guest load: $(load)"
			run_cm
			run_ours
			run_floor
		else
			echo "# repeat $r of $repeats: the measured floor's $n-concurrent bursts, then ours (cold, warm, cmshape), then cmtime -c $n; guest load: $(load)"
			run_floor
			run_ours
			run_cm
		fi
		cm=$(cm_per_conn "$cmf")
		[ "$cm" != 0.000 ] || cm=n/a
		pair_lines "$r" "$n" "$ours" "$cm"
		floor_lines "$r" "$n" "$flf" "$ours" "$cm"
		echo "# repeat $r: ms per connection, rdma_cm $cm; ours cold $(key "endpoints_${n}_concurrent_per_conn" "$ours"), warm $(key "warm_endpoints_${n}_concurrent_per_conn" "$ours"), cmshape $(key "cmshape_endpoints_${n}_concurrent_per_conn" "$ours"); the measured floor cold $(key "floor_cold_${n}_concurrent_per_conn" "$flf"), warm $(key "floor_warm_${n}_concurrent_per_conn" "$flf"), cmshape $(key "floor_cmshape_${n}_concurrent_per_conn" "$flf") (SYN retransmits $(key "floor_cold_${n}_concurrent_syn_retransmits" "$flf")/$(key "floor_warm_${n}_concurrent_syn_retransmits" "$flf")/$(key "floor_cmshape_${n}_concurrent_syn_retransmits" "$flf"))"
	done
done
stop_server

# Ratios, ours / rdma_cm (below 1: faster than rdma_cm).  Each verdict is
# MET, MISSED or, for a concurrent comparison whose repeats spread over 1,
# UNSETTLED; only MET counts as met.
met=0 missed=0 unsettled=0 missed_list='' unsettled_list=''
verdict() { # LABEL LINE
	echo "$2"
	case $2 in
	*"target MET"*) met=$((met + 1)) ;;
	*"target UNSETTLED"*) unsettled=$((unsettled + 1)) unsettled_list="$unsettled_list $1" ;;
	*) missed=$((missed + 1)) missed_list="$missed_list $1" ;;
	esac
}
# One comparison from one run: the ratio, and plainly whether the target
# (ours not slower than rdma_cm per connection: ratio <= 1) is met.  A
# figure that is missing (a phase that failed or was skipped) says so.
ratio() { # LABEL OURS RDMA_CM [NOTE]
	verdict "$1" "$(awk -v o="$2" -v c="$3" -v l="$1" -v note="${4:-}" 'BEGIN {
		if (o > 0 && c > 0) printf "ratio_%s %.2f (ours %.3f ms / rdma_cm %.3f ms%s) target %s\n",
			l, o / c, o, c, note, o <= c ? "MET" : "MISSED"
		else printf "ratio_%s n/a (ours \"%s\", rdma_cm \"%s\": a figure is missing) target MISSED\n", l, o, c }')"
}
# A concurrent comparison judged on its pairs (round 0 and the repeats):
# bench/paired, the median of the paired ratios and its interval
# (bench/verdict.h); fewer than 6 pairs (--repeats below 5, or failed
# runs) leave it UNSETTLED.
paired() { # LABEL N CONFIG
	verdict "$1" "$("$build/bench/paired" "$pairs" "$1" "$2" "$3")"
}
cm1=$(cm_mean 1_back_to_back_per_conn)
echo "# ratios: ours / rdma_cm per connection, rdma_cm = mean of its two passes (cold = default config, warm = qp_pool_size)"
ratio 1ep_cold_latency "$(key connect_ready_1ep_2qp_median "$out")" "$cm1"
ratio 1ep_warm_latency "$(key warm_connect_ready_1ep_2qp_median "$out")" "$cm1"
for n in "$@"; do
	cm=$(cm_mean "${n}_concurrent_per_conn")
	for tag in "" warm_ cmshape_; do
		t=${tag:-cold_}
		if [ "$repeats" -gt 0 ]; then
			paired "${t}${n}_concurrent" "$n" "$t"
		else
			ratio "${t}${n}_concurrent" "$(key "${tag}endpoints_${n}_concurrent_per_conn" "$out")" "$cm" "; one run, --repeats 0"
		fi
		ratio "${t}${n}_back_to_back" "$(key "${tag}endpoints_${n}_back_to_back_per_conn" "$out")" "$cm1"
	done
done
# The measured floor against rdma_cm, and ours over the floor, on the
# repeats' pairs.  Not comparisons of the bench's (none counts them): the
# first verdict reads "floor" (MISSED: slower than rdma_cm with only the
# work the rules fix, out of reach under them; MET: within reach), the
# second none (how far above the least the library's own work sits).
if [ "$repeats" -gt 0 ]; then
	echo "# the measured floor (bench/setup_floor): Mooncake's protocol and QP shape, raw verbs and blocking sockets, no JSON, no daemon, no hand-off but an accept thread's where more connect at once than the accept queue holds; runs whose accept queue dropped a SYN left out"
	for n in "$@"; do
		for c in cold warm cmshape; do
			v=$("$build/bench/paired" --word floor "$mpairs" "measured_floor_${c}_${n}_concurrent" "$n" "${c}_" "floor / rdma_cm")
			case $v in
			*" n/a "*) echo "$v: no measured floor (a run whose accept queue dropped a SYN is left out)" ;;
			*) echo "$v" ;;
			esac
			"$build/bench/paired" --word none "$opairs" "ours_over_floor_${c}_${n}_concurrent" "$n" "${c}_" "ours / floor"
		done
	done
fi
# Concurrent bursts are CPU-bound in this guest: guest CPU per connection,
# ours during the burst against rdma_cm's over its timed steps.
for n in "$@"; do
	cmw=$(cm_mean "${n}_concurrent_guest_cpu_ms_per_conn") cmr=$(cm_mean "${n}_concurrent_guest_cpu_ms_per_conn_whole_run")
	echo "# guest CPU per connection, $n concurrent: ours cold $(key "endpoints_${n}_concurrent_guest_cpu_ms_per_conn" "$out") ms, warm $(key "warm_endpoints_${n}_concurrent_guest_cpu_ms_per_conn" "$out") ms, cmshape $(key "cmshape_endpoints_${n}_concurrent_guest_cpu_ms_per_conn" "$out") ms; rdma_cm ${cmw:-n/a} ms over its timed steps (its sched_yield loop included), ${cmr:-n/a} ms its whole run"
done
# The same in nanoseconds (/proc/schedstat: the ticks above move in
# steps of 0.16 ms a connection at 64), ours against the measured floor,
# the median of the repeats: what ours' work costs beyond the rules'.
run_median() { # KEY FILE...
	local k=$1
	shift
	cat "$@" 2>/dev/null | awk -v k="$k" '$1 == k {print $2}' | sort -n |
		awk '{v[NR] = $1} END {if (NR) printf "%.3f ms (%d)", v[int((NR + 1) / 2)], NR; else printf "n/a"}'
}
for n in "${ns[@]}"; do
	# This run's repeats only: an earlier run's with more may remain.
	ofiles=() ffiles=()
	for r in $(seq "$repeats"); do
		ofiles+=("$build/bench/rdma_setup-$n-r$r.txt")
		ffiles+=("$build/bench/setup_floor-$n-r$r.txt")
	done
	o_cold=$(run_median "endpoints_${n}_concurrent_guest_run_ms_per_conn" "${ofiles[@]}")
	o_warm=$(run_median "warm_endpoints_${n}_concurrent_guest_run_ms_per_conn" "${ofiles[@]}")
	o_cm=$(run_median "cmshape_endpoints_${n}_concurrent_guest_run_ms_per_conn" "${ofiles[@]}")
	f_cold=$(run_median "floor_cold_${n}_concurrent_guest_run_ms_per_conn" "${ffiles[@]}")
	f_warm=$(run_median "floor_warm_${n}_concurrent_guest_run_ms_per_conn" "${ffiles[@]}")
	f_cm=$(run_median "floor_cmshape_${n}_concurrent_guest_run_ms_per_conn" "${ffiles[@]}")
	echo "# guest CPU per connection from /proc/schedstat, $n concurrent, medians of the repeats (how many): ours cold $o_cold, warm $o_warm, cmshape $o_cm; the measured floor cold $f_cold, warm $f_warm, cmshape $f_cm"
done
echo "# target (ours not slower than rdma_cm per connection): met in $met of $((met + missed + unsettled)) comparisons${missed_list:+; missed:$missed_list}${unsettled_list:+; unsettled (the interval holds 1, or too few pairs):$unsettled_list}"
echo "# guest load at the end: $(load)"
[ -n "$prof" ] || exit 0

# The profiles (make bench PROFILE=1), from the frame-pointer build: the
# whole guest sampled (both sides' threads, rxe's softirqs and kworkers,
# kernel and user) on the cpu-clock event every ms of CPU (TCG has no
# PMU).  --profiles lists them, CONFIG:N each: a burst of ours
# (cold, warm, cmshape), sampled only while it runs (rdma_setup opens and
# closes the window through QPLAB_BENCH_PERF_CTL), or cmtime:N, rdma_cm's
# burst, sampled over the steps the comparison times (cm_timed).  Stacks
# are folded and drawn by bench/flame, and split by whose code and what
# work, with the CPU ms per connection of each kind; the figures of these
# runs are not the bench's.  A burst of ours also gets its floor: the CPU
# of the work the rules fix (flame split's "fixed") spread over the
# guest's CPUs, judged against rdma_cm on this run's pairs (below).
# The samples go to the guest's own /run: perf's writes to the build
# directory, the host's over 9p, fail ("failed to write perf data, error:
# Bad address", linux-perf 6.1 on a 7.2 guest).
nm --defined-only "$prof/libqphs.a" 2>/dev/null | awk '$2 ~ /^[tT]$/ {print $3}' | sort -u >"$build/bench/profile-own.txt"
# A CONFIG:N listed K times is profiled K times (tags CONFIG-N, then
# CONFIG-N-2 ..): each burst's floor is judged on its own, and a
# "# floors:" line per burst of ours counts the verdicts, since a floor's
# interval holds the pairs' spread but not its profile's own.
declare -A floor_runs=() floor_judged=() floor_met=() floor_missed=() floor_shares=()
profile_one() { # CONFIG N K
	local cfg=$1 n=$2 tag=$1-$2 what
	[ "${3:-1}" = 1 ] || tag=$tag-$3
	data=$(mktemp /run/qplab-perf-data.XXXXXX)
	pctl=$(mktemp -u /run/qplab-perf-ctl.XXXXXX)
	pack=$(mktemp -u /run/qplab-perf-ack.XXXXXX)
	mkfifo -m 600 "$pctl" "$pack"
	if [ "$cfg" = cmtime ]; then
		what="rdma_cm (cmtime -c $n) burst, its timed steps (create id .. connect)"
		start_server
		echo "# profile: $what (perf record -a -g -e cpu-clock)"
		# perf samples the whole guest from cmtime's "creating id" line
		# to its "disconnecting" line (cm_timed).  It is up (it answered
		# a first command) before cmtime starts, and stopped by its pid
		# (SIGINT: it writes its data and exits 130).
		perf record -a -g -e cpu-clock -c 1000000 -D -1 --control "fifo:$pctl,$pack" \
			-o "$data" -- sleep 800 >"$build/bench/profile-guest-$tag-perf.txt" 2>&1 &
		perf_pid=$!
		if perf_cmd disable "$pctl" "$pack"; then
			exec {ctl_fd}>"$pctl" {ack_fd}<"$pack"
			trap '' PIPE
			cm_timed "$n" "$build/bench/profile-guest-$tag-run.txt" 1
			trap - PIPE
			exec {ctl_fd}>&- {ack_fd}<&-
			if [ -n "$cm_win_ms" ]; then
				echo "# profile: cmtime -c $n: create id .. connect took $cm_win_ms ms, the guest's CPU $cm_win_pct % busy; $(cm_per_conn "$build/bench/profile-guest-$tag-run.txt") ms per connection"
			else
				echo "# profile: cmtime -c $n gave no timed window: $(tail -1 "$build/bench/profile-guest-$tag-run.txt")"
			fi
		else
			echo "# profile: perf record did not start: $(tail -3 "$build/bench/profile-guest-$tag-perf.txt")"
		fi
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" || true
		perf_pid=
		grep -q "Captured and wrote" "$build/bench/profile-guest-$tag-perf.txt" ||
			echo "# profile: perf record failed: $(tail -3 "$build/bench/profile-guest-$tag-perf.txt")"
		stop_server
	else
		what="$cfg $n-concurrent burst of ours"
		echo "# profile: $what (perf record -a -g -e cpu-clock)"
		QPLAB_BENCH_PERF_CTL=$pctl QPLAB_BENCH_PERF_ACK=$pack QPLAB_BENCH_CONFIGS=$cfg QPLAB_BENCH_MODES=concurrent \
			timeout 900 perf record -a -g -e cpu-clock -c 1000000 -D -1 --control "fifo:$pctl,$pack" \
			-o "$data" -- "$bindir/rdma_setup-prof" --quick "$n" >"$build/bench/profile-guest-$tag-run.txt" 2>&1 ||
			echo "# profile: perf record failed: $(tail -3 "$build/bench/profile-guest-$tag-run.txt")"
	fi
	rm -f "$pctl" "$pack"
	pctl='' pack=''
	timeout 600 perf script -i "$data" -F comm,ip,sym,dso 2>/dev/null | "$build/bench/flame" fold >"$build/bench/profile-guest-$tag.folded"
	rm -f "$data"
	data=
	"$build/bench/flame" svg "$what, guest $(uname -r), cpu-clock" \
		<"$build/bench/profile-guest-$tag.folded" >"$build/bench/profile-guest-$tag.svg"
	echo "# profile: $build/bench/profile-guest-$tag.svg; the costliest functions:"
	"$build/bench/flame" top 20 <"$build/bench/profile-guest-$tag.folded"
	# Whose code and what work: libqphs's own functions are its archive's.
	# A burst of ours also gets the floor that the work the rules fix
	# (Mooncake's QP shape created and modified, the protocol's TCP calls)
	# sets on this guest's CPUs.
	if [ "$cfg" = cmtime ]; then
		"$build/bench/flame" split "$build/bench/profile-own.txt" "$n" <"$build/bench/profile-guest-$tag.folded"
	else
		local split floor wall phi fpairs verdict
		split=$("$build/bench/flame" split "$build/bench/profile-own.txt" "$n" "$(nproc)" <"$build/bench/profile-guest-$tag.folded")
		echo "$split"
		floor=$(awk '$1 == "fixed" {for (i = 1; i < NF; i++) if ($i == "least") print $(i + 1)}' <<<"$split")
		# The floor is a share of the profiled burst's time per
		# connection (profiling slows a burst, and the machine drifts):
		# that share of each of this run's paired runs of ours is set
		# against the rdma_cm figure of its pair, and bench/paired judges
		# the ratios as it judges the comparison itself.
		wall=$(key "$([ "$cfg" = cold ] || echo "${cfg}_")endpoints_${n}_concurrent_per_conn" "$build/bench/profile-guest-$tag-run.txt")
		phi=$(awk -v f="${floor:-0}" -v w="${wall:-0}" 'BEGIN {if (f > 0 && w > 0) printf "%.4f", f / w}')
		if [ -n "$phi" ]; then
			fpairs=$build/bench/rdma_floor_pairs-$tag.txt
			awk -v c="${cfg}_" -v n="$n" -v p="$phi" '$2 == n && $3 == c {
				v = "-"
				if ($4 + 0 > 0) v = sprintf("%.4f", $4 * p)
				print $1, $2, $3, v, $5 }' "$pairs" >"$fpairs"
			# Not a comparison of the bench's (none counts it): its
			# verdict reads "floor", not "target".
			verdict=$("$build/bench/paired" --word floor "$fpairs" "floor_${cfg}_${n}_concurrent" "$n" "${cfg}_")
			echo "# floor: $cfg $n: at least $floor ms per connection on $(nproc) CPUs, $phi of the profiled burst's $wall ms; that share of this run's paired runs against rdma_cm's:"
			echo "$verdict"
			floor_judged[$cfg:$n]=$((${floor_judged[$cfg:$n]:-0} + 1))
			floor_shares[$cfg:$n]+=" $phi"
			case $verdict in
			*" n/a "*) echo "# floor: $cfg $n: no paired runs to set it against" ;;
			*"floor MISSED"*)
				floor_missed[$cfg:$n]=$((${floor_missed[$cfg:$n]:-0} + 1))
				echo "# floor: $cfg $n: the work the rules fix alone is slower than rdma_cm: out of reach under the rules" ;;
			*"floor MET"*)
				floor_met[$cfg:$n]=$((${floor_met[$cfg:$n]:-0} + 1))
				echo "# floor: $cfg $n: the work the rules fix alone is faster than rdma_cm: within reach" ;;
			*) echo "# floor: $cfg $n: unsettled" ;;
			esac
		fi
	fi
}
for p in $profiles; do
	case $p in
	cold:[0-9]* | warm:[0-9]* | cmshape:[0-9]* | cmtime:[0-9]*)
		floor_runs[$p]=$((${floor_runs[$p]:-0} + 1))
		profile_one "${p%%:*}" "${p#*:}" "${floor_runs[$p]}" ;;
	*) echo "# profile: --profiles: '$p' is not CONFIG:N (cold, warm, cmshape or cmtime)" ;;
	esac
done
for p in $(printf '%s\n' "${!floor_judged[@]}" | sort -t: -k2,2n -k1,1); do
	j=${floor_judged[$p]} fmet=${floor_met[$p]:-0} fmissed=${floor_missed[$p]:-0}
	echo "# floors: ${p%%:*} ${p#*:}: $j judged (one per profiled burst that gave a share), shares${floor_shares[$p]}: MISSED in $fmissed, MET in $fmet, not settled in $((j - fmet - fmissed))"
done
