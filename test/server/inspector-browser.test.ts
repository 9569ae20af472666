/**
 * The web inspector in a real headless browser (Debian's chromium through puppeteer-core) against
 * `winnower serve` as an operator runs it: the demo job in the list, its page filling in live while
 * it runs, a candidate's trajectory and side-by-side diff, cancel, and API keys. With
 * WINNOWER_UPDATE_SCREENSHOTS=1 it writes the README's screenshots (docs/images/inspector-*.png).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'puppeteer-core';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { demoDir, demoRecordings, demoSolveBody } from '../../src/cli/demo-task.js';
import { hasBubblewrap } from '../solve/helpers.js';
import { hasChromium, launchBrowser, type TestBrowser } from '../support/browser.js';
import { startServeProcess, type ServeProcess } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const KEY = 'browser-test-key-42';
/** Loading the value model can take a while on a busy machine; the browser tests are not about start-up time. */
const START_TIMEOUT_MS = 120_000;
const SCREENSHOTS = process.env.WINNOWER_UPDATE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'images') : undefined;

/** Each row of the rollouts table as `index:status`. */
const rowStatuses = (page: Page) =>
  page.$$eval('#rollouts tbody tr', (rows) => rows.map((row) => `${row.getAttribute('data-index')}:${row.getAttribute('data-status')}`));
const jobStatus = (page: Page) => page.$eval('#job-status', (element) => element.textContent);

describe.skipIf(!hasChromium() || !hasBubblewrap())('[browser] web inspector on winnower serve', () => {
  let dataDir: string;
  let serve: ServeProcess;
  let base: string;
  let browser: TestBrowser;
  let repo: string;
  const solve = async (extra: Record<string, unknown>, server = base, headers: Record<string, string> = {}) => {
    const given = demoSolveBody(
      repo,
      { verifyTimeoutS: 120, agent: { time_limit_s: 240 } },
      { policy: { kind: 'replay', recordings: Object.values(demoRecordings()) }, ...extra },
    );
    // The given tests only: the regression check (on by default) would run the suite again per candidate, and no test here is about it.
    const body = { ...given, verify: { ...(given.verify as Record<string, unknown>), regression: { enabled: false } } };
    const response = await fetch(`${server}/solve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { job_id: string }).job_id;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-inspector-'));
    serve = startServeProcess(dataDir, {}, START_TIMEOUT_MS);
    base = await serve.base;
    repo = prepareDemoRepo(join(demoDir(), 'repo'));
    browser = await launchBrowser();
  }, START_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await browser?.close();
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    rmSync(dataDir, { recursive: true, force: true });
    if (repo) rmSync(dirname(repo), { recursive: true, force: true });
  });

  it('[browser] lists the demo job, fills its page in live while it runs, then shows a candidate with its trajectory and rendered diff', async () => {
    const id = await solve({ n: 4, concurrency: 2 });
    const page = await browser.page();
    await page.goto(`${base}/ui`);
    await page.waitForSelector(`#jobs tr[data-job="${id}"]`);
    expect(await page.$eval(`#jobs tr[data-job="${id}"]`, (row) => row.textContent)).toContain('durations-1');

    await page.goto(`${base}/ui/jobs/${id}`);
    await page.waitForSelector('#rollouts tbody tr');
    const first = await rowStatuses(page);
    expect(
      first.every((row) => row.endsWith(':finished')),
      first.join(' '),
    ).toBe(false);
    expect(await jobStatus(page)).toMatch(/^(queued|running)$/);
    await page.evaluate('window.__sameDocument = true');
    // A rollout row turns finished while the job still runs, in the same document (no reload).
    const finishedAtFirst = first.filter((row) => row.endsWith(':finished')).length;
    await page.waitForFunction(
      `document.querySelectorAll('#rollouts tr[data-status="finished"]').length > ${finishedAtFirst} && document.querySelector('#job-status')?.textContent === 'running'`,
      { timeout: 240_000, polling: 100 },
    );
    const during = await rowStatuses(page);
    expect(during).not.toEqual(first);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);

    await page.waitForFunction(`document.querySelector('#job-status')?.textContent === 'succeeded'`, { timeout: 240_000, polling: 100 });
    await page.waitForSelector('#rollouts tr.chosen');
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    const final = await rowStatuses(page);
    expect(final).toEqual(['0:finished', '1:finished', '2:finished', '3:finished']);
    const job = (await (await fetch(`${base}/jobs/${id}`)).json()) as { result: { chosen: { index: number } } };
    const chosen = job.result.chosen.index;
    expect(await page.$eval('#rollouts tr.chosen', (row) => row.getAttribute('data-index'))).toBe(String(chosen));
    expect(await page.$eval('#chosen', (element) => element.textContent)).toContain(`candidate ${chosen}`);
    expect(await page.$$eval('#ranking tbody tr', (rows) => rows.length)).toBe(4);
    // Each rollout's configuration (a replay policy), and the model and selector that scored the job.
    const configs = await page.$$eval('#rollouts tbody td.config', (cells) => cells.map((cell) => cell.textContent ?? ''));
    expect(configs, configs.join(' | ')).toHaveLength(4);
    for (const config of configs) expect(config).toContain('replay');
    // One policy whose recordings differ only in source: no list of policies.
    expect(await page.$('#policies')).toBeNull();
    expect(await page.$eval('#scored-by summary', (element) => element.textContent)).toMatch(/^model \S+ \([0-9a-f]{12}\) · selector /);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'inspector-job.png') });

    await page.goto(`${base}/ui/jobs/${id}/candidates/${chosen}`);
    await page.waitForSelector('#trajectory');
    expect(await page.$$eval('#trajectory li.step', (steps) => steps.length)).toBe(6);
    expect(await page.$eval('#trajectory', (element) => element.textContent)).toContain('cat durations.py');
    // Side by side (two panes per file), lines added and deleted, and syntax colours from highlight.js.
    expect(await page.$$eval('#diff .d2h-file-side-diff', (panes) => panes.length)).toBe(2);
    expect(await page.$$eval('#diff .d2h-ins', (lines) => lines.length)).toBeGreaterThan(0);
    expect(await page.$$eval('#diff .d2h-del', (lines) => lines.length)).toBeGreaterThan(0);
    expect(await page.$$eval('#diff [class^="hljs-"]', (spans) => spans.length)).toBeGreaterThan(0);
    expect(await page.$eval('#diff', (element) => element.textContent)).toContain('durations.py');
    expect(await page.$eval('#log-tail', (element) => element.textContent)).toContain('OK');
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'inspector-candidate.png') });
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 600_000);

  it("[browser] a mixed-policy job lists its policies from the job-start event and labels each rollout with its entry's run", async () => {
    const id = await solve({
      policies: [
        { name: 'first', n: 1 },
        { name: 'second', n: 1 },
      ],
    });
    const page = await browser.page();
    await page.goto(`${base}/ui/jobs/${id}`);
    await page.waitForFunction(`document.querySelector('#job-status')?.textContent === 'succeeded'`, { timeout: 240_000, polling: 100 });
    await page.waitForSelector('#policies li');
    const policies = await page.$$eval('#policies li', (items) => items.map((item) => item.textContent ?? ''));
    expect(policies, policies.join(' | ')).toHaveLength(2);
    expect(policies[0]).toMatch(/^#0: 1× run first · replay/);
    expect(policies[1]).toMatch(/^#1: 1× run second · replay/);
    expect(await page.$eval('#rollouts tr[data-index="0"] td.config', (cell) => cell.textContent)).toMatch(/^run first · /);
    expect(await page.$eval('#rollouts tr[data-index="1"] td.config', (cell) => cell.textContent)).toMatch(/^run second · /);
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 300_000);

  it('[browser] the Cancel button stops a running job', async () => {
    const id = await solve({ n: 4, concurrency: 1 });
    const page = await browser.page();
    await page.goto(`${base}/ui/jobs/${id}`);
    await page.waitForSelector('#cancel');
    expect(await jobStatus(page)).toMatch(/^(queued|running)$/);
    // Through the DOM: the page redraws on every event, so a held element handle can go stale.
    await page.$eval('#cancel', (button) => (button as unknown as { click(): void }).click());
    // Polled on an interval, not on animation frames (which a headless page may not run while idle).
    await page.waitForFunction(`document.querySelector('#job-status')?.textContent === 'cancelled'`, { timeout: 120_000, polling: 100 });
    expect(((await (await fetch(`${base}/jobs/${id}`)).json()) as { status: string }).status).toBe('cancelled');
    // A finished job offers purge instead; two clicks delete it.
    await page.waitForSelector('#purge');
    await page.$eval('#purge', (button) => (button as unknown as { click(): void }).click());
    await page.waitForFunction(`document.querySelector('#purge')?.textContent?.includes('click again')`, { timeout: 60_000, polling: 100 });
    await page.$eval('#purge', (button) => (button as unknown as { click(): void }).click());
    await page.waitForSelector('#jobs, #no-jobs');
    expect((await fetch(`${base}/jobs/${id}`)).status).toBe(404);
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 300_000);

  it('[browser] with API keys nothing loads until a key is given, and the key goes in a header, never in a URL', async () => {
    const keyedDir = mkdtempSync(join(tmpdir(), 'wnw-inspector-keyed-'));
    const keyed = startServeProcess(keyedDir, { WINNOWER_API_KEYS: KEY }, START_TIMEOUT_MS);
    try {
      const keyedBase = await keyed.base;
      const page = await browser.page();
      const requests: Array<{ url: string; authorization: string | undefined }> = [];
      page.on('request', (request) => requests.push({ url: request.url(), authorization: request.headers().authorization }));
      await page.goto(`${keyedBase}/ui`);
      await page.waitForSelector('#key-form');
      expect(requests.filter((request) => !new URL(request.url).pathname.startsWith('/ui')).map((request) => request.url)).toEqual([]);

      await page.type('#api-key', 'not-the-key-000');
      await page.click('#api-key-submit');
      await page.waitForFunction(`document.querySelector('#key-form')?.textContent?.includes('not accepted')`, {
        timeout: 60_000,
        polling: 100,
      });

      await page.type('#api-key', KEY);
      await page.click('#api-key-submit');
      await page.waitForSelector('#jobs, #no-jobs');
      const api = requests.filter((request) => new URL(request.url).pathname === '/jobs');
      expect(api.at(-1)?.authorization).toBe(`Bearer ${KEY}`);
      expect(requests.filter((request) => request.url.includes(KEY) || request.url.includes('not-the-key'))).toEqual([]);
      expect(await page.evaluate('sessionStorage.length')).toBe(1);
      expect(await page.evaluate('localStorage.length')).toBe(0);
      // Refused without the key, as before.
      expect((await fetch(`${keyedBase}/jobs`)).status).toBe(401);
      await page.close();
    } finally {
      keyed.child.kill('SIGTERM');
      await keyed.exited;
      rmSync(keyedDir, { recursive: true, force: true });
    }
    // The wrong key's 403 is the only console error this test expects.
    expect(browser.problems.filter((problem) => !/403/.test(problem))).toEqual([]);
  }, 300_000);
});
