/**
 * A real headless browser for the web inspector's tests: Debian's `chromium` (WINNOWER_CHROMIUM
 * to use another binary) driven by puppeteer-core, which never downloads a browser. A fresh
 * profile folder per launch, removed on close; nothing reaches the network.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM = process.env.WINNOWER_CHROMIUM || '/usr/bin/chromium';
export const hasChromium = (): boolean => existsSync(CHROMIUM);

export interface TestBrowser {
  browser: Browser;
  /** A new page whose console errors and CSP reports are collected in `problems`. */
  page(): Promise<Page>;
  problems: string[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'wnw-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
    defaultViewport: { width: 1400, height: 900 },
  });
  const problems: string[] = [];
  return {
    browser,
    problems,
    async page() {
      const page = await browser.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error instanceof Error ? error.message : String(error)}`));
      return page;
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
