# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# The runner's self-tests (qplab run on tests/lab/): a healthy scenario
# passes and a wrong expectation fails with expected/observed per host;
# syntax error, unknown key and duplicate key are refused with file:line
# (exit 2); SIGINT in the middle of a scenario leaves no namespace, veth,
# rxe device, rule or agent process; SIGKILL there leaves what `topo down
# --all` removes from the undo registry (one undo made to fail: exit 1,
# logged, nothing left); then the catalogue's smoke slice and
# the step self-tests (tests/lab/steps-*.json: every step kind has its
# effect) in one run, which must pass; with the full set (the default
# kernel) that run has --ablate: every smoke scenario with a fault must
# come out sensitive, and tests/lab/ablate-vacuous.json insensitive (exit
# 1), and --capture (with the `capture` scenario, basic/connect-1qp): every
# scenario that ran has its pcap, and the wire expectations hold.  Outputs under build/check-lab/.
require_cmd python3
build=${QPLAB_BUILD:-$QPLAB_ROOT/build}
Q=$build/qplab
OUT=$build/check-lab
LAB=$QPLAB_ROOT/tests/lab
[ -x "$Q" ] || fail "$Q not built"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$QPLAB_ROOT" || fail "cannot cd to $QPLAB_ROOT"

# 1. Bad files: exit 2, every message FILE:LINE.
for f in bad-syntax unknown-key duplicate-key ablate-false-no-fault; do
	rc=0
	"$Q" run "$LAB/$f.json" --out "$OUT/$f" >"$OUT/$f.out" 2>"$OUT/$f.err" || rc=$?
	[ $rc = 2 ] || fail "$f.json: exit $rc, want 2"
	grep -q "^$LAB/$f.json:[0-9][0-9]*: " "$OUT/$f.err" || fail "$f.json: no FILE:LINE message: $(cat "$OUT/$f.err")"
	note "$f.json refused: $(head -n 1 "$OUT/$f.err")"
done
grep -q "^$LAB/ablate-false-no-fault.json:[0-9]*: \"ablate\": \[\] declares that the scenario has no fault, but step 1 is a kill_agent" \
	"$OUT/ablate-false-no-fault.err" || fail "ablate-false-no-fault.json: not refused for its kill_agent step"

# 2. One run, one topology (boots of topologies cost seconds under TCG):
# healthy passes, the wrong expectation fails with expected/observed per
# host, and the third scenario (interrupt.json, copied under a topic that
# sorts last) is interrupted with SIGINT after its connect, while its
# agents run.  Then nothing of the lab may be left.
mkdir -p "$OUT/zz-selftest"
cp "$LAB/interrupt.json" "$OUT/zz-selftest/interrupt.json"
t0=${EPOCHREALTIME/[.,]/}
run_bg "$OUT/run" "$LAB/healthy.json" "$LAB/wrong-expectation.json" "$OUT/zz-selftest/interrupt.json"
run_wait_connects "$OUT/run" 3 90
pgrep -f 'qplab agent' >/dev/null || fail "no agent running mid-scenario"
run_interrupt "$OUT/run"
[ "$RUN_RC" = 1 ] || fail "exit $RUN_RC, want 1"
grep -q '^ok [0-9]* - lab/healthy$' "$OUT/run.tap" || fail "lab/healthy did not pass"
grep -q '^not ok [0-9]* - lab/wrong-expectation$' "$OUT/run.tap" || fail "lab/wrong-expectation did not fail"
grep -q '#   host a: code: expected ERR_REJECT_HANDSHAKE, observed OK' "$OUT/run.tap" ||
	fail "no expected/observed line for host a"
grep -q '#   host b: qp_states: expected all RESET, observed RTS,RTS' "$OUT/run.tap" ||
	fail "no expected/observed line for host b"
grep -q '^# interrupted' "$OUT/run.tap" || fail "the interrupted run did not say so"
for f in results.json junit.xml; do [ -s "$OUT/run/$f" ] || fail "no $OUT/run/$f"; done
"$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["runs"][0]["summary"]; assert (s["pass"], s["fail"]) == (1, 1), s' \
	"$OUT/run/results.json" || fail "results.json summary is not 1 pass, 1 fail"
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after SIGINT: $left"
note "run with SIGINT in scenario 3: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms, nothing left"

# 2b. A crash between up and down, and a failing undo: the runner killed
# with SIGKILL inside a scenario (after its connect, its agents running)
# tears nothing down. Its agents exit when their stdin, the runner's pipe,
# closes; what it built is in its topology's undo registry. Host a's rxe
# device is then renamed behind topo's back, so that one registered undo
# fails: `topo down --all` removes everything else from the registry alone,
# exits 1 naming the failure log, which has that command and its error and
# nothing more, and nothing of the lab is left (the renamed device goes
# with its link).
mkdir -p "$OUT/zz-crash"
cp "$LAB/interrupt.json" "$OUT/zz-crash/interrupt.json"
t0=${EPOCHREALTIME/[.,]/}
run_bg "$OUT/crash" "$OUT/zz-crash/interrupt.json"
run_wait_connects "$OUT/crash" 1 90
kill -KILL "$RUN_PID"
wait "$RUN_PID" || true
agents_gone() { ! pgrep -f 'qplab agent' >/dev/null; }
wait_until 30 agents_gone || fail "agents survive their killed runner: $(pgrep -af 'qplab agent')"
regs=("$QPLAB_STATE_DIR"/*.undo)
if [ ${#regs[@]} != 1 ] || [ ! -e "${regs[0]}" ]; then fail "the killed run left not one undo registry: ${regs[*]}"; fi
name=${regs[0]##*/} name=${name%.undo}
rxe=$QPLAB_PREFIX$name-a moved=moved$$
rdma dev set "$rxe" name "$moved" || fail "cannot rename $rxe (the killed run's host a)"
log=$QPLAB_STATE_DIR/undo-failures.log before=0
[ ! -e "$log" ] || before=$(wc -l <"$log")
rc=0
"$TOPO" down --all 2>"$OUT/crash.down" || rc=$?
sed 's/^/  /' "$OUT/crash.down"
[ $rc = 1 ] || fail "down --all after the runner was killed, one undo failing: exit $rc, want 1"
grep -qF "1 undo command(s) failed (registry $name.undo); each, with its error, is in $log" "$OUT/crash.down" ||
	fail "down --all did not name the failure log"
! grep -q 'left over\|look like the lab' "$OUT/crash.down" || fail "down --all found more wrong than the failing undo"
new=$(tail -n +$((before + 1)) "$log")
if [ "$(wc -l <<<"$new")" != 1 ] || ! grep -q " $name: undo failed: .*rdma link del $rxe: .*$rxe" <<<"$new"; then
	fail "the failure log does not hold exactly the failed undo: $new"
fi
moved_gone() { [ ! -e "/sys/class/infiniband/$moved" ]; }
wait_until 10 moved_gone || { rdma link del "$moved" || true; fail "the renamed $moved survived its link"; }
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after the runner was killed and down --all: $left"
note "runner killed (SIGKILL) in a scenario, one undo made to fail, then down --all: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms, exit 1, logged: ${new#* * }, nothing left"

# 3. The catalogue's `smoke` slice and the step self-tests, one run (one
# topology: the steps-* files share the smoke scenarios' two hosts; the
# topology steps are undone between scenarios, the device deletion sorts
# last).  Every scenario must pass or skip.
t0=${EPOCHREALTIME/[.,]/}
rc=0
abl=() cap=() want=0
if [ "${QPLAB_VM_SET:-full}" = full ]; then
	abl=(--ablate "$LAB/ablate-vacuous.json" --tag ablate) want=1
	# ... and captured: a pcap per scenario, and the wire expectations of
	# the `capture` scenario evaluated through tshark and our dissector.
	cap=(--capture --tag capture)
fi
"$Q" run scenarios "$LAB"/steps-*.json "${abl[@]}" "${cap[@]}" --tag smoke --tag steps --out "$OUT/smoke" \
	>"$OUT/smoke.tap" 2>"$OUT/smoke.err" || rc=$?
sed 's/^/  /' "$OUT/smoke.tap"
[ $rc = $want ] || fail "smoke slice and step self-tests${abl:+ (--ablate)}: exit $rc, want $want (stderr: $OUT/smoke.err)"
suffix='\( \[ablation: unmarked\]\)\?'
grep -q "^ok [0-9]* - lab/steps-agent$suffix\$" "$OUT/smoke.tap" || fail "lab/steps-agent did not pass"
grep -q "^ok [0-9]* - lab/steps-x-delete-device$suffix\$" "$OUT/smoke.tap" || fail "lab/steps-x-delete-device did not pass"
grep -q '^# overhead: ' "$OUT/smoke.tap" || fail "no # overhead line"
if [ ${#abl[@]} -gt 0 ]; then
	# The vacuous self-test is the one insensitive scenario and the only
	# not ok; every smoke scenario that names a fault is sensitive.
	grep -q '^not ok [0-9]* - lab/ablate-vacuous \[ablation: insensitive\]$' "$OUT/smoke.tap" ||
		fail "lab/ablate-vacuous is not reported insensitive"
	others=$(grep '^not ok' "$OUT/smoke.tap" | grep -v ' - lab/ablate-vacuous ' || true)
	[ -z "$others" ] || fail "--ablate: not ok besides the vacuous self-test: $others"
	grep -q '^# ablation: [0-9]* sensitive, 1 insensitive, 0 error, [0-9]* no fault, [0-9]* unmarked, 0 not run$' \
		"$OUT/smoke.tap" || fail "no or wrong # ablation summary line"
	"$PY" - "$OUT/smoke/results.json" <<'PYEOF' || fail "results.json: ablation verdicts wrong"
import json, sys
scs = json.load(open(sys.argv[1]))["runs"][0]["scenarios"]
by = {s["id"]: s.get("ablation") or {} for s in scs}
assert by["lab/ablate-vacuous"]["verdict"] == "insensitive", by["lab/ablate-vacuous"]
assert by["lab/ablate-vacuous"]["removed"] == ["/hosts/b/agent/qp_retry_cnt"], by["lab/ablate-vacuous"]
faulty = [i for i, a in by.items() if a.get("removed") and i != "lab/ablate-vacuous"]
assert len(faulty) >= 9, faulty
for i in faulty:
    a = by[i]
    assert a["verdict"] == "sensitive" and a["failed"] and a["twin_ms"] > 0, (i, a)
PYEOF
fi
if [ ${#cap[@]} -gt 0 ]; then
	"$PY" - "$OUT/smoke/results.json" "$OUT/smoke" <<'PYEOF' || fail "results.json: the captured slice is wrong"
import json, os, sys
scs = json.load(open(sys.argv[1]))["runs"][0]["scenarios"]
ran = [s for s in scs if s["status"] in ("pass", "fail")]
for s in ran:
    pc = s.get("pcaps") or []
    assert pc, ("no pcap", s["id"])
    for p in pc:
        assert not p["truncated"] and os.path.getsize(os.path.join(sys.argv[2], p["path"])) > 24, (s["id"], p)
one = [s for s in scs if s["id"] == "basic/connect-1qp"][0]
wire = [e for e in one["expectations"] if e.get("wire")]
assert one["status"] == "pass" and len(wire) >= 3 and all(e["ok"] for e in wire), (one["status"], wire)
print("# captured: %d scenarios with a pcap each, %d packets; basic/connect-1qp: %d wire expectations ok" %
      (len(ran), sum(p["packets"] for s in ran for p in s["pcaps"]), len(wire)))
PYEOF
fi
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after the smoke run: $left"
note "smoke slice + step self-tests${abl:+ with --ablate}${cap:+ and --capture}: $(grep -c '^ok' "$OUT/smoke.tap") ok in $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms; $(grep '^# overhead' "$OUT/smoke.tap" | cut -c3-)${abl:+; $(grep '^# ablation: [0-9]' "$OUT/smoke.tap" | cut -c3-)}"
