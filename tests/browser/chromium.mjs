// chromium.mjs: Debian's /usr/bin/chromium, headless, through playwright-core
// (which downloads no browser of its own), as root: no sandbox, a fresh
// profile, and none of the background traffic Chromium starts on its own
// (this machine's network is closed; every such attempt is refused).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.QPLAB_CHROMIUM || '/usr/bin/chromium';
const mult = Math.max(1, Number(process.env.QPLAB_TIME_MULTIPLIER) || 1);

export async function withPage(viewport, fn) {
  const profile = mkdtempSync(join(tmpdir(), 'qplab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60000 * mult,
    viewport,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    context.setDefaultTimeout(30000 * mult);
    const page = context.pages()[0] || (await context.newPage());
    return await fn(page, context);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
