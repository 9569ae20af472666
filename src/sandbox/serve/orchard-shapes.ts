/**
 * The JSON of the Orchard Env REST API as `winnower sandbox serve` reads and writes it
 * (shared/design/orchard-real-behaviour.md §19.3): request schemas, with pydantic's 422 shape for
 * invalid bodies, and the sandbox and job objects the SDK reads.
 */
import { z } from 'zod';

/** DNS-1123 label, as Kubernetes requires of a pod name (Orchard does not check; we do). */
const SANDBOX_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const CreateRequest = z.object({
  image: z.string().min(1),
  block_network: z.boolean().default(true),
  sandbox_id: z.string().regex(SANDBOX_ID, 'a DNS-1123 label: lowercase letters, digits and -, at most 63').optional(),
  cpu: z.string().regex(/^\d+(\.\d+)?m?$/, 'cores ("4", "0.5") or millicores ("2000m")').optional(),
  memory: z.string().regex(/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/, 'a Kubernetes quantity ("16Gi", "512Mi")').optional(),
  /** Seconds the sandbox may take to become ready; an integer, as pydantic v2 requires. */
  timeout: z.number().int().positive().default(3600),
});
export type CreateRequest = z.infer<typeof CreateRequest>;

export const ExecRequest = z.object({
  command: z.union([z.string(), z.array(z.string())]),
  timeout_seconds: z.number().int().positive().default(300),
  cwd: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  login_shell: z.boolean().default(false),
  wait: z.boolean().default(false),
});
export type ExecRequest = z.infer<typeof ExecRequest>;

export const WriteFileRequest = z.object({
  path: z.string().min(1),
  content: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
  mode: z.string().regex(/^0?[0-7]{3,4}$/, 'octal, e.g. "0755"').optional(),
});

export const ApplyPatchRequest = z.object({
  patch: z.string(),
  timeout_seconds: z.number().int().positive().default(30),
});

/** `?timeout=N` of the wait routes: whole or fractional seconds, bounded. */
export const WaitQuery = z.object({ timeout: z.coerce.number().nonnegative().max(86_400).optional() });
export const PathQuery = z.object({ path: z.string().min(1).optional() });

/** pydantic's 422 body: `{detail: [{type, loc, msg, input}]}`. */
export function validationDetail(error: z.ZodError, where: 'body' | 'query'): { detail: { type: string; loc: (string | number)[]; msg: string }[] } {
  return {
    detail: error.issues.map((issue) => ({
      type: issue.code === 'invalid_type' && issue.input === undefined ? 'missing' : issue.code,
      loc: [where, ...issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part))],
      msg: issue.input === undefined && issue.code === 'invalid_type' ? 'Field required' : issue.message,
    })),
  };
}

/** "4" → 4, "2000m" → 2 (cores). */
export function parseCpu(value: string): number {
  return value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value);
}

const MEMORY_UNITS: Record<string, number> = { '': 1 / (1024 * 1024), K: 1000 / 1024 / 1024, M: 1e6 / 1024 / 1024, G: 1e9 / 1024 / 1024, T: 1e12 / 1024 / 1024, Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024 };

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
