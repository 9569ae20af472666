/** `winnower jobs export --labelled`: a server's verified candidates as rows `winnower train --rollouts` reads. */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { wnwError } from '../errors.js';
import { labelledFromStore } from '../train/store-rows.js';

export function registerJobsCommand(program: Command): void {
  const jobs = program.command('jobs').description("a server's stored jobs");
  jobs
    .command('export')
    .description('write the candidates of past /solve and /rerank jobs as JSONL')
    .requiredOption('--data-dir <dir>', "the server's data dir (server.data_dir)")
    .requiredOption('--labelled', 'only verified candidates, each with its label (meta.resolved): rows winnower train reads')
    .requiredOption('--out <file>', 'candidates JSONL (winnower trajectories); the tasks go to <file>.tasks.jsonl beside it')
    .action((flags: { dataDir: string; labelled: boolean; out: string }) => {
      const rows = labelledFromStore(flags.dataDir);
      if (rows.length === 0) throw wnwError('WNW_ERR_INPUT_INVALID', `no verified candidates in the job store at ${flags.dataDir} (jobs need verification on)`, { details: { field: 'data_dir' } });
      writeFileSync(flags.out, rows.map((row) => `${JSON.stringify(row.trajectory)}\n`).join(''));
      const tasks = new Map(rows.map((row) => [row.trajectory.instance_id, row.task]));
      writeFileSync(`${flags.out}.tasks.jsonl`, [...tasks.values()].map((task) => `${JSON.stringify({ instance_id: task.instance_id, problem_statement: task.problem_statement, ...(task.repo?.name ? { repo: task.repo.name } : {}) })}\n`).join(''));
      console.log(`${rows.length} labelled candidates (${rows.filter((row) => row.resolved).length} resolved) of ${new Set(rows.map((row) => row.pool)).size} jobs → ${flags.out} (tasks: ${flags.out}.tasks.jsonl)`);
    });
}
