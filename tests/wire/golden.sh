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

	if ! "$PCAPGEN" pcap "$T/golden.pcap" <"$T/golden.script" 2>"$T/golden.err"; then
		not_ok "pcapgen writes the golden capture"
		diag "$T/golden.err"
		return
	fi
	if ! dissect "$T/golden.pcap" >"$T/golden.frames" 2>"$T/golden.err"; then
		not_ok "tshark dissects the golden capture"
		diag "$T/golden.err"
		return
	fi
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
}
