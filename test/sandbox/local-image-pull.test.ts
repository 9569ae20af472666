/**
 * Pulling images for the local provider from registries that misbehave, through the real skopeo:
 * refused connections, a registry that accepts and never answers (deadline, cancellation, no
 * skopeo left behind), and credentials from an auth file (setting or REGISTRY_AUTH_FILE). The fake
 * registries speak HTTP as the distribution API does (401 with a Basic challenge, 404
 * MANIFEST_UNKNOWN); no bubblewrap is needed.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ImageCache } from '../../src/sandbox/providers/local/images/image-cache.js';
import { parseImageReference } from '../../src/sandbox/image-reference.js';
import { findImageTools } from '../../src/sandbox/providers/local/images/image-tools.js';
import { expectCode } from '../support/expect-code.js';
import { eventually, hostCommandLines, tempDir } from './local-helpers.js';
import { imageToolsMissing } from './local-image-helpers.js';

function listen(server: Server | TcpServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

describe.skipIf(imageToolsMissing)(
  `[images] pulling images from registries${imageToolsMissing ? ` (skipped: ${imageToolsMissing})` : ''}`,
  () => {
    let scratch: { dir: string; remove(): void };
    beforeAll(() => {
      scratch = tempDir('wnw-image-pull-');
    });
    const caches: ImageCache[] = [];
    const open = async (settings: { pullTimeoutMs?: number; registryTimeoutMs?: number; authFile?: string } = {}): Promise<ImageCache> => {
      const cache = await ImageCache.open({
        cacheDir: join(scratch.dir, 'cache'),
        tools: await findImageTools(),
        owner: undefined,
        ...settings,
      });
      caches.push(cache);
      return cache;
    };
    afterAll(async () => {
      for (const cache of caches) await cache.close();
      scratch?.remove();
    });

    it('names a registry that refuses connections as WNW_ERR_SBX_REGISTRY, without waiting for the deadline', async () => {
      const closed = createTcpServer();
      const port = await listen(closed);
      await new Promise((resolve) => closed.close(resolve));
      const cache = await open({ pullTimeoutMs: 120_000 });
      const error = await expectCode(cache.get(parseImageReference(`127.0.0.1:${port}/winnower/nothing:1`)), 'WNW_ERR_SBX_REGISTRY');
      expect(error.status).toBe(502);
      expect(error.message).toMatch(/unreachable.*connection refused/s);
    });

    describe('a registry that accepts connections and never answers', () => {
      let tarpit: TcpServer;
      let port: number;
      const sockets = new Set<Socket>();
      beforeAll(async () => {
        tarpit = createTcpServer((socket) => {
          sockets.add(socket);
          socket.on('error', () => undefined);
        });
        port = await listen(tarpit);
      });
      afterAll(async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => tarpit.close(resolve));
      });
      const skopeoLeft = () =>
        hostCommandLines().filter((process) => process.cmdline.includes('skopeo') && process.cmdline.includes(`127.0.0.1:${port}/`));
      afterEach(async () => {
        expect(await eventually(skopeoLeft, (left) => left.length === 0, 10_000)).toEqual([]);
      });

      it('gives up at the pull deadline with WNW_ERR_SBX_TIMEOUT naming the setting, and kills skopeo', async () => {
        const cache = await open({ pullTimeoutMs: 1500 });
        const error = await expectCode(cache.get(parseImageReference(`127.0.0.1:${port}/winnower/slow:1`)), 'WNW_ERR_SBX_TIMEOUT');
        expect(error.message).toContain('sandbox.settings.pullTimeoutMs');
      });

      it('names a registry that does not answer within registryTimeoutMs as WNW_ERR_SBX_REGISTRY, long before the pull deadline', async () => {
        const cache = await open({ pullTimeoutMs: 600_000, registryTimeoutMs: 1000 });
        const error = await expectCode(cache.get(parseImageReference(`127.0.0.1:${port}/winnower/slow:3`)), 'WNW_ERR_SBX_REGISTRY');
        expect(error.details.reason).toBe('timeout');
        expect(error.message).toContain('sandbox.settings.registryTimeoutMs');
      });

      it('stops the pull when its caller aborts, with WNW_ERR_OP_ABORTED', async () => {
        const cache = await open({ pullTimeoutMs: 600_000 });
        const controller = new AbortController();
        const pull = cache.get(parseImageReference(`127.0.0.1:${port}/winnower/slow:2`), controller.signal);
        expect(await eventually(skopeoLeft, (left) => left.length > 0, 20_000)).not.toEqual([]);
        controller.abort();
        await expectCode(pull, 'WNW_ERR_OP_ABORTED');
      });
    });

    describe('a registry that wants credentials', () => {
      let registry: Server;
      let port: number;
      const seen: Array<string | undefined> = [];
      const good = `Basic ${Buffer.from('winnower:s3cret').toString('base64')}`;
      beforeAll(async () => {
        registry = createHttpServer((request: IncomingMessage, response) => {
          seen.push(request.headers.authorization);
          if (request.headers.authorization !== good) {
            response.writeHead(401, {
              'www-authenticate': 'Basic realm="winnower-test"',
              'content-type': 'application/json',
              'docker-distribution-api-version': 'registry/2.0',
            });
            response.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
            return;
          }
          if (request.url === '/v2/') {
            response.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' });
            response.end('{}');
            return;
          }
          response.writeHead(404, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' });
          response.end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] }));
        });
        port = await listen(registry);
      });
      afterAll(() => new Promise((resolve) => registry.close(resolve)));

      const authFile = (): string => {
        const path = join(scratch.dir, 'auth.json');
        writeFileSync(
          path,
          JSON.stringify({ auths: { [`127.0.0.1:${port}`]: { auth: Buffer.from('winnower:s3cret').toString('base64') } } }),
        );
        return path;
      };

      it('says access was refused when no credentials are given', async () => {
        const error = await expectCode((await open()).get(parseImageReference(`127.0.0.1:${port}/private/repo:1`)), 'WNW_ERR_SBX_IMAGE');
        expect(error.details.reason).toBe('access denied');
        expect(error.message).toContain('REGISTRY_AUTH_FILE');
      });

      it('sends the credentials of sandbox.settings.registryAuthFile, then reports the missing tag', async () => {
        seen.length = 0;
        const error = await expectCode(
          (await open({ authFile: authFile() })).get(parseImageReference(`127.0.0.1:${port}/private/repo:2`)),
          'WNW_ERR_SBX_IMAGE',
        );
        expect(seen).toContain(good);
        expect(error.details.reason).toBe('not found');
      });

      it('takes REGISTRY_AUTH_FILE from the environment', async () => {
        seen.length = 0;
        const saved = process.env.REGISTRY_AUTH_FILE;
        process.env.REGISTRY_AUTH_FILE = authFile();
        try {
          await expectCode((await open()).get(parseImageReference(`docker://127.0.0.1:${port}/private/repo:3`)), 'WNW_ERR_SBX_IMAGE');
        } finally {
          if (saved === undefined) delete process.env.REGISTRY_AUTH_FILE;
          else process.env.REGISTRY_AUTH_FILE = saved;
        }
        expect(seen).toContain(good);
      });
    });
  },
);
