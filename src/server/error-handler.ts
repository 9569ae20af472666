/** The one place where errors become HTTP responses: `{ error: { code, message, details } }`. */
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { WinnowerError } from '../errors.js';

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
      if (error.status >= 500) request.log.error({ err: error }, error.message);
      return reply.status(error.status).send({ error: error.toJSON() });
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      // fastify's own client errors: body too large, bad JSON, unsupported media type.
      return reply.status(status).send({ error: { code: 'WNW_ERR_INPUT_INVALID', message: error.message, details: { fastify_code: (error as FastifyError).code } } });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ error: { code: 'WNW_ERR_OP_INTERNAL', message: 'internal error' } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: { code: 'WNW_ERR_INPUT_INVALID', message: `no route ${request.method} ${request.url}` } }),
  );
}
