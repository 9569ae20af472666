/**
 * Writes the inspector's pages for saved jobs into a folder that opens from disk or any static
 * server: `index.html` (the list), `jobs/<job>.html`, `jobs/<job>/candidates/<n>.html`, and
 * `assets/` (the same bundle `winnower serve` serves). Each page carries only its own data: a job
 * page no trajectories, a candidate page its one trajectory.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderPageShell } from './page-shell.js';
import { savedOverview, type JobJson } from './saved-runs.js';
import { readUiAsset, UI_ASSETS, uiAssetDir, type UiAssetName } from './ui-assets.js';

/** The policy of a page opened from disk (a `<meta>` cannot set frame-ancestors; no requests at all). */
export const SAVED_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; base-uri 'none'; form-action 'none'";

/** A file name for a job id: its safe characters, plus a digest when anything was changed or it collides. */
function stems(ids: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const used = new Set<string>();
  for (const id of ids) {
    let stem =
      id
        .replace(/[^A-Za-z0-9._-]/g, '_')
        .replace(/^\.+/, '_')
        .slice(0, 100) || 'job';
    if (stem !== id || used.has(stem)) stem = `${stem.slice(0, 90)}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
    used.add(stem);
    out[id] = stem;
  }
  return out;
}

const withoutTrajectory = ({ trajectory: _trajectory, ...candidate }: Record<string, unknown>) => candidate;

export interface SavedSite {
  index: string;
  jobs: number;
  candidates: number;
}

export function writeSavedSite(folder: string, jobs: JobJson[], title = 'winnower inspector'): SavedSite {
  const files = stems(jobs.map((job) => job.job_id));
  mkdirSync(join(folder, 'assets'), { recursive: true });
  for (const name of Object.keys(UI_ASSETS) as UiAssetName[]) {
    readUiAsset(name); // names the build step when the bundle is missing
    copyFileSync(join(uiAssetDir(), name), join(folder, 'assets', name));
  }
  const page = (file: string, root: string, data: Record<string, unknown>) =>
    writeFileSync(
      file,
      renderPageShell({ assetBase: `${root}assets/`, mode: 'saved', csp: SAVED_PAGE_CSP, title, data: { ...data, root, files } }),
    );
  const summaries = jobs.map((job) => {
    const { candidates: _candidates, result: _result, ...summary } = job;
    return { ...summary, overview: savedOverview(job) };
  });
  page(join(folder, 'index.html'), '', { page: 'jobs', jobs: summaries });
  let candidates = 0;
  for (const job of jobs) {
    const stem = files[job.job_id]!;
    mkdirSync(join(folder, 'jobs', stem, 'candidates'), { recursive: true });
    page(join(folder, 'jobs', `${stem}.html`), '../', { page: 'job', job: { ...job, candidates: job.candidates.map(withoutTrajectory) } });
    for (const candidate of job.candidates) {
      const index = Number(candidate.index);
      if (!Number.isInteger(index) || index < 0) continue;
      // The others only as far as the page's previous/next links need them.
      const others = job.candidates.map((other) => (other === candidate ? other : { index: other.index, status: other.status }));
      page(join(folder, 'jobs', stem, 'candidates', `${index}.html`), '../../../', {
        page: 'candidate',
        index,
        job: { ...job, candidates: others },
      });
      candidates += 1;
    }
  }
  return { index: join(folder, 'index.html'), jobs: jobs.length, candidates };
}
