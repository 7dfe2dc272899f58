#!/usr/bin/env bash
# vagrant-inventory.sh — the hosts-backend inventory (docs/inventory.md) for
# the two VMs of the Vagrantfile, from `vagrant ssh-config`.
#
# Usage: scripts/vagrant-inventory.sh [--ssh-config FILE --netdevs LAB,SSH] [--out DIR]
#
# Writes DIR/ssh_config (what `vagrant ssh-config a b` printed: how to reach
# each VM) and DIR/inventory.json (default DIR: build/vagrant).  Run it from
# the checkout holding the Vagrantfile, with the VMs up: it asks each VM
# over ssh which netdev holds its lab address and which one its ssh session
# came in on.  --ssh-config FILE --netdevs LAB,SSH takes the ssh config from
# FILE and the two netdev names as given instead of asking (for tests).  The
# addresses and the device are the Vagrantfile's: 192.168.56.11 and .12, rxe0;
# qplab in /usr/local/bin.  Exit 0, 1 on a failure, 2 for a usage error.
set -eu -o pipefail

top=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
out=$top/build/vagrant
from="" netdevs=""
while [ $# -gt 0 ]; do
	case $1 in
	--ssh-config) [ $# -ge 2 ] || { echo "vagrant-inventory: --ssh-config needs a file" >&2; exit 2; }; from=$2; shift ;;
	--netdevs) [ $# -ge 2 ] || { echo "vagrant-inventory: --netdevs needs LAB,SSH" >&2; exit 2; }; netdevs=$2; shift ;;
	--out) [ $# -ge 2 ] || { echo "vagrant-inventory: --out needs a directory" >&2; exit 2; }; out=$2; shift ;;
	-h | --help) sed -n '/^# Usage:/,/^# for a usage/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vagrant-inventory: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ -z "$from" ] || [ -n "$netdevs" ] || { echo "vagrant-inventory: --ssh-config goes with --netdevs LAB,SSH" >&2; exit 2; }
case $netdevs in '' | *[A-Za-z0-9._-],[A-Za-z0-9._-]*) ;; *) echo "vagrant-inventory: --netdevs wants LAB,SSH netdev names" >&2; exit 2 ;; esac
mkdir -p "$out"
if [ -n "$from" ]; then
	cp "$from" "$out/ssh_config"
else
	command -v vagrant >/dev/null 2>&1 || { echo "vagrant-inventory: vagrant missing" >&2; exit 1; }
	(cd "$top" && vagrant ssh-config a b) >"$out/ssh_config.tmp" || { echo "vagrant-inventory: vagrant ssh-config a b failed: are the VMs up (vagrant up)?" >&2; exit 1; }
	mv "$out/ssh_config.tmp" "$out/ssh_config"
fi
for h in a b; do
	grep -qE "^Host $h\$" "$out/ssh_config" || { echo "vagrant-inventory: no Host $h in the ssh config" >&2; exit 1; }
done
cfg=$(cd "$out" && pwd)/ssh_config
# The netdevs of VM NAME: the one holding ADDRESS, and the one its ssh
# session arrives on (the server address of SSH_CONNECTION).
netdevs_of() { # NAME ADDRESS -> "LAB SSH"
	if [ -n "$netdevs" ]; then
		echo "${netdevs%,*} ${netdevs#*,}"
		return
	fi
	# shellcheck disable=SC2016 # expanded on the VM
	ssh -F "$cfg" -o BatchMode=yes "$1" 'ip -o addr show; echo "SSH $SSH_CONNECTION"' |
		awk -v a="$2" '$1 == "SSH" { s = $4; next } { split($4, p, "/"); dev[p[1]] = $2 }
			END { if (!(a in dev) || !(s in dev)) exit 1; print dev[a], dev[s] }' ||
		{ echo "vagrant-inventory: cannot tell $1's netdevs over ssh (is it provisioned?)" >&2; exit 1; }
}
host() { # NAME ADDRESS

	read -r lab sshdev <<<"$(netdevs_of "$1" "$2")"
	[ "$lab" != "$sshdev" ] || { echo "vagrant-inventory: $1's lab address $2 is on its ssh netdev $lab" >&2; exit 1; }
	cat <<EOT
    "$1": {
      "ssh": { "alias": "$1", "config": "$cfg" },
      "qplab": "/usr/local/bin/qplab",
      "device": "rxe0",
      "port": 1,
      "netdev": "$lab",
      "address": "$2",
      "lab_host": true,
      "ssh_netdev": "$sshdev",
      "faults": ["link", "netem", "mtu", "blackhole", "delete_device"]
    }
EOT
}
{
	printf '{\n  "version": 1,\n  "hosts": {\n'
	host a 192.168.56.11
	printf '    ,\n'
	host b 192.168.56.12
	printf '  }\n}\n'
} >"$out/inventory.json.tmp"
mv "$out/inventory.json.tmp" "$out/inventory.json"
echo "vagrant-inventory: $out/inventory.json (hosts a, b; ssh through $cfg)"
