# tests/wire/lib.sh — what the dissector tests share (sourced by run.sh).
#
# Needs: ROOT, BUILD, T (a private temporary directory), QPLAB, PCAPGEN.
# shellcheck shell=bash

LUA=$ROOT/wireshark/mooncake.lua
AGG=$'\x1f' # joins several values of one field in a packet; in no JSON we send
TSHARK_SECONDS=120 # a bound on one tshark run (they take 1-3 s)
n=0 failed=0

# stop_pid PID: stops a process this shell started and waits for it; a
# no-op once it was reaped (its number may belong to someone else by then).
stop_pid() {
	jobs -p | grep -qx "$1" || return 0
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=$((failed + 1)); }
diag() { sed 's/^/#   /' "$@"; }

# need_tool CMD PACKAGE: 0 when CMD is there; otherwise a failure under
# CI=true and a skip elsewhere (scripts/deps.sh installs PACKAGE).
need_tool() {
	command -v "$1" >/dev/null && return 0
	if [ "${CI:-}" = true ]; then
		not_ok "$1 installed (Debian package $2: scripts/deps.sh)"
	else
		ok "$1 installed # SKIP $1 not found: run scripts/deps.sh (Debian package $2)"
	fi
	return 1
}

# dissect PCAP [TSHARK-ARGS...]: tshark with our dissector and nothing of
# the user's (HOME is private, so no personal plugin or preference loads),
# the records of frames_of on stdout.  tshark's own lines stay in
# $T/tshark.out: per packet with a handshake frame or a bad one, the
# columns tcp.stream, tcp.srcport, mooncake.type, .json, .role, .error,
# _ws.expert.message, mooncake.after_bad, then those of any -e in ARGS.
# Lua errors (which tshark reports and then carries on without the
# dissector) fail.
dissect() {
	local pcap=$1
	shift
	if ! HOME=$T/home XDG_CONFIG_HOME=$T/home/.config \
		timeout -k 5 $((TSHARK_SECONDS * $(time_mult))) tshark -n -r "$pcap" \
		-X lua_script:"$LUA" -Y 'mooncake' -T fields -E separator=/t \
		-E occurrence=a -E aggregator="$AGG" -e tcp.stream -e tcp.srcport \
		-e mooncake.type -e mooncake.json -e mooncake.role -e mooncake.error \
		-e _ws.expert.message -e mooncake.after_bad "$@" >"$T/tshark.out" 2>"$T/tshark.err"; then
		echo "tshark failed:" >&2
		cat "$T/tshark.err" >&2
		return 1
	fi
	if grep -v 'Running as user "root"' "$T/tshark.err" | grep -q .; then
		echo "tshark complained:" >&2
		grep -v 'Running as user "root"' "$T/tshark.err" >&2
		return 1
	fi
	frames_of <"$T/tshark.out"
}

# pcap_and_dissect NAME [TSHARK-ARGS...]: $T/NAME.script through pcapgen
# into $T/NAME.pcap, and that through dissect into $T/NAME.frames; a
# failure is reported (not ok) and returns 1.
pcap_and_dissect() {
	local name=$1
	shift
	if ! "$PCAPGEN" pcap "$T/$name.pcap" <"$T/$name.script" 2>"$T/$name.err"; then
		not_ok "pcapgen writes the $name capture"
		diag "$T/$name.err"
		return 1
	fi
	if ! dissect "$T/$name.pcap" "$@" >"$T/$name.frames" 2>"$T/$name.err"; then
		not_ok "tshark dissects the $name capture"
		diag "$T/$name.err"
		return 1
	fi
}

# tshark's lines -> one record per frame, keyed by stream:source-port:
#   KEY G TYPE JSON ROLE    a good frame
#   KEY E ERR_NAME          a bad one ("(no expert info)" appended if its
#                           packet has no expert info naming the error)
#   KEY A                   bytes after a bad frame
# Errors follow the good frames of their packet: a bad frame ends its side.
frames_of() {
	awk -F'\t' -v agg="$AGG" '
	{
		key = $1 ":" $2
		nt = $3 == "" ? 0 : split($3, types, agg)
		split($4, jsons, agg)
		split($5, roles, agg)
		for (i = 1; i <= nt; i++)
			printf "%s\tG\t%s\t%s\t%s\n", key, types[i], jsons[i], roles[i]
		ne = $6 == "" ? 0 : split($6, errs, agg)
		for (i = 1; i <= ne; i++)
			printf "%s\tE\t%s%s\n", key, errs[i],
				index($7, errs[i] ":") ? "" : " (no expert info)"
		if ($8 != "")
			printf "%s\tA\n", key
	}'
}

# decode_expect BIN [DECODE-ARGS...]: what qplab hs decode makes of BIN, as
# records without key and role: "G TYPE JSON" per frame, then "E ERR_NAME"
# when it stops at a bad frame.
decode_expect() {
	local bin=$1 rc=0
	shift
	"$QPLAB" hs decode "$@" <"$bin" >"$T/decode.out" 2>"$T/decode.err" || rc=$?
	paste - - <"$T/decode.out" | sed 's/^/G\t/'
	case $rc in
	0) ;;
	1) sed -n 's/^qplab hs decode: \(ERR_[A-Z_]*\):.*/E\t\1/p' "$T/decode.err" ;;
	*) printf 'X\tqplab hs decode exited %s\n' "$rc" ;;
	esac
}

# observed FRAMES KEY: the records of one side of one connection, as
# decode_expect writes them (role left out).
observed() {
	awk -F'\t' -v k="$2" '$1 == k { if ($2 == "G") print "G\t" $3 "\t" $4; else if ($2 == "E") print "E\t" $3 }' "$1"
}

# roles FRAMES KEY: the role of each good frame of that side.
roles() {
	awk -F'\t' -v k="$2" '$1 == k && $2 == "G" { print $5 }' "$1"
}

# le64 N: N as the 8-byte little-endian length, in printf %b escapes.
le64() {
	local i
	for i in 0 1 2 3 4 5 6 7; do printf '\\x%02x' $((($1 >> (8 * i)) & 255)); done
}
