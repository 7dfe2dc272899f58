// segment_select — Mooncake's own code reads the segment descriptor a peer
// publishes, and picks what a transfer to each of its buffers would use.
//
//   segment_select HOST:PORT
//
// Built only against a Mooncake build the user names (tests/mooncake/
// segment-diff.sh); it calls Mooncake's public API and nothing else:
//   - TransferMetadata in P2PHANDSHAKE mode, getSegmentDescByName: the
//     Metadata request to HOST:PORT and decodeSegmentDesc of the reply,
//     exactly as a Mooncake initiator fetches a peer's descriptor;
//   - RdmaTransport::selectDevice for the first bytes of every remotely
//     accessible buffer: the buffer and the device a WRITE or READ there
//     would use, through the descriptor's priority_matrix.
// Prints one line per finding and "result: ok" when every buffer selects a
// device that has an rkey and a devices[] entry (worker_pool.cpp takes
// rkey[device_id] and devices[device_id]); exit 0 then, 1 otherwise.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "transfer_metadata.h"
#include "transport/rdma_transport/rdma_transport.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: segment_select HOST:PORT\n");
		return 2;
	}
	mooncake::TransferMetadata md("P2PHANDSHAKE");
	// getSegmentDesc sends our own descriptor in the request: one is needed.
	auto local = std::make_shared<mooncake::TransferMetadata::SegmentDesc>();
	local->name = "qplab-segment-select:0";
	local->protocol = "rdma";
	md.addLocalSegment(mooncake::LOCAL_SEGMENT_ID, local->name, std::move(local));

	auto d = md.getSegmentDescByName(argv[1]);
	if (!d) {
		std::printf("decode: no descriptor (the request failed, or decodeSegmentDesc "
			    "refused the reply)\nresult: FAIL\n");
		return 1;
	}
	const auto &hcas = d->topology.getHcaList();
	std::printf("decode: name=%s protocol=%s devices=%zu buffers=%zu topology_devices=%zu\n",
		    d->name.c_str(), d->protocol.c_str(), d->devices.size(), d->buffers.size(),
		    hcas.size());
	for (size_t i = 0; i < d->devices.size(); i++)
		std::printf("device %zu: %s lid %u gid %s\n", i, d->devices[i].name.c_str(),
			    (unsigned)d->devices[i].lid, d->devices[i].gid.c_str());
	for (size_t i = 0; i < hcas.size(); i++)
		std::printf("topology device %zu: %s\n", i, hcas[i].c_str());
	int fails = 0, selected = 0;
	for (const auto &b : d->buffers) {
		if (b.rkey.empty())
			continue;
		int buffer_id = -1, device_id = -1;
		size_t len = std::min<uint64_t>(b.length, 4096);
		int rc = mooncake::RdmaTransport::selectDevice(d.get(), b.addr, len, buffer_id,
							       device_id, 0);
		std::printf("select buffer %s addr %llu len %zu: rc %d buffer_id %d device_id %d",
			    b.name.c_str(), (unsigned long long)b.addr, len, rc, buffer_id,
			    device_id);
		if (rc || device_id < 0 || (size_t)device_id >= d->devices.size() ||
		    buffer_id < 0 || (size_t)buffer_id >= d->buffers.size() ||
		    (size_t)device_id >= d->buffers[buffer_id].rkey.size()) {
			std::printf(" -> FAIL\n");
			fails++;
			continue;
		}
		std::printf(" -> device %s rkey %u\n", d->devices[device_id].name.c_str(),
			    (unsigned)d->buffers[buffer_id].rkey[device_id]);
		selected++;
	}
	if (!selected) {
		std::printf("select: no remotely accessible buffer was selected\n");
		fails++;
	}
	std::printf("result: %s\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
