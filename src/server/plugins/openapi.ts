/**
 * How the API describes itself at GET /openapi.json: the zod request and response schemas of the
 * routes (jsonSchemaTransform), the API-key schemes, and the two answers that are not JSON
 * (the SSE stream, the Prometheus text).
 */
import type { SwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document as @fastify/swagger types it (any JSON)
type Document = Record<string, any>;

const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key> (the scheme in any case), one of server.api_keys' },
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'X-API-Key: <key>, one of server.api_keys' },
};

/** Answers that are a stream or plain text: their content type, and what they hold. */
const NON_JSON: Record<string, { type: string; description: string }> = {
  '/jobs/{id}/events': {
    type: 'text/event-stream',
    description:
      'Server-sent events (event: <type>, id: <seq>, data: <JSON>) from job-start to job-finish; with Last-Event-ID (decimal digits) the events after it, none for one past the last event, and 400 for anything but digits. Also after the job ended and after a restart: events are stored with the job',
  },
  '/metrics': { type: 'text/plain', description: 'Prometheus metrics' },
};

function describeNonJson(document: Document): Document {
  for (const [path, { type, description }] of Object.entries(NON_JSON)) {
    const get = document.paths?.[path]?.get;
    if (get) get.responses = { ...get.responses, 200: { description, content: { [type]: { schema: { type: 'string' } } } } };
  }
  return document;
}

/** The options of @fastify/swagger; the security requirement applies when the server has API keys. */
export function openapiOptions(options: { apiKeys: boolean }): SwaggerOptions {
  return {
    openapi: {
      info: { title: 'winnower', description: 'Best-of-N for software-engineering agents', version: '0.1.0' },
      components: { securitySchemes: SECURITY_SCHEMES } as never,
      ...(options.apiKeys ? { security: [{ bearer: [] }, { apiKey: [] }] } : {}),
    },
    transform: jsonSchemaTransform,
    transformObject: (input) =>
      describeNonJson(('openapiObject' in input ? input.openapiObject : input.swaggerObject) as Document) as never,
  };
}
