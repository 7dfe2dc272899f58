# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# `qplab run --jobs N`.  Shared mode (one routing table): --jobs 2 is
# refused, exit 2, with the reason.  Netns mode: five scenarios (one a
# deliberate failure, one of three hosts on a bridge) on three jobs: each
# reported exactly once, the TAP plan and numbers right, results.json
# valid and in catalogue order; then SIGINT while two jobs are inside
# their scenarios: nothing of the lab left (namespaces, veths, bridges,
# rxe devices, rules, agents, workers, topo state); the two
# interrupted scenarios are reported.  Last, a worker killed with SIGKILL:
# its scenario is an error, the run ends, nothing is left.  Outputs under
# build/check-lab/jobs/.
require_cmd python3
build=${QPLAB_BUILD:-$QPLAB_ROOT/build}
Q=$build/qplab
OUT=$build/check-lab/jobs
LAB=$QPLAB_ROOT/tests/lab
[ -x "$Q" ] || fail "$Q not built"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$QPLAB_ROOT" || fail "cannot cd to $QPLAB_ROOT"

mode=$("$QPLAB_ROOT/netns/probe" 2>/dev/null | sed -n 's/^mode: //p')
if [ "$mode" = shared ]; then
	rc=0
	"$Q" run "$LAB/healthy.json" "$LAB/wrong-expectation.json" --jobs 2 --out "$OUT/shared" \
		>"$OUT/shared.out" 2>"$OUT/shared.err" || rc=$?
	[ $rc = 2 ] || fail "shared mode, --jobs 2: exit $rc, want 2"
	grep -q -- '--jobs 2: the shared topology mode .* one routing table' "$OUT/shared.err" ||
		fail "shared mode, --jobs 2: no reason: $(cat "$OUT/shared.err")"
	! grep -q '^ok\|^not ok' "$OUT/shared.out" || fail "shared mode, --jobs 2 ran scenarios"
	note "shared mode refuses --jobs 2: $(head -n 1 "$OUT/shared.err")"
	exit 0
fi
[ "$mode" = netns ] || fail "netns/probe: mode '$mode'"

# 1. Five scenarios on three jobs.
files=("$LAB/healthy.json" "$LAB/wrong-expectation.json" "$LAB/ring.json"
	scenarios/basic/connect-1qp.json scenarios/basic/connect-2qp.json)
t0=${EPOCHREALTIME/[.,]/}
rc=0
"$Q" run "${files[@]}" --jobs 3 --out "$OUT/three" >"$OUT/three.tap" 2>"$OUT/three.err" || rc=$?
sed 's/^/  /' "$OUT/three.tap"
[ $rc = 1 ] || fail "--jobs 3: exit $rc, want 1 (one deliberate failure; stderr: $OUT/three.err)"
grep -qx '1\.\.5' "$OUT/three.tap" || fail "--jobs 3: no plan 1..5"
grep -q '^# 3 jobs: ' "$OUT/three.tap" || fail "--jobs 3: no '# 3 jobs' line"
nums=$(grep -E '^(not )?ok ' "$OUT/three.tap" | sed -E 's/^(not )?ok ([0-9]+) .*/\2/' | tr '\n' ' ')
[ "$nums" = "1 2 3 4 5 " ] || fail "--jobs 3: test numbers '$nums', want 1 to 5 in order"
for id in lab/healthy lab/ring basic/connect-1qp basic/connect-2qp; do
	[ "$(grep -c "^ok [0-9]* - $id\$" "$OUT/three.tap")" = 1 ] || fail "--jobs 3: $id not passed exactly once"
done
[ "$(grep -c '^not ok [0-9]* - lab/wrong-expectation$' "$OUT/three.tap")" = 1 ] ||
	fail "--jobs 3: lab/wrong-expectation did not fail exactly once"
grep -q '#   host b: qp_states: expected all RESET, observed RTS,RTS' "$OUT/three.tap" ||
	fail "--jobs 3: the failure's diagnostic is missing"
grep -q '^# summary: 5 of 5 scenarios .* 4 pass, 1 fail, 0 skip, 0 error' "$OUT/three.tap" ||
	fail "--jobs 3: summary: $(grep '^# summary' "$OUT/three.tap")"
[ -s "$OUT/three/junit.xml" ] || fail "--jobs 3: no junit.xml"
"$PY" - "$OUT/three/results.json" <<'EOF' || fail "--jobs 3: results.json"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
ids = [s["id"] for s in run["scenarios"]]
assert ids == sorted(ids) and len(ids) == 5, ids  # catalogue order, each once
assert run["summary"] == {"total": 5, "pass": 4, "fail": 1, "skip": 0, "error": 0}, run["summary"]
assert all(s["hosts"] and "overhead_ms" in s for s in run["scenarios"])
EOF
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after --jobs 3: $left"
note "--jobs 3, five scenarios: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms, each once, nothing left"

# 2. SIGINT while two jobs are inside their scenarios: two copies of
# interrupt.json (connect, then wait for ever) and one more that no job
# reaches.  The runner orders by id, so the copies' ids (aa1/, aa2/) sort
# before lab/healthy: the two jobs take them first, and the two connect
# steps waited for are theirs.  (Copies sorting after lab/healthy let one
# job finish it and count its connect, and SIGINT could come before the
# second copy had started.)
mkdir -p "$OUT/aa1" "$OUT/aa2" "$OUT/zz1"
cp "$LAB/interrupt.json" "$OUT/aa1/interrupt.json"
cp "$LAB/interrupt.json" "$OUT/aa2/interrupt.json"
cp "$LAB/interrupt.json" "$OUT/zz1/interrupt.json"
t0=${EPOCHREALTIME/[.,]/}
run_bg "$OUT/int" "$OUT/aa1/interrupt.json" "$OUT/aa2/interrupt.json" "$LAB/healthy.json" --jobs 2
run_wait_connects "$OUT/int" 2 120
[ "$(pgrep -c -P "$RUN_PID")" = 2 ] || fail "not two workers under the runner: $(pgrep -a -P "$RUN_PID")"
run_interrupt "$OUT/int"
[ "$RUN_RC" = 1 ] || fail "SIGINT: exit $RUN_RC, want 1"
grep -q '^# interrupted' "$OUT/int.tap" || fail "the interrupted run did not say so"
[ "$(grep -c '^not ok [0-9]* - aa[12]/interrupt$' "$OUT/int.tap")" = 2 ] ||
	fail "SIGINT: the two interrupted scenarios are not both reported (not ok)"
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/int/results.json" || fail "SIGINT: results.json not valid"
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after SIGINT in a --jobs 2 run: $left"
note "--jobs 2, SIGINT in two scenarios: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms, nothing left"

# 3. A worker killed (SIGKILL) inside its scenario: that scenario is an
# error naming the signal, the others are reported, the run ends, and the
# runner removes the dead worker's topology (its agents exit when their
# stdin, the worker's pipe, closes).  The ids sort so that the long
# scenario (zz1/interrupt) is taken last, by whichever job is free first;
# it is then the only worker left.
t0=${EPOCHREALTIME/[.,]/}
run_bg "$OUT/kill" "$OUT/zz1/interrupt.json" "$LAB/healthy.json" scenarios/basic/connect-1qp.json --jobs 2
pid=$RUN_PID
last_one() { run_connects "$OUT/kill" 3 && [ "$(pgrep -c -P "$pid")" = 1 ]; }
wait_until 180 last_one || { kill -INT "$pid"; wait "$pid"; fail "never one worker left in zz1/interrupt: $(tail -n 5 "$OUT/kill.err")"; }
victim=$(pgrep -P "$pid")
kill -KILL "$victim"
rc=0
wait_until 60 sh -c "! kill -0 $pid 2>/dev/null" || { kill -INT "$pid"; fail "the run did not end after its worker died"; }
wait "$pid" || rc=$?
sed 's/^/  /' "$OUT/kill.tap"
[ $rc = 1 ] || fail "worker killed: exit $rc, want 1"
grep -A1 '^not ok [0-9]* - zz1/interrupt$' "$OUT/kill.tap" | grep -q '# error: job [01] died (signal 9) while running this scenario' ||
	fail "the killed worker's scenario is not an error naming the signal"
for id in lab/healthy basic/connect-1qp; do
	grep -q "^ok [0-9]* - $id\$" "$OUT/kill.tap" || fail "worker killed: $id did not pass"
done
grep -q '^# summary: 3 of 3 scenarios .* 2 pass, 0 fail, 0 skip, 1 error' "$OUT/kill.tap" ||
	fail "worker killed: summary: $(grep '^# summary' "$OUT/kill.tap")"
left=$(lab_leftovers)
[ -z "$left" ] || fail "left over after a worker was killed: $left"
note "--jobs 2, a worker killed: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms, its scenario an error, nothing left"
