import { z } from 'zod';

/** Where a task's repository comes from: a git URL or a local checkout, at a base commit. */
export const RepoSource = z
  .object({
    /** git URL (https://, file://, ssh); cloned on the host, never inside a sandbox. */
    url: z.string().min(1).optional(),
    /** Local checkout path on the host. */
    path: z.string().min(1).optional(),
    /** `owner/name`, e.g. `django/django` (used for per-repository metrics). */
    name: z.string().min(1).optional(),
    /** Commit to start from; HEAD of the checkout when absent. */
    base_commit: z.string().min(1).optional(),
  })
  .refine((r) => r.url !== undefined || r.path !== undefined || r.name !== undefined, {
    message: 'repo needs one of url, path or name',
  });
export type RepoSource = z.infer<typeof RepoSource>;

/** One problem to solve: an issue against a repository, with optional tests. */
export const Task = z.object({
  instance_id: z.string().min(1),
  problem_statement: z.string(),
  repo: RepoSource.optional(),
  /** Container image holding the repository (SWE-bench images keep it in /testbed). */
  image: z.string().min(1).optional(),
  /** Shell command that runs the tests; its exit code decides when no test ids are given. */
  test_command: z.string().min(1).optional(),
  fail_to_pass: z.array(z.string()).default([]),
  pass_to_pass: z.array(z.string()).default([]),
  /** Unified diff adding the tests, applied before running them. */
  test_patch: z.string().optional(),
  meta: z.record(z.string(), z.unknown()).default({}),
});
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;

/** `django__django-11095` → `django/django` (SWE-bench instance ids encode the repository). */
export function repoNameOf(task: Pick<Task, 'instance_id' | 'repo'>): string {
  if (task.repo?.name) return task.repo.name;
  const match = /^(.+?)__(.+)-\d+$/.exec(task.instance_id);
  return match ? `${match[1]}/${match[2]}` : 'unknown';
}
