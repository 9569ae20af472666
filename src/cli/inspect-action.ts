/** What `winnower inspect` does once its arguments are parsed; loaded only when it runs (inspect.ts registers it). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadSavedRuns } from '../server/ui/saved-runs.js';
import { serveFolder } from '../server/ui/serve-folder.js';
import { writeSavedSite } from '../server/ui/saved-site.js';
import type { InspectFlags } from './inspect.js';

export async function runInspect(paths: string[], flags: InspectFlags): Promise<void> {
  const runs = await loadSavedRuns(paths, { sourceFrom: flags.sourceFrom });
  // Served without --out: a temporary site, removed when the server stops (Ctrl-C, SIGTERM, exit).
  const temporary = !flags.out && flags.serve ? mkdtempSync(join(tmpdir(), 'winnower-inspect-')) : undefined;
  const folder = resolve(flags.out ?? temporary ?? join('.winnower', 'inspect'));
  const removeTemporary = () => {
    if (temporary) rmSync(temporary, { recursive: true, force: true });
  };
  process.once('exit', removeTemporary);
  const site = writeSavedSite(folder, runs.jobs);
  const read = [
    runs.read.jobs.length ? `${runs.read.jobs.length} job file(s)` : '',
    runs.read.scores.length ? `${runs.read.scores.length} scores file(s)` : '',
    runs.read.trajectories.length ? `${runs.read.trajectories.length} trajectory input(s)` : '',
  ]
    .filter(Boolean)
    .join(', ');
  console.log(`${site.jobs} job(s), ${site.candidates} candidate(s) from ${read} → ${site.index}`);
  if (!flags.serve) return;
  const { server, url } = await serveFolder(folder, { host: flags.host, port: flags.port });
  console.log(`serving ${folder} at ${url} (Ctrl-C to stop)`);
  const stop = () => {
    // An open browser keeps a connection alive: close them all, or close() would wait for it.
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
