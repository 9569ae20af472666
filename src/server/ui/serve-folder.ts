/**
 * `winnower inspect --serve`: the written pages over HTTP on a local port, with the inspector's
 * headers (CSP included). Read-only, files under the folder only.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { INSPECTOR_HEADERS } from './content-security-policy.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

export function serveFolder(folder: string, options: { host: string; port: number }): Promise<{ server: Server; url: string }> {
  const root = resolve(folder);
  const server = createServer((request, response) => {
    let path: string;
    try {
      path = decodeURIComponent(new URL(request.url ?? '/', 'http://local').pathname);
    } catch {
      path = '';
    }
    const file = resolve(join(root, path.endsWith('/') ? `${path}index.html` : path));
    const inside = file === root || file.startsWith(root + sep);
    let size = -1;
    try {
      if (inside && (request.method === 'GET' || request.method === 'HEAD')) {
        const stat = statSync(file);
        if (stat.isFile()) size = stat.size;
      }
    } catch {
      size = -1;
    }
    if (size < 0 || !TYPES[extname(file)]) {
      response.writeHead(404, { ...INSPECTOR_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    response.writeHead(200, { ...INSPECTOR_HEADERS, 'content-type': TYPES[extname(file)]!, 'content-length': size });
    if (request.method === 'HEAD') response.end();
    else createReadStream(file).pipe(response);
  });
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, options.host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      done({ server, url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/` });
    });
  });
}
