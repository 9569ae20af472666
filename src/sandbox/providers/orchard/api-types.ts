/**
 * Minimal zod schemas of the Orchard Env answers winnower reads (see
 * docs/design/01-orchard-env-api.md#3). Unknown fields are dropped; only what the client uses is
 * required, so a newer server with extra fields still parses.
 */
import { z } from 'zod';

/** `{"detail": ...}` for handled errors; `{"error","detail","request_id"}` for unhandled ones (500). */
export const OrchardErrorBody = z.object({
  detail: z.unknown().optional(),
  error: z.string().optional(),
  request_id: z.string().optional(),
});
export type OrchardErrorBody = z.infer<typeof OrchardErrorBody>;

/** POST /sandboxes: answered at once, before the pod is ready. */
export const OrchardCreateResponse = z.object({
  sandbox_id: z.string().min(1),
  status: z.string(),
  namespace: z.string().optional(),
  image: z.string().optional(),
});
export type OrchardCreateResponse = z.infer<typeof OrchardCreateResponse>;

/** GET /sandboxes/{id} and GET /sandboxes/{id}/wait. */
export const OrchardSandboxInfo = z.object({
  sandbox_id: z.string().min(1),
  status: z.string(),
  ready: z.boolean().optional(),
  status_message: z.string().nullish(),
  pod_name: z.string().nullish(),
});
export type OrchardSandboxInfo = z.infer<typeof OrchardSandboxInfo>;

/**
 * A job from GET /jobs/{id}, /jobs/{id}/wait or POST exec with `wait:true`. A `wait:true` that
 * times out on the server answers only `{job_id, status}`, hence the defaults.
 */
export const OrchardJob = z.object({
  job_id: z.string().min(1),
  status: z.string(),
  stdout: z
    .string()
    .nullish()
    .transform((value) => value ?? ''),
  stderr: z
    .string()
    .nullish()
    .transform((value) => value ?? ''),
  exit_code: z
    .number()
    .int()
    .nullish()
    .transform((value) => value ?? null),
  error: z
    .string()
    .nullish()
    .transform((value) => value ?? null),
});
export type OrchardJob = z.infer<typeof OrchardJob>;

/** GET /sandboxes/{id}/files?path=P */
export const OrchardFileContent = z.object({
  path: z.string(),
  content: z.string(),
  size: z.number().optional(),
});

/** POST /sandboxes/{id}/files */
export const OrchardWriteResult = z.object({
  success: z.boolean(),
  path: z.string().optional(),
  size: z.number().optional(),
});

/** GET /sandboxes/{id}/files/list?path=P */
export const OrchardFileList = z.object({
  path: z.string().optional(),
  files: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      size: z.number(),
      modified: z.string().optional(),
    }),
  ),
});

/** DELETE /sandboxes/{id}, POST /sandboxes/{id}/heartbeat, GET /health */
export const OrchardStatusReply = z.object({ status: z.string() });
