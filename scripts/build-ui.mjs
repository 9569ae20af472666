#!/usr/bin/env node
// Builds the web inspector's client bundle (src/server/ui/browser → dist/ui/inspector.js and
// inspector.css, diff2html and highlight.js inside) with esbuild, as part of `npm run build` (so
// `npm ci` makes it). Nothing is fetched at run time: `winnower serve` and `winnower inspect` serve
// these two files.
import { build } from 'esbuild';
import { statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src', 'server', 'ui', 'browser');
const out = join(root, 'dist', 'ui');
const common = { bundle: true, minify: true, legalComments: 'linked', logLevel: 'warning', absWorkingDir: root };
await build({
  ...common,
  entryPoints: [join(source, 'main.ts')],
  outfile: join(out, 'inspector.js'),
  format: 'iife',
  target: ['es2022'],
  platform: 'browser',
  tsconfig: join(root, 'tsconfig.ui.json'),
});
await build({ ...common, entryPoints: [join(source, 'inspector.css')], outfile: join(out, 'inspector.css') });
for (const name of ['inspector.js', 'inspector.css'])
  console.log(`build-ui: ${relative(root, join(out, name))} ${(statSync(join(out, name)).size / 1024).toFixed(0)} KiB`);
