// mooncake_ref — Mooncake's side of the differential test (tests/compat).
//
// Reads the table on stdin and prints one result line per table line,
// doing what Mooncake Transfer Engine (3b5a594) does with jsoncpp 1.9.5:
// Json::FastWriter for writing, CharReaderBuilder defaults for reading, and
// the HandShakeDesc/NotifyDesc encode and decode rules of
// TransferHandshakeUtil and TransferNotifyUtil, and the segment descriptor
// rules of TransferMetadata::decodeSegmentDesc / encodeSegmentDesc and
// Topology::parse / toJson (transfer_metadata.cpp, topology.cpp), written
// from a reading of those functions, not copied.
// tests/compat/ours.c prints libqphs's answer in the same format.
//
// Table line: EXPECT MODE ARG, ARG percent-encoded (%HH).  Modes:
//   write   ARG is a body: parse it, write it back (FastWriter)
//   hs      ARG is a Connection body: decode it, print the fields, encode again
//   notify  ARG is a Notify body: decode, print, encode again
//   enc     ARG is a field record "key=T:value;..." (T: s string, hex-encoded;
//           u unsigned; b bool; a unsigned array "1,2"): encode a HandShakeDesc
//   seg     ARG is a Metadata body (a segment descriptor): decode it as the
//           RDMA protocol's descriptor, encode it again ("corrupt" where
//           Mooncake drops it, "abort" where it throws)
#include <json/json.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string pct_decode(const std::string &s)
{
	std::string out;
	for (size_t i = 0; i < s.size(); i++) {
		if (s[i] == '%' && i + 2 < s.size()) {
			out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
			i += 2;
		} else {
			out += s[i];
		}
	}
	return out;
}

std::string hex(const std::string &s)
{
	static const char d[] = "0123456789abcdef";
	std::string out;
	for (unsigned char c : s) {
		out += d[c >> 4];
		out += d[c & 15];
	}
	return out.empty() ? "-" : out;
}

std::string unhex(const std::string &s)
{
	std::string out;
	for (size_t i = 0; i + 1 < s.size(); i += 2)
		out += static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16));
	return out;
}

// Mooncake's parseJsonString: a CharReader with the builder's defaults.
bool parse(const std::string &body, Json::Value &root)
{
	Json::CharReaderBuilder builder;
	std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
	std::string errs;
	return reader->parse(body.data(), body.data() + body.size(), &root, &errs);
}

std::string write(const Json::Value &v)
{
	return Json::FastWriter{}.write(v);
}

struct Hs {
	std::string local_nic_path, local_gid, peer_nic_path, reply_msg, payload;
	uint16_t local_lid = 0;
	std::vector<uint32_t> qp_num;
	bool ready_ack = false, ready_ack_supported = false;
	// Other transports' keys, written when set (builds with USE_EFA etc.).
	bool has_efa = false, has_cxi = false, has_barex = false, has_jetty = false;
	std::string efa_addr, cxi_addr;
	int barex_port = 0;
	std::vector<uint32_t> jetty_num;
};

// The key set and types of Mooncake's encode.
Json::Value encode(const Hs &d)
{
	Json::Value root;
	root["payload"] = d.payload;
	root["local_nic_path"] = d.local_nic_path;
	root["local_lid"] = d.local_lid;
	root["local_gid"] = d.local_gid;
	root["peer_nic_path"] = d.peer_nic_path;
	if (d.has_barex)
		root["barex_port"] = d.barex_port;
	Json::Value qps(Json::arrayValue);
	for (uint32_t q : d.qp_num)
		qps.append(q);
	root["qp_num"] = qps;
	if (d.ready_ack_supported || d.ready_ack)
		root["ready_ack"] = d.ready_ack;
	root["reply_msg"] = d.reply_msg;
	if (d.has_efa)
		root["efa_addr"] = d.efa_addr;
	if (d.has_cxi)
		root["cxi_addr"] = d.cxi_addr;
	if (d.has_jetty) {
		Json::Value j(Json::arrayValue);
		for (uint32_t q : d.jetty_num)
			j.append(q);
		root["jetty_num"] = j;
	}
	return root;
}

// Mooncake's decode at 3b5a594: no validation; asString everywhere except
// local_gid (isString) and local_lid (isUInt, then truncated to 16 bits);
// qp_num iterated with asUInt; ready_ack "supported" when the key exists.
// root is taken by value and indexed non-const, as Mooncake does: a null
// root becomes an empty object, any other non-object throws.
Hs decode(Json::Value root)
{
	Hs d;
	d.payload = root["payload"].asString();
	d.local_nic_path = root["local_nic_path"].asString();
	d.local_lid = root.isMember("local_lid") && root["local_lid"].isUInt()
			      ? static_cast<uint16_t>(root["local_lid"].asUInt())
			      : 0;
	d.local_gid = root.isMember("local_gid") && root["local_gid"].isString()
			      ? root["local_gid"].asString()
			      : std::string();
	d.peer_nic_path = root["peer_nic_path"].asString();
	for (const auto &qp : root["qp_num"])
		d.qp_num.push_back(qp.asUInt());
	d.ready_ack_supported = root.isMember("ready_ack");
	d.ready_ack = d.ready_ack_supported && root["ready_ack"].isBool() &&
		      root["ready_ack"].asBool();
	d.reply_msg = root["reply_msg"].asString();
	return d;
}

std::string fields(const Hs &d)
{
	std::ostringstream o;
	o << "lnp=" << hex(d.local_nic_path) << " lid=" << d.local_lid
	  << " gid=" << hex(d.local_gid) << " pnp=" << hex(d.peer_nic_path) << " qp=";
	for (size_t i = 0; i < d.qp_num.size(); i++)
		o << (i ? "," : "") << d.qp_num[i];
	if (d.qp_num.empty())
		o << "-";
	o << " reply=" << hex(d.reply_msg) << " payload=" << hex(d.payload) << " ack="
	  << (d.ready_ack_supported ? (d.ready_ack ? "true" : "false") : "absent");
	return o.str();
}

std::vector<uint32_t> u32_list(const std::string &v)
{
	std::vector<uint32_t> out;
	std::stringstream ss(v);
	std::string item;
	while (std::getline(ss, item, ','))
		if (!item.empty())
			out.push_back(static_cast<uint32_t>(std::stoul(item)));
	return out;
}

void set_field(Hs &d, const std::string &key, char t, const std::string &v)
{
	std::string s = t == 's' ? unhex(v) : v;
	if (key == "local_nic_path") d.local_nic_path = s;
	else if (key == "local_gid") d.local_gid = s;
	else if (key == "peer_nic_path") d.peer_nic_path = s;
	else if (key == "reply_msg") d.reply_msg = s;
	else if (key == "payload") d.payload = s;
	else if (key == "local_lid") d.local_lid = static_cast<uint16_t>(std::stoul(v));
	else if (key == "qp_num") d.qp_num = u32_list(v);
	else if (key == "ready_ack") { d.ready_ack = v == "1"; d.ready_ack_supported = true; }
	else if (key == "ready_ack_supported") d.ready_ack_supported = v == "1";
	else if (key == "efa_addr") { d.has_efa = true; d.efa_addr = s; }
	else if (key == "cxi_addr") { d.has_cxi = true; d.cxi_addr = s; }
	else if (key == "barex_port") { d.has_barex = true; d.barex_port = std::stoi(v); }
	else if (key == "jetty_num") { d.has_jetty = true; d.jetty_num = u32_list(v); }
}

Hs record(const std::string &rec)
{
	Hs d;
	std::stringstream ss(rec);
	std::string item;
	while (std::getline(ss, item, ';')) {
		size_t eq = item.find('=');
		if (eq == std::string::npos || eq + 2 >= item.size())
			continue;
		set_field(d, item.substr(0, eq), item[eq + 1], item.substr(eq + 3));
	}
	return d;
}

// decodeSegmentDesc's RDMA part and encodeSegmentDesc's, field by field.
// The timestamp is taken from the body: Mooncake writes the current time.
std::string segment(const Json::Value &in)
{
	Json::Value out, devs(Json::arrayValue), bufs(Json::arrayValue);

	if (in["protocol"].asString() != "rdma")
		return "unsupported";
	out["name"] = in["name"].asString();
	out["protocol"] = "rdma";
	out["tcp_data_port"] = in["tcp_data_port"].asInt();
	out["tcp_proto_version"] = in.isMember("tcp_proto_version")
					   ? in["tcp_proto_version"].asInt() : 1;
	out["timestamp"] = in["timestamp"].asString();
	if (!in["rdma_server_name"].asString().empty())
		out["rdma_server_name"] = in["rdma_server_name"].asString();
	for (const auto &d : in["devices"]) {
		Json::Value o;
		o["name"] = d["name"].asString();
		o["lid"] = static_cast<uint16_t>(d["lid"].asUInt());
		o["gid"] = d["gid"].asString();
		if (o["name"].asString().empty() || o["gid"].asString().empty())
			return "corrupt";
		devs.append(o);
	}
	for (const auto &b : in["buffers"]) {
		Json::Value o, rk(Json::arrayValue), lk(Json::arrayValue);
		o["name"] = b["name"].asString();
		o["addr"] = static_cast<Json::UInt64>(b["addr"].asUInt64());
		o["length"] = static_cast<Json::UInt64>(b["length"].asUInt64());
		for (const auto &k : b["rkey"])
			rk.append(static_cast<uint32_t>(k.asUInt64()));
		for (const auto &k : b["lkey"])
			lk.append(static_cast<uint32_t>(k.asUInt64()));
		if (o["name"].asString().empty() || !o["addr"].asUInt64() || !o["length"].asUInt64() ||
		    (rk.size() && (rk.size() != lk.size() || rk.size() != devs.size())))
			return "corrupt";
		o["rkey"] = rk;
		o["lkey"] = lk;
		bufs.append(o);
	}
	out["devices"] = devs;
	out["buffers"] = bufs;
	// Topology::parse of the matrix, then Topology::toJson: every entry
	// [[preferred], [others]] of names, else the whole topology stays
	// empty (written as null).
	Json::Value pm;
	bool ok = true;
	for (const auto &loc : in["priority_matrix"].getMemberNames()) {
		const Json::Value &v = in["priority_matrix"][loc];
		if (!v.isArray() || v.size() != 2) {
			ok = false;
			break;
		}
		Json::Value e(Json::arrayValue), pref(Json::arrayValue), rest(Json::arrayValue);
		for (const auto &n : v[0])
			pref.append(n.asString());
		for (const auto &n : v[1])
			rest.append(n.asString());
		e.append(pref);
		e.append(rest);
		pm[loc] = e;
	}
	out["priority_matrix"] = ok ? pm : Json::Value();
	return "ok enc=" + hex(write(out));
}

std::string run(const std::string &mode, const std::string &arg)
{
	Json::Value root;
	if (mode == "enc")
		return "ok enc=" + hex(write(encode(record(arg))));
	if (!parse(arg, root))
		return "malformed";
	try {
		if (mode == "write")
			return "ok enc=" + hex(write(root));
		if (mode == "seg")
			return segment(root);
		if (mode == "notify") {
			std::string name = root["name"].asString();
			std::string msg = root["notify_msg"].asString();
			Json::Value r;
			r["name"] = name;
			r["notify_msg"] = msg;
			return "ok name=" + hex(name) + " msg=" + hex(msg) + " enc=" + hex(write(r));
		}
		Hs d = decode(root);
		return "ok " + fields(d) + " enc=" + hex(write(encode(d)));
	} catch (const std::exception &) {
		return "abort"; // Mooncake's daemon dies here (std::terminate)
	}
}

} // namespace

int main()
{
	std::string line;
	while (std::getline(std::cin, line)) {
		std::istringstream in(line);
		std::string expect, mode, arg;
		if (line.empty() || line[0] == '#')
			continue;
		in >> expect >> mode;
		std::getline(in, arg);
		size_t start = arg.find_first_not_of(' ');
		arg = start == std::string::npos ? "" : arg.substr(start);
		std::cout << run(mode, pct_decode(arg)) << "\n";
	}
	return 0;
}
