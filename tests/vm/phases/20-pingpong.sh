# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# Two hosts, in the mode the probe picks and in shared mode: rdma-core's
# ibv_rc_pingpong passes across them, and down leaves nothing.
require_cmd ibv_rc_pingpong ss timeout
picked=$("$QPLAB_ROOT/netns/probe")
picked=${picked##*mode: }
modes=("$picked")
[ "$picked" = shared ] || modes+=(shared)
for m in "${modes[@]}"; do
	topo_up pp --hosts a,b --mode "$m"
	[ "$T_MODE" = "$m" ] || fail "asked for $m, got $T_MODE"
	pp b a || fail "ibv_rc_pingpong a->b failed in $m mode: $PP_OUT"
	note "$m: a->b $(grep -m1 'iters in' <<<"$PP_OUT")"
	topo_down
done
