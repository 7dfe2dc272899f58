# sets: smoke full
# The runner's self-tests (qplab run on tests/lab/): a healthy scenario
# passes and a wrong expectation fails with expected/observed per host;
# syntax error, unknown key and duplicate key are refused with file:line
# (exit 2); SIGINT in the middle of a scenario leaves no namespace, veth,
# rxe device, rule or agent process.  Outputs under build/check-lab/.
build=${QPLAB_BUILD:-$QPLAB_ROOT/build}
Q=$build/qplab
OUT=$build/check-lab
LAB=$QPLAB_ROOT/tests/lab
[ -x "$Q" ] || fail "$Q not built"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$QPLAB_ROOT"

# 1. Bad files: exit 2, every message FILE:LINE.
for f in bad-syntax unknown-key duplicate-key; do
	rc=0
	"$Q" run "$LAB/$f.json" --out "$OUT/$f" >"$OUT/$f.out" 2>"$OUT/$f.err" || rc=$?
	[ $rc = 2 ] || fail "$f.json: exit $rc, want 2"
	grep -q "^$LAB/$f.json:[0-9][0-9]*: " "$OUT/$f.err" || fail "$f.json: no FILE:LINE message: $(cat "$OUT/$f.err")"
	note "$f.json refused: $(head -n 1 "$OUT/$f.err")"
done

# 2. Healthy passes, wrong expectation fails with its diagnostic.
rc=0
t0=${EPOCHREALTIME/[.,]/}
QPLAB_RUN_TRACE=1 "$Q" run "$LAB/healthy.json" "$LAB/wrong-expectation.json" --out "$OUT/pair" \
	>"$OUT/pair.tap" 2>"$OUT/pair.err" || rc=$?
sed 's/^/  /' "$OUT/pair.tap"
[ $rc = 1 ] || fail "healthy + wrong-expectation: exit $rc, want 1"
grep -q '^ok [0-9]* - lab/healthy$' "$OUT/pair.tap" || fail "lab/healthy did not pass"
grep -q '^not ok [0-9]* - lab/wrong-expectation$' "$OUT/pair.tap" || fail "lab/wrong-expectation did not fail"
grep -q '#   host a: code: expected ERR_REJECT_HANDSHAKE, observed OK' "$OUT/pair.tap" ||
	fail "no expected/observed line for host a"
grep -q '#   host b: qp_states: expected all RESET, observed RTS,RTS' "$OUT/pair.tap" ||
	fail "no expected/observed line for host b"
for f in results.json junit.xml; do [ -s "$OUT/pair/$f" ] || fail "no $OUT/pair/$f"; done
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"][0]; assert r["summary"]["pass"]==1 and r["summary"]["fail"]==1, r["summary"]' \
	"$OUT/pair/results.json" || fail "results.json summary is not 1 pass, 1 fail"
note "pair: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms"

# 3. SIGINT in the middle of a scenario: everything goes.
t0=${EPOCHREALTIME/[.,]/}
QPLAB_RUN_TRACE=1 "$Q" run "$LAB/interrupt.json" --out "$OUT/interrupt" \
	>"$OUT/interrupt.tap" 2>"$OUT/interrupt.err" &
pid=$!
wait_until 60 grep -q 'qplab run: connect' "$OUT/interrupt.err" || { kill -INT $pid; fail "interrupt.json never reached its wait step"; }
pgrep -f 'qplab agent' >/dev/null || fail "no agent running mid-scenario"
kill -INT $pid
rc=0
wait $pid || rc=$?
[ $rc = 1 ] || fail "interrupted run: exit $rc, want 1"
grep -q '^# interrupted' "$OUT/interrupt.tap" || fail "interrupted run did not say so"
left=$( { ip netns list; ip -o link show; rdma link show; } 2>/dev/null | grep -o 'qlr[0-9]*-[a-z0-9]*' || true)
[ -z "$left" ] || fail "left over after SIGINT: $left"
! ip rule show | grep -q '10\.199\.' || fail "rules left over after SIGINT: $(ip rule show | grep '10\.199\.')"
! pgrep -f 'qplab agent' >/dev/null || fail "agent processes left over after SIGINT: $(pgrep -af 'qplab agent')"
note "interrupt: $(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 )) ms, nothing left"
