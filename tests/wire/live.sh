# tests/wire/live.sh — real captures (sourced by run.sh): tcpdump on
# loopback while qplab hs send talks to qplab hs serve instances, plain and
# with every reply fault, then the capture through the dissector.  Checked:
#   - each side of each connection against qplab hs decode of the bytes
#     tshark's "follow" extracts from the same capture (with the ports given
#     to the dissector by Decode As, and again heuristically);
#   - the named fields against what hs send printed and what it sent.
# shellcheck shell=bash

REJECT_TEXT="Local RDMA context not found for handshake NIC: mlx5_9"

# start_server NAME [ARGS...]: qplab hs serve on a random loopback port;
# its port goes into ports[NAME].
start_server() {
	local name=$1 pid
	shift
	"$QPLAB" hs serve --listen 127.0.0.1:0 "$@" >"$T/serve-$name.out" 2>"$T/serve-$name.err" &
	pid=$!
	defer stop_pid "$pid"
	if ! wait_until 10 grep -qs '^listening on ' "$T/serve-$name.out"; then
		echo "# hs serve $name did not start:" && diag "$T/serve-$name.err"
		return 1
	fi
	ports[$name]=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$T/serve-$name.out")
}

# send NAME TYPE BODY [ARGS...]: one hs send to server NAME; its stdout,
# stderr and status are kept as send-K.{out,err,rc} (K counts from 0, and
# is the tcp.stream of its connection: one connection per send, in order).
send() {
	local k=${#send_server[@]} rc=0
	send_server+=("$1") send_type+=("$2") send_body+=("$3")
	"$QPLAB" hs send --to "127.0.0.1:${ports[$1]}" --type "$2" --body "$3" \
		--timeout "$((10 * $(time_mult)))" "${@:4}" >"$T/send-$k.out" 2>"$T/send-$k.err" || rc=$?
	echo "$rc" >"$T/send-$k.rc"
}

# follow_sides PCAP STREAMS: every connection's bytes per side, from tshark's
# follow, into side-K-c.bin (client to server) and side-K-s.bin; the
# client's port into side-K-c.port.
follow_sides() {
	local k args=()
	for ((k = 0; k < $2; k++)); do args+=(-z "follow,tcp,raw,$k"); done
	HOME=$T/home timeout -k 5 $((TSHARK_SECONDS * $(time_mult))) tshark -n -r "$1" -q "${args[@]}" 2>/dev/null |
		awk -v dir="$T" '
		/^Filter: tcp.stream eq / { k = $NF; c = dir "/side-" k "-c.hex"; s = dir "/side-" k "-s.hex"
			printf "" > c; printf "" > s; next }
		/^Node 0: / { n = split($3, a, ":"); print a[n] > (dir "/side-" k "-c.port"); next }
		/^(Node 1:|Follow:|=+$)/ { next }
		/^\t/ { sub(/^\t/, ""); print > s; next }
		/^[0-9a-f]+$/ { print > c }'
	for ((k = 0; k < $2; k++)); do
		"$PCAPGEN" unhex "$T/side-$k-c.hex" >"$T/side-$k-c.bin"
		"$PCAPGEN" unhex "$T/side-$k-s.hex" >"$T/side-$k-s.bin"
	done
}

# field K SIDE COLUMN: a named field (a column of $T/live.fields) of the frame
# side SIDE (c or s) of connection K sent.
field() {
	local port=${ports[${send_server[$1]}]}
	[ "$2" = s ] || port=$(cat "$T/side-$1-c.port")
	awk -F'\t' -v k="$1" -v p="$port" -v col="$3" '$1 == k && $2 == p { print $col }' "$T/live.fields"
}

# json_key JSON KEY: the value of KEY in a compact JSON (strings unquoted,
# arrays without brackets); enough for the bodies Mooncake writes.
json_key() {
	printf '%s' "$1" | sed -n "s/.*\"$2\":\(\"\([^\"]*\)\"\|\[\([^]]*\)\]\|\([^,}]*\)\).*/\2\3\4/p"
}

# check_send K WHAT WANT GOT: one comparison for send K.
check_send() {
	if [ "$3" = "$4" ]; then
		ok "hs send $1 (${send_server[$1]}, ${send_type[$1]}): $2 = '$(printf '%.60s' "$3")'"
	else
		not_ok "hs send $1 (${send_server[$1]}, ${send_type[$1]}): $2: want '$3', got '$4'"
	fi
}

# trimmed FILE: a one-line JSON without its trailing whitespace.
trimmed() { sed 's/[[:space:]]*$//' "$1"; }

test_live() {
	need_tool tcpdump tcpdump || return 0
	if [ "$(id -u)" != 0 ]; then
		ok "capture on loopback # SKIP not root"
		return 0
	fi
	local -A ports=()
	local -a send_server=() send_type=() send_body=()
	local f pid filter="" name

	printf '{"local_gid":"00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:01","local_lid":0,%s\n' \
		'"local_nic_path":"127.0.0.1:15123@rxe0","payload":"","peer_nic_path":"127.0.0.1:16000@rxe1","qp_num":[17,18,19],"ready_ack":false,"reply_msg":""}' \
		>"$T/conn.json"
	printf '{}\n' >"$T/probe.json"
	printf '{"name":"127.0.0.1:15123","notify_msg":"hello"}\n' >"$T/notify.json"
	# A reply of 300 000 bytes: several segments even on loopback's 64 KiB MSS.
	{
		printf '{"local_gid":"00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:01","local_lid":0,'
		printf '"local_nic_path":"127.0.0.1:16000@rxe1","payload":"",'
		spaces 299800
		printf '"peer_nic_path":"127.0.0.1:15123@rxe0","qp_num":[7,8,9],"reply_msg":""}\n'
	} >"$T/big.json"

	start_server plain || { not_ok "hs serve starts"; return; }
	start_server reject --fault "reject:$REJECT_TEXT" || { not_ok "hs serve starts"; return; }
	start_server big --reply "$T/big.json" || { not_ok "hs serve starts"; return; }
	for f in zero-length oversize garbage empty-body truncate not-json trailing wrong-type old-protocol close; do
		start_server "$f" --fault "$f" || { not_ok "hs serve --fault $f starts"; return; }
	done
	start_server last || { not_ok "hs serve starts"; return; }
	for name in "${!ports[@]}"; do filter+="${filter:+ or }port ${ports[$name]}"; done
	tcpdump -i lo -n -U -w "$T/live.pcap" "tcp and ($filter)" 2>"$T/tcpdump.err" &
	pid=$!
	defer stop_pid "$pid"
	if ! wait_until 10 grep -qs 'listening on' "$T/tcpdump.err"; then
		not_ok "tcpdump listens on lo"
		diag "$T/tcpdump.err"
		return
	fi

	send plain probe "$T/probe.json"
	send plain notify "$T/notify.json"
	send plain metadata "$T/probe.json"
	send plain connection "$T/conn.json"
	send plain connection "$T/conn.json" --old-protocol
	send reject connection "$T/conn.json"
	send big connection "$T/conn.json"
	for f in zero-length oversize garbage empty-body truncate not-json trailing wrong-type old-protocol close; do
		send "$f" probe "$T/probe.json"
	done
	send last probe "$T/probe.json"
	# The last connection's two FINs are in the file: everything before is.
	if ! wait_until 10 sh -c "tcpdump -r '$T/live.pcap' -n 'tcp port ${ports[last]} and tcp[13] & 1 != 0' 2>/dev/null | grep -c . | grep -qx 2"; then
		not_ok "tcpdump wrote the whole exchange"
		return
	fi
	stop_pid "$pid"
	if grep -q '^0 packets dropped by kernel' "$T/tcpdump.err"; then
		ok "tcpdump on lo: $(grep 'packets captured' "$T/tcpdump.err"), none dropped"
	else
		not_ok "tcpdump on lo dropped packets"
		diag "$T/tcpdump.err"
	fi
	live_checks
}

# The capture against hs decode and against hs send.
live_checks() {
	local k nsend=${#send_server[@]} decode_as=() name bad=0 heur_bad=0 side key
	for name in "${!ports[@]}"; do decode_as+=(-d "tcp.port==${ports[$name]},mooncake"); done
	follow_sides "$T/live.pcap" "$nsend"
	if ! dissect "$T/live.pcap" "${decode_as[@]}" -e mooncake.probe.status -e mooncake.notify.notify_msg \
		-e mooncake.metadata.name -e mooncake.qp_num -e mooncake.local_nic_path -e mooncake.reply_msg \
		-e tcp.segment.count >"$T/live.frames" 2>"$T/live.err"; then
		not_ok "tshark dissects the live capture"
		diag "$T/live.err"
		return
	fi
	cp "$T/tshark.out" "$T/live.fields"
	if ! dissect "$T/live.pcap" -o tcp.try_heuristic_first:TRUE >"$T/heur.frames" 2>"$T/live.err"; then
		not_ok "tshark dissects the live capture heuristically"
		diag "$T/live.err"
		return
	fi
	for ((k = 0; k < nsend; k++)); do
		for side in c s; do
			key=$k:${ports[${send_server[k]}]}
			[ $side = s ] || key=$k:$(cat "$T/side-$k-c.port")
			decode_expect "$T/side-$k-$side.bin" >"$T/want"
			observed "$T/live.frames" "$key" >"$T/got"
			if ! cmp -s "$T/want" "$T/got"; then
				bad=$((bad + 1))
				echo "# connection $k (${send_server[k]}) side $side: want (hs decode) / got (tshark):"
				diff "$T/want" "$T/got" | diag || true
			fi
			# The heuristic sees every side whose frames are all good.
			grep -q '^E' "$T/want" && continue
			observed "$T/heur.frames" "$key" >"$T/got"
			if ! cmp -s "$T/want" "$T/got"; then
				heur_bad=$((heur_bad + 1))
				echo "# heuristically, connection $k (${send_server[k]}) side $side: want / got:"
				diff "$T/want" "$T/got" | diag || true
			fi
		done
	done
	if [ $bad = 0 ]; then ok "dissector = qplab hs decode on both sides of $nsend captured connections (Decode As)"; else not_ok "dissector = qplab hs decode on the live capture: $bad sides differ"; fi
	if [ $heur_bad = 0 ]; then ok "the heuristic finds every good frame of the live capture"; else not_ok "the heuristic misses frames of the live capture: $heur_bad sides differ"; fi
	live_against_send
}

# What hs send printed and sent, field by field.
live_against_send() {
	local k out err type
	for ((k = 0; k < ${#send_server[@]}; k++)); do
		out=$(trimmed "$T/send-$k.out")
		err=$(sed -n 's/^qplab hs send: \(ERR_[A-Z_]*\):.*/\1/p' "$T/send-$k.err")
		type=${send_type[k]}
		case ${send_server[k]} in
		plain | big | last)
			[ "$k" = 4 ] && type=old-protocol
			check_send "$k" "exit status" 0 "$(cat "$T/send-$k.rc")"
			check_send "$k" "request mooncake.type" "$type" "$(field "$k" c 3)"
			check_send "$k" "request mooncake.json = the body sent" "$(trimmed "${send_body[k]}")" "$(field "$k" c 4)"
			check_send "$k" "reply mooncake.type" "$type" "$(field "$k" s 3)"
			check_send "$k" "reply mooncake.json = hs send's output" "$out" "$(field "$k" s 4)"
			check_send "$k" "mooncake.role of request, reply" "request reply" "$(field "$k" c 5) $(field "$k" s 5)"
			case ${send_type[k]} in
			probe) check_send "$k" "mooncake.probe.status" "$(json_key "$out" status)" "$(field "$k" s 9)" ;;
			notify) check_send "$k" "mooncake.notify.notify_msg" "$(json_key "$out" notify_msg)" "$(field "$k" s 10)" ;;
			metadata) check_send "$k" "mooncake.metadata.name" "$(json_key "$out" name)" "$(field "$k" s 11)" ;;
			connection)
				check_send "$k" "reply mooncake.qp_num" "$(json_key "$out" qp_num)" "$(field "$k" s 12 | tr "$AGG" ,)"
				check_send "$k" "reply mooncake.local_nic_path" "$(json_key "$out" local_nic_path)" "$(field "$k" s 13)"
				check_send "$k" "request mooncake.qp_num" "$(json_key "$(cat "${send_body[k]}")" qp_num)" "$(field "$k" c 12 | tr "$AGG" ,)"
				;;
			esac
			;;
		reject)
			check_send "$k" "hs send's error" ERR_REJECT_HANDSHAKE "$err"
			check_send "$k" "reply mooncake.reply_msg" "$REJECT_TEXT" "$(field "$k" s 14)"
			check_send "$k" "its expert info" yes "$(field "$k" s 7 | grep -qF "handshake rejected: $REJECT_TEXT" && echo yes)"
			;;
		wrong-type | old-protocol) # "... answered a probe request with a connection frame"
			check_send "$k" "hs send's error and the reply type it names" \
				"$err $(sed -n 's/.* with an\{0,1\} \([a-z-]*\).* frame$/\1/p' "$T/send-$k.err")" \
				"$(field "$k" s 6)$err $(field "$k" s 3)" ;;
		close) check_send "$k" "hs send's error; frames in the reply" "ERR_PEER_CLOSED " "$err $(field "$k" s 3)" ;;
		*) check_send "$k" "reply mooncake.error = hs send's error" "$err" "$(field "$k" s 6)" ;;
		esac
		if [ "${send_server[k]}" = big ]; then
			check_send "$k" "the reply spans several TCP segments" yes "$(field "$k" s 15 | awk '$1 > 1 { print "yes" }')"
		fi
	done
}
