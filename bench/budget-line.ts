/**
 * One budget's result as a bench writes it into its bench/results/*.md: a comment line that
 * scripts/gen-bench-table.ts collects into the README's benchmarks table, so the table is
 * regenerated from the results rather than copied by hand.
 */
export interface BudgetResult {
  /** What is measured, as the issue states the budget ("batching on ÷ off, 16 connections"). */
  name: string;
  /** The budget ("≥ 1.0×"). */
  budget: string;
  /** What this run measured ("0.97× (0.97, 1.04)"). */
  measured: string;
  met: boolean;
  /** The load average (1 min) while it ran, as the bench recorded it. */
  load: string;
}

const PREFIX = '<!-- budget: ';
const SUFFIX = ' -->';

export function budgetLine(result: BudgetResult): string {
  return `${PREFIX}${JSON.stringify(result).replaceAll('--', '-\\u002d')}${SUFFIX}`;
}

/** The budget lines of one results file, in order. */
export function parseBudgetLines(markdown: string): BudgetResult[] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith(PREFIX) && line.endsWith(SUFFIX))
    .map((line) => JSON.parse(line.slice(PREFIX.length, -SUFFIX.length)) as BudgetResult);
}
