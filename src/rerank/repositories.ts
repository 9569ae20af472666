/**
 * Where an instance's repository is, for `winnower rerank --repos <folder>`: the folder holds one
 * git repository per SWE-bench repository, bare or not, named as SWE-bench names its images
 * (`owner__name.git`, `owner__name`) or as a mirror would (`owner/name.git`, `owner/name`,
 * `name.git`, `name`). A task whose `repo.url` is set uses the URL when the folder has no copy.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoNameOf, type Task } from '../types/task.js';

export type RepositoryLookup = { repo: NonNullable<Task['repo']> } | { missing: string };

const isFolder = (path: string) => existsSync(path) && statSync(path).isDirectory();

/** The folder names tried for `owner/name`, in order. */
export function candidateFolders(name: string): string[] {
  const [owner, repo] = name.split('/') as [string, string | undefined];
  if (!repo) return [name, `${name}.git`];
  return [`${owner}__${repo}.git`, `${owner}__${repo}`, join(owner, `${repo}.git`), join(owner, repo), `${repo}.git`, repo];
}

/** The task's repository in `reposDir` at its base commit, or why there is none. */
export function findRepository(reposDir: string, task: Pick<Task, 'instance_id' | 'repo'>): RepositoryLookup {
  const name = repoNameOf(task);
  const base = task.repo?.base_commit;
  if (name !== 'unknown') {
    for (const folder of candidateFolders(name)) {
      const path = resolve(reposDir, folder);
      if (isFolder(path)) return { repo: { name, path, ...(base ? { base_commit: base } : {}) } };
    }
  }
  if (task.repo?.url) return { repo: { name, url: task.repo.url, ...(base ? { base_commit: base } : {}) } };
  if (name === 'unknown')
    return { missing: `${task.instance_id}: the task names no repository (repo) and the instance id does not encode one` };
  return { missing: `${name}: none of ${candidateFolders(name).join(', ')} is in ${reposDir}` };
}
