# sets: full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# IPv6 GIDs in shared mode (ip -6 pair rules): the RC connection uses the
# fd00:199:: GIDs and passes.
require_cmd ibv_rc_pingpong ss timeout
topo_up six --hosts a,b --mode shared --ipv6
if [ -z "${H_GID6[0]}" ] || [ -z "${H_GID6[1]}" ]; then fail "no IPv6 GID index in the topology JSON"; fi
pp b a 6 || fail "ibv_rc_pingpong over IPv6 GIDs failed: $PP_OUT"
grep -q 'GID fd00:199::' <<<"$PP_OUT" || fail "pingpong did not use the IPv6 GIDs: $PP_OUT"
note "IPv6 GIDs $(grep -m1 'GID fd00' <<<"$PP_OUT")"
topo_down
