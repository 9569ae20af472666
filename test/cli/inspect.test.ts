/**
 * `winnower inspect` as a user runs it (the real CLI in a child process), its pages opened in a
 * real headless browser (Debian's chromium): a saved `winnower solve --out` job from disk, a
 * `winnower rerank` run served with --serve and linked from the rerank report, and hostile
 * trajectory text and patches drawn as text, never run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { hasChromium, launchBrowser, type TestBrowser } from '../support/browser.js';
import { cliArgv } from '../support/built-cli.js';
import { runCli } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const count = (page: Page, selector: string) => page.$$eval(selector, (nodes) => nodes.length);
const text = (page: Page, selector: string) => page.$eval(selector, (node) => node.textContent ?? '');

describe.skipIf(!hasChromium())('[browser] winnower inspect', () => {
  let dir: string;
  let browser: TestBrowser;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-inspect-'));
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!hasBubblewrap())(
    '[browser] opens a saved `winnower solve --out` job from disk: the list, the job and a candidate with its trajectory and diff',
    async () => {
      const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
      try {
        const task = demoTask();
        const job = join(dir, 'job.json');
        const solved = await runCli(
          [
            'solve',
            '--repo',
            repo,
            '--issue',
            task.problem_statement,
            '--n',
            '2',
            '--replay',
            join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'),
            '--replay',
            join(DEMO_DIR, 'trajectories/correct-fix.json'),
            '--test-command',
            task.test_command,
            ...task.fail_to_pass.flatMap((id) => ['--fail-to-pass', id]),
            ...task.pass_to_pass.flatMap((id) => ['--pass-to-pass', id]),
            // The given tests only: the regression check (on by default) is not what this test is about.
            '--test-patch',
            join(DEMO_DIR, 'test_patch.diff'),
            '--no-regression',
            '--out',
            job,
          ],
          { env: { WINNOWER_POLICY_URL: '' } },
        );
        expect(solved.code, solved.stderr).toBe(0);
        const saved = JSON.parse(readFileSync(job, 'utf8')) as { job_id: string; result: { chosen: { index: number } } };
        const site = join(dir, 'solve-site');
        const inspected = await runCli(['inspect', job, '--out', site]);
        expect(inspected.code, inspected.stderr).toBe(0);
        expect(inspected.stdout).toContain('1 job(s), 2 candidate(s) from 1 job file(s)');

        const page = await browser.page();
        await page.goto(`file://${site}/index.html`);
        await page.waitForSelector(`#jobs tr[data-job="${saved.job_id}"]`);
        await page.click(`#jobs tr[data-job="${saved.job_id}"] a`);
        await page.waitForSelector('#rollouts');
        expect(await count(page, '#rollouts tbody tr')).toBe(2);
        expect(await page.$eval('#rollouts tr.chosen', (row) => row.getAttribute('data-index'))).toBe(String(saved.result.chosen.index));
        await page.click('#rollouts tr.chosen a');
        await page.waitForSelector('#trajectory');
        expect(await count(page, '#trajectory li.step')).toBe(6);
        expect(await text(page, '#trajectory')).toContain('cat durations.py');
        expect(await count(page, '#diff .d2h-file-side-diff')).toBe(2);
        expect(await text(page, '#log-tail')).toContain('OK');
        // The page carries its policy itself (no response headers from disk), and nothing broke it.
        expect(await page.content()).toContain('http-equiv="Content-Security-Policy"');
        expect(browser.problems).toEqual([]);
        await page.close();
      } finally {
        rmSync(dirname(repo), { recursive: true, force: true });
      }
    },
    300_000,
  );

  it('[browser] `winnower rerank --report` links its report to the inspector, and `winnower inspect --serve` serves the run', async () => {
    const out = join(dir, 'rerank');
    const runs = join(REPO_ROOT, 'examples/rerank-sample/runs');
    const reranked = await runCli([
      'rerank',
      '--candidates',
      join(runs, '*.jsonl'),
      '--source-from',
      'file',
      '--labels',
      `correct-fix=${join(runs, 'correct-fix.results.json')}`,
      '--labels',
      `gives-up=${join(runs, 'gives-up.results.json')}`,
      '--labels',
      `plausible-wrong-fix=${join(runs, 'plausible-wrong-fix.results.json')}`,
      '--labels',
      `breaks-other-tests=${join(runs, 'breaks-other-tests.results.json')}`,
      '--tasks',
      join(REPO_ROOT, 'examples/rerank-sample/tasks.jsonl'),
      '--out',
      join(out, 'predictions.jsonl'),
      '--report',
      join(out, 'report.md'),
      '--no-progress',
    ]);
    expect(reranked.code, reranked.stderr).toBe(0);
    expect(reranked.stdout).toContain(`inspector: ${join(out, 'report.inspect', 'index.html')}`);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<a href="report.inspect/index.html">open the inspector</a>');
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('(report.inspect/index.html)');
    // The report names the model and selector that scored the run, as the summary JSON does.
    const { scored_by: scoredBy } = JSON.parse(readFileSync(join(out, 'predictions.summary.json'), 'utf8')) as {
      scored_by: { model: { name: string; hash: string } };
    };
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(
      `| scored by | ${scoredBy.model.name.replace(/_/g, '\\_')} (${scoredBy.model.hash.slice(7, 19)}) · `,
    );

    const page = await browser.page();
    // The pages the report links to.
    await page.goto(`file://${join(out, 'report.html')}`);
    await page.click('a[href="report.inspect/index.html"]');
    await page.waitForSelector('#jobs tr[data-job="durations-1"]');

    // The same run, served on a local port.
    const child = spawn(
      process.execPath,
      cliArgv([
        'inspect',
        join(out, 'predictions.scores.jsonl'),
        join(runs, '*.jsonl'),
        '--source-from',
        'file',
        '--serve',
        '--port',
        '0',
        '--out',
        join(dir, 'served'),
      ]),
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(() => reject(new Error(`inspect --serve did not start: ${output}`)), 60_000);
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = / at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
          if (match) clearTimeout(timer), resolve(match[1]!);
        });
        child.on('exit', () => reject(new Error(`inspect --serve exited: ${output}`)));
      });
      const index = await fetch(url);
      expect(index.status).toBe(200);
      expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect((await fetch(`${url}..%2f..%2f..%2fetc%2fpasswd`)).status).toBe(404);

      await page.goto(`${url}jobs/durations-1.html`);
      await page.waitForSelector('#rollouts');
      const sources = await page.$$eval('#rollouts tbody tr', (rows) => rows.map((row) => row.children[1]!.textContent));
      expect([...sources].sort()).toEqual(['breaks-other-tests', 'correct-fix', 'gives-up', 'plausible-wrong-fix']);
      const scores = readFileSync(join(out, 'predictions.scores.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { source: string; chosen: boolean });
      const chosenSource = scores.find((line) => line.chosen)!.source;
      expect(await page.$eval('#rollouts tr.chosen', (row) => row.children[1]!.textContent)).toBe(chosenSource);
      // The labels given to the run stand in for tests.
      expect(await page.$$eval('#rollouts tbody tr', (rows) => rows.filter((row) => row.textContent!.includes('label')).length)).toBe(4);
      await page.click('#rollouts tr.chosen a');
      await page.waitForSelector('#diff');
      expect(await count(page, '#diff .d2h-file-side-diff')).toBe(2);
      expect(await text(page, '#trajectory')).toContain('patch-only');
      expect(browser.problems).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await page.close();
    }
  }, 300_000);

  it('[browser] draws evidence it does not know by name: per-candidate checks in their rows, a matrix of cells as a grid, other fields as trees', async () => {
    const candidate = (index: number, extra: Record<string, unknown> = {}) => ({
      index,
      status: 'finished',
      trajectory_id: `j/${index}`,
      exit: 'submitted',
      steps: 3,
      patch: '',
      value: 0.5,
      score: null,
      verify: null,
      error: null,
      ...extra,
    });
    const job = {
      job_id: 'evidence-1',
      kind: 'solve',
      status: 'succeeded',
      progress: {},
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:09Z',
      error: null,
      candidates: [
        candidate(0, { config: { policy: 'model-a', temperature: 0.7 } }),
        candidate(1, { other_tests_failed: ['tests/test_b.py::test_y'] }),
      ],
      result: {
        instance_id: 't',
        chosen: null,
        reason: 'none usable: every patch failed to apply',
        checks: {
          regression: {
            base: { passed: 5 },
            candidates: [
              { index: 0, regressions: [{ test: 'tests/test_a.py::test_x', base: 'passed', candidate: 'failed' }] },
              { index: 1, regressions: [] },
            ],
          },
          reproduction: {
            tests: [
              { writer: 0, valid: true },
              { writer: 2, valid: true },
            ],
            matrix: [
              { index: 0, writer: 0, outcome: 'passed' },
              { index: 0, writer: 2, outcome: 'failed' },
              { index: 1, writer: 0, outcome: 'failed' },
              { index: 1, writer: 2, outcome: 'failed' },
            ],
          },
        },
        scored_by: { model: 'winnower-value', selector: 'robust' },
      },
    };
    const file = join(dir, 'evidence.json');
    writeFileSync(file, JSON.stringify(job));
    const site = join(dir, 'evidence-site');
    expect((await runCli(['inspect', file, '--out', site])).code).toBe(0);
    const page = await browser.page();
    await page.goto(`file://${site}/jobs/evidence-1.html`);
    await page.waitForSelector('#rollouts');
    expect(await text(page, '#rollouts tr[data-index="0"] .evidence')).toContain('regression: 1 broken');
    // The configuration is drawn by name in its own column (see the next test), not as evidence.
    expect(await text(page, '#rollouts tr[data-index="0"] .config')).toBe('T=0.7 · policy=model-a');
    expect(await text(page, '#rollouts tr[data-index="1"] .evidence')).toContain('other_tests_failed');
    expect(await text(page, '#chosen')).toBe('none');
    expect(await text(page, '#app')).toContain('none usable: every patch failed to apply');
    // The matrix: 2 candidates × 2 tests, one pass.
    expect(await count(page, '.matrix .grid tbody tr')).toBe(2);
    expect(await count(page, '.matrix .grid td.cell')).toBe(4);
    expect(await count(page, '.matrix .grid td.cell.pass')).toBe(1);
    expect(await text(page, '#result-extra')).toContain('reproduction');
    // scored_by in a shape the page does not expect (strings) is still shown, in the outcome.
    expect(await text(page, '#scored-by summary')).toBe('model winnower-value · selector robust');
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('[browser] marks a job that chose nothing usable amber, in the list and on its page, never green', async () => {
    const job = {
      job_id: 'none-usable-1',
      kind: 'solve',
      status: 'succeeded',
      progress: {},
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:09Z',
      error: null,
      candidates: [
        {
          index: 0,
          status: 'finished',
          trajectory_id: 'nu/0',
          exit: 'submitted',
          steps: 3,
          patch: '',
          value: null,
          score: null,
          verify: null,
          error: null,
        },
      ],
      result: {
        instance_id: 't',
        outcome: 'none-usable',
        chosen: null,
        selection: {
          strategy: 'value',
          chosen: null,
          ranking: [],
          reason: 'None of the 1 candidate has a usable patch (1 empty), nothing chosen.',
        },
        candidates: [],
        rollouts: { planned: 1, finished: 1, failed: 0, cancelled: 0, skipped: 0 },
        compute: {},
      },
    };
    const file = join(dir, 'none-usable.json');
    writeFileSync(file, JSON.stringify(job));
    const site = join(dir, 'none-usable-site');
    expect((await runCli(['inspect', file, '--out', site])).code).toBe(0);
    const page = await browser.page();
    const colour = (selector: string) => page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`);
    await page.goto(`file://${site}/index.html`);
    const row = '#jobs tr[data-job="none-usable-1"]';
    await page.waitForSelector(row);
    expect(await text(page, `${row} .badge-none-usable`)).toBe('none usable');
    expect(await count(page, `${row} .badge-succeeded`)).toBe(0);
    // The colour a succeeded job's badge has on this page.
    const green = await page.evaluate(
      `(() => { const probe = document.body.appendChild(document.createElement('span')); probe.className = 'badge badge-succeeded'; return getComputedStyle(probe).color; })()`,
    );
    expect(await colour(`${row} .badge-none-usable`)).not.toBe(green);
    expect(await colour(`${row} .badge-none-usable`)).toBe(await colour(`${row} .badge-warn`));

    await page.goto(`file://${site}/jobs/none-usable-1.html`);
    await page.waitForSelector('#job-outcome');
    expect(await text(page, '#job-status')).toBe('succeeded');
    expect(await colour('#job-status')).not.toBe(green);
    expect(await text(page, '#job-outcome')).toBe('none usable');
    expect(await text(page, '#chosen')).toContain('none');
    expect(await count(page, '#result-extra')).toBe(0);
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('[browser] shows tamper flags in the ranking and what a regression check compared, never "none broken" for a check that compared nothing', async () => {
    const candidate = (index: number) => ({
      index,
      status: 'finished',
      trajectory_id: `tf-1/${index}`,
      exit: 'submitted',
      steps: 3,
      patch: '',
      value: 0.5,
      score: null,
      verify: null,
      error: null,
    });
    const row = (index: number, rank: number, tamper: unknown[]) => ({
      trajectory_id: `tf-1/${index}`,
      rank,
      value: 0.5,
      verified: null,
      cluster: index,
      cluster_size: 1,
      key: [1, 0.5],
      reasons: [],
      tamper,
    });
    const job = {
      job_id: 'tf-1',
      kind: 'solve',
      status: 'succeeded',
      progress: {},
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:09Z',
      error: null,
      candidates: [candidate(0), candidate(1), candidate(2)],
      result: {
        instance_id: 't',
        chosen: { index: 0, trajectory_id: 'tf-1/0', patch: '', value: 0.5, verify_status: null },
        selection: {
          strategy: 'hybrid',
          reason: 'no regression',
          ranking: [
            row(0, 1, []),
            row(1, 2, []),
            row(2, 3, [{ kind: 'skips-test', file: 'tests/test_a.py', detail: 'adds @pytest.mark.skip to test_x' }]),
          ],
        },
        checks: {
          regression: {
            base: { passed: 5 },
            candidates: [
              { index: 0, status: 'checked', regressions: [], removed: [{ test: 'tests/test_a.py::test_old', file: 'tests/test_a.py' }] },
              { index: 1, status: 'not_compared', regressions: [] },
              { index: 2, status: 'checked', regressions: [] },
            ],
          },
        },
      },
    };
    const file = join(dir, 'tamper.json');
    writeFileSync(file, JSON.stringify(job));
    const site = join(dir, 'tamper-site');
    expect((await runCli(['inspect', file, '--out', site])).code).toBe(0);
    const page = await browser.page();
    await page.goto(`file://${site}/jobs/tf-1.html`);
    await page.waitForSelector('#ranking');
    expect(await text(page, '#rollouts tr[data-index="0"] .evidence summary')).toBe('regression: none broken, 1 removed by the patch');
    expect(await text(page, '#rollouts tr[data-index="1"] .evidence summary')).toBe('regression: compared nothing');
    expect(await text(page, '#rollouts tr[data-index="2"] .evidence summary')).toBe('regression: none broken');
    expect(await page.$$eval('#ranking thead th', (cells) => cells.map((cell) => cell.textContent))).toContain('tamper flags');
    expect(await page.$$eval('#ranking td.tamper', (cells) => cells.map((cell) => cell.textContent))).toEqual([
      '—',
      '—',
      'skips-test tests/test_a.py',
    ]);
    expect(await page.$eval('#ranking td.tamper .badge-warn', (badge) => badge.getAttribute('title'))).toBe(
      'tests/test_a.py: adds @pytest.mark.skip to test_x',
    );
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("[browser] shows each rollout's configuration and which model and selector scored the job", async () => {
    const fast = { model: 'gpt-4o-mini', harness: 'winnower', agent: 'default', policy_mode: 'tools', temperature: 0.7, run: 'fast' };
    const careful = { model: 'qwen2.5-coder', harness: 'winnower', agent: 'default', policy_mode: 'text', temperature: 0, run: 'careful' };
    const summary = (index: number, source: string, config: Record<string, unknown>) => ({
      index,
      trajectory_id: `cfg-1/${index}`,
      status: 'finished',
      source,
      config,
      exit: 'submitted',
      steps: 3,
      value: 0.5,
      verify_status: null,
      checks: null,
      error: null,
    });
    // As GET /jobs/:id has it: the job's candidates without configuration, the result's with it.
    const candidate = (index: number) => ({
      index,
      status: 'finished',
      trajectory_id: `cfg-1/${index}`,
      exit: 'submitted',
      steps: 3,
      patch: '',
      value: 0.5,
      score: null,
      verify: null,
      error: null,
    });
    const job = {
      job_id: 'cfg-1',
      kind: 'solve',
      status: 'succeeded',
      progress: {},
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:09Z',
      error: null,
      candidates: [candidate(0), candidate(1), candidate(2)],
      result: {
        instance_id: 't',
        chosen: { index: 2, trajectory_id: 'cfg-1/2', patch: '', value: 0.5, verify_status: null },
        selection: { strategy: 'robust', reason: 'highest value', ranking: [] },
        candidates: [
          summary(0, 'openai:gpt-4o-mini', fast),
          summary(1, 'openai:gpt-4o-mini', fast),
          summary(2, 'openai:qwen2.5-coder', careful),
        ],
        rollouts: { finished: 3 },
        compute: {},
        scored_by: {
          model: { name: 'winnower-value-v3', path: '/models/v3', hash: 'sha256:0123456789abcdef0123456789abcdef' },
          selector: {
            path: '/models/v3/selector.json',
            hash: 'sha256:fedcba9876543210fedcba9876543210',
            default_strategy: 'learned',
            strategy: 'robust',
          },
          scorer: { backend: 'onnx', urls: [] },
        },
      },
    };
    const file = join(dir, 'configured.json');
    writeFileSync(file, JSON.stringify(job));
    const site = join(dir, 'configured-site');
    expect((await runCli(['inspect', file, '--out', site])).code).toBe(0);
    const page = await browser.page();
    await page.goto(`file://${site}/jobs/cfg-1.html`);
    await page.waitForSelector('#rollouts');
    expect(await page.$$eval('#rollouts thead th', (cells) => cells.slice(1, 3).map((cell) => cell.textContent))).toEqual([
      'source',
      'configuration',
    ]);
    expect(await text(page, '#rollouts tr[data-index="0"] .source')).toBe('openai:gpt-4o-mini');
    expect(await text(page, '#rollouts tr[data-index="0"] .config')).toBe('run fast · gpt-4o-mini · winnower/default · tools · T=0.7');
    expect(await text(page, '#rollouts tr[data-index="2"] .config')).toBe('run careful · qwen2.5-coder · winnower/default · text · T=0');
    expect(await page.$eval('#rollouts tr[data-index="2"] .config', (cell) => cell.getAttribute('title'))).toContain(
      'source: openai:qwen2.5-coder',
    );
    // Shown by name, not again as unknown evidence.
    expect(await text(page, '#rollouts tr[data-index="0"] .evidence')).toBe('');
    expect(await page.$$eval('#policies li', (items) => items.map((item) => item.textContent))).toEqual([
      '2× run fast · gpt-4o-mini · winnower/default · tools · T=0.7',
      '1× run careful · qwen2.5-coder · winnower/default · text · T=0',
    ]);
    expect(await text(page, '#scored-by summary')).toBe(
      'model winnower-value-v3 (0123456789ab) · selector robust (default learned) (selector.json fedcba987654) · backend onnx',
    );
    expect(await text(page, '#scored-by')).toContain('/models/v3');
    expect(await page.$('#result-extra')).toBeNull();
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('[browser] draws hostile trajectory text, patches, file names and job ids as text: nothing runs, nothing loads', async () => {
    const hostile = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
    const patch = [
      'diff --git a/x"><img src=x onerror=window.__xss=3>.py b/x"><img src=x onerror=window.__xss=3>.py',
      '--- a/x"><img src=x onerror=window.__xss=3>.py',
      '+++ b/x"><img src=x onerror=window.__xss=3>.py',
      '@@ -1 +1 @@',
      `-a = "${hostile}"`,
      `+a = "</script>${hostile}"`,
      '',
    ].join('\n');
    const trajectory = {
      id: 'evil/0',
      instance_id: 'evil',
      source: hostile,
      patch,
      exit: 'submitted',
      meta: {},
      messages: [
        { role: 'user', content: hostile },
        {
          role: 'assistant',
          content: hostile,
          reasoning: hostile,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: hostile, arguments: JSON.stringify({ command: hostile }) } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: `${hostile}\n`.repeat(40) },
      ],
    };
    const job = {
      job_id: `"><img src=x onerror=window.__xss=4>`,
      kind: 'solve',
      status: 'succeeded',
      progress: {},
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:01Z',
      error: null,
      candidates: [
        {
          index: 0,
          status: 'finished',
          trajectory_id: 'evil/0',
          exit: 'submitted',
          steps: 1,
          patch,
          value: 0.5,
          score: null,
          error: { code: hostile, message: hostile },
          verify: {
            status: 'resolved',
            tests: { [hostile]: 'passed' },
            fail_to_pass: { passed: 1, failed: 0, missing: 0 },
            pass_to_pass: { passed: 0, failed: 0, missing: 0 },
            applied: true,
            log_tail: hostile,
            parser: hostile,
            exit_code: 0,
            duration_ms: 1,
          },
          [hostile]: { [hostile]: hostile },
          link: 'javascript:window.__xss=5',
          trajectory,
        },
      ],
      result: {
        instance_id: hostile,
        chosen: { index: 0, trajectory_id: 'evil/0', patch, value: 0.5, verify_status: 'resolved' },
        selection: {
          strategy: 'value',
          chosen: 'evil/0',
          reason: hostile,
          ranking: [{ trajectory_id: 'evil/0', rank: 1, value: 0.5, key: [0.5], reasons: [hostile] }],
        },
        repro_matrix: { [hostile]: { [hostile]: 'passed' } },
        [hostile]: hostile,
      },
    };
    const file = join(dir, 'evil.json');
    writeFileSync(file, JSON.stringify(job));
    const site = join(dir, 'evil-site');
    const inspected = await runCli(['inspect', file, '--out', site]);
    expect(inspected.code, inspected.stderr).toBe(0);

    const page = await browser.page();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`file://${site}/index.html`);
    await page.waitForSelector('#jobs');
    await page.click('#jobs tbody a');
    await page.waitForSelector('#rollouts');
    expect(await text(page, '#app')).toContain(hostile);
    expect(await count(page, '.grid td.cell.pass')).toBe(1);
    await page.click('#rollouts tbody a');
    await page.waitForSelector('#trajectory');
    expect(await text(page, '#trajectory')).toContain(hostile);
    expect(await text(page, '#diff')).toContain('onerror=window.__xss=3');
    for (const opened of await page.$$('details')) await opened.evaluate((node) => node.setAttribute('open', ''));
    expect(await count(page, '#app img, #app script, #app iframe')).toBe(0);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
    expect(browser.problems).toEqual([]);
    await page.close();
  }, 120_000);
});

describe('winnower inspect without a browser', () => {
  it('reads bare trajectory files as one job per instance, unscored, and names a path that holds nothing', async () => {
    const out = mkdtempSync(join(tmpdir(), 'wnw-inspect-trajectories-'));
    try {
      const run = await runCli(['inspect', join(DEMO_DIR, 'trajectories'), '--out', out]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('1 job(s), 4 candidate(s) from 1 trajectory input(s)');
      const page = readFileSync(join(out, 'jobs', 'durations-1', 'candidates', '0.html'), 'utf8');
      const data = JSON.parse(/<script type="application\/json" id="winnower-data">(.*)<\/script>/.exec(page)![1]!) as {
        page: string;
        job: { kind: string; candidates: Array<{ trajectory?: { messages: unknown[] }; value: unknown }> };
      };
      expect(data.page).toBe('candidate');
      expect(data.job.kind).toBe('trajectories');
      expect(data.job.candidates[0]!.trajectory!.messages.length).toBeGreaterThan(2);
      expect(data.job.candidates[0]!.value).toBeNull();
      const missing = await runCli(['inspect', join(out, 'no-such-file.json')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('no-such-file.json');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});
