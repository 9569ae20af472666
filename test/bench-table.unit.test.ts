/**
 * The README's benchmarks table is generated from bench/results (scripts/gen-bench-table.ts): it
 * fails when the committed table is not what the results render, and checks the renderer on a
 * folder of its own.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { budgetLine, parseBudgetLines } from '../bench/budget-line.js';
import { BEGIN, END, README, renderBenchTable, withTable } from '../scripts/gen-bench-table.js';

describe("README's benchmarks table", () => {
  it('is what bench/results renders today', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme.slice(readme.indexOf(BEGIN), readme.indexOf(END) + END.length), 'README.md is out of date: run npm run docs:bench').toBe(
      renderBenchTable(),
    );
  });

  it('collects every budget line of every results file, met or not, with its file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-table-'));
    const a = { name: 'batching on ÷ off | 16', budget: '≥ 1.0×', measured: '0.97×', met: false, load: '1.2–1.9' };
    const b = { name: 'rerank --no-progress RSS', budget: '≤ 1.2×', measured: '1.05×', met: true, load: '0.8' };
    writeFileSync(join(dir, 'b.md'), `# b\n\ntext\n${budgetLine(b)}\n`);
    writeFileSync(join(dir, 'a.md'), `# a\n${budgetLine(a)}\n<!-- another comment -->\n`);
    writeFileSync(join(dir, 'notes.txt'), budgetLine(b));
    // "--" cannot stand inside an HTML comment; the line escapes it and reads it back whole.
    expect(budgetLine(b).slice('<!--'.length, -'-->'.length)).not.toContain('--');
    expect(parseBudgetLines(`${budgetLine(b)}\n`)).toEqual([b]);
    const table = renderBenchTable(dir).split('\n');
    expect(table.slice(3, -1)).toEqual([
      '| batching on ÷ off \\| 16 | ≥ 1.0× | 0.97× | **not met** | 1.2–1.9 | [a.md](bench/results/a.md) |',
      '| rerank --no-progress RSS | ≤ 1.2× | 1.05× | met | 0.8 | [b.md](bench/results/b.md) |',
    ]);
    expect(withTable(`x\n${BEGIN}\nold\n${END}\ny`, 'NEW')).toBe('x\nNEW\ny');
    expect(() => withTable('no block', 'NEW')).toThrow(/benchmarks:begin/);
  });
});
