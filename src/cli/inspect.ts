/**
 * `winnower inspect`: the web inspector's pages for saved runs — a `winnower solve --out` job, a
 * `winnower rerank` run (its scores file with the candidate files it read), or trajectory files —
 * written to a folder that opens from disk, or served on a local port with `--serve`.
 */
import { Option, type Command } from 'commander';
import { port } from './parse-options.js';

export interface InspectFlags {
  out?: string;
  sourceFrom?: 'record' | 'file';
  serve?: boolean;
  host: string;
  port: number;
}

export function registerInspectCommand(program: Command): void {
  program
    .command('inspect')
    .description(
      'look at saved runs in the browser: a `solve --out` job, a `rerank` run (scores file + candidate files), or trajectory files',
    )
    .argument(
      '<paths...>',
      'job JSON files (solve --out), a rerank scores file (*.scores.jsonl) with the candidate files it read, or trajectory files; folders and globs too',
    )
    .option('--out <dir>', 'folder to write the pages to (default .winnower/inspect; a temporary folder with --serve)')
    .addOption(
      new Option('--source-from <how>', 'name trajectory sources as `winnower rerank --source-from` did (default: its default)').choices([
        'record',
        'file',
      ]),
    )
    .option('--serve', 'serve the pages on a local port instead of only writing them')
    .option('--host <host>', 'address to serve on', '127.0.0.1')
    .option('--port <port>', 'port to serve on (0: any free one)', port, 0)
    .addHelpText(
      'after',
      '\nExamples:\n  winnower solve ... --out job.json && winnower inspect job.json\n  winnower inspect out/predictions.scores.jsonl runs/*.jsonl --serve',
    )
    .action(async (paths: string[], flags: InspectFlags) => (await import('./inspect-action.js')).runInspect(paths, flags));
}
