# sets: full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# Three hosts on one bridge in shared mode (pair rules per source and
# destination): a->b, b->c and c->a all pass.
require_cmd ibv_rc_pingpong ss timeout
topo_up tri --hosts a,b,c --mode shared
for p in "b a" "c b" "a c"; do
	# shellcheck disable=SC2086
	pp $p || fail "ibv_rc_pingpong ${p#* }->${p% *} failed: $PP_OUT"
done
note "a->b, b->c, c->a passed"
topo_down
