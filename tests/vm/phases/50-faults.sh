# sets: full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# Every fault hook cuts the RoCE path (ibv_rc_pingpong) and the TCP path
# (a socket bound to the host's lab address) the same way in both modes.
require_cmd ibv_rc_pingpong ibv_devinfo ss timeout tc perl
picked=$("$QPLAB_ROOT/netns/probe")
picked=${picked##*mode: }
modes=("$picked")
[ "$picked" = shared ] || modes+=(shared)
check() { # label expected-roce expected-tcp
	local r=ok t=ok
	# A path expected to be cut gets a short deadline (rxe gives up after
	# its retries in well under a second); one expected to work a long one.
	if [ "$2" = cut ]; then pp b a 4 6 || r="cut"; else pp b a || pp b a || r="cut"; fi
	tcp b a || t="cut"
	note "$m: $1: roce $r, tcp $t (expected $2/$3)"
	[ "$r/$t" = "$2/$3" ] || fail "$m: $1: roce $r, tcp $t; expected $2/$3"
}
for m in "${modes[@]}"; do
	topo_up flt --hosts a,b --mode "$m"
	F="$TOPO fault --name $T_NAME"
	check baseline ok ok
	$F link a down; check link-down cut cut
	$F link a up; wait_until 5 sh -c "${H_EXEC[0]} rdma link show ${H_RXE[0]}/1 | grep -q ACTIVE" || true
	check link-up ok ok
	$F drop-roce a; check drop-roce cut ok
	$F clear a
	$F netem a loss 100; check netem-loss-100 cut cut
	$F clear a
	$F blackhole a b; check blackhole cut cut
	$F unblackhole a b
	$F mtu a 1280
	# shellcheck disable=SC2086
	mtu=$(${H_EXEC[0]} ibv_devinfo -d "${H_RXE[0]}" | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
	[ "$mtu" = 1024 ] || fail "$m: mtu 1280 gave active_mtu '$mtu', expected 1024"
	note "$m: mtu 1280 -> rxe active_mtu $mtu"
	$F del-rxe a
	! rdma link show "${H_RXE[0]}/1" >/dev/null 2>&1 || fail "$m: del-rxe left ${H_RXE[0]}"
	tcp b a || fail "$m: del-rxe cut TCP"
	note "$m: del-rxe removed ${H_RXE[0]}, TCP still passes"
	topo_down
done
