/** The report as GitHub-flavoured Markdown: run, metrics, calibration, truncation, missed wins, selections. */
import {
  DASH,
  METRIC_COLUMNS,
  duration,
  escapeMarkdown as md,
  fixed,
  metricCells,
  missed,
  tamperRows,
  percent,
  scoredByText,
  title,
  truncationSentence,
  yesNo,
} from './format.js';
import type { ReportInput } from './types.js';

/** Renders `input` as Markdown; every piece of input text is escaped. */
export function renderMarkdownReport(input: ReportInput): string {
  const { run, metrics, selections } = input;
  const out: string[] = [`# ${md(title(input))}`, ''];
  if (input.generated_at) out.push(`Generated ${md(input.generated_at)}.`, '');

  out.push('## Run', '', '| | |', '|---|---|');
  const scoredBy = scoredByText(run.scored_by);
  out.push(
    `| strategy | ${md(run.strategy)} |`,
    `| scorer | ${md(run.scorer)} |`,
    `| model | ${md(run.model)} |`,
    ...(scoredBy ? [`| scored by | ${md(scoredBy)} |`] : []),
    `| template | ${md(run.template)} |`,
  );
  out.push(`| files | ${run.files.length ? run.files.map(md).join('<br>') : DASH} |`);
  const timings = Object.entries(run.timings).map(([phase, ms]) => `${md(phase)} ${duration(ms)}`);
  out.push(`| timings | ${timings.length ? timings.join(', ') : DASH} |`, '');
  if (run.inspector)
    out.push(
      `Every instance's candidates, trajectories and diffs: [open the inspector](${encodeURI(run.inspector)}) (\`winnower inspect\`).`,
      '',
    );
  for (const note of run.notes ?? []) out.push(`- ${md(note)}`);
  if (run.notes?.length) out.push('');

  out.push(
    '## Results',
    '',
    table(
      ['scope', ...METRIC_COLUMNS],
      [
        ['**all**', ...metricCells(metrics.overall)],
        ...Object.entries(metrics.by_repo).map(([repo, repoMetrics]) => [md(repo), ...metricCells(repoMetrics)]),
      ],
    ),
    '',
  );
  out.push(
    'mean@1: a uniformly random candidate per instance; pass@N: the oracle; headroom closed: (selected@1 − mean@1) / (pass@N − mean@1). Definitions: docs/metrics.md.',
    '',
  );

  out.push(
    '## Calibration',
    '',
    table(
      ['value bin', 'candidates', 'mean value', 'resolved'],
      metrics.calibration.map((bin) => [
        `${bin.lower.toFixed(1)}–${bin.upper.toFixed(1)}`,
        String(bin.count),
        fixed(bin.mean_value),
        percent(bin.observed),
      ]),
    ),
    '',
  );

  out.push('## Truncation', '', truncationSentence(input), '');

  const misses = missed(selections);
  out.push(`## Missed: a resolved candidate existed but was not chosen (${misses.length})`, '');
  if (misses.length) {
    out.push(
      table(
        ['instance', 'repo', 'chosen', 'value', 'reason'],
        misses.map((s) => [md(s.instance_id), md(s.repo), s.chosen ? md(s.chosen) : DASH, fixed(s.value), md(s.reason ?? '')]),
      ),
    );
  } else {
    out.push('None.');
  }
  out.push('');

  const flagged = tamperRows(selections);
  if (flagged.length) {
    out.push(`## Tamper flags (${flagged.length} candidates)`, '');
    out.push(
      table(
        ['instance', 'candidate', 'chosen', 'flags'],
        flagged.map((f) => [md(f.instance_id), md(f.trajectory_id), f.chosen ? 'yes' : 'no', md(f.flags)]),
      ),
      '',
    );
  }

  out.push(`## Selections (${selections.length})`, '');
  out.push(
    table(
      ['instance', 'repo', 'chosen', 'value', 'resolved', 'any resolved', 'candidates'],
      selections.map((s) => [
        md(s.instance_id),
        md(s.repo),
        s.chosen ? md(s.chosen) : DASH,
        fixed(s.value),
        yesNo(s.resolved),
        yesNo(s.any_resolved),
        String(s.candidates),
      ]),
    ),
    '',
  );
  return out.join('\n');
}

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}
