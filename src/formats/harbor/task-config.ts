/**
 * Harbor's `task.toml`, schema versions 1.0 to 1.4, as winnower reads it (docs/harbor.md#tasktoml).
 * Keys winnower uses are typed; keys Harbor reads but that would change a run winnower cannot make
 * the same way (steps, a separate verifier image, Windows, host allowlists, GPUs, MCP servers,
 * users, health checks, collect commands) are refused, naming the key; keys that only describe the
 * task (metadata, authors, artifacts, the solution's env) are kept or ignored, as Harbor ignores
 * unknown keys.
 */
import { z } from 'zod';

/** The task schema versions winnower reads; a newer one is refused so that its new keys are not silently dropped. */
export const HARBOR_SCHEMA_VERSIONS = ['1.0', '1.1', '1.2', '1.3', '1.4'] as const;

const Seconds = z.number().positive().max(86_400);
const EnvTable = z.record(z.string(), z.string());

/** What a task may set per phase; `user` and per-phase networks are refused in read-task.ts. */
const PhaseTable = z.looseObject({
  timeout_sec: Seconds.optional(),
  env: EnvTable.optional(),
});

const EnvironmentTable = z.looseObject({
  docker_image: z.string().min(1).optional(),
  workdir: z.string().regex(/^\//, 'must be an absolute path').optional(),
  os: z.string().optional(),
  cpus: z.number().positive().max(256).optional(),
  memory_mb: z.number().int().positive().optional(),
  /** Legacy `memory = "2G"`, converted to MiB as Harbor converts it. */
  memory: z
    .string()
    .regex(/^\d+(\.\d+)?\s*[KMGT]i?B?$/i, 'a size with its unit, such as "2G" or "512M"')
    .optional(),
  network_mode: z.enum(['public', 'no-network', 'allowlist']).optional(),
  allow_internet: z.boolean().optional(),
  env: EnvTable.optional(),
  gpus: z.number().int().nonnegative().optional(),
});

export const HarborTaskConfig = z.looseObject({
  schema_version: z.string().optional(),
  /** Schema 1.0's root key, renamed to `schema_version` when that is absent (as Harbor does). */
  version: z.string().optional(),
  task: z
    .looseObject({
      name: z.string().min(1).optional(),
      version: z.string().optional(),
      description: z.string().optional(),
    })
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  verifier: PhaseTable.optional(),
  agent: PhaseTable.optional(),
  environment: EnvironmentTable.optional(),
});
export type HarborTaskConfig = z.infer<typeof HarborTaskConfig>;

/** `"2G"` → 2048, `"512M"` → 512 (MiB), for a string the schema's `memory` pattern accepted. */
export function memoryToMb(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT])/i.exec(text.trim())!;
  const value = Number(match[1]);
  const unit = match[2]!.toUpperCase();
  const mib = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 }[unit]!;
  return Math.max(1, Math.round(value * mib));
}
