#!/usr/bin/env node
// Runs the compiled CLI, bundled (built by `npm ci` through the `prepare` script; scripts/bundle-cli.mjs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error('winnower: dist/ is missing; run `npm ci` (or `npm run build`) first.');
  process.exit(1);
}
await import(main.href);
