/** What `winnower jobs export` does once its flags are parsed; loaded only when it runs (jobs.ts registers it). */
import { writeFileSync } from 'node:fs';
import { wnwError } from '../errors.js';
import { labelledFromStore } from '../train/store-rows.js';
import type { JobsExportFlags } from './jobs.js';

export function exportLabelled(flags: JobsExportFlags): void {
  const rows = labelledFromStore(flags.dataDir);
  if (rows.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', `no verified candidates in the job store at ${flags.dataDir} (jobs need verification on)`, {
      details: { field: 'data_dir' },
    });
  writeFileSync(flags.out, rows.map((row) => `${JSON.stringify(row.trajectory)}\n`).join(''));
  const tasks = new Map(rows.map((row) => [row.trajectory.instance_id, row.task]));
  writeFileSync(
    `${flags.out}.tasks.jsonl`,
    [...tasks.values()]
      .map(
        (task) =>
          `${JSON.stringify({ instance_id: task.instance_id, problem_statement: task.problem_statement, ...(task.repo?.name ? { repo: task.repo.name } : {}) })}\n`,
      )
      .join(''),
  );
  console.log(
    `${rows.length} labelled candidates (${rows.filter((row) => row.resolved).length} resolved) of ${new Set(rows.map((row) => row.pool)).size} jobs → ${flags.out} (tasks: ${flags.out}.tasks.jsonl)`,
  );
}
