// screenshot.mjs REPORT.html OUT.png [HEIGHT]: a 1280-pixel-wide picture
// of a report as it opens (failed scenarios open), HEIGHT pixels tall
// (default 900) — how docs/report.png is made from a real `make lab` run.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withPage } from './chromium.mjs';

const [report, out, height] = process.argv.slice(2);
if (!out) {
  console.error('usage: screenshot.mjs REPORT.html OUT.png [HEIGHT]');
  process.exit(2);
}
await withPage({ width: 1280, height: Number(height) || 900 }, async (page) => {
  await page.goto(pathToFileURL(resolve(report)).href, { waitUntil: 'load' });
  await page.screenshot({ path: out });
});
console.log(out);
