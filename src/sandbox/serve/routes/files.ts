/**
 * Files in a sandbox: `POST /sandboxes/:id/files` (base64 upload, optional mode), `GET …/files`
 * (read) and `GET …/files/list` (Orchard's listing). Reads are bounded in bytes by the provider's
 * transfer cap and in time here; reads and listings stop when the client leaves.
 */
import { posix } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { WinnowerError } from '../../../errors.js';
import { shellQuote } from '../../base-sandbox.js';
import type { Sandbox } from '../../types.js';
import { PathQuery, WriteFileRequest } from '../orchard-shapes.js';
import { parse, type RouteContext, readySandbox } from './common.js';

export const fileRoutes: FastifyPluginAsync<RouteContext> = async (app, { table, bodyLimit, fileTimeoutMs }) => {
  app.post<{ Params: { id: string } }>('/sandboxes/:id/files', { bodyLimit }, async (request, reply) => {
    const body = parse(WriteFileRequest, request.body, 'body', reply);
    if (!body) return reply;
    const sandbox = readySandbox(table, request, reply);
    if (!sandbox) return reply;
    const content = Buffer.from(body.content, 'base64');
    await sandbox.writeFile(body.path, content);
    if (body.mode) await checked(sandbox, `chmod ${body.mode} -- ${shellQuote(body.path)}`);
    return { success: true, path: body.path, size: content.length };
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id/files', async (request, reply) => {
    const query = parse(PathQuery, request.query, 'query', reply);
    if (!query) return reply;
    const sandbox = readySandbox(table, request, reply);
    if (!sandbox) return reply;
    if (!query.path) return reply.code(422).send({ detail: [{ type: 'missing', loc: ['query', 'path'], msg: 'Field required' }] });
    // Bounded in bytes by the provider's transfer cap, in time here, and dropped with the client.
    const tooSlow = AbortSignal.timeout(fileTimeoutMs);
    try {
      const content = Buffer.from(await sandbox.readFile(query.path, { signal: AbortSignal.any([tooSlow, clientGone(reply)]) }));
      return { path: query.path, content: content.toString('base64'), size: content.length };
    } catch (error) {
      if (tooSlow.aborted)
        return reply.code(504).send({ detail: `Reading ${query.path} took longer than ${fileTimeoutMs / 1000}s; the read was stopped` });
      if (WinnowerError.isInstance(error) && typeof error.details.limit_bytes === 'number') {
        return reply
          .code(413)
          .send({ detail: `File ${query.path} is larger than this server's read limit (${error.details.limit_bytes} bytes)` });
      }
      if (!WinnowerError.isInstance(error) || error.code !== 'WNW_ERR_SBX_FILE') throw error;
      const kind = await pathKind(sandbox, query.path);
      if (kind === 'missing') return reply.code(404).send({ detail: `File not found: ${query.path}` });
      if (kind === 'directory') return reply.code(400).send({ detail: `Not a file: ${query.path}` });
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id/files/list', async (request, reply) => {
    const query = parse(PathQuery, request.query, 'query', reply);
    if (!query) return reply;
    const sandbox = readySandbox(table, request, reply);
    if (!sandbox) return reply;
    const path = query.path ?? sandbox.workdir;
    const listed = await listDirectory(sandbox, path, clientGone(reply));
    if (listed === 'missing') return reply.code(404).send({ detail: `Path not found: ${path}` });
    if (listed === 'not-a-directory') return reply.code(400).send({ detail: `Not a directory: ${path}` });
    return { path, files: listed };
  });
};

/** Aborts when the client leaves before the answer is sent. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

async function checked(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec(command, { cwd: '/', timeoutMs: 60_000 });
  if (result.exitCode !== 0) throw new Error(`${command}: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
  return result.stdout;
}

async function pathKind(sandbox: Sandbox, path: string): Promise<'missing' | 'directory' | 'other'> {
  const out = await checked(
    sandbox,
    `if [ -d ${shellQuote(path)} ]; then echo directory; elif [ -e ${shellQuote(path)} ]; then echo other; else echo missing; fi`,
  );
  const kind = out.trim();
  return kind === 'directory' || kind === 'missing' ? kind : 'other';
}

/** Orchard's listing: names sorted, `file` or `directory` (links followed), size, local mtime without zone. */
async function listDirectory(
  sandbox: Sandbox,
  path: string,
  signal: AbortSignal,
): Promise<'missing' | 'not-a-directory' | { name: string; type: 'file' | 'directory'; size: number; modified: string }[]> {
  const dir = shellQuote(path);
  const script = `[ -e ${dir} ] || exit 3; [ -d ${dir} ] || exit 4; find -L ${dir} -mindepth 1 -maxdepth 1 -printf '%f\\0%y\\0%s\\0%TY-%Tm-%TdT%TH:%TM:%TS\\0' 2>/dev/null | base64 -w0`;
  const result = await sandbox.exec(script, { cwd: '/', timeoutMs: 60_000, maxOutputBytes: 64 * 1024 * 1024, signal });
  if (result.exitCode === 3) return 'missing';
  if (result.exitCode === 4) return 'not-a-directory';
  if (result.exitCode !== 0) throw new Error(`listing ${path} failed: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
  const fields = Buffer.from(result.stdout, 'base64').toString('utf8').split('\0');
  const files = [];
  for (let index = 0; index + 3 < fields.length; index += 4) {
    files.push({
      name: fields[index] ?? '',
      type: fields[index + 1] === 'd' ? ('directory' as const) : ('file' as const),
      size: Number(fields[index + 2]),
      modified: (fields[index + 3] ?? '').slice(0, 19),
    });
  }
  return files.sort((a, b) => (posix.join(path, a.name) < posix.join(path, b.name) ? -1 : 1));
}
