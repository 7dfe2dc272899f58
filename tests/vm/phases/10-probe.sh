# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# The capability probe decides by testing; on 7.x kernels rxe must keep a
# socket per namespace (netns mode), on 6.x only the shared mode works.
out=$("$QPLAB_ROOT/netns/probe" --fresh) || fail "probe found no working mode: $out"
note "$out"
read -r krel </proc/sys/kernel/osrelease
mode=${out##*mode: }
case $krel in
6.*) [ "$mode" = shared ] || fail "expected shared on $krel, probe picked $mode" ;;
*) [ "$mode" = netns ] || fail "expected netns on $krel, probe picked $mode" ;;
esac
