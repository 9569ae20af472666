/**
 * The web inspector's routes on the HTTP app (src/server/ui/ui-routes.ts), without a browser:
 * the data-free page shell and its bundle are open, under a strict CSP, while the API stays behind
 * the keys; server.ui turns the pages off; GET /jobs gives the headline the jobs list shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { scriptSafeJson, renderPageShell } from '../../src/server/ui/page-shell.js';
import { startTestApp, type TestApp } from './test-app.js';

const KEY = 'inspector-test-key-1';

describe('web inspector routes', () => {
  let keyed: TestApp;
  let open: TestApp;
  beforeAll(async () => {
    keyed = await startTestApp({ apiKeys: [KEY] });
    open = await startTestApp();
  });
  afterAll(async () => {
    await keyed?.close();
    await open?.close();
  });

  it('serves the page shell for the jobs list, a job and a candidate, with a strict CSP and no inline script', async () => {
    for (const url of ['/ui', '/ui/jobs/abc', '/ui/jobs/abc/candidates/2']) {
      const response = await open.app.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(response.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.body).toContain('<script src="/ui/assets/inspector.js" defer></script>');
      // The only script element is the bundle: nothing inline to run.
      expect(response.body.match(/<script/g)).toHaveLength(1);
      expect(response.body).toContain('data-key-required="false"');
    }
    const js = await open.app.inject({ url: '/ui/assets/inspector.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js.body.length).toBeGreaterThan(10_000);
    const css = await open.app.inject({ url: '/ui/assets/inspector.css' });
    expect(css.statusCode).toBe(200);
    expect(css.body).toContain('d2h-file-side-diff');
  });

  it('with API keys: the shell and bundle load without a key and ask for one; the API does not answer without it', async () => {
    const page = await keyed.app.inject({ url: '/ui/jobs/abc' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-key-required="true"');
    expect((await keyed.app.inject({ url: '/ui/assets/inspector.js' })).statusCode).toBe(200);
    expect((await keyed.app.inject({ url: '/jobs' })).statusCode).toBe(401);
    expect((await keyed.app.inject({ url: '/jobs/abc' })).statusCode).toBe(401);
    expect((await keyed.app.inject({ url: '/jobs', headers: { authorization: `Bearer ${KEY}` } })).statusCode).toBe(200);
    // An open route is only the inspector's own: a made-up path under /ui is not a way in.
    expect((await keyed.app.inject({ url: '/ui/jobs/abc/events' })).statusCode).toBe(401);
  });

  it('server.ui: false leaves the API alone and serves no pages (WINNOWER_UI=false)', async () => {
    expect(loadConfig({ env: {} }).server.ui).toBe(true);
    expect(loadConfig({ env: { WINNOWER_UI: 'false' } }).server.ui).toBe(false);
    const { buildApp } = await import('../../src/server/app.js');
    const app = await buildApp({ jobs: open.jobs, store: open.store, solveDeps: open.app.winnower.solveDeps, ui: false });
    try {
      expect((await app.inject({ url: '/ui' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/ui/assets/inspector.js' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/jobs' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('GET /jobs gives each job the headline the list shows: task, N, policy, harness, chosen, resolved, outcome', async () => {
    const job = await open.jobs.start(
      'solve',
      { instance_id: 'task-7', n: 3, policy: { kind: 'replay' }, agent: { harness: 'winnower' } },
      async () => ({
        instance_id: 'task-7',
        chosen: { index: 2, trajectory_id: 't/2', patch: 'x', value: 0.5, verify_status: 'resolved' },
        selection: { strategy: 'hybrid' },
      }),
    );
    await open.jobs.wait(job.id);
    const listed = (await open.app.inject({ url: '/jobs' })).json() as {
      jobs: Array<{ job_id: string; overview: Record<string, unknown> }>;
    };
    expect(listed.jobs.find((item) => item.job_id === job.id)?.overview).toEqual({
      instance_id: 'task-7',
      n: 3,
      policy: 'replay',
      harness: 'winnower',
      strategy: 'hybrid',
      chosen_index: 2,
      resolved: true,
      outcome: 'chosen',
    });
  });

  it('saved data in a page cannot close its script block or open a comment', () => {
    const hostile = { text: '</script><script>alert(1)</script><!-- \u2028' };
    const json = scriptSafeJson(hostile);
    expect(json).not.toMatch(/[<>]/);
    expect(JSON.parse(json)).toEqual(hostile);
    const page = renderPageShell({ assetBase: '../assets/', mode: 'saved', data: hostile, csp: "default-src 'none'" });
    expect(page.match(/<script/g)).toHaveLength(2);
    expect(page).toContain('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">');
  });
});
