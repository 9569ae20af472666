/**
 * `POST /admin/model`: load a model folder (or re-read the one serving) and swap it in without a
 * restart, as SIGHUP does (one code path: the runtime's reloadable value model). The folder is loaded
 * and checked in full first (model.onnx with its signature, tokenizer.json, config.json,
 * selector.json); a folder that fails leaves the current model serving and answers 422. Jobs and
 * requests already running finish on the model they started with (they pin it).
 */
import { isAbsolute } from 'node:path';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import { isReloadable } from '../../scoring/reloadable.js';
import { adminAccess } from '../guards/admin-access.js';
import { reloadModel } from '../model-reload.js';
import { ErrorBody, errorResponses, ModelLoaded } from '../api-schemas.js';

const ModelBody = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'The model folder to load, an absolute path on the server (onnx backend); absent: re-read the folder serving now (at first the configured one)',
      ),
  })
  .nullish();

export const adminRoutes: FastifyPluginAsyncZod<{ adminKeys: string[] }> = async (app, options) => {
  const checkAccess = adminAccess(options.adminKeys);
  app.post(
    '/admin/model',
    {
      // Before the body is validated: a client that may not call this learns nothing else.
      onRequest: async (request) => checkAccess(request),
      // Fastify validates a missing body as null, so a JSON `null` is told apart here, before validation: only no body or an object swaps the model.
      preValidation: async (request) => {
        if (request.body === null)
          throw wnwError('WNW_ERR_INPUT_INVALID', 'body: null is not a request; send {"path": ...}, {} or no body', {
            details: { field: 'body' },
          });
      },
      schema: {
        body: ModelBody,
        response: {
          200: ModelLoaded,
          ...errorResponses(415, 401, 429, 500),
          400: ErrorBody.describe(
            'invalid body (error.details.field: body.path not absolute, or given for a server backend); or no reloadable value model on this server (WNW_ERR_SCORE_BACKEND)',
          ),
          403: ErrorBody.describe(
            "not an admin key (server.admin_keys), or, on a server without admin keys, a client not on the server's host (WNW_ERR_AUTH_ADMIN)",
          ),
          422: ErrorBody.describe(
            'the folder was not loaded: error.details.cause says why; the current model keeps serving (WNW_ERR_SCORE_RELOAD)',
          ),
        },
      },
    },
    async (request) => {
      const served = app.winnower.valueModel;
      if (!isReloadable(served))
        throw wnwError('WNW_ERR_SCORE_BACKEND', 'this server has no reloadable value model', { details: { field: 'scorer' } });
      const path = request.body?.path;
      if (path !== undefined) {
        if (!isAbsolute(path))
          throw wnwError('WNW_ERR_INPUT_INVALID', 'body.path: give the model folder as an absolute path on the server', {
            details: { field: 'body.path' },
          });
        const { backend } = served.current.scorer;
        if (backend !== 'onnx') {
          throw wnwError(
            'WNW_ERR_INPUT_INVALID',
            `body.path: the ${backend} backend scores with the model its server serves; send no path to re-read the configured selector and tokenizer`,
            { details: { field: 'body.path' } },
          );
        }
      }
      return reloadModel(app, served, { ...(path === undefined ? {} : { path }), via: 'POST /admin/model' });
    },
  );
};
