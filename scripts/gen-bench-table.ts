/**
 * Regenerates the README's benchmarks table from bench/results/*.md: every budget line a bench
 * wrote there (bench/budget-line.ts), with the file it came from. `npm run docs:bench` writes it
 * between the README's `benchmarks:begin` and `benchmarks:end` markers;
 * test/bench-table.unit.test.ts fails when the committed table is not what this renders.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseBudgetLines } from '../bench/budget-line.js';

export const README = fileURLToPath(new URL('../README.md', import.meta.url));
const RESULTS = fileURLToPath(new URL('../bench/results', import.meta.url));
export const BEGIN = '<!-- benchmarks:begin (npm run docs:bench writes this table from bench/results) -->';
export const END = '<!-- benchmarks:end -->';

const cell = (text: string) => text.replaceAll('|', '\\|');

export function renderBenchTable(resultsDir = RESULTS): string {
  const rows = readdirSync(resultsDir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .flatMap((name) =>
      parseBudgetLines(readFileSync(join(resultsDir, name), 'utf8')).map(
        (result) =>
          `| ${cell(result.name)} | ${cell(result.budget)} | ${cell(result.measured)} | ${result.met ? 'met' : '**not met**'} | ${cell(result.load)} | [${name}](bench/results/${name}) |`,
      ),
    );
  return [BEGIN, '| budget | target | measured | | load (1 min) | result |', '|---|---|---|---|---|---|', ...rows, END].join('\n');
}

/** The README with its table replaced by `table`. */
export function withTable(readme: string, table: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${BEGIN} … ${END} block`);
  return readme.slice(0, start) + table + readme.slice(end + END.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(README, withTable(readFileSync(README, 'utf8'), renderBenchTable()));
  console.log(`wrote ${README}`);
}
