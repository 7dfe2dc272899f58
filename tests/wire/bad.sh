# tests/wire/bad.sh — every kind of frame libqphs refuses, through the
# dissector (sourced by run.sh).  Each case is one connection on the
# handshake port; the dissector's mooncake.error, with an expert info naming
# it, must be the ERR_* name `qplab hs decode` prints for the same bytes,
# after the same good frames.
# shellcheck shell=bash

# bad_case NAME CUTS END BYTES...: a case whose client sends BYTES (printf
# %b escapes, concatenated) in segments CUTS (- for one), then END: fin,
# rst, or - (nothing).
bad_case() {
	local name=$1 cuts=$2 end=$3 bin=$T/bad-${#bad_names[@]}.bin
	shift 3
	printf '%b' "$@" >"$bin"
	[ "$cuts" = - ] && cuts=
	printf 'conn %d 12001\nsend c %s %s\n' "$bad_port" "$bin" "$cuts" >>"$T/bad.script"
	[ "$end" = - ] || printf '%s c\n' "$end" >>"$T/bad.script"
	bad_names+=("$name") bad_keys+=("$bad_stream:$bad_port") bad_bins+=("$bin")
	bad_stream=$((bad_stream + 1)) bad_port=$((bad_port + 1))
}

# spaces N: N spaces (JSON whitespace, to make long valid frames).
spaces() { head -c "$1" /dev/zero | tr '\0' ' '; }

# check_bad FRAMES INDEX [DECODE-ARGS]: one case against qplab hs decode.
check_bad() {
	local frames=$1 i=$2
	shift 2
	decode_expect "${bad_bins[i]}" "$@" >"$T/want"
	observed "$frames" "${bad_keys[i]}" >"$T/got"
	if [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"; then
		ok "${bad_names[i]}: $(tail -1 "$T/want" | cut -f2 | paste -sd' ' -)"
	else
		not_ok "${bad_names[i]}: want (qplab hs decode) / got (tshark):"
		diff "$T/want" "$T/got" | diag || true
	fi
}

test_bad() {
	local -a bad_names=() bad_keys=() bad_bins=()
	local bad_stream=0 bad_port=42000 conn ws probe
	: >"$T/bad.script"
	conn=$("$PCAPGEN" unhex "$ROOT/tests/golden/connection-example.hex" | od -An -v -tx1 | tr -d ' \n' | sed 's/../\\x&/g')
	probe='\x03{}\n'

	bad_case "zero length" - fin "$(le64 0)"
	bad_case "zero length, cut at 3" 3 fin "$(le64 0)"
	bad_case "zero length, then more bytes" 8 fin "$(le64 0)" '{}'
	bad_case "length 1 MiB + 1 (over the default limit)" - fin "$(le64 1048577)" '\x03'
	bad_case "length 128 MiB + 1 (hs serve --fault oversize)" - fin "$(le64 134217729)" '\x03'
	bad_case "length 2^32 + 3" - fin "$(le64 4294967299)" '\x03{}'
	bad_case "type byte 0x80" - fin "$(le64 3)" '\x80{}'
	bad_case "type byte 0xff, cut at 8" 8 fin "$(le64 3)" '\xff{}'
	bad_case "typed frame with no JSON (Connection)" - fin "$(le64 1)" '\x00'
	bad_case "typed frame with no JSON (Probe), cut at 8" 8 fin "$(le64 1)" '\x03'
	bad_case "typed frame of whitespace only" - fin "$(le64 3)" '\x03 \n'
	bad_case "connection ends inside the length" - fin '\x05\x00\x00'
	bad_case "connection ends after the length" - fin "$(le64 100)"
	bad_case "connection ends after the type byte (RST)" 8 rst "$(le64 100)" '\x03'
	bad_case "connection ends mid-JSON" 50,100 fin "${conn:0:800}"
	bad_case "body not JSON" - fin "$(le64 9)" '\x03not json'
	bad_case "bytes after the JSON value" - fin "$(le64 5)" '\x03{} x'
	bad_case "old protocol, not JSON" - fin "$(le64 3)" '{x}'
	bad_case "JSON nested 33 deep" - fin "$(le64 67)" '\x03' "$(printf '[%.0s' {1..33})$(printf ']%.0s' {1..33})"
	bad_case "JSON nested 32 deep (fine)" - fin "$(le64 65)" '\x03' "$(printf '[%.0s' {1..32})$(printf ']%.0s' {1..32})"
	bad_case "a good Probe, then zero length, in one segment" - fin "$(le64 4)" "$probe" "$(le64 0)"
	bad_case "a good Connection, then type byte 0x90, cut inside the second length" 244 fin \
		"$conn" "$(le64 2)" '\x90{'
	ws=$(spaces 1048573)
	bad_case "length 1 MiB exactly (the limit: fine)" - fin "$(le64 1048576)" '\x03{}' "$ws"
	bad_case "length 1 MiB + 1 with its bytes" - fin "$(le64 1048577)" '\x03{}' "$ws" ' '

	pcap_and_dissect bad || return 0
	local i last=$((${#bad_names[@]} - 1))
	for i in "${!bad_names[@]}"; do check_bad "$T/bad.frames" "$i"; done
	if grep -q "^${bad_keys[2]}	A" "$T/bad.frames"; then
		ok "bytes after a bad frame are marked (mooncake.after_bad)"
	else
		not_ok "bytes after a bad frame are marked (mooncake.after_bad)"
	fi
	# The limit is a preference: at 2 MiB the last frame is a good one.
	if dissect "$T/bad.pcap" -o mooncake.max_length:2097152 >"$T/bad2.frames" 2>"$T/bad.err"; then
		bad_names[last]+=" at -o mooncake.max_length:2097152 (decode --max-length 2097152)"
		check_bad "$T/bad2.frames" "$last" --max-length 2097152
	else
		not_ok "tshark -o mooncake.max_length:2097152"
		diag "$T/bad.err"
	fi
}
