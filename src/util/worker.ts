/**
 * Starts a worker thread from a file next to the calling module, in source (`.ts`, under tsx or
 * vitest) and compiled (`.js`) form alike: the extension follows the caller's own. A `.ts` worker
 * starts from a two-line bootstrap that registers tsx (a dev dependency) and then imports the file:
 * on Node 20, `execArgv: ['--import', 'tsx']` runs tsx in the worker but its hooks do not reach
 * the worker's entry ("Unknown file extension .ts").
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `./onnx-worker` (or `./onnx-worker.js`) beside `importMetaUrl`, with the caller's extension. */
export function workerUrl(relativeName: string, importMetaUrl: string): URL {
  const extension = extname(fileURLToPath(importMetaUrl)) === '.ts' ? '.ts' : '.js';
  const base = relativeName.replace(/\.(js|ts|mjs|mts)$/, '');
  return new URL(`${base}${extension}`, importMetaUrl);
}

let tsxApi: string | undefined;

/** file URL of tsx's ESM API (`tsx/esm/api`, import condition), found through its package.json. */
function tsxApiUrl(importMetaUrl: string): string {
  if (tsxApi) return tsxApi;
  const manifestPath = createRequire(importMetaUrl).resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  tsxApi = pathToFileURL(join(dirname(manifestPath), manifest.exports['./esm/api']!.import.default)).href;
  return tsxApi;
}

/**
 * `startWorker('./onnx-worker', import.meta.url, data)`: a Worker running the sibling file with
 * `workerData = data`. Extra `options` (resourceLimits, env, execArgv, ...) pass through.
 */
export function startWorker(
  relativeName: string,
  importMetaUrl: string,
  workerData: unknown,
  options: Omit<WorkerOptions, 'workerData' | 'eval'> = {},
): Worker {
  const url = workerUrl(relativeName, importMetaUrl);
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { ...options, workerData });
  const api = JSON.stringify(tsxApiUrl(importMetaUrl));
  const bootstrap = `import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, workerData, eval: true });
}
