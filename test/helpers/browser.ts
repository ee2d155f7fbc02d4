import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
