/** The one place where errors become HTTP responses: `{ error: { code, message, details } }`. */
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { WinnowerError } from '../../errors.js';
import { checkDepth, decodeUtf8 } from '../guards/body-check.js';

interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: { keys?: unknown };
}

/** `body.verify.timeout_s`; for an unknown key the key itself (`body.verfy`), so a typo is named. */
function fieldOf(context: string | undefined, issue: ValidationIssue | undefined): string {
  const path = issue?.instancePath ? issue.instancePath.split('/').filter(Boolean) : [];
  const keys = issue?.keyword === 'unrecognized_keys' && Array.isArray(issue.params?.keys) ? issue.params.keys : [];
  return [context ?? 'body', ...path, ...(keys.length ? [String(keys[0])] : [])].join('.');
}

function messageOf(field: string, issue: ValidationIssue | undefined): string {
  if (issue?.keyword === 'unrecognized_keys') {
    const keys = Array.isArray(issue.params?.keys) ? issue.params.keys.map(String) : [];
    return `${field}: unknown field${keys.length > 1 ? `s ${keys.join(', ')}` : ''} (check the spelling; unknown fields are refused, not ignored)`;
  }
  return `${field}: ${issue?.message ?? 'invalid'}`;
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | WinnowerError | Error, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const first = error.validation[0] as ValidationIssue | undefined;
      const field = fieldOf(error.validationContext, first);
      return reply.status(400).send({
        error: {
          code: 'WNW_ERR_INPUT_INVALID',
          message: messageOf(field, first),
          details: { field, issues: error.validation.map((issue) => ({ path: issue.instancePath, message: issue.message })) },
        },
      });
    }
    if (WinnowerError.isInstance(error)) {
      if (error.status >= 500 && error.code !== 'WNW_ERR_LIMIT_QUEUE') request.log.error({ err: error }, error.message);
      // A refusal that ends by itself (rate limit, full queue) says when to come back.
      const retryAfter = error.details.retry_after_s;
      if (typeof retryAfter === 'number') reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
      return reply.status(error.status).send({ error: error.toJSON() });
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      // fastify's own client errors: body too large, bad JSON, unsupported media type; each names
      // what to fix, as every other 400 does (docs/api.md).
      const fastifyCode = (error as FastifyError).code;
      const field =
        fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'content-type' : fastifyCode?.startsWith('FST_ERR_CTP_') ? 'body' : undefined;
      return reply.status(status).send({
        error: {
          code: 'WNW_ERR_INPUT_INVALID',
          message: error.message,
          details: { ...(field ? { field } : {}), fastify_code: fastifyCode },
        },
      });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ error: { code: 'WNW_ERR_OP_INTERNAL', message: 'internal error' } });
  });
  const allowed = routeMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    // The path only, and not all of it: an error never echoes a long URL or its query back.
    const shown = path.length > 100 ? `${path.slice(0, 100)}…` : path;
    const methods = allowed(path);
    if (methods.length > 0) {
      return reply
        .status(405)
        .header('allow', methods.join(', '))
        .send({
          error: {
            code: 'WNW_ERR_INPUT_INVALID',
            message: `${request.method} is not allowed on ${shown}; use ${methods.join(', ')}`,
            details: { allow: methods },
          },
        });
    }
    return reply.status(404).send({ error: { code: 'WNW_ERR_INPUT_INVALID', message: `no route ${request.method} ${shown}` } });
  });
  acceptEmptyJson(app);
}

/** Collects every route as it is added; returns the methods the routes matching a path accept. */
function routeMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    routes.push({ pattern: new RegExp(`^${source}$`), methods: ([] as string[]).concat(route.method) });
  });
  return (path) => [...new Set(routes.filter((route) => route.pattern.test(path)).flatMap((route) => route.methods))].sort();
}

/**
 * JSON bodies as fastify parses them (prototype poisoning refused), except that an empty one is no
 * body: a `DELETE` sent with `content-type: application/json` and nothing else is a cancel, not a 400.
 * Bytes that are not UTF-8 and nesting past MAX_BODY_DEPTH are refused too (src/server/guards/body-check.ts).
 */
function acceptEmptyJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    let body: string;
    try {
      body = typeof raw === 'string' ? raw : decodeUtf8(raw);
    } catch (error) {
      return done(error as Error, undefined);
    }
    if (body === '') return done(null, undefined);
    return parse(request, body, (error, value) => {
      if (error) return done(error, undefined);
      try {
        checkDepth(value);
      } catch (depthError) {
        return done(depthError as Error, undefined);
      }
      return done(null, value);
    });
  });
}
