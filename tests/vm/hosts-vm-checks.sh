#!/usr/bin/env bash
# hosts-vm-checks.sh -- part 2 of tests/vm/hosts-vm.sh: the CMD that
# `qplab vm --guest a=K --guest b=K` runs on this machine once both guests
# are up ($QPLAB_VM_INVENTORY names their inventory).
#
# Usage: hosts-vm-checks.sh OUT KERNEL-A KERNEL-B
#
# doctor --inventory passes both guests; a killed ssh session ends the
# remote agent (checked inside guest a over a second ssh) and the runner
# reports the error naming host a; quirks --inventory prints one matrix
# with a column per guest, each with its own kernel. Prints "# " notes;
# exit 1 on the first failure.
set -eu -o pipefail
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
export QPLAB_ROOT=$ROOT
PROG=hosts-vm-checks
# shellcheck source=netns/lib.sh
. "$ROOT/netns/lib.sh"
[ $# = 3 ] || { echo "usage: $PROG.sh OUT KERNEL-A KERNEL-B" >&2; exit 2; }
OUT=$1 ka=$2 kb=$3
INV=${QPLAB_VM_INVENTORY:?runs under qplab vm --guest}
# Absolute, as the inventory names it: the agent in guest a is found by it.
Q=$(readlink -f "${QPLAB_BUILD:-$ROOT/build}")/qplab
fail() { echo "# FAIL: $*"; exit 1; }
note() { echo "# $*"; }
cp "$INV" "$OUT/inventory.json"

# ssh_a CMD: a second session into guest a, with the inventory's keys.
mapfile -t A < <(python3 - "$INV" <<'EOT'
import json, sys
s = json.load(open(sys.argv[1]))["hosts"]["a"]["ssh"]
print(s["port"]); print(s["identity"]); print(s["options"]["UserKnownHostsFile"])
EOT
)
ssh_a() {
	ssh -F /dev/null -p "${A[0]}" -i "${A[1]}" -o UserKnownHostsFile="${A[2]}" -o StrictHostKeyChecking=yes \
		-o BatchMode=yes root@127.0.0.1 "$@"
}

# doctor --inventory: every check passes on both guests.
doc=$("$Q" doctor --inventory "$INV" 2>&1) || fail "doctor --inventory failed: $doc"
printf '%s\n' "$doc" | sed 's/^/#   /'
grep -q "^ok: 0 problems on 2 hosts" <<<"$doc" || fail "doctor --inventory: no verdict"

# A killed ssh session: the remote agent exits (its stdin closed), the
# runner reports the scenario's error naming the host.
QPLAB_RUN_TRACE=1 "$Q" run --backend hosts --inventory "$INV" "$ROOT/tests/lab/interrupt.json" \
	--out "$OUT/kill" >"$OUT/kill.tap" 2>"$OUT/kill.err" &
run=$!
stop_run() { kill -INT "$run" 2>/dev/null || true; wait "$run" || true; }
wait_until 120 grep -q 'qplab run: connect ' "$OUT/kill.err" || { stop_run; fail "the kill run never connected"; }
ssh_pid=$(pgrep -P "$run" -f "^ssh .*'--host' 'a'" | head -n 1 || true)
[ -n "$ssh_pid" ] || { stop_run; fail "no ssh session of agent a under the runner"; }
agent=$(ssh_a "pgrep -f '^$Q agent --host a '" | head -n 1 || true)
[ -n "$agent" ] || { stop_run; fail "no agent a inside guest a"; }
note "guest a: agent pid $agent, its ssh session pid $ssh_pid here: killing the session"
kill -KILL "$ssh_pid"
gone() { ! ssh_a "kill -0 $agent" 2>/dev/null; }
wait_until 30 gone || { stop_run; fail "agent a ($agent) outlived its ssh session in guest a"; }
note "guest a: agent $agent exited after its ssh session was killed"
rc=0
wait "$run" || rc=$?
sed 's/^/#   /' "$OUT/kill.tap"
if ! grep -q '^not ok 1 - lab/interrupt$' "$OUT/kill.tap" || ! grep -q '^# error: .*agent a: ' "$OUT/kill.tap"; then
	fail "the runner did not report the lost agent a (exit $rc)"
fi
note "the runner reported: $(grep -m1 '^# error: ' "$OUT/kill.tap")"

# quirks --inventory: a column per guest, each naming its own kernel.
rc=0
"$Q" quirks --inventory "$INV" >"$OUT/quirks.md" 2>"$OUT/quirks.err" || rc=$?
sed 's/^/#   /' "$OUT/quirks.md"
[ $rc = 0 ] || fail "quirks --inventory: exit $rc: $(tail -n 3 "$OUT/quirks.err")"
head -n 1 "$OUT/quirks.md" | grep -q "| a: ${ka}[.-][^|]* rxe | b: ${kb}[.-][^|]* rxe |" ||
	fail "quirks --inventory: not one column per guest with its kernel: $(head -n 1 "$OUT/quirks.md")"
note "quirks --inventory: $(head -n 1 "$OUT/quirks.md")"
