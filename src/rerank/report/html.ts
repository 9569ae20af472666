/** The report as one self-contained HTML page: inline CSS, two inline SVG figures, the tables. */
import {
  DASH,
  METRIC_COLUMNS,
  duration,
  escapeHtml as h,
  fixed,
  metricCells,
  missed,
  tamperRows,
  scoredByText,
  title,
  truncationSentence,
  yesNo,
} from './format.js';
import { calibrationSvg, histogramSvg } from './svg.js';
import type { ReportInput } from './types.js';

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5rem 0; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; } tr.all td { font-weight: bold; }
.figures { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
.muted { color: #666; } .no { color: #c62828; } .yes { color: #2e7d32; }`;

/** Renders `input` as a standalone HTML page; every piece of input text is escaped. */
export function renderHtmlReport(input: ReportInput): string {
  const { run, metrics, selections } = input;
  const body: string[] = [`<h1>${h(title(input))}</h1>`];
  if (input.generated_at) body.push(`<p class="muted">Generated ${h(input.generated_at)}.</p>`);

  body.push('<h2>Run</h2>', '<table>');
  const files = run.files.length ? run.files.map((file) => `<code>${h(file)}</code>`).join('<br>') : DASH;
  const timings =
    Object.entries(run.timings)
      .map(([phase, ms]) => `${h(phase)} ${duration(ms)}`)
      .join(', ') || DASH;
  const scoredBy = scoredByText(run.scored_by);
  for (const [label, value] of [
    ['strategy', h(run.strategy)],
    ['scorer', h(run.scorer)],
    ['model', h(run.model)],
    ...(scoredBy ? [['scored by', h(scoredBy)]] : []),
    ['template', h(run.template)],
    ['files', files],
    ['timings', timings],
  ]) {
    body.push(`<tr><th>${label}</th><td>${value}</td></tr>`);
  }
  body.push('</table>');
  if (run.inspector)
    body.push(
      `<p>Every instance's candidates, trajectories and diffs: <a href="${h(run.inspector)}">open the inspector</a> (<code>winnower inspect</code>).</p>`,
    );
  if (run.notes?.length) body.push(`<ul>${run.notes.map((note) => `<li>${h(note)}</li>`).join('')}</ul>`);

  body.push(
    '<h2>Results</h2>',
    '<table>',
    `<tr><th>scope</th>${METRIC_COLUMNS.map((column) => `<th class="num">${column}</th>`).join('')}</tr>`,
  );
  body.push(row(['all', ...metricCells(metrics.overall)], 'all'));
  for (const [repo, repoMetrics] of Object.entries(metrics.by_repo)) body.push(row([h(repo), ...metricCells(repoMetrics)]));
  body.push('</table>');
  body.push(
    '<p class="muted">mean@1: a uniformly random candidate per instance; pass@N: the oracle; headroom closed: (selected@1 − mean@1) / (pass@N − mean@1).</p>',
  );

  body.push(
    '<h2>Scores</h2>',
    '<div class="figures">',
    `<figure>${histogramSvg(metrics.histogram)}</figure>`,
    `<figure>${calibrationSvg(metrics.calibration)}</figure>`,
    '</div>',
  );

  body.push('<h2>Truncation</h2>', `<p>${h(truncationSentence(input))}</p>`);

  const misses = missed(selections);
  body.push(`<h2>Missed: a resolved candidate existed but was not chosen (${misses.length})</h2>`);
  if (misses.length) {
    body.push('<table>', '<tr><th>instance</th><th>repo</th><th>chosen</th><th class="num">value</th><th>reason</th></tr>');
    for (const s of misses)
      body.push(
        `<tr><td>${h(s.instance_id)}</td><td>${h(s.repo)}</td><td>${s.chosen ? h(s.chosen) : DASH}</td><td class="num">${fixed(s.value)}</td><td>${h(s.reason ?? '')}</td></tr>`,
      );
    body.push('</table>');
  } else {
    body.push('<p>None.</p>');
  }

  const flagged = tamperRows(selections);
  if (flagged.length) {
    body.push(
      `<h2>Tamper flags (${flagged.length} candidates)</h2>`,
      '<table>',
      '<tr><th>instance</th><th>candidate</th><th>chosen</th><th>flags</th></tr>',
    );
    for (const f of flagged)
      body.push(
        `<tr><td>${h(f.instance_id)}</td><td>${h(f.trajectory_id)}</td><td>${f.chosen ? 'yes' : 'no'}</td><td>${h(f.flags)}</td></tr>`,
      );
    body.push('</table>');
  }

  body.push(
    `<h2>Selections (${selections.length})</h2>`,
    '<table>',
    '<tr><th>instance</th><th>repo</th><th>chosen</th><th class="num">value</th><th>resolved</th><th>any resolved</th><th class="num">candidates</th></tr>',
  );
  for (const s of selections) {
    const resolvedClass = s.resolved === null ? 'muted' : s.resolved ? 'yes' : 'no';
    body.push(
      `<tr><td>${h(s.instance_id)}</td><td>${h(s.repo)}</td><td title="${h(s.reason ?? '')}">${s.chosen ? h(s.chosen) : DASH}</td>` +
        `<td class="num">${fixed(s.value)}</td><td class="${resolvedClass}">${yesNo(s.resolved)}</td><td>${yesNo(s.any_resolved)}</td><td class="num">${s.candidates}</td></tr>`,
    );
  }
  body.push('</table>');

  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(title(input))}</title>`,
    `<style>${STYLE}\n</style>`,
    '</head>',
    '<body>',
    ...body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function row(cells: string[], className?: string): string {
  const [scope, ...numbers] = cells;
  return `<tr${className ? ` class="${className}"` : ''}><td>${scope}</td>${numbers.map((cell) => `<td class="num">${cell}</td>`).join('')}</tr>`;
}
