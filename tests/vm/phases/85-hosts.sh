# sets: hosts
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# The hosts backend over real ssh, in one guest: an sshd of this run's own
# on 127.0.0.1 (tests/vm/sshd-here.sh, keys made for the run), a shared
# topology's two rxe devices as the machines' devices, and an inventory
# naming both hosts by ssh (ssh_netdev lo: the lab links may go down).
# Checks: `qplab doctor --inventory` passes both hosts and fails one
# without the runner's build; `qplab run --backend hosts` runs three
# scenarios of the smoke slice with every agent
# started over ssh, results.json carries each host's kernel and driver
# (the remote link-down fault runs in tests/vm/hosts-vm.sh, on two real
# guests: here the two "machines" are the ends of one veth pair, where a
# link-down drops the peer's carrier, which the hosts backend does not
# assume of machines: capability veth); a scenario naming a host the inventory
# lacks and a fault the inventory does not allow are SKIPs with the
# reason; a killed ssh session ends its remote agent and the runner
# reports the scenario as an error naming the host; `qplab quirks
# --inventory` merges one column per host; nothing is left.
require_cmd python3
require_cmd ssh
require_cmd /usr/sbin/sshd
build=${QPLAB_BUILD:-$QPLAB_ROOT/build}
Q=$build/qplab
OUT=$build/check-lab/hosts
[ -x "$Q" ] || fail "$Q not built"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$QPLAB_ROOT" || fail "cannot cd to $QPLAB_ROOT"
keys=$(mktemp -d /tmp/qlssh.XXXXXX)
port=$((22000 + $$ % 1000))
sshd_pid=""
cleanup() {
	[ -z "$sshd_pid" ] || kill "$sshd_pid" 2>/dev/null || true
	[ -z "${T_NAME:-}" ] || "$TOPO" down --name "$T_NAME" >/dev/null 2>&1 || true
	rm -rf "$keys"
}
trap cleanup EXIT
sshd_pid=$("$QPLAB_ROOT/tests/vm/sshd-here.sh" "$keys" "$port") || fail "no sshd: $(cat "$keys/sshd.log" 2>/dev/null)"
note "sshd $sshd_pid on 127.0.0.1:$port"
topo_up hs --hosts a,b --mode shared

# inventory HOSTS FAULTS: the inventory of hosts a and b as the topology
# built them, reached over this run's sshd.
inventory() {
	"$PY" - "$1" "$2" "$keys" "$port" "$Q" "${H_RXE[0]}" "${H_IF[0]}" "${H_ADDR4[0]}" \
		"${H_RXE[1]}" "${H_IF[1]}" "${H_ADDR4[1]}" <<'EOT'
import json, sys
names, faults, keys, port, q = sys.argv[1].split(","), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
hosts = {}
for i, name in enumerate(["a", "b"]):
    if name not in names:
        continue
    rxe, ifname, addr = sys.argv[6 + 3 * i: 9 + 3 * i]
    hosts[name] = {
        "ssh": {"destination": "root@127.0.0.1", "port": port, "identity": keys + "/id",
                "options": {"UserKnownHostsFile": keys + "/known_hosts", "StrictHostKeyChecking": "yes"}},
        "qplab": q, "device": rxe, "netdev": ifname, "address": addr,
        "lab_host": True, "ssh_netdev": "lo", "faults": [f for f in faults.split(",") if f]}
print(json.dumps({"version": 1, "hosts": hosts}, indent=2))
EOT
}
inventory a,b link >"$OUT/inventory.json"
inventory a "" >"$OUT/inventory-a.json"

# 1. The smoke slice, in one run.
t0=${EPOCHREALTIME/[.,]/}
rc=0
# A slice of the smoke set (each ssh and agent start costs seconds under
# TCG: the whole slice runs in `make lab`-style runs by hand).
"$Q" run --backend hosts --inventory "$OUT/inventory.json" scenarios/basic/connect-2qp.json \
	scenarios/transport/bad-frames.json scenarios/gid/malformed.json \
	--out "$OUT/run" >"$OUT/run.tap" 2>"$OUT/run.err" || rc=$?
sed 's/^/  /' "$OUT/run.tap"
note "run: exit $rc in $(((${EPOCHREALTIME/[.,]/} - t0) / 1000)) ms"
[ $rc = 0 ] || fail "the smoke scenarios on the hosts backend failed (exit $rc): $(tail -n 5 "$OUT/run.err")"
"$PY" - "$OUT/run/results.json" <<'EOT' || fail "results.json: no backend hosts with per-host kernel and driver"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["backend"] == "hosts", run["backend"]
for h in ("a", "b"):
    print("# results.json host %s: kernel %s, driver %s, device %s" % (h, run["hosts"][h]["kernel"], run["hosts"][h]["driver"], run["hosts"][h]["device"]))
    assert run["hosts"][h]["kernel"] and run["hosts"][h]["driver"] == "rxe"
EOT

# 2. SKIPs with the reason: too few hosts; a fault the inventory does not allow.
rc=0
"$Q" run --backend hosts --inventory "$OUT/inventory-a.json" scenarios/basic/connect-2qp.json \
	scenarios/rocepath/link-down-after-rts.json --out "$OUT/skip" >"$OUT/skip.tap" 2>"$OUT/skip.err" || rc=$?
sed 's/^/  /' "$OUT/skip.tap"
grep -q '^ok [0-9]* - basic/connect-2qp # SKIP the scenario needs 2 hosts, the inventory has 1; this one is missing: b' "$OUT/skip.tap" ||
	fail "too few hosts is not a SKIP with the reason"
rc=0
inventory a,b "" >"$OUT/inventory-nofault.json"
"$Q" run --backend hosts --inventory "$OUT/inventory-nofault.json" scenarios/rocepath/link-down-after-rts.json \
	--out "$OUT/nofault" >"$OUT/nofault.tap" 2>"$OUT/nofault.err" || rc=$?
grep -q '# SKIP the inventory does not allow fault link on host a' "$OUT/nofault.tap" ||
	fail "a fault the inventory does not allow is not a SKIP: $(cat "$OUT/nofault.tap")"
note "$(grep SKIP "$OUT/nofault.tap")"

# 3. A killed ssh session: the remote agent exits (its stdin closed), the
# runner reports the scenario's error naming the host.
QPLAB_RUN_TRACE=1 "$Q" run --backend hosts --inventory "$OUT/inventory.json" tests/lab/interrupt.json \
	--out "$OUT/kill" >"$OUT/kill.tap" 2>"$OUT/kill.err" &
run=$!
wait_until 120 sh -c "grep -q 'qplab run: connect ' '$OUT/kill.err'" || { kill -INT $run; wait $run || true; fail "the kill run never connected"; }
ssh_a=$(pgrep -P $run -f "ssh .* root@127.0.0.1 .*'--host' 'a'" | head -n 1)
[ -n "$ssh_a" ] || { kill -INT $run; wait $run || true; fail "no ssh session of agent a under the runner"; }
agent_a=$(pgrep -f "^$Q agent --host a " | head -n 1)
[ -n "$agent_a" ] || { kill -INT $run; wait $run || true; fail "no remote agent a"; }
kill -KILL "$ssh_a"
wait_until 30 sh -c "! kill -0 $agent_a 2>/dev/null" || { kill -INT $run; wait $run || true; fail "agent a ($agent_a) outlived its ssh session"; }
note "ssh session $ssh_a killed: remote agent $agent_a exited"
rc=0
wait $run || rc=$?
sed 's/^/  /' "$OUT/kill.tap"
# TAP: "not ok 1 - lab/interrupt", then "# error: ...: agent a: its output ended (it exited)".
if ! grep -q '^not ok 1 - lab/interrupt$' "$OUT/kill.tap" || ! grep -q '^# error: .*agent a: its output ended' "$OUT/kill.tap"; then
	fail "the runner did not report the lost agent a (exit $rc)"
fi

# 4. qplab doctor --inventory: every check passes on both hosts; a host
# whose qplab is missing (not the runner's build) fails, exit 1.
doc=$("$Q" doctor --inventory "$OUT/inventory.json" 2>&1) || fail "doctor --inventory failed: $doc"
printf '%s\n' "$doc" | sed 's/^/  /'
grep -q "^ok: 0 problems on 2 hosts" <<<"$doc" || fail "doctor --inventory: no verdict"
sed "s|\"qplab\": \"$Q\"|\"qplab\": \"/nonexistent/qplab\"|" "$OUT/inventory-a.json" >"$OUT/inventory-badq.json"
rc=0
doc=$("$Q" doctor --inventory "$OUT/inventory-badq.json" 2>&1) || rc=$?
if [ $rc != 1 ] || ! grep -q "FAIL qplab /nonexistent/qplab: build missing" <<<"$doc"; then
	fail "doctor did not fail a host without the runner's build (exit $rc): $doc"
fi

# 5. qplab quirks --inventory: each host probes its own device over ssh;
# one matrix, a column per host ("a: KERNEL rxe", "b: ...").
rc=0
"$Q" quirks --inventory "$OUT/inventory.json" >"$OUT/quirks.md" 2>"$OUT/quirks.err" || rc=$?
sed 's/^/  /' "$OUT/quirks.md"
[ $rc = 0 ] || fail "quirks --inventory: exit $rc: $(tail -n 3 "$OUT/quirks.err")"
head -n 1 "$OUT/quirks.md" | grep -q '| a: .* | b: .* |' || fail "quirks --inventory: no column per host"

# Nothing of the runs is left: no agent, no ssh session, the links up.
left=$(pgrep -af 'qplab agent' || true)
[ -z "$left" ] || fail "agents left: $left"
topo_down
T_NAME=""
