// make-results.mjs OUT.json: a results document (docs/results.md) of 100
// scenarios on three kernels, made up but shaped as `qplab run` writes
// them, for the browser test: failures and errors on some kernels, skips,
// long texts, a reply_msg a hostile peer might send, one handshake with
// the hosts' events (the timeline's input once the library records them)
// and the rest with step times and durations only (today's results).
// It also writes OUT.expect.json: what the page must show, derived here
// from the data, never from the page.
import { writeFileSync } from 'node:fs';

const kernels = ['6.1.0-test', '6.12.0-test', '7.2.0-test'];
const topics = ['basic', 'mtu', 'gid', 'qpn', 'reject', 'simopen', 'readyack', 'transport', 'rocepath', 'quirks'];
export const HOSTILE = '<script>window.__qplabPwned=1</script><img src=x onerror="window.__qplabPwned=2"> "quoted" & \'single\'';

function durations(scale) {
  return { step: 90 * scale, tcp_connect: 2 * scale, handshake: 60 * scale, reset: 1, init: 2 * scale,
           rtr: 5 * scale, rts: 1, ready_ack: 12 * scale, total: 80 * scale };
}

function facts(code, scale, reply) {
  return { endpoint: code === 'OK' ? 'CONNECTED' : 'NONE', endpoints: 1, qp_count: 2, qp_states: ['RTS', 'RTS'],
           code, reply_msg_sent: '', reply_msg_received: reply, error_text: '', datapath: 'ok',
           wc_status: 'IBV_WC_SUCCESS', wc_waited_ms: 3, time_ms: durations(scale), gid_index: 1,
           gid_reason: 'the first RoCE v2 IPv4 GID', path_mtu: 1024, peer_path_mtu: 1024, warning: '',
           datapath_restored: true, datapath_peer_checksum: true, daemon_alive: true, leftover_qps: 0,
           leftover_objects: 0, frame_outcome: null };
}

// The events of one setup, a connecting to b at t0 (ms since the
// scenario's first step).
function events(t0) {
  const ev = (what, s, e, peer) => ({ what, start_ms: t0 + s, end_ms: t0 + e, peer });
  return {
    a: [ev('tcp_connect', 0, 3, 'b'), ev('request', 3, 70, 'b'), ev('reset', 71, 72, null), ev('init', 72, 75, null),
        ev('rtr', 75, 81, null), ev('rts', 81, 83, null), ev('ready_ack', 83, 95, 'b')],
    b: [ev('reset', 10, 11, null), ev('init', 11, 15, null), ev('rtr', 15, 40, null), ev('rts', 40, 42, null)],
  };
}

function scenario(i, k) {
  const topic = topics[i % topics.length];
  const id = i === 0 ? 'basic/handshake-events' : `${topic}/case-${String(i).padStart(3, '0')}`;
  let status = 'pass';
  if (i % 17 === 3 && k === 2) status = 'fail';
  if (i % 29 === 5 && k === 0) status = 'error';
  if (i % 11 === 7) status = 'skip';
  const hostile = i === 42;
  const reply = hostile ? HOSTILE : '';
  const scale = 1 + (i % 5);
  const connectEnd = 100 * scale;
  const steps = status === 'skip' ? [] : [
    { index: 0, name: 'c', do: 'connect', line: 12, on: ['a', 'b'], started_ms: 0, ended_ms: connectEnd,
      hosts: { a: facts(hostile ? 'ERR_REJECT_HANDSHAKE' : 'OK', scale, reply), b: facts('OK', scale, '') } },
    { index: 1, name: null, do: 'link_down', line: 13, on: ['b'], started_ms: connectEnd, ended_ms: connectEnd + 40,
      hosts: {} },
    { index: 2, name: 'dp', do: 'datapath', line: 14, on: ['a', 'b'], started_ms: connectEnd + 40,
      ended_ms: connectEnd + 40 + 30 * scale, hosts: { a: facts('OK', scale, '') } },
  ];
  if (i === 0) {
    const ev = events(0);
    steps[0].hosts.a.events = ev.a;
    steps[0].hosts.b.events = ev.b;
  }
  const failed = status === 'fail';
  return {
    id, name: id, file: `scenarios/${id}.json`,
    description: `Scenario ${i}: ` + 'a long description of what this reproduces, wrapped as a person reads it; '.repeat(1 + (i % 4)) +
      (i === 7 ? 'averyveryverylongwordwithoutanyspacesthatmustwrapratherthanwidenthepage'.repeat(6) : ''),
    source: `Mooncake 3b5a594 transfer_engine rdma_endpoint.cpp, case ${i}`,
    tags: i % 6 === 0 ? ['smoke'] : [],
    status, reason: status === 'skip' ? 'missing netem' : status === 'error' ? 'step 1 (connect): agent a did not answer within 15000 ms' : null,
    elapsed_ms: status === 'skip' ? 0 : 1500 + 37 * i, steps_ms: 1000, overhead_ms: 500,
    hosts: status === 'skip' ? { a: null, b: null } : { a: facts(hostile ? 'ERR_REJECT_HANDSHAKE' : 'OK', scale, reply), b: facts('OK', scale, '') },
    steps,
    expectations: status === 'skip' ? [] : [
      { line: 20, label: 'both sides hold one connected endpoint with two RTS QPs', step: null, ok: !failed,
        hosts: ['a', 'b'].map((h) => ({ host: h, ok: !failed, keyed: false, key: null, why: null, key_line: null,
          checks: [{ what: 'qp_count', expected: failed ? '3' : '2', observed: '2', ok: !failed },
                   { what: 'qp_states', expected: 'all RTS', observed: 'RTS,RTS', ok: true }] })) },
      { line: 24, label: null, step: 'dp', ok: true,
        hosts: [{ host: 'a', ok: true, keyed: true, key: 'kernel >= 6.12', why: 'flushed from 6.12', key_line: 25,
          checks: [{ what: 'wc_status', expected: 'IBV_WC_SUCCESS', observed: 'IBV_WC_SUCCESS', ok: true }] }] },
    ],
    logs: status === 'skip' ? undefined : { a: `kernel-${k}/logs/agent-a.log`, b: `kernel-${k}/logs/agent-b.log` },
    ...(i % 9 === 1 ? { ablation: i % 2 ? 'sensitive' : 'insensitive' } : {}),
    ...(i % 13 === 2 ? { pcaps: [`kernel-${k}/pcaps/${id.replace('/', '-')}.pcap`] } : {}),
  };
}

const out = process.argv[2];
if (!out) {
  console.error('usage: make-results.mjs OUT.json');
  process.exit(2);
}
const N = 100;
const runs = kernels.map((kernel, k) => {
  const scenarios = Array.from({ length: N }, (_, i) => scenario(i, k)).sort((x, y) => (x.id < y.id ? -1 : 1));
  const summary = { total: N, pass: 0, fail: 0, skip: 0, error: 0 };
  for (const s of scenarios) summary[s.status]++;
  return { started: '2026-12-01T00:00:00Z', backend: k === 2 ? 'netns' : 'shared', kernel, driver: 'rxe',
           capabilities: ['netem'], quirk: null, time_multiplier: 1, elapsed_ms: 200000, summary, scenarios };
});
writeFileSync(out, JSON.stringify({ schema_version: 1, runs }, null, 1));

const ids = [...new Set(runs.flatMap((r) => r.scenarios.map((s) => s.id)))];
const bad = ids.filter((id) => runs.some((r) => r.scenarios.some((s) => s.id === id && (s.status === 'fail' || s.status === 'error'))));
const byTopic = {};
for (const id of ids) byTopic[id.split('/')[0]] = (byTopic[id.split('/')[0]] || 0) + 1;
const notAllPass = ids.filter((id) => runs.some((r) => r.scenarios.some((s) => s.id === id && s.status !== 'pass')));
writeFileSync(out.replace(/\.json$/, '.expect.json'), JSON.stringify({
  kernels, rows: ids.length, bad: bad.sort(), byTopic, notAllPass: notAllPass.length,
  hostileId: runs[0].scenarios.find((s) => s.hosts.a && s.hosts.a.reply_msg_received === HOSTILE).id,
  eventsId: 'basic/handshake-events', fallbackId: 'mtu/case-001', hostile: HOSTILE,
}, null, 1));
