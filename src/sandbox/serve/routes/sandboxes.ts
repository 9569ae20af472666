/**
 * A sandbox's life: `POST /sandboxes`, `GET /sandboxes/:id` and its `/wait`, `POST …/heartbeat`,
 * `DELETE /sandboxes/:id`; and, beyond Orchard's API, `POST …/snapshot`, `DELETE …/snapshots/:snapshot`
 * and `POST …/fork` (docs/sandbox-serve.md#snapshots-and-forks-an-extension).
 */
import type { FastifyPluginAsync } from 'fastify';
import { CreateRequest, ForkRequest, WaitQuery } from '../orchard-shapes.js';
import { MAX_WAIT_MS, parse, type RouteContext, sandboxNotFound } from './common.js';

export const sandboxRoutes: FastifyPluginAsync<RouteContext> = async (app, { table }) => {
  app.post('/sandboxes', async (request, reply) => {
    const body = parse(CreateRequest, request.body, 'body', reply);
    if (!body) return reply;
    // The SDK waits on `/wait?timeout=<timeout>` with the value answered here.
    return { ...table.create(body), timeout: body.timeout };
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id', async (request, reply) => {
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    return entry.view;
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id/wait', async (request, reply) => {
    const query = parse(WaitQuery, request.query, 'query', reply);
    if (!query) return reply;
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    const timeoutS = query.timeout ?? 300;
    if (!(await table.waitSettled(entry, Math.min(MAX_WAIT_MS, timeoutS * 1000)))) {
      return reply.code(408).send({ detail: `Sandbox ${entry.view.sandbox_id} not ready within ${timeoutS}s` });
    }
    return entry.view;
  });

  app.delete<{ Params: { id: string } }>('/sandboxes/:id', async (request, reply) => {
    const id = request.params.id;
    // The record is gone either way; a backing sandbox that fails to close is the server's problem, not the client's.
    const held = await table.delete(id).catch((error: unknown) => {
      request.log.error({ err: error, sandbox: id }, 'closing a deleted sandbox failed');
      return true;
    });
    // Orchard answers 200 for any id; we answer 404 for an id this server never had, and 200 again for one
    // it deleted or reaped (the SDK's `with` block and exit cleanup DELETE sandboxes the TTL may have taken).
    if (!held && !table.wasDeleted(id)) return sandboxNotFound(reply, id);
    return { status: 'deleted', sandbox_id: id };
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/snapshot', async (request, reply) => {
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    const snapshot = await table.snapshot(entry);
    return { snapshot_id: snapshot.id, sandbox_id: entry.view.sandbox_id, bytes: snapshot.bytes };
  });

  app.delete<{ Params: { id: string; snapshot: string } }>('/sandboxes/:id/snapshots/:snapshot', async (request, reply) => {
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    if (!(await table.releaseSnapshot(entry, request.params.snapshot)))
      return reply.code(404).send({ detail: `Snapshot ${request.params.snapshot} of sandbox ${entry.view.sandbox_id} not found` });
    return { status: 'released', snapshot_id: request.params.snapshot };
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/fork', async (request, reply) => {
    const body = parse(ForkRequest, request.body ?? {}, 'body', reply);
    if (!body) return reply;
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    const sandboxes = await table.fork(entry, body.count, body.snapshot_id);
    return { sandbox_ids: sandboxes.map((view) => view.sandbox_id), sandboxes };
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/heartbeat', async (request, reply) => {
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    table.heartbeat(entry);
    return { status: 'ok', sandbox_id: entry.view.sandbox_id };
  });
};
