/** The one place where errors become HTTP responses: `{ error: { code, message, details } }`. */
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { WinnowerError } from '../errors.js';

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | WinnowerError | Error, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const first = error.validation[0];
      const field = [error.validationContext, ...(first?.instancePath ? first.instancePath.split('/').filter(Boolean) : [])].join('.');
      const message = `${field || 'body'}: ${first?.message ?? 'invalid'}`;
      return reply.status(400).send({
        error: { code: 'WNW_ERR_INPUT_INVALID', message, details: { field, issues: error.validation.map((issue) => ({ path: issue.instancePath, message: issue.message })) } },
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
