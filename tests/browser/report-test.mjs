// report-test.mjs REPORT.html EXPECT.json SHOT.png: report.html in headless
// Chromium at 1280x900, checked through its DOM against what
// make-results.mjs says the results hold.  TAP on stdout, then
// "browser: N passed, N failed"; exit 1 when a check failed.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withPage } from './chromium.mjs';

const [reportPath, expectPath, shotPath] = process.argv.slice(2);
if (!shotPath) {
  console.error('usage: report-test.mjs REPORT.html EXPECT.json SHOT.png');
  process.exit(2);
}
const expect = JSON.parse(readFileSync(expectPath, 'utf8'));
const url = pathToFileURL(resolve(reportPath)).href;
let n = 0, failed = 0;
const t0 = Date.now();
const took = () => ((Date.now() - t0) / 1000).toFixed(1);

function check(ok, what, detail) {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}`);
  if (!ok && detail !== undefined) console.log(`#   ${JSON.stringify(detail).slice(0, 600)}`);
}

const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

await withPage({ width: 1280, height: 900 }, async (page, context) => {
  console.log(`# chromium up after ${took()} s`);
  const requests = [], errors = [];
  context.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url, { waitUntil: 'load' });
  console.log(`# page loaded after ${took()} s`);
  await page.screenshot({ path: shotPath });
  console.log(`# screenshot: ${shotPath}`);

  const rows = await page.$$eval('details.sc', (els) => els.map((e) => ({
    id: e.dataset.id, bad: e.classList.contains('bad'), verdicts: e.dataset.verdicts, open: e.open,
    cells: e.querySelectorAll(':scope > summary .k .v').length,
  })));
  check(rows.length === expect.rows, `one row per scenario (${expect.rows})`, rows.length);
  check(rows.every((r) => r.cells === expect.kernels.length),
        `one verdict column per kernel (${expect.kernels.length}) in every row`);
  const heads = await page.$$eval('section.list > .row.head .k', (els) => els.map((e) => e.textContent));
  check(sameList(heads, expect.kernels), 'the columns are the kernels, in run order', heads);
  const firstIds = rows.slice(0, expect.bad.length).map((r) => r.id);
  check(sameList(firstIds, expect.bad), `the ${expect.bad.length} failed or errored scenarios come first`, firstIds);
  check(rows.every((r, i) => r.bad === (i < expect.bad.length) && r.open === r.bad),
        'failed rows (and only they) are marked and open', rows.filter((r) => r.bad !== r.open));
  check(rows.slice(0, expect.bad.length).every((r) => /\b(fail|error)\b/.test(r.verdicts)),
        'each marked row has a fail or error verdict');
  const failedLinks = await page.$$eval('p.failed a', (els) => els.map((e) => e.textContent));
  check(sameList(failedLinks, expect.bad), 'the "Failed:" line names them', failedLinks);

  // The timeline: arrows and boxes where the results have events, bands
  // and duration bars where they have only durations; drawn, not empty.
  const tl = await page.$eval(`details.sc[data-id="${expect.eventsId}"]`, (d) => {
    d.open = true;
    const svg = d.querySelector('svg.tl');
    return svg && { h: svg.getBoundingClientRect().height, w: svg.getBoundingClientRect().width,
      bands: svg.querySelectorAll('rect.band').length, arrows: svg.querySelectorAll('line.arrow').length,
      requests: svg.querySelectorAll('line.arrow[data-what="request"]').length,
      boxes: svg.querySelectorAll('rect.box').length, faults: svg.querySelectorAll('path.fault').length };
  });
  check(tl && tl.bands === 3 && tl.h > 100 && tl.w > 200, 'a timeline is drawn for the handshake (3 step bands)', tl);
  check(tl && tl.requests === 2 && tl.arrows === 5 && tl.boxes === 8,
        'its events: request out and reply back, connect, ready-ACK; 8 transitions as boxes', tl);
  check(tl && tl.faults === 1, 'the injected fault (link_down) is a mark on its host\'s lane', tl);
  const fb = await page.$eval(`details.sc[data-id="${expect.fallbackId}"]`, (d) => {
    d.open = true;
    const svg = d.querySelector('svg.tl');
    return svg && { bands: svg.querySelectorAll('rect.band').length, bars: svg.querySelectorAll('rect.dur').length,
      arrows: svg.querySelectorAll('line.arrow').length, h: svg.getBoundingClientRect().height };
  });
  check(fb && fb.bands === 3 && fb.bars === 14 && fb.arrows === 0 && fb.h > 100,
        'without events: step bands and the durations as bars (7 per host in the connect)', fb);

  // A hostile reply_msg is text, not markup.
  const hostile = await page.$eval(`details.sc[data-id="${expect.hostileId}"]`, (d) => {
    d.open = true;
    return { imgs: d.querySelectorAll('img, script').length };
  });
  const text = await page.evaluate((s) => document.body.textContent.includes(s), expect.hostile);
  check(text && hostile.imgs === 0, 'a hostile reply_msg shows as text and adds no element', hostile);
  check(await page.evaluate(() => window.__qplabPwned === undefined), 'no script from the results ran');

  // 1280 pixels: no horizontal scrolling, folded and with every row open.
  const widthClosed = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.click('#f-open');
  const widthOpen = await page.evaluate(() => document.documentElement.scrollWidth);
  check(widthClosed <= 1280 && widthOpen <= 1280, 'no horizontal scrolling at 1280 px (rows folded and open)',
        { widthClosed, widthOpen });
  await page.click('#f-close');

  // Filters.
  await page.selectOption('#f-topic', 'mtu');
  let visible = await page.$$eval('details.sc', (els) => els.filter((e) => !e.hidden).map((e) => e.dataset.topic));
  check(visible.length === expect.byTopic.mtu && visible.every((t) => t === 'mtu'),
        `the topic filter shows the ${expect.byTopic.mtu} mtu scenarios`, visible.length);
  await page.selectOption('#f-topic', '');
  await page.uncheck('input.f-v[value="pass"]');
  visible = await page.$$eval('details.sc', (els) => els.filter((e) => !e.hidden).length);
  check(visible === expect.notAllPass, `the verdict filter without "pass" shows the ${expect.notAllPass} others`, visible);
  await page.check('input.f-v[value="pass"]');
  const shown = await page.textContent('#f-shown');
  check(shown === `${expect.rows} of ${expect.rows} scenarios shown`, 'all rows back', shown);

  check(errors.length === 0, 'no script errors', errors);
  check(requests.length === 1 && requests[0] === url, 'no request but the file itself', requests);
});

console.log(`# checks done after ${took()} s`);
console.log(`1..${n}`);
console.log(`browser: ${n - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
