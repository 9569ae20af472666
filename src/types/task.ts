import { z } from 'zod';

/** The longest git ref (commit, branch, tag, `HEAD~2`) a task may name; real ones are under 100 characters. */
export const MAX_GIT_REF_CHARS = 256;

/**
 * A git ref as a request gives it. It reaches git as one argument, so a NUL byte, a control
 * character or a very long one would fail only there, in every rollout (docs/api.md).
 */
export const GitRef = z
  .string()
  .min(1)
  .max(MAX_GIT_REF_CHARS, `a git ref has at most ${MAX_GIT_REF_CHARS} characters`)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'a git ref may not hold NUL, line breaks or other control characters');

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
    base_commit: GitRef.optional(),
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
