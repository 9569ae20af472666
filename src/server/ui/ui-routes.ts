/**
 * The web inspector on `winnower serve` (server.ui, on by default): `/ui` the jobs list,
 * `/ui/jobs/:id` a job, `/ui/jobs/:id/candidates/:index` a candidate, `/ui/assets/*` the bundle.
 * Every page is the same data-free shell; the client reads the API with the user's key in a header.
 * So the shell and the bundle are open routes (src/server/plugins/auth.ts), and the API stays behind the keys.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { z } from 'zod';
import { INSPECTOR_HEADERS } from './content-security-policy.js';
import { renderPageShell } from './page-shell.js';
import { readUiAsset, UI_ASSETS, type UiAssetName } from './ui-assets.js';

export interface InspectorRoutesOptions {
  /** The server has API keys: the page asks for one before it loads anything. */
  keyRequired: boolean;
}

const routeOptions = { config: { open: true }, schema: { hide: true } } as const;

export const inspectorRoutes: FastifyPluginAsync<InspectorRoutesOptions> = async (app, options) => {
  const shell = renderPageShell({ assetBase: '/ui/assets/', mode: 'live', keyRequired: options.keyRequired });
  const page = async (_request: unknown, reply: FastifyReply) =>
    reply.headers(INSPECTOR_HEADERS).type('text/html; charset=utf-8').send(shell);
  app.get('/ui', routeOptions, page);
  app.get('/ui/', routeOptions, page);
  app.get('/ui/jobs/:id', { ...routeOptions, schema: { ...routeOptions.schema, params: z.object({ id: z.string().min(1) }) } }, page);
  app.get(
    '/ui/jobs/:id/candidates/:index',
    {
      ...routeOptions,
      schema: { ...routeOptions.schema, params: z.object({ id: z.string().min(1), index: z.coerce.number().int().min(0) }) },
    },
    page,
  );
  for (const name of Object.keys(UI_ASSETS) as UiAssetName[]) {
    app.get(`/ui/assets/${name}`, routeOptions, async (_request, reply) =>
      reply.headers(INSPECTOR_HEADERS).type(UI_ASSETS[name]).send(readUiAsset(name)),
    );
  }
};
