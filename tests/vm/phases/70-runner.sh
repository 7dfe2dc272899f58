# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# The runner's self-tests (qplab run on tests/lab/): a healthy scenario
# passes and a wrong expectation fails with expected/observed per host;
# syntax error, unknown key and duplicate key are refused with file:line
# (exit 2); SIGINT in the middle of a scenario leaves no namespace, veth,
# rxe device, rule or agent process; then the catalogue's smoke slice and
# the step self-tests (tests/lab/steps-*.json: every step kind has its
# effect) in one run, which must pass.  Outputs under build/check-lab/.
build=${QPLAB_BUILD:-$QPLAB_ROOT/build}
Q=$build/qplab
OUT=$build/check-lab
LAB=$QPLAB_ROOT/tests/lab
[ -x "$Q" ] || fail "$Q not built"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$QPLAB_ROOT" || fail "cannot cd to $QPLAB_ROOT"

# 1. Bad files: exit 2, every message FILE:LINE.
for f in bad-syntax unknown-key duplicate-key; do
	rc=0
	"$Q" run "$LAB/$f.json" --out "$OUT/$f" >"$OUT/$f.out" 2>"$OUT/$f.err" || rc=$?
	[ $rc = 2 ] || fail "$f.json: exit $rc, want 2"
	grep -q "^$LAB/$f.json:[0-9][0-9]*: " "$OUT/$f.err" || fail "$f.json: no FILE:LINE message: $(cat "$OUT/$f.err")"
	note "$f.json refused: $(head -n 1 "$OUT/$f.err")"
done

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

# 3. The catalogue's `smoke` slice and the step self-tests, one run (one
# topology: the steps-* files share the smoke scenarios' two hosts; the
# topology steps are undone between scenarios, the device deletion sorts
# last).  Every scenario must pass or skip.
t0=${EPOCHREALTIME/[.,]/}
rc=0
"$Q" run scenarios "$LAB"/steps-*.json --tag smoke --tag steps --out "$OUT/smoke" \
	>"$OUT/smoke.tap" 2>"$OUT/smoke.err" || rc=$?
sed 's/^/  /' "$OUT/smoke.tap"
[ $rc = 0 ] || fail "smoke slice and step self-tests: exit $rc (stderr: $OUT/smoke.err)"
grep -q '^ok [0-9]* - lab/steps-agent$' "$OUT/smoke.tap" || fail "lab/steps-agent did not pass"
grep -q '^ok [0-9]* - lab/steps-x-delete-device$' "$OUT/smoke.tap" || fail "lab/steps-x-delete-device did not pass"
grep -q '^# overhead: ' "$OUT/smoke.tap" || fail "no # overhead line"
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after the smoke run: $left"
note "smoke slice + step self-tests: $(grep -c '^ok' "$OUT/smoke.tap") ok in $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms; $(grep '^# overhead' "$OUT/smoke.tap" | cut -c3-)"
