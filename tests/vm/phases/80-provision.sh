# sets: smoke full
# shellcheck shell=bash disable=SC2154 # sourced by in-vm.sh after netns/lib.sh and tests/vm/lib.sh
# A stock kernel as a lab host (scripts/provision-host.sh, what the Vagrant
# VMs run): rdma_rxe loaded, an rxe device on the named NIC, its port
# ACTIVE, qplab installed; run twice, the second run changes nothing.  Then
# `qplab doctor` on a kernel that loads rdma_rxe says which host mode it
# will use and why.
suffix=$$
nic=qlpv$suffix
peer=qlpw$suffix
dev=rxe_$nic
prefix=$(mktemp -d /tmp/qlprov.XXXXXX)
cleanup() {
	rdma link del "$dev" 2>/dev/null || true
	ip link del "$nic" 2>/dev/null || true
	rm -rf "$prefix"
}
trap cleanup EXIT
ip link add "$nic" type veth peer name "$peer"
ip link set "$peer" up
# The install is the same on every kernel: the full set (the default
# kernel) builds and installs, the smoke set (the others) provisions the
# device only.  The set: QPLAB_VM_SET, else in-vm.sh's --set.
set_name=${QPLAB_VM_SET:-}
if [ -z "$set_name" ]; then
	case " $(tr '\0' ' ' </proc/$PPID/cmdline 2>/dev/null) " in
	*" --set smoke "*) set_name=smoke ;;
	*) set_name=full ;;
	esac
fi
prov="$QPLAB_ROOT/scripts/provision-host.sh --netdev $nic --prefix $prefix --source $QPLAB_ROOT --in-place"
[ "$set_name" = smoke ] && prov="$QPLAB_ROOT/scripts/provision-host.sh --netdev $nic --no-install"

out1=$($prov 2>&1) || fail "first run failed: $out1"
note "first run: $(echo "$out1" | tr '\n' '|')"
grep -q "created $dev on $nic" <<<"$out1" || fail "first run did not create $dev: $out1"
out2=$($prov 2>&1) || fail "second run failed: $out2"
note "second run: $(echo "$out2" | tr '\n' '|')"
grep -q "$dev on $nic is already there" <<<"$out2" || fail "second run did not find $dev: $out2"
n=0
for d in /sys/class/infiniband/*; do
	[ "$(cat "$d/ports/1/gid_attrs/ndevs/0" 2>/dev/null)" = "$nic" ] && n=$((n + 1))
done
[ $n = 1 ] || fail "$n RDMA devices on $nic after two runs, want 1"
state=$(cat "/sys/class/infiniband/$dev/ports/1/state")
case $state in *ACTIVE*) note "$dev port 1: $state" ;; *) fail "$dev port 1 is $state" ;; esac
[ "$set_name" = smoke ] || [ -x "$prefix/bin/qplab" ] || fail "no $prefix/bin/qplab after the install"
# A bad NIC is refused, not half-provisioned.
if "$QPLAB_ROOT/scripts/provision-host.sh" --netdev qlnone$suffix --no-install >/dev/null 2>&1; then
	fail "a missing NIC was accepted"
fi

# doctor on a kernel whose rdma_rxe loads: the backend is this host, named.
doc=$("$QPLAB_ROOT/netns/doctor" 2>&1) || fail "doctor: $doc"
note "doctor: $(grep -E '^(host rxe|backend):' <<<"$doc" | tr '\n' '|')"
read -r krel </proc/sys/kernel/osrelease
case $krel in
6.*) want=shared ;;
*) want=netns ;;
esac
grep -qE "^host rxe: +$want" <<<"$doc" || fail "doctor's host rxe is not $want: $doc"
grep -qE "^backend: +$want" <<<"$doc" || fail "doctor's backend is not $want: $doc"
