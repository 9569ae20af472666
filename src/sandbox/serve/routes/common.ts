/** What the Orchard Env API's route groups share: the state they serve from, request parsing, and the answers they give alike. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { SecretCheck } from '../../../util/secret-compare.js';
import type { Sandbox } from '../../types.js';
import type { JobTable } from '../job-table.js';
import { NUL_MESSAGE, nulField, validationDetail } from '../orchard-shapes.js';
import type { SandboxEntry, SandboxTable } from '../sandbox-table.js';

/** The options every route group is registered with (plugin.ts). */
export interface RouteContext {
  table: SandboxTable;
  jobs: JobTable;
  /** How long an exec waits for a sandbox still starting before 404 "agent not ready". */
  agentWaitMs: number;
  /** Longest a file read may take before 504. */
  fileTimeoutMs: number;
  /** Largest request body, in bytes. */
  bodyLimit: number;
  /** The API key check (undefined: no key). */
  key: SecretCheck | undefined;
}

/** The longest a `/wait` holds a request open. */
export const MAX_WAIT_MS = 3_600_000;

export function sandboxNotFound(reply: FastifyReply, id: string): FastifyReply {
  return reply.code(404).send({ detail: `Sandbox ${id} not found` });
}

/**
 * The parsed value, or undefined after answering: 400 naming the field for a NUL byte (no sandbox
 * process could be given it), else 422 in pydantic's shape.
 */
export function parse<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query', reply: FastifyReply): T | undefined {
  const input = value ?? (where === 'body' ? undefined : {});
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const nul = nulField(parsed.error, where);
  if (nul) void reply.code(400).send({ detail: `${nul} ${NUL_MESSAGE}` });
  else void reply.code(422).send(validationDetail(parsed.error, where, input));
  return undefined;
}

/** False after answering 422 when `timeoutS` runs past the sandbox's TTL. */
export function withinLifetime(table: SandboxTable, entry: SandboxEntry, timeoutS: number, reply: FastifyReply): boolean {
  const remaining = Math.floor(table.remainingLifetimeS(entry));
  if (timeoutS <= remaining) return true;
  void reply.code(422).send({
    detail: [
      {
        type: 'less_than_equal',
        loc: ['body', 'timeout_seconds'],
        msg: `Input should be less than or equal to ${remaining}: the seconds left before the sandbox's TTL removes it`,
      },
    ],
  });
  return false;
}

/** The sandbox of `:id`, or undefined after answering 404 (no such sandbox) or 400 (not ready, or deleted). */
export function readySandbox(
  table: SandboxTable,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
): Sandbox | undefined {
  const entry = table.get(request.params.id);
  if (!entry) {
    void sandboxNotFound(reply, request.params.id);
    return undefined;
  }
  if (!entry.sandbox || entry.deleted) {
    void reply.code(400).send({ detail: `Sandbox ${entry.view.sandbox_id} is not ready` });
    return undefined;
  }
  return entry.sandbox;
}
