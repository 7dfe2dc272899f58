#!/usr/bin/env bash
# validate.sh — the files CI systems and Vagrant read, checked by their own
# tools (make ci-validate, part of make check):
#   the Vagrantfile        vagrant validate (no provider needed);
#   .github/workflows/*    @action-validator/cli (npm, scripts/deps.sh);
#   the Vagrant inventory  scripts/vagrant-inventory.sh on a recorded
#                          `vagrant ssh-config`, its JSON read back;
# and for each tool a broken copy it must refuse, so a validator that
# accepts anything is noticed.  TAP on stdout.  A missing tool is a SKIP
# with the reason, and a failure with CI=true (scripts/deps.sh installs them).
set -eu -o pipefail
export LC_ALL=C

top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
npm_prefix=${QPLAB_NPM_PREFIX:-/var/cache/qplab/npm}
validator=$npm_prefix/node_modules/.bin/action-validator
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=$((failed + 1)); }
missing() { # WHAT: a skip, or with CI=true a failure
	if [ "${CI:-}" = true ]; then not_ok "$1 # missing (scripts/deps.sh installs it)"; else ok "$1 # SKIP missing (scripts/deps.sh installs it)"; fi
}
echo "TAP version 13"

# vagrant validate reads ./Vagrantfile; a copy keeps .vagrant/ out of the tree.
if command -v vagrant >/dev/null 2>&1; then
	mkdir "$tmp/v" "$tmp/vbad"
	cp "$top/Vagrantfile" "$tmp/v/"
	if out=$(cd "$tmp/v" && VAGRANT_HOME=$tmp/vh vagrant validate --ignore-provider 2>&1); then
		ok "vagrant validate: $(echo "$out" | tail -1)"
	else
		not_ok "vagrant validate"
		while IFS= read -r l; do echo "#   $l"; done <<<"$out"
	fi
	sed 's/host.vm.hostname = /host.vm.hostnam = /' "$top/Vagrantfile" >"$tmp/vbad/Vagrantfile"
	if (cd "$tmp/vbad" && VAGRANT_HOME=$tmp/vh vagrant validate --ignore-provider >/dev/null 2>&1); then
		not_ok "vagrant validate accepts a Vagrantfile with an unknown vm setting"
	else
		ok "vagrant validate refuses a Vagrantfile with an unknown vm setting"
	fi
else
	missing "vagrant validate"
	missing "vagrant validate refuses a Vagrantfile with an unknown vm setting"
fi

if [ -x "$validator" ] && command -v node >/dev/null 2>&1; then
	for wf in "$top"/.github/workflows/*.yml; do
		if out=$("$validator" "$wf" 2>&1); then
			ok "action-validator ${wf#"$top"/}"
		else
			not_ok "action-validator ${wf#"$top"/}"
			echo "$out" | head -40 | sed 's/^/#   /'
		fi
	done
	sed 's/^    runs-on:/    runs_on:/' "$top/.github/workflows/lab.yml" >"$tmp/bad.yml"
	if "$validator" "$tmp/bad.yml" >/dev/null 2>&1; then
		not_ok "action-validator accepts a job without runs-on"
	else
		ok "action-validator refuses a job without runs-on"
	fi
else
	missing "action-validator .github/workflows"
	missing "action-validator refuses a bad workflow"
fi

# The inventory the Vagrant VMs get, from a recorded `vagrant ssh-config`.
cat >"$tmp/ssh_config" <<'EOT'
Host a
  HostName 192.168.121.11
  User vagrant
  Port 22
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  PasswordAuthentication no
  IdentityFile /home/me/lab/.vagrant/machines/a/libvirt/private_key
  IdentitiesOnly yes
  LogLevel FATAL

Host b
  HostName 192.168.121.12
  User vagrant
  Port 22
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  PasswordAuthentication no
  IdentityFile /home/me/lab/.vagrant/machines/b/libvirt/private_key
  IdentitiesOnly yes
  LogLevel FATAL
EOT
if "$top/scripts/vagrant-inventory.sh" --ssh-config "$tmp/ssh_config" --netdevs eth1,eth0 --out "$tmp/inv" >/dev/null &&
	/usr/bin/python3 - "$tmp/inv/inventory.json" <<'EOT'
import json, sys
inv = json.load(open(sys.argv[1]))
assert inv["version"] == 1 and sorted(inv["hosts"]) == ["a", "b"], inv
for name, addr in (("a", "192.168.56.11"), ("b", "192.168.56.12")):
    h = inv["hosts"][name]
    assert h["ssh"]["alias"] == name and h["ssh"]["config"].endswith("/ssh_config"), h
    assert h["address"] == addr and h["netdev"] == "eth1" and h["ssh_netdev"] == "eth0", h
    assert h["device"] == "rxe0" and h["lab_host"] is True, h
EOT
then
	ok "vagrant-inventory.sh writes the inventory of hosts a and b"
else
	not_ok "vagrant-inventory.sh writes the inventory of hosts a and b"
fi
if "$top/scripts/vagrant-inventory.sh" --ssh-config "$tmp/ssh_config" --netdevs eth0,eth0 --out "$tmp/inv2" >/dev/null 2>&1; then
	not_ok "vagrant-inventory.sh accepts a lab netdev that is the ssh netdev"
else
	ok "vagrant-inventory.sh refuses a lab netdev that is the ssh netdev"
fi
echo "1..$n"
exit $((failed > 0))
