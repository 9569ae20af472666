/** What `winnower jobs export` does once its flags are parsed; loaded only when it runs (jobs.ts registers it). */
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../config.js';
import { wnwError } from '../errors.js';
import { checkedAtif } from '../formats/atif/checked-atif.js';
import { evidenceRecord } from '../formats/evidence-record.js';
import { isPostgresUrl, redactStoreUrl } from '../store/store-url.js';
import { candidatesFromStore, type StoredCandidate } from '../train/store-rows.js';
import type { Trajectory } from '../types/index.js';
import type { JobsExportFlags } from './jobs.js';

/** One output line; an ATIF document is checked against the format before it is written. */
function line(trajectory: Trajectory, format: 'winnower' | 'atif'): string {
  return `${JSON.stringify(format === 'winnower' ? trajectory : checkedAtif(trajectory))}\n`;
}

/** A bundle line: the candidate with its evidence (evidenceRecord checks its ATIF trajectory). */
function bundleLine(row: StoredCandidate): string {
  return `${JSON.stringify(evidenceRecord(row.job, row.record, row.trajectory))}\n`;
}

export async function exportCandidates(given: JobsExportFlags): Promise<void> {
  let flags = given;
  // A bundle's trajectories are ATIF: another format would be a flag accepted and ignored.
  if (flags.bundle && flags.format === 'winnower')
    throw wnwError('WNW_ERR_INPUT_INVALID', '--bundle writes ATIF trajectories; leave out --format winnower', {
      details: { field: 'format' },
    });
  // One store: the SQLite one in a data dir, or the shared Postgres one; neither given, the one
  // `winnower serve` and `winnower solve` would use (server.store, else server.data_dir).
  if (flags.dataDir !== undefined && flags.store !== undefined)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'give one job store: --data-dir <dir> (SQLite) or --store postgres://… (shared), not both', {
      details: { field: 'store' },
    });
  if (flags.dataDir === undefined && flags.store === undefined) {
    const { server } = loadConfig();
    if (isPostgresUrl(server.store)) flags = { ...flags, store: server.store };
    else flags = { ...flags, dataDir: server.data_dir };
  }
  if (flags.store !== undefined && !isPostgresUrl(flags.store))
    throw wnwError('WNW_ERR_INPUT_INVALID', '--store takes a postgres:// URL; a SQLite store is given with --data-dir', {
      details: { field: 'store' },
    });
  const source = flags.store ?? flags.dataDir!;
  const where = flags.store ? redactStoreUrl(flags.store) : flags.dataDir!;
  const format = flags.format ?? 'winnower';
  const labelled = flags.labelled ?? false;
  const rows = await candidatesFromStore(source, {
    labelledOnly: labelled,
    ...(flags.job !== undefined ? { jobId: flags.job } : {}),
  });
  if (rows.length === 0) {
    const what = labelled ? 'verified candidates (jobs need verification on)' : 'candidates with a trajectory';
    const which = flags.job !== undefined ? `job ${flags.job} of the job store` : 'the job store';
    throw wnwError('WNW_ERR_INPUT_INVALID', `no ${what} in ${which} at ${where}`, {
      details: { field: flags.job !== undefined ? 'job' : flags.store ? 'store' : 'data_dir' },
    });
  }
  writeFileSync(flags.out, rows.map((row) => (flags.bundle ? bundleLine(row) : line(row.trajectory, format))).join(''));
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
  const resolved = rows.filter((row) => row.resolved === true).length;
  const label = labelled ? 'labelled candidates' : 'candidates';
  console.log(
    `${rows.length} ${label} (${resolved} resolved) of ${new Set(rows.map((row) => row.pool.split('|')[0])).size} jobs → ${flags.out} as ${flags.bundle ? 'evidence records' : format} (tasks: ${flags.out}.tasks.jsonl)`,
  );
}
