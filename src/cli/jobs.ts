/** `winnower jobs export`: a server's stored candidates as rows `winnower train --rollouts` reads, in winnower's format or ATIF. */
import { type Command, Option } from 'commander';

export interface JobsExportFlags {
  dataDir?: string;
  store?: string;
  labelled?: boolean;
  format?: 'winnower' | 'atif';
  bundle?: boolean;
  job?: string;
  out: string;
}

export function registerJobsCommand(program: Command): void {
  const jobs = program.command('jobs').description("a server's stored jobs");
  jobs
    .command('export')
    .description('write the candidates of past /solve and /rerank jobs as JSONL')
    .option(
      '--data-dir <dir>',
      "the server's data dir (server.data_dir), for its SQLite store; neither this nor --store: the configured store",
    )
    .option('--store <url>', 'the postgres:// store several replicas share (server.store), instead of --data-dir')
    .option('--labelled', 'only verified candidates, each with its label (meta.resolved): rows winnower train reads')
    .addOption(
      new Option('--format <name>', 'winnower trajectories (default), or ATIF-v1.7 documents (one per line; docs/formats.md)').choices([
        'winnower',
        'atif',
      ]),
    )
    .option(
      '--bundle',
      'one candidate-with-evidence record per candidate: prediction row, ATIF trajectory, one entry per check (docs/schemas/candidate-evidence.schema.json)',
    )
    .option('--job <id>', "only this job's candidates")
    .requiredOption('--out <file>', 'candidates JSONL; the tasks go to <file>.tasks.jsonl beside it')
    .action(async (flags: JobsExportFlags) => (await import('./jobs-action.js')).exportCandidates(flags));
}
