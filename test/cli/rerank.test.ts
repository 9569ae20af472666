/**
 * `winnower rerank` as a user runs it: the real CLI in a child process (real exit codes, stderr
 * not a TTY), scored by the default ONNX model (strategy `value`), over a labelled pool of 13 candidates for 12
 * instances (6 resolved): our own (test/fixtures/importers/swebench), and the same-shaped subset
 * of the public Devstral sample in ../shared/data/devstral-verified when it exists.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { readJsonl, runCli } from '../support/cli.js';
import { describeRealData, sharedData } from '../support/shared-data.js';

const ROOT = new URL('../../', import.meta.url).pathname;

interface FixtureRow {
  instance_id: string;
  model_name_or_path: string;
  model_patch: string;
  resolved: boolean;
}

interface ScoreLine {
  instance_id: string;
  trajectory_id: string;
  source: string;
  chosen: boolean;
  resolved: boolean | null;
  score: {
    value: number;
    raw: number;
    backend: string;
    model: string;
    template: string;
    truncated: boolean;
    input_tokens: number;
    cut: Record<string, unknown>;
  } | null;
  error: unknown;
}

/** A labelled pool: candidate rows (predictions plus `resolved`) and task records. */
interface Pool {
  candidates: string;
  tasks: string;
  rows: FixtureRow[];
  instanceIds: string[];
}

function poolOf(candidates: string, tasks: string): Pool {
  const rows = readJsonl<FixtureRow>(candidates);
  return { candidates, tasks, rows, instanceIds: [...new Set(rows.map((row) => row.instance_id))].sort() };
}

const ownPool = (): Pool =>
  poolOf(join(ROOT, 'test/fixtures/importers/swebench/predictions.jsonl'), join(ROOT, 'test/fixtures/importers/swebench/tasks.jsonl'));

/** 12 instances of the Devstral sample in 7 repositories (astropy-13453 evaluated twice): the same shape as our pool. */
const DEVSTRAL_SUBSET = [
  'astropy__astropy-13453',
  'django__django-13821',
  'django__django-16877',
  'matplotlib__matplotlib-26342',
  'psf__requests-1766',
  'psf__requests-2931',
  'pytest-dev__pytest-5809',
  'pytest-dev__pytest-7324',
  'scikit-learn__scikit-learn-12973',
  'scikit-learn__scikit-learn-13496',
  'sympy__sympy-13031',
  'sympy__sympy-19637',
];

/** Writes that subset of ../shared/data/devstral-verified into `dir` (the shared folder is read-only). */
function realPool(dir: string): Pool {
  const subset = (name: string) =>
    readFileSync(sharedData('devstral-verified', name), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && DEVSTRAL_SUBSET.includes((JSON.parse(line) as { instance_id: string }).instance_id))
      .join('\n') + '\n';
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'candidates.jsonl'), subset('candidates.jsonl'));
  writeFileSync(join(dir, 'tasks.jsonl'), subset('tasks.jsonl'));
  return poolOf(join(dir, 'candidates.jsonl'), join(dir, 'tasks.jsonl'));
}

const rerank = (args: string[]) => runCli(['rerank', ...args]);

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

/** mean@1, pass@N, selected@1 and headroom closed, computed here from labels and the chosen ids. */
function expectedMetrics(lines: Array<{ instance_id: string; chosen: boolean; resolved: boolean }>) {
  const byInstance = new Map<string, Array<{ chosen: boolean; resolved: boolean }>>();
  for (const line of lines) byInstance.set(line.instance_id, [...(byInstance.get(line.instance_id) ?? []), line]);
  const groups = [...byInstance.values()];
  const mean = groups.reduce((sum, group) => sum + group.filter((c) => c.resolved).length / group.length, 0) / groups.length;
  const pass = groups.filter((group) => group.some((c) => c.resolved)).length / groups.length;
  const selected = groups.filter((group) => group.some((c) => c.chosen && c.resolved)).length / groups.length;
  const headroom = pass === mean ? null : (selected - mean) / (pass - mean);
  return {
    instances: groups.length,
    candidates: lines.length,
    resolved: lines.filter((l) => l.resolved).length,
    mean,
    pass,
    selected,
    headroom,
  };
}

/** The cells of the Markdown results row whose first cell is `scope`. */
function markdownRow(markdown: string, scope: string): string[] {
  const line = markdown.split('\n').find((row) => row.startsWith(`| ${scope} |`));
  expect(line, `no results row for ${scope}`).toBeDefined();
  return line!
    .split('|')
    .slice(2, -1)
    .map((cell) => cell.trim());
}

/**
 * The rerank tests over one labelled pool (12 instances, 13 candidates, 6 resolved, one instance
 * twice, two django/django instances). `full` adds the tests that do not depend on the data
 * (resume, bad input), run once on our own pool.
 */
function rerankTests(pool: () => Pool, full: boolean): void {
  /** Tests that do not depend on the data: on our own pool only (not registered otherwise, so none shows as skipped). */
  const ownPoolOnly = (name: string, fn: () => Promise<void>, timeout: number): void => {
    if (full) it(name, fn, timeout);
  };

  describe('one run, its resume, bad input', () => {
    // Made when the suite runs, not when it is collected (a skipped suite leaves nothing behind).
    let dir = '';
    let first = '';
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'wnw-cli-rerank-'));
      first = join(dir, 'first');
    });
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('writes one prediction per instance, a score line per candidate and the report', async () => {
      const out = join(first, 'predictions.jsonl');
      const report = join(first, 'report.md');
      const { code, stdout, stderr } = await rerank([
        '--candidates',
        pool().candidates,
        '--tasks',
        pool().tasks,
        '--strategy',
        'value',
        '--out',
        out,
        '--report',
        report,
      ]);
      expect(code, stderr).toBe(0);

      const predictions = readJsonl<Record<string, unknown>>(out);
      expect(predictions.map((row) => row.instance_id).sort()).toEqual(pool().instanceIds);
      for (const row of predictions) {
        expect(Object.keys(row).sort()).toEqual(['instance_id', 'model_name_or_path', 'model_patch']);
        expect(row.model_name_or_path).toBe('winnower-value');
        expect(typeof row.model_patch).toBe('string');
      }

      const scoresFile = join(first, 'predictions.scores.jsonl');
      const scores = readJsonl<ScoreLine>(scoresFile);
      expect(scores).toHaveLength(pool().rows.length);
      expect(new Set(scores.map((line) => line.trajectory_id)).size).toBe(pool().rows.length);
      for (const line of scores) {
        const source = pool().rows.find((row) => row.instance_id === line.instance_id && row.model_name_or_path === line.source);
        expect(source, line.trajectory_id).toBeDefined();
        expect(line.trajectory_id).toBe(`${source!.model_name_or_path}/${source!.instance_id}`);
        expect(line.resolved).toBe(source!.resolved);
        expect(line.error).toBeNull();
        expect(line.score).toMatchObject({ backend: 'onnx', model: basename(DEFAULT_MODEL_DIR()), template: 'patch-v1' });
        expect(line.score!.value).toBeGreaterThan(0);
        expect(line.score!.value).toBeLessThan(1);
        expect(line.score!.input_tokens).toBeGreaterThan(0);
        // What was cut: patch-only inputs have no steps to drop; `truncated` means fewer tokens than before.
        expect(line.score!.cut).toMatchObject({ steps_dropped: 0, patch: false });
        expect(line.score!.truncated).toBe((line.score!.cut.tokens_before as number) > line.score!.input_tokens);
      }
      for (const id of pool().instanceIds) {
        const own = scores.filter((line) => line.instance_id === id);
        const chosen = own.filter((line) => line.chosen);
        expect(chosen, id).toHaveLength(1);
        // Strategy `value`: the chosen candidate has the highest value, and its patch is the prediction.
        expect(chosen[0]!.score!.value).toBe(Math.max(...own.map((line) => line.score!.value)));
        const patch = pool().rows.find((row) => `${row.model_name_or_path}/${row.instance_id}` === chosen[0]!.trajectory_id)!.model_patch;
        expect(predictions.find((row) => row.instance_id === id)!.model_patch).toBe(patch);
      }

      const markdown = readFileSync(report, 'utf8');
      const html = readFileSync(join(first, 'report.html'), 'utf8');
      const expected = expectedMetrics(scores as Array<ScoreLine & { resolved: boolean }>);
      expect(expected).toMatchObject({ instances: 12, candidates: 13, resolved: 6 });
      expect(markdownRow(markdown, '**all**').slice(0, 7)).toEqual([
        '12',
        '13',
        '6',
        percent(expected.mean),
        percent(expected.pass),
        percent(expected.selected),
        '—',
      ]);
      expect(markdown).toContain('## Selections (12)');
      const cut = scores.filter((line) => line.score!.truncated).length;
      expect(markdown).toContain(`${cut} of 13 scorer inputs (${percent(cut / 13)}) were cut to fit the token budget`);
      expect(html).toMatch(
        new RegExp(
          `<tr class="all"><td>all</td><td class="num">12</td><td class="num">13</td><td class="num">6</td><td class="num">${percent(expected.mean)}</td><td class="num">${percent(expected.pass)}</td><td class="num">${percent(expected.selected)}</td>`,
        ),
      );

      expect(stdout).toContain(`12 instances (0 resumed), 13 candidates → ${out}`);
      expect(stdout).toContain(`report: ${report}, ${join(first, 'report.html')}`);
      expect(stdout).toMatch(/^overall\s+12\s+13\s+50\.0%\s+50\.0%\s+50\.0%/m);
      // stderr is a pipe: plain log lines, no progress bar.
      expect(stderr).toContain('rerank: 12/12 instances scored');
      expect(stderr).not.toMatch(/[\r\u001b]|░|█/);
    }, 120_000);

    ownPoolOnly(
      'resumes: a rerun with the same --out redoes only the instance whose prediction is missing',
      async () => {
        const resume = join(dir, 'resume');
        const out = join(resume, 'predictions.jsonl');
        const scoresFile = join(resume, 'predictions.scores.jsonl');
        // Start from the first run's outputs, minus the last prediction (a crash just before it was written).
        mkdirSync(resume, { recursive: true });
        copyFileSync(join(first, 'predictions.scores.jsonl'), scoresFile);
        const before = readFileSync(join(first, 'predictions.jsonl'), 'utf8').split('\n').filter(Boolean);
        expect(before).toHaveLength(12);
        const dropped = (JSON.parse(before.at(-1)!) as { instance_id: string }).instance_id;
        writeFileSync(out, `${before.slice(0, -1).join('\n')}\n`);
        const scoresBefore = readJsonl<ScoreLine>(scoresFile);

        const { code, stdout, stderr } = await rerank([
          '--candidates',
          pool().candidates,
          '--tasks',
          pool().tasks,
          '--strategy',
          'value',
          '--out',
          out,
          '--report',
          join(resume, 'report.md'),
        ]);
        expect(code, stderr).toBe(0);
        expect(stdout).toContain('12 instances (11 resumed), 13 candidates');
        expect(stderr).toContain('rerank: 1/1 instances scored');
        expect(stderr).not.toContain('/12 instances scored');

        const after = readFileSync(out, 'utf8').split('\n').filter(Boolean);
        expect(after).toHaveLength(12);
        expect(after.slice(0, 11)).toEqual(before.slice(0, 11));
        expect(JSON.parse(after[11]!)).toEqual(JSON.parse(before[11]!));
        expect((JSON.parse(after[11]!) as { instance_id: string }).instance_id).toBe(dropped);

        // The other instances' score lines are kept as they were; the redone instance's are written once.
        const scoresAfter = readJsonl<ScoreLine>(scoresFile);
        expect(scoresAfter).toHaveLength(13);
        const kept = (lines: ScoreLine[]) =>
          lines
            .filter((line) => line.instance_id !== dropped)
            .map((line) => JSON.stringify(line))
            .sort();
        expect(kept(scoresAfter)).toEqual(kept(scoresBefore));
        const redone = scoresAfter.filter((line) => line.instance_id === dropped);
        expect(redone.map((line) => line.trajectory_id).sort()).toEqual(
          scoresBefore
            .filter((line) => line.instance_id === dropped)
            .map((line) => line.trajectory_id)
            .sort(),
        );
        expect(readFileSync(join(resume, 'report.md'), 'utf8')).toContain('resumed: 11 instance(s) taken from the previous run');
      },
      120_000,
    );

    // A crash mid-write leaves a torn last line in --out; the resume rewrites --out from its complete rows.
    ownPoolOnly(
      'resumes after a crash mid-write with a valid predictions file',
      async () => {
        const torn = join(dir, 'torn');
        mkdirSync(torn, { recursive: true });
        const out = join(torn, 'predictions.jsonl');
        copyFileSync(join(first, 'predictions.scores.jsonl'), join(torn, 'predictions.scores.jsonl'));
        const before = readFileSync(join(first, 'predictions.jsonl'), 'utf8').split('\n').filter(Boolean);
        writeFileSync(out, `${before.slice(0, -1).join('\n')}\n${before.at(-1)!.slice(0, 40)}`);
        const { code } = await rerank(['--candidates', pool().candidates, '--tasks', pool().tasks, '--strategy', 'value', '--out', out]);
        expect(code).toBe(0);
        const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
        expect(lines).toHaveLength(12);
        for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      },
      120_000,
    );

    it('reports metrics that match labels and choices over two runs per instance', async () => {
      const multi = join(dir, 'multi');
      mkdirSync(multi, { recursive: true });
      // Run B: per instance, another instance's patch, resolved exactly where run A is not.
      const firstRows = pool().instanceIds.map((id) => pool().rows.find((row) => row.instance_id === id)!);
      const runB = firstRows.map((row, index) => ({
        instance_id: row.instance_id,
        model_name_or_path: 'run-b',
        model_patch: firstRows[(index + 1) % firstRows.length]!.model_patch,
        resolved: !pool().rows.some((other) => other.instance_id === row.instance_id && other.resolved),
      }));
      const runBFile = join(multi, 'run-b.jsonl');
      writeFileSync(runBFile, runB.map((row) => JSON.stringify(row)).join('\n') + '\n');
      const out = join(multi, 'predictions.jsonl');
      const report = join(multi, 'report.md');
      const { code, stdout, stderr } = await rerank([
        '--candidates',
        pool().candidates,
        '--candidates',
        runBFile,
        '--source-from',
        'record',
        '--tasks',
        pool().tasks,
        '--out',
        out,
        '--report',
        report,
      ]);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('12 instances (0 resumed), 25 candidates');

      const scores = readJsonl<ScoreLine>(join(multi, 'predictions.scores.jsonl'));
      expect(scores).toHaveLength(25);
      // Labels as we wrote them, not as the tool read them.
      const label = (line: ScoreLine) =>
        line.source === 'run-b'
          ? runB.find((row) => row.instance_id === line.instance_id)!.resolved
          : pool().rows.find((row) => row.instance_id === line.instance_id && row.model_name_or_path === line.source)!.resolved;
      for (const line of scores) expect(line.resolved).toBe(label(line));
      const labelled = scores.map((line) => ({ instance_id: line.instance_id, chosen: line.chosen, resolved: label(line) }));
      const expected = expectedMetrics(labelled);
      expect(expected.pass).toBe(1);
      expect(expected.mean).toBeCloseTo((11 * 0.5 + 1 / 3) / 12, 10);

      const cells = markdownRow(readFileSync(report, 'utf8'), '**all**');
      expect(cells.slice(0, 7)).toEqual([
        '12',
        '25',
        String(expected.resolved),
        percent(expected.mean),
        percent(expected.pass),
        percent(expected.selected),
        expected.headroom === null ? '—' : percent(expected.headroom),
      ]);
      expect(stdout).toMatch(
        new RegExp(`^overall\\s+12\\s+25\\s+${percent(expected.mean)}\\s+${percent(expected.pass)}\\s+${percent(expected.selected)}`, 'm'),
      );

      // Per repository too: django has two instances.
      const django = expectedMetrics(labelled.filter((line) => line.instance_id.startsWith('django__')));
      expect(markdownRow(readFileSync(report, 'utf8'), 'django/django').slice(0, 6)).toEqual([
        '2',
        '4',
        String(django.resolved),
        percent(django.mean),
        percent(django.pass),
        percent(django.selected),
      ]);
    }, 120_000);

    ownPoolOnly(
      'stops at a malformed line, naming file:line and the field, and writes nothing',
      async () => {
        const bad = join(dir, 'bad');
        mkdirSync(bad, { recursive: true });
        const file = join(bad, 'candidates.jsonl');
        const lines = readFileSync(pool().candidates, 'utf8').split('\n').filter(Boolean);
        writeFileSync(
          file,
          [
            lines[2],
            lines[3],
            '{"instance_id": "x__y-1", "model_name_or_path": "m", "model_patch": 5, "resolved": false}',
            '{not json',
            lines[4],
          ].join('\n') + '\n',
        );
        const out = join(bad, 'predictions.jsonl');
        const failed = await rerank(['--candidates', file, '--out', out]);
        expect(failed.code).not.toBe(0);
        expect(failed.stderr).toContain(`WNW_ERR_INPUT_INVALID: ${file}:3: model_patch:`);
        // The field once: the message leads with it, so no "(field: model_patch)" suffix repeats it.
        expect(failed.stderr.match(/model_patch/g)).toHaveLength(1);
        expect(existsSync(out)).toBe(false);

        const skipped = await rerank(['--candidates', file, '--out', out, '--skip-invalid']);
        expect(skipped.code, skipped.stderr).toBe(0);
        expect(skipped.stderr).toContain(`skipped: ${file}:3: model_patch:`);
        expect(skipped.stderr).toContain(`skipped: ${file}:4: (json): not JSON`);
        expect(skipped.stdout).toContain('3 instances (0 resumed), 3 candidates');
        const ids = readJsonl<{ instance_id: string }>(out).map((row) => row.instance_id);
        expect(ids.sort()).toEqual([2, 3, 4].map((index) => (JSON.parse(lines[index]!) as FixtureRow).instance_id).sort());
      },
      120_000,
    );

    ownPoolOnly(
      'exits non-zero with a clear message for a missing file',
      async () => {
        const missing = join(dir, 'no-such-file.jsonl');
        const { code, stdout, stderr } = await rerank(['--candidates', missing, '--out', join(dir, 'missing', 'predictions.jsonl')]);
        expect(code).toBe(2);
        expect(stderr).toMatch(new RegExp(`^winnower: WNW_ERR_INPUT_NOT_FOUND: ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
        expect(stderr).not.toContain('    at ');
        expect(stdout).toBe('');
        expect(existsSync(join(dir, 'missing'))).toBe(false);
      },
      120_000,
    );
  });

  describe('named runs (NAME=PATH) and SWE-bench results.json labels', () => {
    let dir = '';
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-named-'));
    });
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('tells two prediction files of one model apart by name, and labels each from its own results.json', async () => {
      // Two "runs" of the same model: run b is run a with the first instance's patch emptied.
      const rows = pool().rows.filter((row, index, all) => all.findIndex((other) => other.instance_id === row.instance_id) === index);
      const strip = ({ resolved: _resolved, ...row }: FixtureRow) => row;
      writeFileSync(join(dir, 'a.jsonl'), rows.map((row) => JSON.stringify(strip(row))).join('\n') + '\n');
      writeFileSync(
        join(dir, 'b.jsonl'),
        rows.map((row, index) => JSON.stringify({ ...strip(row), model_patch: index === 0 ? '' : row.model_patch })).join('\n') + '\n',
      );
      const resolvedIds = rows.filter((row) => row.resolved).map((row) => row.instance_id);
      // The SWE-bench harness's run report: id lists, no run name in it.
      const report = (resolved: string[]) => ({
        submitted_ids: rows.map((row) => row.instance_id),
        completed_ids: rows.map((row) => row.instance_id),
        resolved_ids: resolved,
        unresolved_ids: rows.map((row) => row.instance_id).filter((id) => !resolved.includes(id)),
      });
      writeFileSync(join(dir, 'results-a.json'), JSON.stringify(report(resolvedIds)));
      writeFileSync(join(dir, 'results-b.json'), JSON.stringify(report(resolvedIds.filter((id) => id !== rows[0]!.instance_id))));

      // Sources taken from the records (same model name in both files): the two runs share ids.
      const clash = await rerank([
        '--candidates',
        join(dir, '[ab].jsonl'),
        '--source-from',
        'record',
        '--tasks',
        pool().tasks,
        '--out',
        join(dir, 'clash.jsonl'),
      ]);
      expect(clash.code).toBe(2);
      expect(clash.stderr).toContain('duplicate trajectory id');

      const out = join(dir, 'named.jsonl');
      const { code, stderr } = await rerank([
        '--candidates',
        `run-a=${join(dir, 'a.jsonl')}`,
        '--candidates',
        `run-b=${join(dir, 'b.jsonl')}`,
        '--labels',
        `run-a=${join(dir, 'results-a.json')}`,
        '--labels',
        `run-b=${join(dir, 'results-b.json')}`,
        '--tasks',
        pool().tasks,
        '--out',
        out,
      ]);
      expect(stderr).not.toContain('WNW_ERR');
      expect(code).toBe(0);
      const lines = readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl'));
      expect(new Set(lines.map((line) => line.source))).toEqual(new Set(['run-a', 'run-b']));
      expect(lines).toHaveLength(rows.length * 2);
      for (const line of lines) {
        const row = rows.find((candidate) => candidate.instance_id === line.instance_id)!;
        const expected = line.source === 'run-b' && row === rows[0] ? false : row.resolved;
        expect(line.resolved, `${line.trajectory_id}`).toBe(expected);
      }
      // The emptied patch never wins.
      expect(lines.find((line) => line.source === 'run-b' && line.instance_id === rows[0]!.instance_id)!.chosen).toBe(false);
    }, 120_000);
  });
}

describe('winnower rerank (CLI, ONNX model, test/fixtures/importers/swebench)', () => {
  const pool = ownPool();
  rerankTests(() => pool, true);

  it("refuses a --budget above the model's own limit instead of capping it silently (issue 24 item 4)", async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'wnw-cli-budget-')), 'predictions.jsonl');
    const { code, stderr } = await rerank(['--candidates', pool.candidates, '--budget', '65536', '--out', out, '--no-progress']);
    expect(code).toBe(2);
    expect(stderr).toContain('--budget: 65536 tokens is more than');
    expect(stderr).toContain('(8192)');
  });
});

describeRealData('winnower rerank (CLI, ONNX model, a subset of the Devstral sample)', 'devstral-verified', () => {
  let pool: Pool | undefined;
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-cli-rerank-real-'));
    pool = realPool(dir);
    expect(pool.instanceIds).toEqual([...DEVSTRAL_SUBSET].sort());
    expect(pool.rows).toHaveLength(13);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  rerankTests(() => pool!, false);
});
