/**
 * The JSON of the Orchard Env REST API as `winnower sandbox serve` reads and writes it
 * (docs/design/01-orchard-env-api.md#3, #9): request schemas, with pydantic's 422 shape for
 * invalid bodies, and the sandbox and job objects the SDK reads.
 */
import { z } from 'zod';

/** DNS-1123 label, as Kubernetes requires of a pod name (Orchard does not check; we do). */
const SANDBOX_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A string the sandbox can be given: NUL ends a C string, so no path, command or cwd may hold one (400 naming the field). */
export const NUL_MESSAGE = 'must not contain a NUL byte';
const text = () => z.string().refine((value) => !value.includes('\0'), NUL_MESSAGE);

/**
 * Optional fields are `X | None = None` in Orchard's pydantic models: absent and `null` both mean
 * "not given" (the SDK always sends `timeout_seconds`, `cwd` and `env`, as null when unset).
 */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

export const CreateRequest = z.object({
  image: text().min(1),
  block_network: z.boolean().default(true),
  sandbox_id: optional(z.string().regex(SANDBOX_ID, 'a DNS-1123 label: lowercase letters, digits and -, at most 63')),
  cpu: optional(z.string().regex(/^\d+(\.\d+)?m?$/, 'cores ("4", "0.5") or millicores ("2000m")')),
  memory: optional(z.string().regex(/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/, 'a Kubernetes quantity ("16Gi", "512Mi")')),
  /** Seconds the sandbox may take to become ready; an integer, as pydantic v2 requires (absent or null: 3600). */
  timeout: optional(z.number().int().positive()).transform((value) => value ?? 3600),
});
export type CreateRequest = z.infer<typeof CreateRequest>;

export const ExecRequest = z.object({
  command: z.union([text(), z.array(text())]),
  /** Absent or null: 300 s, as Orchard. At most the sandbox's remaining lifetime (checked by the route). */
  timeout_seconds: optional(z.number().int().positive()).transform((value) => value ?? 300),
  cwd: optional(text()),
  env: optional(z.record(text(), text())),
  login_shell: z.boolean().default(false),
  wait: z.boolean().default(false),
});
export type ExecRequest = z.infer<typeof ExecRequest>;

export const WriteFileRequest = z.object({
  path: text().min(1),
  content: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
  mode: optional(z.string().regex(/^0?[0-7]{3,4}$/, 'octal, e.g. "0755"')),
});

export const ApplyPatchRequest = z.object({
  patch: z.string(),
  timeout_seconds: z.number().int().positive().default(30),
});

/** `?timeout=N` of the wait routes: whole or fractional seconds, bounded. */
export const WaitQuery = z.object({ timeout: z.coerce.number().nonnegative().max(86_400).optional() });

/** `POST /sandboxes/:id/fork` (an extension: docs/sandbox-serve.md#snapshots-and-forks-an-extension). */
export const ForkRequest = z.object({
  count: z.number().int().min(1).max(16).default(1),
  /** A snapshot taken with `POST /sandboxes/:id/snapshot`; without it one is taken now and released after. */
  snapshot_id: z.string().min(1).max(64).optional(),
});
export const PathQuery = z.object({ path: text().min(1).optional() });

export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/**
 * pydantic's 422 body: `{detail: [{type, loc, msg}]}`. "Field required" only for a field that is
 * absent; a field present as `null` where null is not accepted says so.
 */
export function validationDetail(error: z.ZodError, where: 'body' | 'query', input: unknown): { detail: ValidationItem[] } {
  return {
    detail: error.issues.map((issue) => {
      const path = issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part));
      const given = valueAt(input, path);
      const typeIssue = issue.code === 'invalid_type' || issue.code === 'invalid_union';
      const missing = typeIssue && given === undefined;
      const isNull = typeIssue && given === null;
      return {
        type: missing ? 'missing' : isNull ? 'null_not_allowed' : issue.code,
        loc: [where, ...path],
        msg: missing
          ? 'Field required'
          : isNull
            ? `null is not allowed: expected ${'expected' in issue ? String(issue.expected) : 'a string or a list of strings'}`
            : issue.message,
      };
    }),
  };
}

/** The field that names a NUL byte, as `body.path`, when that is what failed; undefined otherwise. */
export function nulField(error: z.ZodError, where: 'body' | 'query'): string | undefined {
  const issue = error.issues.find((candidate) => candidate.message === NUL_MESSAGE);
  return issue ? [where, ...issue.path.map(String)].join('.') : undefined;
}

function valueAt(input: unknown, path: (string | number)[]): unknown {
  let value = input;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

/** "4" → 4, "2000m" → 2 (cores). */
export function parseCpu(value: string): number {
  return value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value);
}

const MEMORY_UNITS: Record<string, number> = {
  '': 1 / (1024 * 1024),
  K: 1000 / 1024 / 1024,
  M: 1e6 / 1024 / 1024,
  G: 1e9 / 1024 / 1024,
  T: 1e12 / 1024 / 1024,
  Ki: 1 / 1024,
  Mi: 1,
  Gi: 1024,
  Ti: 1024 * 1024,
};

/** "16Gi" → 16384, "512Mi" → 512 (MiB, at least 1). */
export function parseMemoryMb(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$/.exec(value);
  return Math.max(1, Math.round(Number(match?.[1] ?? 0) * (MEMORY_UNITS[match?.[2] ?? ''] ?? 1)));
}

export type SandboxStatus = 'pending' | 'ready' | 'failed';

export interface SandboxView {
  sandbox_id: string;
  namespace: string;
  image: string;
  pod_name: string;
  block_network: boolean;
  cpu: string;
  memory: string;
  created_at: number;
  ready: boolean;
  status: SandboxStatus;
  status_message: string;
  /** Ours: what the sandbox runs on, the request's `image` or the server's `--repo` checkout (null until known). */
  source: 'image' | 'repo' | null;
}

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobView {
  job_id: string;
  sandbox_id: string;
  command: string;
  status: JobStatus;
  stdout: string;
  stderr: string;
  exit_code: number | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  error: string | null;
  /** Ours: output past the server's cap was dropped. */
  truncated: boolean;
}

/** The namespace every sandbox reports (there is no Kubernetes here). */
export const NAMESPACE = 'winnower';
