#!/usr/bin/env bash
# hosts-vm.sh -- the hosts backend on two lab guests of different kernels
# (netns/vm --guest, `qplab run --backend hosts-vm`), run on this machine:
# each guest boots its own kernel, runs its own sshd and is reached over a
# forwarded loopback port; the rxe devices talk over the guests' private
# link only.
#
# Usage: tests/vm/hosts-vm.sh [KERNEL-A KERNEL-B]   (default 6.1 7)
#
# 1. `qplab run --backend hosts-vm`: a slice of the smoke set and one fault
#    run remotely (rocepath/link-down-after-rts: `ip link set lab0 down` in
#    guest a over ssh, undone after); results.json's per-host kernels are
#    the two asked for, driver rxe; nothing of the run is left (no qemu of
#    it, no socket, no key).
# 2. `qplab vm --guest ... -- CMD` with CMD here: `doctor --inventory`
#    passes both guests; a killed ssh session ends its remote agent (seen
#    from inside guest a over a second ssh) and the runner reports the
#    scenario's error naming the host; `quirks --inventory` merges one
#    column per guest, each naming its own kernel.
# 3. SIGINT to `qplab run --backend hosts-vm` in the middle of a scenario:
#    exit status of an interrupted run, and nothing left.
# TAP on stdout, each part's wall time; exit 1 on any failure.
set -eu -o pipefail
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
export QPLAB_ROOT=$ROOT
PROG=hosts-vm
# shellcheck source=netns/lib.sh
. "$ROOT/netns/lib.sh"
ka=${1:-6.1} kb=${2:-7}
# Absolute: the guests run the same path, and part 2 looks for it there.
BUILD=$(readlink -f "${QPLAB_BUILD:-$ROOT/build}")
Q=$BUILD/qplab
OUT=$BUILD/check-lab/hosts-vm
[ -x "$Q" ] || { echo "not ok 1 - $PROG: $Q not built"; exit 1; }
require_cmd python3
require_cmd ssh
require_cmd /usr/sbin/sshd
# Under TCG every ssh and agent start costs seconds.
export QPLAB_TIME_MULTIPLIER=${QPLAB_TIME_MULTIPLIER:-3}
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$ROOT"
# The runs' temporary directories (keys, sockets) go here: what is left
# of them after a run is exactly what a run left.
T=$(mktemp -d /tmp/qlhvm.XXXXXX)
trap 'rm -rf "$T"' EXIT
export TMPDIR=$T

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=$((failed + 1)); }
secs_since() { local t=${EPOCHREALTIME/[.,]/}; t=$(((t - $1) / 100000)); echo "$((t / 10)).$((t % 10))"; }
# nothing_left LABEL: no qemu started with a path under $T, nothing in $T.
nothing_left() {
	local q left
	q=$(pgrep -af "qemu-system.*$T" || true)
	left=$(find "$T" -mindepth 1 | head -n 5)
	if [ -z "$q" ] && [ -z "$left" ]; then
		ok "$1: nothing left (no qemu of the run, no socket, no key)"
	else
		not_ok "$1: left over: ${q:+qemu: $q }${left:+files: $left}"
	fi
}

echo "TAP version 13"
echo "# guests a=$ka b=$kb"

# ---- 1. the slice and one remote fault through --backend hosts-vm -------
t0=${EPOCHREALTIME/[.,]/}
rc=0
"$Q" run --backend hosts-vm --kernel "a=$ka" --kernel "b=$kb" scenarios/basic/connect-2qp.json \
	scenarios/transport/bad-frames.json scenarios/gid/malformed.json \
	scenarios/rocepath/link-down-after-rts.json --out "$OUT/run" >"$OUT/run.tap" 2>"$OUT/run.err" || rc=$?
sed 's/^/# /' "$OUT/run.tap" | grep -v '^#  *#   line ' || true
if [ $rc = 0 ] && grep -q '^ok [0-9]* - rocepath/link-down-after-rts$' "$OUT/run.tap"; then
	ok "run --backend hosts-vm: 4 scenarios, the remote link-down fault included ($(secs_since "$t0") s)"
else
	not_ok "run --backend hosts-vm (exit $rc, $(secs_since "$t0") s)"
	sed 's/^/# /' "$OUT/run.err" | tail -n 15
fi
if python3 - "$OUT/run/results.json" "$ka" "$kb" <<'EOT'; then
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["backend"] == "hosts", run["backend"]
for h, want in (("a", sys.argv[2]), ("b", sys.argv[3])):
    got = run["hosts"][h]
    print("# results.json host %s: kernel %s, driver %s, device %s, netdev %s" % (h, got["kernel"], got["driver"], got["device"], got["netdev"]))
    assert got["kernel"].startswith(want + ".") or got["kernel"].startswith(want + "-"), (h, got["kernel"], want)
    assert got["driver"] == "rxe", got["driver"]
EOT
	ok "results.json: host a on $ka, host b on $kb, driver rxe"
else
	not_ok "results.json: the per-host kernels and drivers are not the guests'"
fi
nothing_left "run --backend hosts-vm"

# ---- 2. doctor, a killed ssh session, quirks: CMD on this machine -------
t0=${EPOCHREALTIME/[.,]/}
rc=0
"$Q" vm --guest "a=$ka" --guest "b=$kb" -- "$ROOT/tests/vm/hosts-vm-checks.sh" "$OUT" "$ka" "$kb" \
	>"$OUT/checks.out" 2>"$OUT/checks.err" || rc=$?
cat "$OUT/checks.out"
if [ $rc = 0 ]; then
	ok "qplab vm --guest: doctor, killed ssh session, quirks merge ($(secs_since "$t0") s)"
else
	not_ok "qplab vm --guest: the checks failed (exit $rc, $(secs_since "$t0") s)"
	sed 's/^/# /' "$OUT/checks.err" | tail -n 15
fi
nothing_left "qplab vm --guest"

# ---- 3. SIGINT in the middle of a scenario ------------------------------
t0=${EPOCHREALTIME/[.,]/}
"$Q" run --backend hosts-vm --kernel "a=$ka" --kernel "b=$kb" tests/lab/interrupt.json \
	--out "$OUT/int" >"$OUT/int.tap" 2>"$OUT/int.err" &
run=$!
# The agents start once the hosts answered: give the scenario its connect.
agent_b() { pgrep -f "^ssh .*$T.*'--host' 'b'" >/dev/null; }
if wait_until 300 grep -q '^# host b: ' "$OUT/int.tap"; then wait_until 120 agent_b || true; fi
kill -INT "$run" 2>/dev/null || true
rc=0
wait "$run" || rc=$?
sed 's/^/# /' "$OUT/int.tap"
if [ $rc != 0 ] && [ $rc != 2 ]; then
	ok "SIGINT to run --backend hosts-vm: exit $rc ($(secs_since "$t0") s)"
else
	not_ok "SIGINT to run --backend hosts-vm: exit $rc"
	sed 's/^/# /' "$OUT/int.err" | tail -n 10
fi
nothing_left "SIGINT"

echo "1..$n"
echo "# $failed failed"
[ $failed = 0 ]
