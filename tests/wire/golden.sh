# tests/wire/golden.sh — every golden frame through the dissector (sourced
# by run.sh).  Each frame goes into a synthetic loopback capture five times:
# one segment, cut at awkward offsets (inside the length, after it, after
# the type byte, mid-JSON, before the last byte) and one byte a segment on
# the handshake port; one segment and cut on another port (the heuristic).
# Then all of them back to back in one connection, in 50-byte segments.
# What the dissector shows must be what `qplab hs decode` prints for the
# same bytes, and the role the side that sent them.
# shellcheck shell=bash

HS_PORT=12001
HEUR_PORT=40404 # no dissector of tshark 4.0 claims it

# cuts_for LEN OFFSET...: the offsets below LEN, rising.
cuts_for() {
	local len=$1
	shift
	printf '%s\n' "$@" | awk -v n="$len" '$1 > 0 && $1 < n' | sort -nu | paste -sd, -
}

test_golden() {
	local g name bin len from role cport=41000 stream=0 variant port cuts key
	local -a names=() keys=() bins=() wants=() frames=()
	: >"$T/golden.script"
	for g in "$ROOT"/tests/golden/*.hex "$ROOT"/tests/compat/frames/*.hex; do
		name=${g#"$ROOT/tests/"}
		bin=$T/golden-${#frames[@]}.bin
		"$PCAPGEN" unhex "$g" >"$bin"
		frames+=("$bin")
		len=$(stat -c %s "$bin")
		from=c role=request
		case $name in *reply*) from=s role=reply ;; esac
		for variant in "$HS_PORT -" "$HS_PORT $(cuts_for "$len" 1 7 8 9 10 $((len / 2)) $((len - 1)))" "$HS_PORT every:1" \
			"$HEUR_PORT -" "$HEUR_PORT $(cuts_for "$len" 8 9 $(((len + 9) / 2)))"; do
			port=${variant% *} cuts=${variant#* }
			[ "$cuts" = - ] && cuts=
			printf 'conn %d %d\nsend %s %s %s\nfin c\nfin s\n' "$cport" "$port" \
				"$from" "$bin" "$cuts" >>"$T/golden.script"
			key=$stream:$cport
			[ $from = s ] && key=$stream:$port
			names+=("$name ($port, segments ${cuts:-whole})") keys+=("$key")
			bins+=("$bin") wants+=("$role")
			stream=$((stream + 1)) cport=$((cport + 1))
		done
	done
	# Everything back to back from one client, frames straddling segments.
	cat "${frames[@]}" >"$T/golden-all.bin"
	cuts=every:50
	for port in $HS_PORT $HEUR_PORT; do
		printf 'conn %d %d\nsend c %s %s\nfin c\n' "$cport" "$port" "$T/golden-all.bin" \
			"$cuts" >>"$T/golden.script"
		names+=("every golden frame in one connection ($port, 50-byte segments)")
		keys+=("$stream:$cport") bins+=("$T/golden-all.bin") wants+=(request)
		stream=$((stream + 1)) cport=$((cport + 1))
	done
	# Not a handshake: text on the heuristic port stays undecoded.
	printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >"$T/http.bin"
	printf 'conn %d %d\nsend c %s\n' "$cport" "$HEUR_PORT" "$T/http.bin" >>"$T/golden.script"
	local http_key=$stream:$cport

	pcap_and_dissect golden || return 0
	local i bad=0 want got
	for i in "${!keys[@]}"; do
		decode_expect "${bins[i]}" >"$T/want"
		observed "$T/golden.frames" "${keys[i]}" >"$T/got"
		want=$(grep -c '^G' "$T/want" || true)
		got=$(roles "$T/golden.frames" "${keys[i]}" | grep -cx "${wants[i]}" || true)
		if [ "$want" -gt 0 ] && cmp -s "$T/want" "$T/got" && [ "$got" = "$want" ]; then
			continue
		fi
		bad=$((bad + 1))
		echo "# ${names[i]}: want (qplab hs decode, role ${wants[i]}) / got (tshark):"
		diff "$T/want" "$T/got" | diag || true
		roles "$T/golden.frames" "${keys[i]}" | paste -sd' ' - | sed 's/^/#   roles: /'
	done
	if [ $bad = 0 ]; then
		ok "dissector = qplab hs decode on ${#keys[@]} captures of the golden frames (type, JSON, role)"
	else
		not_ok "dissector = qplab hs decode on the golden frames: $bad of ${#keys[@]} differ"
	fi
	if grep -q "^$http_key	" "$T/golden.frames"; then
		not_ok "the heuristic leaves HTTP on port $HEUR_PORT alone"
		grep "^$http_key	" "$T/golden.frames" | diag
	else
		ok "the heuristic leaves HTTP on port $HEUR_PORT alone"
	fi
	test_fields
}

# Named fields of bodies the golden frames lack: a Metadata descriptor with
# a device and a buffer, a Connection with ready_ack, qphs_path_mtu and a
# key of another transport, one with a key of the wrong type.  Each value
# is checked against the body it was built from.
test_fields() {
	local gid=00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01 addr=140000000000 rkey=4661 lkey=4660
	local md conn bad port=43000 k=0 f want
	md='{"buffers":[{"addr":'$addr',"length":4096,"lkey":['$lkey'],"name":"cpu:0","rkey":['$rkey']}],'
	md+='"devices":[{"gid":"'$gid'","lid":7,"name":"mlx5_0"}],"name":"10.0.0.1:15000",'
	md+='"priority_matrix":{"cpu:0":[["mlx5_0"],[]]},"protocol":"rdma","tcp_data_port":0,'
	md+='"tcp_proto_version":1,"timestamp":"2026-01-01 00:00:00.000000"}'
	conn='{"efa_addr":"fe80::1","local_gid":"'$gid'","local_lid":3,"local_nic_path":"10.0.0.1:15123@mlx5_0",'
	conn+='"payload":"","peer_nic_path":"10.0.0.2:16000@mlx5_1","qp_num":[65,66,67],"qphs_path_mtu":1024,'
	conn+='"ready_ack":true,"reply_msg":"MTU mismatch"}'
	bad='{"local_lid":"7","qp_num":[1,-2]}'
	: >"$T/fields.script"
	for f in "metadata:$md" "connection:$conn" "connection:$bad"; do
		printf '%s\n' "${f#*:}" | "$QPLAB" hs encode --type "${f%%:*}" --raw >"$T/fields-$k.bin"
		printf 'conn %d 12001\nsend c %s\n' $((port + k)) "$T/fields-$k.bin" >>"$T/fields.script"
		k=$((k + 1))
	done
	pcap_and_dissect fields -E aggregator=, -e mooncake.metadata.name -e mooncake.metadata.protocol \
		-e mooncake.metadata.device.name -e mooncake.metadata.device.lid -e mooncake.metadata.device.gid \
		-e mooncake.metadata.buffer.name -e mooncake.metadata.buffer.addr -e mooncake.metadata.buffer.length \
		-e mooncake.metadata.buffer.rkey -e mooncake.metadata.buffer.lkey -e mooncake.local_nic_path \
		-e mooncake.peer_nic_path -e mooncake.local_lid -e mooncake.local_gid -e mooncake.qp_num \
		-e mooncake.qp_count -e mooncake.reply_msg -e mooncake.ready_ack -e mooncake.qphs_path_mtu \
		-e mooncake.member -e mooncake.ready_ack_key || return 0
	# The columns after dissect's own eight, per connection.
	want=$(printf '%s\t' 10.0.0.1:15000 rdma mlx5_0 7 "$gid" cpu:0 "$(printf '0x%016x' $addr)" 4096 \
		"$(printf '0x%08x' $rkey)" "$(printf '0x%08x' $lkey)" '' '' '' '' '' '' '' '' '' \
		'priority_matrix: object' none)
	field_row 0 "Metadata: name, protocol, device, buffer" "$want"
	want=$(printf '%s\t' '' '' '' '' '' '' '' '' '' '' 10.0.0.1:15123@mlx5_0 10.0.0.2:16000@mlx5_1 3 "$gid" \
		65,66,67 3 'MTU mismatch' 1 1024 'efa_addr: fe80::1' true)
	field_row 1 "Connection: every HandShakeDesc key, an unknown one as mooncake.member" "$want"
	want=$(printf '%s\t' '' '' '' '' '' '' '' '' '' '' '' '' '' '' 1 2 '' '' '' '' none)
	field_row 2 "Connection of the wrong shape: only the good values" "$want"
	if grep -q 'local_lid: not an integer' "$T/tshark.out" && grep -q 'qp_num\[1\]: not a 32-bit' "$T/tshark.out"; then
		ok "Connection of the wrong shape: expert infos name local_lid and qp_num[1]"
	else
		not_ok "Connection of the wrong shape: expert infos name local_lid and qp_num[1]"
		diag "$T/tshark.out"
	fi
}

# field_row K WHAT WANT: the extra columns of connection K's line (without
# trailing empty ones).
field_row() {
	local got want
	got=$(awk -F'\t' -v k="$1" '$1 == k' "$T/tshark.out" | cut -f9- | sed 's/\t*$//')
	want=$(printf '%s\n' "$3" | sed 's/\t*$//')
	if [ "$got" = "$want" ]; then
		ok "$2"
	else
		not_ok "$2"
		printf '%s\n' "want: $want" "got:  $got" | diag
	fi
}
