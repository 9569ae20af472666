#!/usr/bin/env node
// Bundles the compiled CLI (dist/src/cli/main.js) and the ONNX worker into dist/cli/ with esbuild,
// as part of `npm run build`. Node loads ~950 files for `winnower solve` from dist/ and
// node_modules, and opening and compiling them one by one is most of its start (1.1 s of CPU,
// 0.55 s bundled: a CLI test suite starts it hundreds of times). Commands are split into chunks that
// load when run, so `--version` reads little. Native and self-locating packages stay external.
// What the bundle reads beside itself (import.meta.url) is copied next to it: the serialization
// templates and the local sandbox's exec agent.
import { build } from 'esbuild';
import { cpSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'src');
const out = join(root, 'dist', 'cli');
rmSync(out, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { main: join(compiled, 'cli', 'main.js'), 'onnx-worker': join(compiled, 'scoring', 'onnx', 'onnx-worker.js') },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: ['node20'],
  // One folder: a chunk's import.meta.url finds the templates, the exec agent and the worker beside it.
  chunkNames: '[name]-[hash]',
  // Native addons, and packages that find their own files (pino's transports run by path).
  external: ['onnxruntime-node', 'better-sqlite3', 'tokenizers', 'pg-native', 'pino', 'thread-stream', 'pino-pretty'],
  // CommonJS packages inside an ES module still call require for Node's built-ins.
  banner: { js: "import { createRequire as __winnowerRequire } from 'node:module'; const require = __winnowerRequire(import.meta.url);" },
  logLevel: 'warning',
});
cpSync(join(compiled, 'serialize', 'templates'), join(out, 'templates'), { recursive: true });
cpSync(join(compiled, 'sandbox', 'providers', 'local', 'exec-agent.py'), join(out, 'exec-agent.py'));
console.log('bundle-cli: dist/cli/main.js');
