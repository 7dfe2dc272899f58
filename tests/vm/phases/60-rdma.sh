# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# The rdma Check suite (build/tests/rdma, lib/verbs..endpoint on real rxe):
# one process, two lab hosts in shared mode (two devices, two daemons on
# the two host addresses).  The full set on the default kernel, the
# `smoke`-tagged slice on the others (QPLAB_VM_SET=smoke, or --set smoke).
build=${QPLAB_BUILD:-$QPLAB_ROOT/build}
[ -x "$build/tests/rdma" ] || fail "$build/tests/rdma not built (make build/tests/rdma)"
topo_up rdma --hosts a,b --mode shared
[ "$T_MODE" = shared ] || fail "asked for shared, got $T_MODE"
export QPLAB_RDMA_DEVS="${H_RXE[0]},${H_RXE[1]}"
export QPLAB_RDMA_ADDRS="${H_ADDR4[0]},${H_ADDR4[1]}"
export QPLAB_RDMA_NETDEVS="${H_IF[0]},${H_IF[1]}"
# The events suite takes host b's link down and up with `topo fault`.
export QPLAB_RDMA_TOPO="$TOPO" QPLAB_RDMA_TOPO_NAME=$T_NAME
# The set: QPLAB_VM_SET when the driver exports it, else in-vm.sh's --set.
set_name=${QPLAB_VM_SET:-}
if [ -z "$set_name" ]; then
	case " $(tr '\0' ' ' </proc/$PPID/cmdline 2>/dev/null) " in
	*" --set smoke "*) set_name=smoke ;;
	*) set_name=full ;;
	esac
fi
smoke=0
[ "$set_name" = smoke ] && smoke=1
note "rdma suite: $set_name set"
rc=0
(cd "$QPLAB_ROOT" && QPLAB_RDMA_SMOKE=$smoke "$build/tests/rdma") || rc=$?
topo_down
[ $rc = 0 ] || fail "rdma suite failed (rc $rc)"
