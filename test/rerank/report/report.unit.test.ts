import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeMetrics, type MetricRow } from '../../../src/metrics/ranking.js';
import {
  renderHtmlReport,
  renderMarkdownReport,
  summarizeSelection,
  truncationStats,
  writeReports,
  type ReportInput,
} from '../../../src/rerank/report/index.js';
import type { ScoredBy } from '../../../src/scoring/scorer-identity.js';
import { select } from '../../../src/select/index.js';
import { FIX_A, FIX_B, candidate, score } from '../../select/fixtures.js';

const EVIL = '<script>alert("x")</script>';

const row = (
  instance_id: string,
  repo: string,
  trajectory_id: string,
  value: number | null,
  resolved: boolean,
  selected = false,
): MetricRow => ({
  instance_id,
  repo,
  trajectory_id,
  value,
  resolved,
  selected,
});

// Same numbers as test/metrics/ranking.unit.test.ts, with i3 renamed to a hostile id.
const ROWS: MetricRow[] = [
  row('i1', 'x/a', 'r1', 0.9, true, true),
  row('i1', 'x/a', 'r2', 0.6, false),
  row('i1', 'x/a', 'r3', 0.2, false),
  row('i2', 'x/a', 'r4', 0.7, false, true),
  row('i2', 'x/a', 'r5', 0.3, true),
  row(EVIL, 'y/b', 'r6', 0.5, false, true),
  row(EVIL, 'y/b', 'r7', null, false),
  row('i4', 'y/b', 'r8', 0.8, true, true),
  row('i4', 'y/b', 'r9', 0.8, false),
];

function input(): ReportInput {
  return {
    run: {
      strategy: 'value',
      scorer: 'onnx',
      model: 'models/tiny-value',
      template: 'default',
      files: ['runs/a.jsonl', 'runs/b|c.jsonl'],
      timings: { import: 850, score: 5400, select: 3 },
      notes: ['2 instances fell back to consensus'],
    },
    metrics: computeMetrics(ROWS),
    selections: [
      { instance_id: 'i1', repo: 'x/a', chosen: 'r1', value: 0.9, resolved: true, any_resolved: true, candidates: 3, reason: 'Chose r1.' },
      {
        instance_id: 'i2',
        repo: 'x/a',
        chosen: 'r4',
        value: 0.7,
        resolved: false,
        any_resolved: true,
        candidates: 2,
        reason: 'Chose r4 & not r5.',
      },
      { instance_id: EVIL, repo: 'y/b', chosen: EVIL, value: 0.5, resolved: false, any_resolved: false, candidates: 2, reason: EVIL },
      { instance_id: 'i4', repo: 'y/b', chosen: 'r8', value: 0.8, resolved: true, any_resolved: true, candidates: 2 },
    ],
    truncation: { inputs: 8, truncated: 2, thoughts: 5, observations: 3, steps_dropped: 1, patches_cut: 0 },
  };
}

/** HTML elements that never close. */
const VOID = new Set(['br', 'meta']);

/** Checks that an XML fragment's tags nest and close properly and that text holds no raw markup. */
function assertWellFormed(xml: string): void {
  const stack: string[] = [];
  const tokens = xml.split(/(<[^>]*>)/);
  for (const token of tokens) {
    if (!token.startsWith('<')) {
      expect(token).not.toMatch(/[<>]|&(?!(amp|lt|gt|quot|#39);)/);
      continue;
    }
    const close = /^<\/([a-zA-Z][\w:-]*)>$/.exec(token);
    if (close) {
      expect(stack.pop(), `closing ${token}`).toBe(close[1]);
      continue;
    }
    const open = /^<([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"<>]*")*)\s*(\/?)>$/.exec(token);
    expect(open, `malformed tag ${token}`).not.toBeNull();
    if (open && open[3] !== '/' && !VOID.has(open[1]!)) stack.push(open[1]!);
  }
  expect(stack).toEqual([]);
}

describe('renderMarkdownReport', () => {
  const markdown = renderMarkdownReport(input());

  it('shows run info, overall and per-repo metrics with the hand-computed figures', () => {
    expect(markdown).toContain('# winnower rerank report');
    expect(markdown).toContain('| strategy | value |');
    expect(markdown).toContain('| timings | import 850 ms, score 5.4 s, select 3 ms |');
    expect(markdown).toContain('runs/b\\|c.jsonl');
    expect(markdown).toContain('| **all** | 4 | 9 | 3 | 33.3% | 75.0% | 50.0% | 40.0% | 0.700 | 0.425 | 0.290 |');
    expect(markdown).toContain('| x/a | 2 | 5 | 2 | 41.7% | 100.0% | 50.0% | 14.3% | 0.667 | 0.460 | 0.278 |');
    expect(markdown).toContain('| y/b | 2 | 4 | 1 | 25.0% | 50.0% | 50.0% | 100.0% | 0.750 | 0.367 | 0.310 |');
    expect(markdown).toContain('| 0.8–0.9 | 2 | 0.800 | 50.0% |');
  });

  it('lists truncation and the instances where a resolved candidate was not chosen', () => {
    expect(markdown).toContain(
      '2 of 8 scorer inputs (25.0%) were cut to fit the token budget: 5 thoughts elided, 3 observations shortened, 1 steps dropped.',
    );
    expect(markdown).toContain('## Missed: a resolved candidate existed but was not chosen (1)');
    expect(markdown).toContain('| i2 | x/a | r4 | 0.700 | Chose r4 &amp; not r5. |');
    expect(markdown).toContain('## Selections (4)');
  });

  it('escapes markup in ids and reasons', () => {
    expect(markdown).not.toContain('<script');
    expect(markdown).toContain('&lt;script&gt;alert("x")&lt;/script&gt;');
    const ids = renderMarkdownReport({
      ...input(),
      selections: [{ ...input().selections[0]!, instance_id: 'django__django-11099', chosen: '_lead|pipe' }],
    });
    expect(ids).toContain('| django__django-11099 | x/a | \\_lead\\|pipe |');
  });
});

describe('scored_by in the report', () => {
  const scoredBy: ScoredBy = {
    model: { name: 'winnower-value-v3', path: '/models/v3', hash: 'sha256:0123456789abcdef0123456789abcdef' },
    selector: {
      path: '/models/v3/selector.json',
      hash: 'sha256:fedcba9876543210fedcba9876543210',
      default_strategy: 'learned',
      strategy: 'robust',
    },
    scorer: { backend: 'onnx', urls: [] },
  };
  const withScoredBy = (value: ScoredBy | null): ReportInput => ({ ...input(), run: { ...input().run, scored_by: value } });

  it('names the model (short hash) and the selector (strategy, default, short hash) that scored the run', () => {
    const line = 'winnower-value-v3 (0123456789ab) · selector robust (default learned) (selector.json fedcba987654) · backend onnx';
    expect(renderMarkdownReport(withScoredBy(scoredBy))).toContain(`| scored by | ${line} |`);
    const html = renderHtmlReport(withScoredBy(scoredBy));
    expect(html).toContain(`<tr><th>scored by</th><td>${line}</td></tr>`);
    assertWellFormed(html.replace(/^<!doctype html>\n/, ''));
    const bare: ScoredBy = {
      ...scoredBy,
      model: { name: 'served', path: null, hash: null },
      selector: { path: null, hash: null, default_strategy: null, strategy: 'max' },
      scorer: { backend: 'vllm', urls: ['http://x:8000'] },
    };
    expect(renderMarkdownReport(withScoredBy(bare))).toContain('| scored by | served · strategy max (no selector.json) · backend vllm |');
    // Without a scorer identity the row is left out.
    expect(renderMarkdownReport(withScoredBy(null))).not.toContain('scored by');
    expect(renderHtmlReport(input())).not.toContain('scored by');
  });
});

describe('renderHtmlReport', () => {
  const html = renderHtmlReport(input());

  it('is one self-contained page: no scripts, no external assets', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\b(src|href)=|<link|@import|url\(/i);
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    assertWellFormed(html.replace(/^<!doctype html>\n/, ''));
  });

  it('draws a histogram split by label and a reliability diagram with the diagonal, as valid SVG', () => {
    const svgs = html.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
    expect(svgs).toHaveLength(2);
    for (const svg of svgs) assertWellFormed(svg);
    const [histogram, calibration] = svgs as [string, string];
    // 20 bins over 8 scored candidates: 3 resolved bars and 5 not resolved (0.8 has one of each)
    expect(histogram.match(/<rect [^>]*fill="#2e7d32"><title>/g)).toHaveLength(3);
    expect(histogram.match(/<rect [^>]*fill="#c62828"><title>/g)).toHaveLength(5);
    expect(histogram).toContain('0.80–0.85: 1 resolved');
    // 7 non-empty calibration bins, one point each, joined by a line; the diagonal is dashed
    expect(calibration.match(/<circle /g)).toHaveLength(7);
    expect(calibration).toContain('<polyline ');
    expect(calibration).toMatch(/<line [^>]*stroke-dasharray="4 4"><title>perfect calibration<\/title><\/line>/);
    expect(calibration).toContain('0.8–0.9: 2 candidates, mean value 0.800, resolved 50.0%');
  });

  it('contains the metrics, missed list and selections tables', () => {
    expect(html).toContain(
      '<td class="num">33.3%</td><td class="num">75.0%</td><td class="num">50.0%</td><td class="num">40.0%</td><td class="num">0.700</td>',
    );
    expect(html).toContain('Missed: a resolved candidate existed but was not chosen (1)');
    expect(html).toContain('<td>i2</td><td>x/a</td><td>r4</td>');
    expect(html).toContain('Chose r4 &amp; not r5.');
  });

  it('renders empty metrics without failing', () => {
    const empty = renderHtmlReport({ ...input(), metrics: computeMetrics([]), selections: [], truncation: { inputs: 0, truncated: 0 } });
    for (const svg of empty.match(/<svg[\s\S]*?<\/svg>/g) ?? []) assertWellFormed(svg);
    expect(empty).toContain('0 of 0 scorer inputs were cut');
    expect(renderMarkdownReport({ ...input(), metrics: computeMetrics([]), selections: [] })).toContain(
      '| **all** | 0 | 0 | 0 | — | — | — | — | — | — | — |',
    );
  });
});

describe('writeReports', () => {
  it('writes report.md and report.html beside it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'winnower-report-'));
    try {
      const paths = await writeReports(input(), join(dir, 'out', 'report.md'));
      expect(paths).toEqual({ markdown: join(dir, 'out', 'report.md'), html: join(dir, 'out', 'report.html') });
      expect(await readFile(paths.markdown, 'utf8')).toBe(renderMarkdownReport(input()));
      expect(await readFile(paths.html, 'utf8')).toBe(renderHtmlReport(input()));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('summaries from pipeline types', () => {
  it('summarizes a Selection with labels, and totals truncation over Scores', () => {
    const selection = select('value', [candidate('a', FIX_A, 0.9), candidate('b', FIX_B, 0.4)]);
    const labels = new Map([
      ['a', false],
      ['b', true],
    ]);
    expect(summarizeSelection(selection, 'acme/calc', labels)).toEqual({
      instance_id: 'acme__calc-1',
      repo: 'acme/calc',
      chosen: 'a',
      value: 0.9,
      resolved: false,
      any_resolved: true,
      candidates: 2,
      reason: selection.reason,
    });
    expect(summarizeSelection(selection, 'acme/calc')).toMatchObject({ resolved: null, any_resolved: null });
    const cut = {
      ...score('b', 0.4),
      truncated: true,
      cut: { thoughts: 2, observations: 1, steps_dropped: 0, patch: true, tokens_before: 9000 },
    };
    expect(truncationStats([score('a', 0.9), cut])).toEqual({
      inputs: 2,
      truncated: 1,
      thoughts: 2,
      observations: 1,
      steps_dropped: 0,
      patches_cut: 1,
    });
  });
});
