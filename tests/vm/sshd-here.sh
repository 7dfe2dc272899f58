#!/usr/bin/env bash
# sshd-here.sh — an sshd of its own on 127.0.0.1 for the hosts backend's
# tests, with host and client keys made for this run only.
#
# Usage: tests/vm/sshd-here.sh DIR PORT
#
# Makes DIR/host_ed25519 (the server's key), DIR/id (the client's),
# DIR/known_hosts ([127.0.0.1]:PORT and the host key) and DIR/sshd_config,
# starts /usr/sbin/sshd (Debian's openssh-server) on 127.0.0.1:PORT,
# accepting DIR/id.pub for root and nothing else, and prints its pid once
# it accepts connections.  The caller stops it (kill PID).  For the lab
# VM, where nothing else listens; exit 1 when sshd does not come up.
set -eu -o pipefail

[ $# = 2 ] || { echo "usage: sshd-here.sh DIR PORT" >&2; exit 2; }
dir=$1 port=$2
case $port in '' | *[!0-9]*) echo "sshd-here: PORT must be a number" >&2; exit 2 ;; esac
[ -x /usr/sbin/sshd ] || { echo "sshd-here: /usr/sbin/sshd missing (scripts/deps.sh installs openssh-server)" >&2; exit 1; }
mkdir -p "$dir" /run/sshd
chmod 700 "$dir"
ssh-keygen -q -t ed25519 -N '' -C qplab-lab-host -f "$dir/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -C qplab-runner -f "$dir/id"
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" >"$dir/known_hosts"
cp "$dir/id.pub" "$dir/authorized_keys"
cat >"$dir/sshd_config" <<EOT
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_ed25519
AuthorizedKeysFile $dir/authorized_keys
PidFile $dir/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding no
X11Forwarding no
PermitTunnel no
AllowUsers root
LogLevel ERROR
EOT
/usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
for _ in $(seq 1 100); do
	if [ -s "$dir/sshd.pid" ] &&
		ssh -F /dev/null -i "$dir/id" -o BatchMode=yes -o UserKnownHostsFile="$dir/known_hosts" \
			-o StrictHostKeyChecking=yes -p "$port" root@127.0.0.1 true 2>/dev/null; then
		cat "$dir/sshd.pid"
		exit 0
	fi
	sleep 0.2
done
echo "sshd-here: sshd on 127.0.0.1:$port did not accept the run's key ($dir/sshd.log)" >&2
[ -s "$dir/sshd.pid" ] && kill "$(cat "$dir/sshd.pid")" 2>/dev/null
exit 1
