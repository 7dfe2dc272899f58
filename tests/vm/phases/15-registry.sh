# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# The undo registry (docs/lab-backends.md, "State, teardown, crashes"):
# 1. names are unique: with a suffix alphabet of one letter (one possible
#    name), reg_new takes the name once, refuses it while its registry
#    exists, and refuses it when a namespace of that name exists that no
#    registry names;
# 2. a namespace named like the lab's that no registry names: `down --all`
#    lists it, exits 1, and leaves it alone.
# (A crash between up and down, the runner killed with SIGKILL, and a
# failing undo: 70-runner.)
require_cmd ip rdma
ms_since() { local t=${EPOCHREALTIME/[.,]/}; echo $(( (t - $1) / 1000 )); }
foreign=${QPLAB_PREFIX}x$$
trap 'rm -f "$QPLAB_STATE_DIR/uq$$aaa.undo"; ip netns del "$foreign" 2>/dev/null || true; ip netns del "${QPLAB_PREFIX}uq$$aaa-x" 2>/dev/null || true' EXIT

# 1. One possible name: taken once, then refused.
t0=${EPOCHREALTIME/[.,]/}
base=uq$$
one() { REG_SUFFIX_CHARS=a reg_new "$base"; }
( one && echo "$REG_HANDLE" ) >/tmp/reg1 2>&1 || fail "reg_new $base: $(cat /tmp/reg1)"
[ "$(cat /tmp/reg1)" = "${base}aaa" ] || fail "reg_new $base named it '$(cat /tmp/reg1)', want ${base}aaa"
grep -qx "owner $PPID" "$QPLAB_STATE_DIR/${base}aaa.undo" || fail "the registry does not name its owner: $(cat "$QPLAB_STATE_DIR/${base}aaa.undo")"
! ( one ) 2>/tmp/reg2 || fail "reg_new $base took ${base}aaa a second time"
grep -q "no free name for '$base'" /tmp/reg2 || fail "reg_new: no reason given: $(cat /tmp/reg2)"
rm -f "$QPLAB_STATE_DIR/${base}aaa.undo"
ip netns add "${QPLAB_PREFIX}${base}aaa-x"
! ( one ) 2>/tmp/reg2 || fail "reg_new $base took a name whose namespace ${QPLAB_PREFIX}${base}aaa-x exists"
[ ! -e "$QPLAB_STATE_DIR/${base}aaa.undo" ] || fail "reg_new left a registry for a name it refused"
ip netns del "${QPLAB_PREFIX}${base}aaa-x"
note "one possible name: taken once, refused while registered and while a namespace has it ($(ms_since "$t0") ms)"

# 2. A foreign namespace.
t0=${EPOCHREALTIME/[.,]/}
ip netns add "$foreign"
rc=0
"$TOPO" down --all 2>/tmp/down.err || rc=$?
sed 's/^/  /' /tmp/down.err
[ $rc = 1 ] || fail "down --all with a foreign namespace: exit $rc, want 1"
if ! grep -q "no registry names them" /tmp/down.err || ! grep -qx "  netns $foreign" /tmp/down.err; then
	fail "down --all did not list netns $foreign as foreign"
fi
[ -e "/run/netns/$foreign" ] || fail "down --all removed the foreign namespace $foreign"
ip netns del "$foreign"
note "foreign namespace $foreign: listed, exit 1, left alone ($(ms_since "$t0") ms)"
