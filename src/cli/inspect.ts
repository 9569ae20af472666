/**
 * `winnower inspect`: the web inspector's pages for saved runs — a `winnower solve --out` job, a
 * `winnower rerank` run (its scores file with the candidate files it read), or trajectory files —
 * written to a folder that opens from disk, or served on a local port with `--serve`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { loadSavedRuns } from '../server/ui/saved-runs.js';
import { serveFolder } from '../server/ui/serve-folder.js';
import { writeSavedSite } from '../server/ui/saved-site.js';
import { port } from './parse-options.js';

interface InspectFlags {
  out?: string;
  sourceFrom?: 'record' | 'file';
  serve?: boolean;
  host: string;
  port: number;
}

export function registerInspectCommand(program: Command): void {
  program
    .command('inspect')
    .description('look at saved runs in the browser: a `solve --out` job, a `rerank` run (scores file + candidate files), or trajectory files')
    .argument('<paths...>', 'job JSON files (solve --out), a rerank scores file (*.scores.jsonl) with the candidate files it read, or trajectory files; folders and globs too')
    .option('--out <dir>', 'folder to write the pages to (default .winnower/inspect; a temporary folder with --serve)')
    .addOption(new Option('--source-from <how>', 'name trajectory sources as `winnower rerank --source-from` did (default: its default)').choices(['record', 'file']))
    .option('--serve', 'serve the pages on a local port instead of only writing them')
    .option('--host <host>', 'address to serve on', '127.0.0.1')
    .option('--port <port>', 'port to serve on (0: any free one)', port, 0)
    .addHelpText('after', '\nExamples:\n  winnower solve ... --out job.json && winnower inspect job.json\n  winnower inspect out/predictions.scores.jsonl runs/*.jsonl --serve')
    .action(async (paths: string[], flags: InspectFlags) => {
      const runs = await loadSavedRuns(paths, { sourceFrom: flags.sourceFrom });
      const folder = resolve(flags.out ?? (flags.serve ? mkdtempSync(join(tmpdir(), 'winnower-inspect-')) : join('.winnower', 'inspect')));
      const site = writeSavedSite(folder, runs.jobs);
      const read = [runs.read.jobs.length ? `${runs.read.jobs.length} job file(s)` : '', runs.read.scores.length ? `${runs.read.scores.length} scores file(s)` : '', runs.read.trajectories.length ? `${runs.read.trajectories.length} trajectory input(s)` : ''].filter(Boolean).join(', ');
      console.log(`${site.jobs} job(s), ${site.candidates} candidate(s) from ${read} → ${site.index}`);
      if (!flags.serve) return;
      const { server, url } = await serveFolder(folder, { host: flags.host, port: flags.port });
      console.log(`serving ${folder} at ${url} (Ctrl-C to stop)`);
      const stop = () => server.close(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
