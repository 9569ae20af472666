/** `winnower jobs export --labelled`: a server's verified candidates as rows `winnower train --rollouts` reads. */
import type { Command } from 'commander';

export interface JobsExportFlags {
  dataDir: string;
  labelled: boolean;
  out: string;
}

export function registerJobsCommand(program: Command): void {
  const jobs = program.command('jobs').description("a server's stored jobs");
  jobs
    .command('export')
    .description('write the candidates of past /solve and /rerank jobs as JSONL')
    .requiredOption('--data-dir <dir>', "the server's data dir (server.data_dir)")
    .requiredOption('--labelled', 'only verified candidates, each with its label (meta.resolved): rows winnower train reads')
    .requiredOption('--out <file>', 'candidates JSONL (winnower trajectories); the tasks go to <file>.tasks.jsonl beside it')
    .action(async (flags: JobsExportFlags) => (await import('./jobs-action.js')).exportLabelled(flags));
}
