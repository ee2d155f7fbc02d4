import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's Chromium, installed by .ci/system-deps (never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';
export const noBrowser = !fs.existsSync(CHROMIUM);
/** Said in a test's name when it is skipped, so the reason shows in the report. */
export const whySkipped = noBrowser
  ? ` [skipped: ${CHROMIUM} not installed; .ci/system-deps installs it]`
  : '';

/** Headless Chromium as every browser test runs it: no sandbox, GPU, QUIC or background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

const SHOTS = path.resolve(import.meta.dirname, '../browser/screenshots');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core over the page as it is: no serious or critical violation. */
export async function axe(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 5),
    }));
  });
  const bad = violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `axe on ${name}: ${JSON.stringify(bad)}`).toEqual([]);
}

export async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}
