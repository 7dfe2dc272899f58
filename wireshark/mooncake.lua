-- mooncake.lua: a Wireshark dissector for the Mooncake Transfer Engine
-- handshake (TCP, length-prefixed JSON frames), as libqphs speaks it.
--
-- Load it with   tshark -X lua_script:mooncake.lua ...
-- or copy it into ~/.local/lib/wireshark/plugins/ (README, "Packets").
--
-- Wireshark 4.0 (Lua 5.2) or later.  The frame (lib/include/qphs/frame.h):
--
--   [ length : u64 little-endian ][ type : u8 ][ JSON ]   typed frame
--   [ length : u64 little-endian ][ JSON ]                old protocol
--
-- length counts the type byte and the JSON.  A first payload byte 0..3 is
-- the type (Connection, Metadata, Notify, Probe); 0x04..0x7f starts the
-- JSON of an old-protocol frame (a Connection).  A frame is refused where
-- libqphs's decoder refuses it (lib/codec/wire.c, then lib/codec/jsonr.c),
-- and mooncake.error carries the name libqphs gives the error:
--
--   ERR_FRAME_ZERO_LENGTH   length 0 (seen at the 8th byte)
--   ERR_FRAME_TOO_LONG      length above the limit (the max_length preference)
--   ERR_FRAME_BAD_TYPE      first payload byte 0x80..0xff
--   ERR_FRAME_EMPTY_BODY    a typed frame of length 1, or a body of whitespace only
--   ERR_FRAME_TRUNCATED     the sender's FIN or RST inside a frame
--   ERR_FRAME_NOT_JSON      a body that is not JSON
--   ERR_FRAME_TRAILING      bytes other than whitespace after the JSON value
--   ERR_BODY_TOO_DEEP       a value nested in more than 31 arrays or objects
--
-- libqphs closes the connection at a bad frame, so whatever the same side
-- sends after it is shown as undecoded (mooncake.after_bad).

local PORT_DEFAULT = 12001
local LIMIT_MIN = 1048576     -- 1 MiB, MC_HANDSHAKE_MAX_LENGTH's default and minimum
local LIMIT_MAX = 134217728   -- 128 MiB, its maximum
local MAX_DEPTH = 32          -- QPHS_MAX_DEPTH (lib/include/qphs/json.h)

local mc = Proto("mooncake", "Mooncake Transfer Engine handshake")
-- Sees every packet after the others, to notice a connection that ends
-- inside a frame and which side opened the connection.
local mc_end = Proto("mooncake_end", "Mooncake handshake connection tracking")

local TYPE_NAMES = { [0] = "connection", [1] = "metadata", [2] = "notify", [3] = "probe" }
local TYPE_TITLES = { [0] = "Connection", [1] = "Metadata", [2] = "Notify", [3] = "Probe" }
local OLD_PROTOCOL = "old-protocol"

local pf = {
	length = ProtoField.uint64("mooncake.length", "Length", base.DEC, nil, nil,
		"the 8-byte little-endian length: type byte plus JSON"),
	type_byte = ProtoField.uint8("mooncake.type_byte", "Type byte", base.HEX, TYPE_TITLES),
	type = ProtoField.string("mooncake.type", "Message type",
		"connection, metadata, notify, probe or old-protocol (qplab hs decode's names)"),
	role = ProtoField.string("mooncake.role", "Role", "request or reply"),
	json = ProtoField.string("mooncake.json", "JSON", "the body minus trailing whitespace"),
	error = ProtoField.string("mooncake.error", "Error", "libqphs's name for a bad frame"),
	after_bad = ProtoField.bytes("mooncake.after_bad", "Bytes after a bad frame"),
	-- Connection (and old protocol): HandShakeDesc
	local_nic_path = ProtoField.string("mooncake.local_nic_path", "local_nic_path"),
	peer_nic_path = ProtoField.string("mooncake.peer_nic_path", "peer_nic_path"),
	local_lid = ProtoField.uint16("mooncake.local_lid", "local_lid"),
	local_gid = ProtoField.string("mooncake.local_gid", "local_gid"),
	qp_num = ProtoField.uint32("mooncake.qp_num", "qp_num"),
	qp_count = ProtoField.uint32("mooncake.qp_count", "QP count", base.DEC, nil, nil,
		"elements of qp_num"),
	reply_msg = ProtoField.string("mooncake.reply_msg", "reply_msg"),
	payload = ProtoField.string("mooncake.payload", "payload"),
	ready_ack = ProtoField.bool("mooncake.ready_ack", "ready_ack"),
	ready_ack_key = ProtoField.string("mooncake.ready_ack_key", "ready_ack key",
		"true, false, or none (no ready_ack bool in the body); on every message"),
	path_mtu = ProtoField.uint32("mooncake.qphs_path_mtu", "qphs_path_mtu"),
	-- Notify
	notify_name = ProtoField.string("mooncake.notify.name", "name"),
	notify_msg = ProtoField.string("mooncake.notify.notify_msg", "notify_msg"),
	-- Probe
	probe_status = ProtoField.string("mooncake.probe.status", "status"),
	-- Metadata: a segment descriptor
	md_name = ProtoField.string("mooncake.metadata.name", "name"),
	md_protocol = ProtoField.string("mooncake.metadata.protocol", "protocol"),
	md_timestamp = ProtoField.string("mooncake.metadata.timestamp", "timestamp"),
	md_tcp_data_port = ProtoField.int64("mooncake.metadata.tcp_data_port", "tcp_data_port"),
	md_tcp_proto_version = ProtoField.int64("mooncake.metadata.tcp_proto_version",
		"tcp_proto_version"),
	md_device = ProtoField.none("mooncake.metadata.device", "device"),
	md_device_name = ProtoField.string("mooncake.metadata.device.name", "name"),
	md_device_lid = ProtoField.uint16("mooncake.metadata.device.lid", "lid"),
	md_device_gid = ProtoField.string("mooncake.metadata.device.gid", "gid"),
	md_buffer = ProtoField.none("mooncake.metadata.buffer", "buffer"),
	md_buffer_name = ProtoField.string("mooncake.metadata.buffer.name", "name"),
	md_buffer_addr = ProtoField.uint64("mooncake.metadata.buffer.addr", "addr", base.HEX),
	md_buffer_length = ProtoField.uint64("mooncake.metadata.buffer.length", "length"),
	md_buffer_rkey = ProtoField.uint32("mooncake.metadata.buffer.rkey", "rkey", base.HEX),
	md_buffer_lkey = ProtoField.uint32("mooncake.metadata.buffer.lkey", "lkey", base.HEX),
	-- any other key, as text
	member = ProtoField.string("mooncake.member", "Other key"),
}
local field_list = {}
for _, v in pairs(pf) do field_list[#field_list + 1] = v end
mc.fields = field_list

-- Expert infos: the bad frames (Malformed, Error), then the others.
local ex, experts = {}, {}
for _, e in ipairs({
	{ "ERR_FRAME_ZERO_LENGTH", "zero_length", "frame length is zero" },
	{ "ERR_FRAME_TOO_LONG", "too_long", "frame length exceeds the limit" },
	{ "ERR_FRAME_BAD_TYPE", "bad_type", "frame type byte is in 0x80-0xff" },
	{ "ERR_FRAME_EMPTY_BODY", "empty_body", "frame has no JSON body" },
	{ "ERR_FRAME_TRUNCATED", "truncated", "connection ended inside a frame" },
	{ "ERR_FRAME_NOT_JSON", "not_json", "frame body is not JSON" },
	{ "ERR_FRAME_TRAILING", "trailing", "bytes after the JSON value in a frame" },
	{ "ERR_BODY_TOO_DEEP", "too_deep", "JSON nesting deeper than 32 levels" },
	{ "after_bad", "after_bad", "bytes after a bad frame (a libqphs peer has closed)",
		expert.group.SEQUENCE, expert.severity.WARN },
	{ "shape", "shape", "a key of the body has an unexpected JSON type or value",
		expert.group.PROTOCOL, expert.severity.WARN },
	{ "rejected", "rejected", "handshake rejected: reply_msg is not empty",
		expert.group.RESPONSE_CODE, expert.severity.WARN },
}) do
	ex[e[1]] = ProtoExpert.new("mooncake.expert." .. e[2], e[3],
		e[4] or expert.group.MALFORMED, e[5] or expert.severity.ERROR)
	experts[#experts + 1] = ex[e[1]]
end
mc.experts = experts

mc.prefs.port = Pref.uint("Handshake TCP port", PORT_DEFAULT,
	"The TCP port of handshake daemons (MC_HANDSHAKE_PORT); other ports are tried heuristically")
mc.prefs.max_length = Pref.uint("Frame length limit (bytes)", LIMIT_MIN,
	"MC_HANDSHAKE_MAX_LENGTH: longer frames are refused; clamped to 1048576..134217728 as libqphs does")
mc.prefs.json_tree = Pref.bool("Show the JSON tree too", true,
	"Add Wireshark's own JSON dissection of each body below the named fields")

local f_stream = Field.new("tcp.stream")
local f_fin = Field.new("tcp.flags.fin")
local f_rst = Field.new("tcp.flags.reset")
local f_syn = Field.new("tcp.flags.syn")
local f_ack = Field.new("tcp.flags.ack")

local json_dissector = Dissector.get("json")

-- Per capture file.  Everything is computed on the first pass and looked
-- up on later passes (the GUI dissects a packet again when it is shown).
local st

local function reset()
	st = {
		client = {},    -- tcp.stream -> "addr:port" of the side that sent the SYN
		first = {},     -- tcp.stream -> "addr:port" of the first frame's sender
		bad_at = {},    -- direction -> packet number of its first bad frame
		pending = {},   -- direction -> {have, need} of a partial frame (first pass)
		ours = {},      -- direction -> packet number of its first good frame
		truncated = {}, -- packet number -> {have, need}: the FIN or RST inside a frame
	}
end
reset()
mc.init = reset

local function limit()
	local m = mc.prefs.max_length
	if m < LIMIT_MIN then return LIMIT_MIN end
	if m > LIMIT_MAX then return LIMIT_MAX end
	return m
end

local function endpoint(addr, port)
	return tostring(addr) .. ":" .. tostring(port)
end

local function direction(pinfo)
	local s = f_stream()
	return (s and tostring(s.value) or "?") .. "/" .. endpoint(pinfo.src, pinfo.src_port)
end

------------------------------------------------------------------------
-- JSON: a reader with byte offsets, strict where libqphs is strict (it
-- uses json-c's strict mode plus its own checks) and lenient where json-c
-- is (digits after "." optional, leading zeros, raw control characters
-- inside strings).  Raises {code=ERR_NAME, at=offset, msg=text}.

local function jfail(code, at, msg)
	error({ code = code, at = at, msg = msg }, 0)
end

local WS = "^[ \t\n\r]*"
local WS_BYTE = { [0x20] = true, [0x09] = true, [0x0a] = true, [0x0d] = true }

local function utf8_encode(cp)
	if cp < 0x80 then return string.char(cp) end
	if cp < 0x800 then
		return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64)
	end
	if cp < 0x10000 then
		return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64,
			0x80 + cp % 64)
	end
	return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
		0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

-- Well-formed UTF-8 (RFC 3629), as lib/codec/jsonr.c's utf8_ok.
local function utf8_ok(s)
	local i, n = 1, #s
	while i <= n do
		local c = s:byte(i)
		if c < 0x80 then
			i = i + 1
		else
			local need = c >= 0xF0 and 3 or c >= 0xE0 and 2 or 1
			if c < 0xC2 or c > 0xF4 or n - i < need then return false end
			local cp = c % (2 ^ (6 - need))
			for k = 1, need do
				local b = s:byte(i + k)
				if b < 0x80 or b > 0xBF then return false end
				cp = cp * 64 + b % 64
			end
			if (need == 2 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF))) or
			    (need == 3 and (cp < 0x10000 or cp > 0x10FFFF)) then
				return false
			end
			i = i + need + 1
		end
	end
	return true
end

local ESCAPES = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f",
	n = "\n", r = "\r", t = "\t" }

local function read_string(s, i)
	-- s:sub(i, i) is the opening quote
	local parts, j = {}, i + 1
	while true do
		local k = s:find('["\\]', j)
		if not k then jfail("ERR_FRAME_NOT_JSON", #s, "unterminated string") end
		local raw = s:sub(j, k - 1)
		if raw:find("[\128-\255]") and not utf8_ok(raw) then
			jfail("ERR_FRAME_NOT_JSON", j - 1, "a string is not well-formed UTF-8")
		end
		parts[#parts + 1] = raw
		if s:sub(k, k) == '"' then
			return { t = "string", s = i, e = k, v = table.concat(parts) }, k + 1
		end
		local c = s:sub(k + 1, k + 1)
		if ESCAPES[c] then
			parts[#parts + 1] = ESCAPES[c]
			j = k + 2
		elseif c == "u" then
			local hex = s:sub(k + 2, k + 5)
			if not hex:find("^%x%x%x%x$") then
				jfail("ERR_FRAME_NOT_JSON", k - 1, "bad \\u escape")
			end
			local cp = tonumber(hex, 16)
			j = k + 6
			local lo = s:match("^\\u(%x%x%x%x)", j)
			if cp >= 0xD800 and cp <= 0xDBFF and lo and tonumber(lo, 16) >= 0xDC00 and
			    tonumber(lo, 16) <= 0xDFFF then
				cp = 0x10000 + (cp - 0xD800) * 1024 + (tonumber(lo, 16) - 0xDC00)
				j = j + 6
			elseif cp >= 0xD800 and cp <= 0xDFFF then
				cp = 0xFFFD -- a lone surrogate: json-c takes it, shown as U+FFFD
			end
			parts[#parts + 1] = utf8_encode(cp)
		else
			jfail("ERR_FRAME_NOT_JSON", k - 1, "invalid escape in a string")
		end
	end
end

local LITERALS = { { "true", "bool", true }, { "false", "bool", false }, { "null", "null" } }

local read_value

local function read_container(s, i, depth, open)
	local close = open == "{" and "}" or "]"
	local node = { t = open == "{" and "object" or "array", s = i, items = {} }
	local j = select(2, s:find(WS, i + 1)) + 1
	if s:sub(j, j) == close then
		node.e = j
		return node, j + 1
	end
	while true do
		local key
		if open == "{" then
			if s:sub(j, j) ~= '"' then
				jfail("ERR_FRAME_NOT_JSON", j - 1, "quoted object property name expected")
			end
			key, j = read_string(s, j)
			j = select(2, s:find(WS, j)) + 1
			if s:sub(j, j) ~= ":" then
				jfail("ERR_FRAME_NOT_JSON", j - 1, "':' expected")
			end
			j = select(2, s:find(WS, j + 1)) + 1
		end
		local v
		v, j = read_value(s, j, depth + 1)
		v.key = key
		node.items[#node.items + 1] = v
		j = select(2, s:find(WS, j)) + 1
		local c = s:sub(j, j)
		if c == close then
			node.e = j
			return node, j + 1
		end
		if c ~= "," then
			jfail("ERR_FRAME_NOT_JSON", j - 1, "',' or '" .. close .. "' expected")
		end
		j = select(2, s:find(WS, j + 1)) + 1
	end
end

-- depth: 1 for the top-level value; libqphs refuses a value at depth 33.
read_value = function(s, i, depth)
	if depth > MAX_DEPTH then
		jfail("ERR_BODY_TOO_DEEP", i - 1, "JSON nesting deeper than 32 levels")
	end
	local c = s:sub(i, i)
	if c == "{" or c == "[" then return read_container(s, i, depth, c) end
	if c == '"' then return read_string(s, i) end
	local num = s:match("^-?%d+%.?%d*", i)
	if num then
		local exp = s:match("^[eE][+-]?%d+", i + #num)
		if not exp and s:find("^[eE]", i + #num) then
			jfail("ERR_FRAME_NOT_JSON", i + #num - 1, "bad exponent")
		end
		local text = num .. (exp or "")
		local v = tonumber(text)
		if not v or v == math.huge or v == -math.huge then
			jfail("ERR_FRAME_NOT_JSON", i - 1, "a number too large for a double")
		end
		return { t = "number", s = i, e = i + #text - 1, v = v, text = text }, i + #text
	end
	for _, lit in ipairs(LITERALS) do
		local word = lit[1]
		if s:sub(i, i + #word - 1) == word then
			return { t = lit[2], s = i, e = i + #word - 1, v = lit[3] }, i + #word
		end
	end
	if i > #s then jfail("ERR_FRAME_NOT_JSON", i - 1, "unexpected end of data") end
	jfail("ERR_FRAME_NOT_JSON", i - 1, "unexpected character")
end

-- The body as libqphs checks it (qphs_json_parse): the value, or nil and
-- {code, at, msg}.
local function parse_body(s)
	local i = select(2, s:find(WS)) + 1
	if i > #s then
		return nil, { code = "ERR_FRAME_EMPTY_BODY", at = 0,
			msg = "body is empty (" .. #s .. " bytes of whitespace)" }
	end
	local ok, v, j = pcall(read_value, s, i, 1)
	if not ok then
		if type(v) ~= "table" then error(v, 0) end
		return nil, v
	end
	j = select(2, s:find(WS, j)) + 1
	if j <= #s then
		return nil, { code = "ERR_FRAME_TRAILING", at = j - 1,
			msg = "bytes after the JSON value, at byte " .. (j - 1) }
	end
	return v
end

------------------------------------------------------------------------
-- Named fields.  body_tvb covers the JSON; node offsets are 1-based.

local function range_of(body_tvb, node)
	return body_tvb(node.s - 1, node.e - node.s + 1)
end

local function member(obj, key)
	if obj.t ~= "object" then return nil end
	local found
	for _, v in ipairs(obj.items) do
		if v.key and v.key.v == key then found = v end -- the last one wins, as in json-c
	end
	return found
end

local function shape(tree, body_tvb, node, text)
	tree:add_tvb_expert_info(ex.shape, range_of(body_tvb, node), text)
end

-- A JSON number that is an integer in lo..hi, or nil.
local function integer_in(node, lo, hi)
	if node.t ~= "number" or not node.text:find("^-?%d+$") then return nil end
	if node.v < lo or node.v > hi then return nil end
	return node.v
end

local function add_string(tree, body_tvb, obj, key, field)
	local v = member(obj, key)
	if not v then return nil end
	if v.t == "string" then
		tree:add(field, range_of(body_tvb, v), v.v)
		return v.v
	end
	if v.t == "number" or v.t == "bool" then -- libqphs stringifies these, as Mooncake does
		tree:add(field, range_of(body_tvb, v), tostring(v.text or v.v))
		return tostring(v.v)
	end
	shape(tree, body_tvb, v, key .. ": not a string")
end

local function add_uint(tree, body_tvb, obj, key, field, hi)
	local v = member(obj, key)
	if not v then return nil end
	local n = integer_in(v, 0, hi)
	if n then
		tree:add(field, range_of(body_tvb, v), n)
	else
		shape(tree, body_tvb, v, key .. ": not an integer in 0.." .. string.format("%.0f", hi))
	end
	return n
end

-- A decimal integer text as UInt64 (addresses do not fit a double).
local function uint64_of(node)
	local text = node.t == "number" and node.text or ""
	if not text:find("^%d+$") or #text > 20 or (#text == 20 and text > "18446744073709551615") then
		return nil
	end
	local v = UInt64.new(0)
	for d in text:gmatch("%d") do v = v * 10 + tonumber(d) end
	return v
end

local function add_u32_array(tree, body_tvb, obj, key, field)
	local arr = member(obj, key)
	if not arr then return nil end
	if arr.t ~= "array" then
		shape(tree, body_tvb, arr, key .. ": not an array")
		return nil
	end
	for i, e in ipairs(arr.items) do
		local n = integer_in(e, 0, 4294967295)
		if n then
			tree:add(field, range_of(body_tvb, e), n)
		else
			shape(tree, body_tvb, e, string.format("%s[%d]: not a 32-bit unsigned integer", key, i - 1))
		end
	end
	return #arr.items
end

local function dissect_connection(tree, body_tvb, obj, info)
	add_string(tree, body_tvb, obj, "local_nic_path", pf.local_nic_path)
	add_string(tree, body_tvb, obj, "peer_nic_path", pf.peer_nic_path)
	add_uint(tree, body_tvb, obj, "local_lid", pf.local_lid, 65535)
	add_string(tree, body_tvb, obj, "local_gid", pf.local_gid)
	local n = add_u32_array(tree, body_tvb, obj, "qp_num", pf.qp_num)
	if n then
		tree:add(pf.qp_count, n):set_generated()
		info[#info + 1] = n .. (n == 1 and " QP" or " QPs")
	end
	local msg = add_string(tree, body_tvb, obj, "reply_msg", pf.reply_msg)
	if msg and msg ~= "" then
		tree:add_tvb_expert_info(ex.rejected, range_of(body_tvb, member(obj, "reply_msg")),
			"handshake rejected: " .. msg)
		info[#info + 1] = "reply_msg: " .. msg
	end
	add_string(tree, body_tvb, obj, "payload", pf.payload)
	local ack = member(obj, "ready_ack")
	if ack and ack.t == "bool" then
		tree:add(pf.ready_ack, range_of(body_tvb, ack), ack.v)
		if ack.v then info[#info + 1] = "ready_ack" end
	elseif ack then
		shape(tree, body_tvb, ack, "ready_ack: not a bool")
	end
	add_uint(tree, body_tvb, obj, "qphs_path_mtu", pf.path_mtu, 4294967295)
	return { local_nic_path = 1, peer_nic_path = 1, local_lid = 1, local_gid = 1, qp_num = 1,
		reply_msg = 1, payload = 1, ready_ack = 1, qphs_path_mtu = 1 }
end

local function dissect_device(tree, body_tvb, dev)
	local t = tree:add(pf.md_device, range_of(body_tvb, dev))
	if dev.t ~= "object" then
		shape(t, body_tvb, dev, "devices[]: not an object")
		return
	end
	local name = add_string(t, body_tvb, dev, "name", pf.md_device_name)
	add_uint(t, body_tvb, dev, "lid", pf.md_device_lid, 65535)
	add_string(t, body_tvb, dev, "gid", pf.md_device_gid)
	if name then t:append_text(": " .. name) end
end

local function dissect_buffer(tree, body_tvb, buf)
	local t = tree:add(pf.md_buffer, range_of(body_tvb, buf))
	if buf.t ~= "object" then
		shape(t, body_tvb, buf, "buffers[]: not an object")
		return
	end
	local name = add_string(t, body_tvb, buf, "name", pf.md_buffer_name)
	for _, k in ipairs({ "addr", "length" }) do
		local v = member(buf, k)
		local u = v and uint64_of(v)
		if u then
			t:add(k == "addr" and pf.md_buffer_addr or pf.md_buffer_length, range_of(body_tvb, v), u)
		elseif v then
			shape(t, body_tvb, v, k .. ": not a 64-bit unsigned integer")
		end
	end
	add_u32_array(t, body_tvb, buf, "rkey", pf.md_buffer_rkey)
	add_u32_array(t, body_tvb, buf, "lkey", pf.md_buffer_lkey)
	if name then t:append_text(": " .. name) end
end

local function dissect_metadata(tree, body_tvb, obj, info)
	local name = add_string(tree, body_tvb, obj, "name", pf.md_name)
	add_string(tree, body_tvb, obj, "protocol", pf.md_protocol)
	add_string(tree, body_tvb, obj, "timestamp", pf.md_timestamp)
	for _, k in ipairs({ "tcp_data_port", "tcp_proto_version" }) do
		local v = member(obj, k)
		if v and integer_in(v, -2147483648, 2147483647) then
			tree:add(pf["md_" .. k], range_of(body_tvb, v), Int64.new(v.v))
		elseif v then
			shape(tree, body_tvb, v, k .. ": not a 32-bit integer")
		end
	end
	for _, k in ipairs({ "devices", "buffers" }) do
		local arr = member(obj, k)
		if arr and arr.t == "array" then
			for _, e in ipairs(arr.items) do
				(k == "devices" and dissect_device or dissect_buffer)(tree, body_tvb, e)
			end
		elseif arr then
			shape(tree, body_tvb, arr, k .. ": not an array")
		end
	end
	if name and name ~= "" then info[#info + 1] = name end
	return { name = 1, protocol = 1, timestamp = 1, tcp_data_port = 1, tcp_proto_version = 1,
		devices = 1, buffers = 1 }
end

local function dissect_notify(tree, body_tvb, obj, info)
	add_string(tree, body_tvb, obj, "name", pf.notify_name)
	local msg = add_string(tree, body_tvb, obj, "notify_msg", pf.notify_msg)
	if msg then info[#info + 1] = "notify_msg: " .. msg end
	return { name = 1, notify_msg = 1 }
end

local function dissect_probe(tree, body_tvb, obj, info)
	local status = add_string(tree, body_tvb, obj, "status", pf.probe_status)
	if status then info[#info + 1] = status end
	return { status = 1 }
end

local BODY = { [0] = dissect_connection, [1] = dissect_metadata, [2] = dissect_notify,
	[3] = dissect_probe }

-- Every key the type does not name, as text.
local function other_keys(tree, body_tvb, obj, known)
	for _, v in ipairs(obj.items) do
		if not known[v.key.v] then
			local text = v.t == "string" and v.v or v.text or tostring(v.v)
			if v.t ~= "string" and v.t ~= "number" and v.t ~= "bool" then text = v.t end
			tree:add(pf.member, range_of(body_tvb, v), v.key.v .. ": " .. text)
		end
	end
end

------------------------------------------------------------------------
-- Frames.

-- request or reply: the side that sent the SYN asks; without the SYN in
-- the capture, whoever talks to the handshake port; else whoever spoke first.
local function role_of(pinfo)
	local s = f_stream()
	local key = s and tostring(s.value) or "?"
	local me = endpoint(pinfo.src, pinfo.src_port)
	if st.client[key] then return st.client[key] == me and "request" or "reply" end
	if pinfo.dst_port == mc.prefs.port then return "request" end
	if pinfo.src_port == mc.prefs.port then return "reply" end
	if not st.first[key] and not pinfo.visited then st.first[key] = me end
	return (st.first[key] or me) == me and "request" or "reply"
end

local function set_info(pinfo, text)
	pinfo.cols.protocol = "Mooncake"
	local old = tostring(pinfo.cols.info)
	if old:find("^Mooncake") then
		pinfo.cols.info:append(", " .. text)
	else
		pinfo.cols.info = "Mooncake " .. text
	end
end

-- A refused frame: the error field, its expert info, the info column;
-- the direction is marked so what follows is not decoded.
-- at: the bytes the expert info points to (default: the whole range).
local function bad_frame(tvb, pinfo, tree, off, range, code, text, at)
	local t = tree:add(mc, range)
	t:append_text(": bad frame, " .. code)
	t:add(pf.length, tvb(off, 8), tvb(off, 8):le_uint64())
	t:add(pf.error, range, code)
	t:add_tvb_expert_info(ex[code], at or range, code .. ": " .. text)
	set_info(pinfo, "bad frame: " .. code)
	if not pinfo.visited then
		local dir = direction(pinfo)
		st.pending[dir] = nil
		st.bad_at[dir] = st.bad_at[dir] or pinfo.number
	end
	return t
end

-- One whole frame: off..off+8+len-1 of tvb.
local function dissect_frame(tvb, pinfo, tree, off, len)
	local first = tvb(off + 8, 1):uint()
	local typed = first <= 3
	local hlen = typed and 9 or 8
	local frame = tvb(off, 8 + len)
	local body_tvb = tvb(off + hlen, len - (hlen - 8)):tvb("JSON body")
	local body = body_tvb:raw()
	local v, err = parse_body(body)
	if not v then
		local at = math.max(0, math.min(err.at, #body - 1))
		bad_frame(tvb, pinfo, tree, off, frame, err.code, err.msg, body_tvb(at, 1))
		return
	end
	local name = typed and TYPE_NAMES[first] or OLD_PROTOCOL
	local title = typed and TYPE_TITLES[first] or "Connection (old protocol)"
	local role = role_of(pinfo)
	local t = tree:add(mc, frame)
	t:append_text(": " .. title .. " " .. role)
	t:add(pf.length, tvb(off, 8), tvb(off, 8):le_uint64())
	if typed then
		t:add(pf.type_byte, tvb(off + 8, 1))
		t:add(pf.type, tvb(off + 8, 1), name):set_generated()
	else
		t:add(pf.type, tvb(off + 8, 0), name):set_generated()
	end
	t:add(pf.role, tvb(off, 0), role):set_generated()
	-- On every message, unlike mooncake.ready_ack, so that its values line
	-- up with mooncake.type's when one segment carries several messages.
	local ack = v.t == "object" and (not typed or first == 0) and member(v, "ready_ack")
	t:add(pf.ready_ack_key, tvb(off, 0), ack and ack.t == "bool" and tostring(ack.v) or "none"):set_generated()
	local trimmed = #body -- the JSON minus trailing whitespace, as hs decode prints it
	while trimmed > 0 and WS_BYTE[body:byte(trimmed)] do trimmed = trimmed - 1 end
	t:add(pf.json, body_tvb(0, trimmed), body:sub(1, trimmed))
	local info = {}
	if v.t == "object" then
		local known = BODY[typed and first or 0](t, body_tvb, v, info)
		other_keys(t, body_tvb, v, known)
	else
		shape(t, body_tvb, v, "the body is not a JSON object")
	end
	if mc.prefs.json_tree and json_dissector then
		-- the JSON dissector writes the columns; ours stay
		local proto_col, info_col = tostring(pinfo.cols.protocol), tostring(pinfo.cols.info)
		json_dissector:call(body_tvb, pinfo, t)
		pinfo.cols.protocol:clear_fence()
		pinfo.cols.info:clear_fence()
		pinfo.cols.protocol = proto_col
		pinfo.cols.info = info_col
	end
	local text = title .. " " .. role
	if #info > 0 then text = text .. " (" .. table.concat(info, ", ") .. ")" end
	set_info(pinfo, text)
	if not pinfo.visited then
		local dir = direction(pinfo)
		st.pending[dir] = nil
		st.ours[dir] = st.ours[dir] or pinfo.number
	end
end

-- Asks TCP for the rest of the frame that starts at off (total bytes in
-- all), and remembers the partial frame in case the connection ends first.
-- Until the length and the type byte are in (9 bytes), it asks for the next
-- segment rather than a byte count: TCP cannot grow a reassembled PDU from
-- the middle of the segment that completed it.
local function want_more(pinfo, off, have, total)
	pinfo.desegment_offset = off
	pinfo.desegment_len = total <= 9 and DESEGMENT_ONE_MORE_SEGMENT or total - have
	if not pinfo.visited then st.pending[direction(pinfo)] = { have = have, need = total } end
end

-- The frames of one TCP payload (reassembled by TCP where we asked).
local function dissect_stream(tvb, pinfo, tree)
	local n, off = tvb:len(), 0
	local bad = st.bad_at[direction(pinfo)]
	if bad and pinfo.number > bad then
		local t = tree:add(mc, tvb())
		t:add(pf.after_bad, tvb())
		t:add_tvb_expert_info(ex.after_bad, tvb(), "bytes after a bad frame (a libqphs peer has closed)")
		set_info(pinfo, "bytes after a bad frame")
		return n
	end
	while off < n do
		local have = n - off
		if have < 8 then
			want_more(pinfo, off, have, 8)
			return n
		end
		local len64 = tvb(off, 8):le_uint64()
		local high, len = len64:higher(), len64:lower()
		if high == 0 and len == 0 then
			bad_frame(tvb, pinfo, tree, off, tvb(off, 8), "ERR_FRAME_ZERO_LENGTH", "frame length is zero")
			return n
		end
		if high ~= 0 or len > limit() then
			bad_frame(tvb, pinfo, tree, off, tvb(off, 8), "ERR_FRAME_TOO_LONG",
				"frame length " .. tostring(len64) .. " exceeds the limit " .. limit())
			return n
		end
		if have < 9 then
			want_more(pinfo, off, have, 9)
			return n
		end
		local first = tvb(off + 8, 1):uint()
		if first >= 0x80 then
			bad_frame(tvb, pinfo, tree, off, tvb(off, 9), "ERR_FRAME_BAD_TYPE",
				string.format("type byte 0x%02x is in 0x80-0xff", first))
			return n
		end
		if first <= 3 and len == 1 then
			bad_frame(tvb, pinfo, tree, off, tvb(off, 9), "ERR_FRAME_EMPTY_BODY",
				"a typed frame of length 1 has no JSON")
			return n
		end
		if have < 8 + len then
			want_more(pinfo, off, have, 8 + len)
			return n
		end
		dissect_frame(tvb, pinfo, tree, off, len)
		off = off + 8 + len
	end
	return n
end

function mc.dissector(tvb, pinfo, tree)
	return dissect_stream(tvb, pinfo, tree)
end

-- Other ports: the start of a frame as Mooncake writes it, a plausible
-- length and, where the bytes are there, a type byte 0..3 followed by
-- '{' or an old-protocol '{'.  The first segment must hold the 8 length
-- bytes (Mooncake writes them in one call).  Once a side has sent a good
-- frame, whatever it sends next is ours too, bad frames included.
local function looks_like_frame(tvb)
	local n = tvb:len()
	if n < 8 then return false end
	local len64 = tvb(0, 8):le_uint64()
	local len = len64:lower()
	if len64:higher() ~= 0 or len < 2 or len > limit() then return false end
	if n < 9 then return true end
	local first = tvb(8, 1):uint()
	if first == 0x7b then return true end -- old protocol: the JSON's '{'
	if first > 3 then return false end
	return n < 10 or tvb(9, 1):uint() == 0x7b
end

local function heuristic(tvb, pinfo, tree)
	local since = st.ours[direction(pinfo)]
	if not (since and pinfo.number >= since) and not looks_like_frame(tvb) then
		return false
	end
	dissect_stream(tvb, pinfo, tree)
	return true
end

local registered_port = PORT_DEFAULT
DissectorTable.get("tcp.port"):add(registered_port, mc)

function mc.prefs_changed()
	if mc.prefs.port == registered_port then return end
	local tcp = DissectorTable.get("tcp.port")
	tcp:remove(registered_port, mc)
	tcp:add(mc.prefs.port, mc)
	registered_port = mc.prefs.port
end

mc:register_heuristic("tcp", heuristic)

------------------------------------------------------------------------
-- End of a connection inside a frame, and who opened it.

function mc_end.dissector(tvb, pinfo, tree)
	local stream = f_stream()
	if not stream then return end
	local syn, ack = f_syn(), f_ack()
	if not pinfo.visited and syn and syn.value and not (ack and ack.value) then
		st.client[tostring(stream.value)] = endpoint(pinfo.src, pinfo.src_port)
	end
	if not pinfo.visited then
		local fin, rst = f_fin(), f_rst()
		local dir = direction(pinfo)
		local p = st.pending[dir]
		if p and ((fin and fin.value) or (rst and rst.value)) then
			st.truncated[pinfo.number] = p
			st.pending[dir] = nil
			st.bad_at[dir] = st.bad_at[dir] or pinfo.number
		end
	end
	local p = st.truncated[pinfo.number]
	if p then
		local t = tree:add(mc, tvb(0, 0))
		t:append_text(": connection ended inside a frame")
		t:add(pf.error, tvb(0, 0), "ERR_FRAME_TRUNCATED"):set_generated()
		t:add_proto_expert_info(ex.ERR_FRAME_TRUNCATED, string.format(
			"ERR_FRAME_TRUNCATED: connection ended inside a frame (%d of %d bytes)", p.have, p.need))
		set_info(pinfo, "bad frame: ERR_FRAME_TRUNCATED")
	end
end

register_postdissector(mc_end)
