# lib.sh -- helpers for the in-VM self-test phases (sourced by in-vm.sh).
# shellcheck shell=bash
# Every phase runs in its own bash with `set -eu -o pipefail`, this file
# and netns/lib.sh sourced; it prints `# ` diagnostics and fails by
# returning non-zero (or calling fail).

TOPO=$QPLAB_ROOT/netns/topo
PY=/usr/bin/python3

fail() { echo "# FAIL: $*"; exit 1; }
note() { echo "# $*"; }

# topo_up ID ARGS...: bring a topology up and load its JSON into shell
# arrays: T_NAME (its unique name: ID plus a suffix), T_MODE, H_NAME[i],
# H_EXEC[i] (a command prefix), H_ADDR4[i], H_ADDR6[i], H_RXE[i],
# H_GID4[i], H_GID6[i] (GID indexes).
topo_up() {
	local id=$1 json
	shift
	require_cmd "$PY"
	json=$("$TOPO" up --name "$id" "$@") || fail "topo up --name $id $* failed"
	eval "$("$PY" -c '
import json, shlex, sys
t = json.loads(sys.stdin.read())
print("T_MODE=%s T_NAME=%s" % (shlex.quote(t["mode"]), shlex.quote(t["name"])))
for k, f in (("H_NAME", "name"), ("H_ADDR4", "addr4"), ("H_ADDR6", "addr6"), ("H_RXE", "rxe"),
             ("H_GID4", "gid4_index"), ("H_GID6", "gid6_index"), ("H_IF", "ifname")):
    print("%s=(%s)" % (k, " ".join(shlex.quote("" if h[f] is None else str(h[f])) for h in t["hosts"])))
print("H_EXEC=(%s)" % " ".join(shlex.quote(" ".join(h["exec"])) for h in t["hosts"]))
' <<<"$json")"
	case $T_NAME in "$id"???) ;; *) fail "topo up --name $id named it '$T_NAME', not $id plus a suffix" ;; esac
}
topo_down() { # [NAME]: down (default T_NAME), then independently check nothing of it is left
	local name=${1:-$T_NAME} left
	"$TOPO" down --name "$name" || fail "topo down --name $name failed"
	left=$( { ip netns list; ip -o link show; rdma link show; } 2>/dev/null | grep -o "$QPLAB_PREFIX$name-[a-z0-9]*" || true)
	[ -z "$left" ] || fail "left over after down: $left"
}
# lab_leftovers: whatever of the lab is still there, one item a line;
# empty when nothing is: links, namespaces and rxe devices named like the
# lab's (registered or not: every topology is ql<NAME>-...), rules on the
# lab's addresses, agents, runners and their workers, undo registries.
lab_leftovers() {
	{ ip netns list; ip -o link show; rdma link show; } 2>/dev/null | grep -o "${QPLAB_PREFIX}[a-z0-9]*-[a-z0-9]*" | sort -u || true
	ip rule show | grep -F " $QPLAB_NET4." || true
	pgrep -af 'qplab (agent|run)' || true
	ls "$QPLAB_STATE_DIR"/*.undo 2>/dev/null || true
}

# run_bg OUT ARGS...: `$Q run ARGS --out OUT` in the background, its steps
# traced on stderr: TAP in OUT.tap, stderr in OUT.err, pid in RUN_PID.
run_bg() {
	local out=$1
	shift
	QPLAB_RUN_TRACE=1 "$Q" run "$@" --out "$out" >"$out.tap" 2>"$out.err" &
	RUN_PID=$!
}
run_connects() { [ "$(grep -c 'qplab run: connect ' "$1.err")" -ge "$2" ]; }
# run_wait_connects OUT N SECONDS: until the run has started N connect
# steps; if it has not within SECONDS, interrupt it and fail.
run_wait_connects() {
	wait_until "$3" run_connects "$1" "$2" || {
		kill -INT "$RUN_PID"
		wait "$RUN_PID" || true
		fail "$1: $2 connect steps never started: $(tail -n 5 "$1.err")"
	}
}
# run_interrupt OUT: SIGINT to the run, then its exit status in RUN_RC
# and its TAP, indented.
# shellcheck disable=SC2034 # RUN_RC is read by the phases that call it
run_interrupt() {
	kill -INT "$RUN_PID"
	RUN_RC=0
	wait "$RUN_PID" || RUN_RC=$?
	sed 's/^/  /' "$1.tap"
}
hidx() { local i; for i in "${!H_NAME[@]}"; do [ "${H_NAME[i]}" = "$1" ] && echo "$i" && return; done; fail "no host $1"; }

PP_PORT=18600
# pp SERVER CLIENT [4|6] [DEADLINE]: ibv_rc_pingpong from CLIENT to SERVER
# across the lab; the client gives up after DEADLINE s (default 20, times
# QPLAB_TIME_MULTIPLIER). The client's TCP socket is not bound (in shared
# mode it goes over lo: the RoCE path is what this checks). The server is
# stopped once the client is done. Output in PP_OUT.
pp() {
	local s c fam=${3:-4} gs gc port rc=0 m
	m=$(time_mult)
	s=$(hidx "$1") c=$(hidx "$2")
	PP_PORT=$((PP_PORT + 1)) port=$PP_PORT
	gs=${H_GID4[s]} gc=${H_GID4[c]}
	[ "$fam" = 4 ] || gs=${H_GID6[s]} gc=${H_GID6[c]}
	# shellcheck disable=SC2086
	${H_EXEC[s]} timeout $((60 * m)) ibv_rc_pingpong -d "${H_RXE[s]}" -g "$gs" -n 10 -p "$port" >/tmp/pp-s.$port 2>&1 &
	local spid=$!
	# A cold start (libraries read over 9p under TCG) takes seconds.
	wait_until 30 sh -c "${H_EXEC[s]} ss -Htln 'sport = :$port' | grep -q ." ||
		note "pp: the server on ${H_NAME[s]} is not listening after 30 s"
	# shellcheck disable=SC2086
	${H_EXEC[c]} timeout $((${4:-20} * m)) ibv_rc_pingpong -d "${H_RXE[c]}" -g "$gc" -n 10 -p "$port" "${H_ADDR4[s]}" >/tmp/pp-c.$port 2>&1 || rc=$?
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	# shellcheck disable=SC2034 # read by the phases that call pp
	PP_OUT=$(cat /tmp/pp-c.$port /tmp/pp-s.$port)
	rm -f /tmp/pp-c.$port /tmp/pp-s.$port
	return $rc
}

# tcp SERVER CLIENT: tcp_once, tried twice (a loaded TCG guest can lose
# the race between the listener's start and the connect).
tcp() { tcp_once "$@" || tcp_once "$@"; }
# tcp_once SERVER CLIENT: can CLIENT open a TCP connection to SERVER's lab
# address, its socket bound to its own lab address (so the control path
# crosses the wire in shared mode too)?
tcp_once() {
	local s c port rc=0 dl=$((10 * $(time_mult)))
	s=$(hidx "$1") c=$(hidx "$2")
	PP_PORT=$((PP_PORT + 1)) port=$PP_PORT
	# shellcheck disable=SC2086,SC2016 # the prefix is words; the $ are perl's
	${H_EXEC[s]} timeout "$dl" perl -MIO::Socket::INET -e '
		my $l = IO::Socket::INET->new(LocalAddr => $ARGV[0], LocalPort => $ARGV[1], Listen => 1, ReuseAddr => 1) or die;
		my $c = $l->accept; print $c "ok\n" if $c;' "${H_ADDR4[s]}" "$port" >/dev/null 2>&1 &
	local spid=$!
	wait_until 20 sh -c "${H_EXEC[s]} ss -Htln 'sport = :$port' | grep -q ." || true
	# shellcheck disable=SC2086,SC2016 # the prefix is words; the $ are perl's
	${H_EXEC[c]} timeout "$dl" perl -MIO::Socket::INET -e '
		my $c = IO::Socket::INET->new(LocalAddr => $ARGV[0], PeerAddr => $ARGV[1], PeerPort => $ARGV[2], Timeout => 3) or exit 1;
		my $l = <$c>; exit(($l // "") eq "ok\n" ? 0 : 1);' "${H_ADDR4[c]}" "${H_ADDR4[s]}" "$port" >/dev/null 2>&1 || rc=1
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	return $rc
}
